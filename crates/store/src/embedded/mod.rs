//! The embedded store: one folder per skill, one sub-folder per generation.
//!
//! ```text
//! <root>/<skill>/CURRENT              name of the published generation ("gen-00000007")
//! <root>/<skill>/LOCK                 held by the one writer
//! <root>/<skill>/gen-00000007/
//!     meta.json manifest.json         settings and source files
//!     chunks.jsonl                    chunk metadata and text, row order
//!     vectors.f32 visibility.f32      dense vectors (row order), when a model is configured
//!     tantivy/                        BM25 index
//!     checksums.json                  size and BLAKE3 of every file above, written last
//! ```
//!
//! A generation is written completely, synced, and only then named in `CURRENT` by an atomic
//! rename. A crash at any point leaves `CURRENT` naming the previous, complete generation; the
//! next writer deletes the leftovers. Opening a generation verifies its checksums; a damaged
//! one is refused (never served) and [`Store::repair`] moves it aside for the rebuild.

mod lexical;
mod snapshot;
mod vectors;
mod writer;

pub use snapshot::EmbeddedSkillIndex;

use crate::{Check, IndexMeta, IndexWriter, SkillIndex, Store, StoreError};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const CURRENT: &str = "CURRENT";
const LOCK: &str = "LOCK";

/// The default store, in a folder of the project (`.skillrag/index`).
#[derive(Debug, Clone)]
pub struct EmbeddedStore {
    root: PathBuf,
}

impl EmbeddedStore {
    pub fn new(root: impl Into<PathBuf>) -> EmbeddedStore {
        EmbeddedStore { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn skill_dir(&self, skill: &str) -> Result<PathBuf, StoreError> {
        let safe = !skill.is_empty()
            && skill != "."
            && skill != ".."
            && !skill.contains(['/', '\\', '\0'])
            && !Path::new(skill).is_absolute();
        if !safe {
            return Err(StoreError::Invalid(format!("`{skill}` is not a valid skill id")));
        }
        Ok(self.root.join(skill))
    }

    /// The skill's folder and the generation its `CURRENT` names. `CURRENT` is read straight
    /// away; only when that finds nothing is a file standing where a folder belongs looked for
    /// (nothing under a file can be opened), so that the common case costs no extra calls.
    fn current(&self, skill: &str) -> Result<(PathBuf, Option<String>), StoreError> {
        let dir = self.skill_dir(skill)?;
        match current_generation(&dir) {
            unreadable @ (Ok(None) | Err(StoreError::Io { .. })) => {
                self.readable_skill_dir(skill)?;
                unreadable.map(|name| (dir, name))
            }
            read => read.map(|name| (dir, name)),
        }
    }

    /// The skill's folder, refused as corrupt when a file stands where a folder belongs.
    fn readable_skill_dir(&self, skill: &str) -> Result<PathBuf, StoreError> {
        let dir = self.skill_dir(skill)?;
        match not_a_folder(&self.root, &dir) {
            Some(path) => Err(StoreError::Corrupt {
                skill: skill.to_string(),
                detail: format!("{} is a file, not a folder", path.display()),
            }),
            None => Ok(dir),
        }
    }
}

/// A file where the store needs a folder (`.skillrag/index` or a skill's folder), if any.
fn not_a_folder(root: &Path, skill_dir: &Path) -> Option<PathBuf> {
    [root, skill_dir].into_iter().find(|p| p.symlink_metadata().is_ok() && !p.is_dir()).map(Path::to_path_buf)
}

fn skill_name(skill_dir: &Path) -> String {
    skill_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// The generation named in `CURRENT`, if any. `CURRENT` must name a generation folder directly
/// inside the skill's folder (`gen-` and digits: no separator, no `..`), or it is corrupt.
///
/// Every question asks this of every skill, so it costs one open, one bounded read and one
/// `stat` of the generation: at 300 skills the checks were a quarter of a question's time.
/// The open refuses a symlink and does not wait on a FIFO; the read stops past any real name.
fn current_generation(skill_dir: &Path) -> Result<Option<String>, StoreError> {
    // A generation name is 12 bytes; anything much longer is not worth reading.
    const MAX_LEN: u64 = 64;
    let path = skill_dir.join(CURRENT);
    let corrupt = |detail: String| StoreError::Corrupt { skill: skill_name(skill_dir), detail };
    let not_a_name = || corrupt(format!("{CURRENT} is not a small file naming a generation"));
    let file = match open_no_follow(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if is_symlink_refusal(&e) => return Err(not_a_name()),
        Err(e) => return Err(StoreError::io(path, e)),
    };
    let mut bytes = Vec::new();
    match file.take(MAX_LEN + 1).read_to_end(&mut bytes) {
        Ok(n) if n as u64 > MAX_LEN => return Err(not_a_name()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => return Err(not_a_name()),
        Err(e) => return Err(StoreError::io(path, e)),
    }
    let name = String::from_utf8_lossy(&bytes).trim().to_string();
    if parse_generation(&name).is_none() {
        return Err(corrupt(format!("{CURRENT} holds `{}`, not a generation name", name.escape_debug())));
    }
    if !skill_dir.join(&name).is_dir() {
        return Err(corrupt(format!("{CURRENT} names {name}, which does not exist")));
    }
    Ok(Some(name))
}

/// Opens `path` for reading unless it is a symlink, without blocking on a FIFO.
#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(path)
}

#[cfg(unix)]
fn is_symlink_refusal(e: &std::io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP)
}

/// Elsewhere: a metadata check first (one more call), then the open.
#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    if !std::fs::symlink_metadata(path)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    std::fs::File::open(path)
}

#[cfg(not(unix))]
fn is_symlink_refusal(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::Other
}

/// Renames `path` to `<path>.corrupt-<unix time>` (never over an earlier one) and returns the
/// new path: kept for a look, never read again (the name is not a generation's).
/// What [`move_aside`] puts between a name and the time: `gen-00000003.corrupt-1764000000`.
const CORRUPT_MARK: &str = ".corrupt-";

fn move_aside(path: &Path) -> Result<PathBuf, StoreError> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let base = format!("{}{CORRUPT_MARK}{now}", path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
    let mut target = path.with_file_name(&base);
    let mut n = 1;
    while target.symlink_metadata().is_ok() {
        n += 1;
        target = path.with_file_name(format!("{base}-{n}"));
    }
    std::fs::rename(path, &target).map_err(|e| StoreError::io(path, e))?;
    Ok(target)
}

/// Bytes of the files under `path` (or of `path` itself), not following links.
fn bytes_under(path: &Path) -> u64 {
    match path.symlink_metadata() {
        Ok(m) if m.is_dir() => {
            std::fs::read_dir(path).map(|entries| entries.flatten().map(|e| bytes_under(&e.path())).sum()).unwrap_or(0)
        }
        Ok(m) => m.len(),
        Err(_) => 0,
    }
}

/// Takes the one writer's lock of a skill (a folder in the lock file's place is moved aside).
fn lock(skill: &str, skill_dir: &Path) -> Result<std::fs::File, StoreError> {
    let lock_path = skill_dir.join(LOCK);
    if lock_path.symlink_metadata().is_ok_and(|m| !m.is_file()) {
        move_aside(&lock_path)?;
    }
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| StoreError::io(&lock_path, e))?;
    match lock.try_lock() {
        Ok(()) => Ok(lock),
        Err(std::fs::TryLockError::WouldBlock) => Err(StoreError::Locked(skill.to_string())),
        Err(std::fs::TryLockError::Error(e)) => Err(StoreError::io(&lock_path, e)),
    }
}

fn generation_name(n: u64) -> String {
    format!("gen-{n:08}")
}

/// The number of a generation folder: `gen-` and digits only, so that a name taken from
/// `CURRENT` can never leave the skill's folder.
fn parse_generation(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("gen-")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    // Directory fsync makes renames and new entries durable; not supported everywhere.
    if let Ok(f) = std::fs::File::open(dir) {
        let _ = f.sync_all();
    }
    Ok(())
}

impl Store for EmbeddedStore {
    fn open(&self, skill: &str) -> Result<Option<Arc<dyn SkillIndex>>, StoreError> {
        let (dir, generation) = self.current(skill)?;
        let Some(generation) = generation else { return Ok(None) };
        let index = EmbeddedSkillIndex::open(skill, &dir.join(generation))?;
        Ok(Some(Arc::new(index)))
    }

    fn begin(&self, skill: &str, meta: IndexMeta) -> Result<Box<dyn IndexWriter>, StoreError> {
        let dir = self.skill_dir(skill)?;
        Ok(Box::new(writer::EmbeddedWriter::begin(skill, &dir, meta)?))
    }

    fn generation(&self, skill: &str) -> Result<Option<u64>, StoreError> {
        Ok(self.current(skill)?.1.as_deref().and_then(parse_generation))
    }

    fn skills(&self) -> Result<Vec<String>, StoreError> {
        if !self.root.is_dir() {
            // Nothing here (or a file in the way, which `repair` moves aside): no indexes.
            return Ok(Vec::new());
        }
        let entries = match std::fs::read_dir(&self.root) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(&self.root, e)),
        };
        let mut out: Vec<String> = entries
            .flatten()
            // A damaged CURRENT still marks an index (to remove, or to repair).
            .filter(|e| e.path().join(CURRENT).symlink_metadata().is_ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        out.sort();
        Ok(out)
    }

    fn remove(&self, skill: &str) -> Result<(), StoreError> {
        let dir = self.skill_dir(skill)?;
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(StoreError::io(dir, e)),
        }
    }

    fn check(&self, skill: &str) -> Result<Option<Check>, StoreError> {
        let dir = self.readable_skill_dir(skill)?;
        let Some(name) = current_generation(&dir)? else { return Ok(None) };
        let gen_dir = dir.join(&name);
        let (index, verified) = EmbeddedSkillIndex::open_verified(skill, &gen_dir)?;
        let mut check = Check {
            generation: Some(index.meta.generation),
            chunks: index.chunks.len(),
            checksummed: verified.is_some(),
            ..Check::default()
        };
        match verified {
            Some(v) => (check.files, check.bytes) = (v.files, v.bytes),
            // Written before checksums: tantivy's own footers are all there is to check.
            None => {
                let damaged = lexical::damaged_files(&gen_dir.join("tantivy"))
                    .map_err(|e| StoreError::Corrupt { skill: skill.to_string(), detail: format!("{name}: {e}") })?;
                if !damaged.is_empty() {
                    return Err(StoreError::Corrupt {
                        skill: skill.to_string(),
                        detail: format!("{name}: tantivy files fail their checksums: {}", damaged.join(", ")),
                    });
                }
            }
        }
        Ok(Some(check))
    }

    fn set_aside(&self, skill: &str) -> Vec<(PathBuf, u64)> {
        let Ok(dir) = self.skill_dir(skill) else { return Vec::new() };
        let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
        let mut found: Vec<(PathBuf, u64)> = entries
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains(CORRUPT_MARK))
            .map(|e| (e.path(), bytes_under(&e.path())))
            .collect();
        found.sort();
        found
    }

    fn repair(&self, skill: &str) -> Result<Vec<String>, StoreError> {
        let dir = self.skill_dir(skill)?;
        let mut done = Vec::new();
        while let Some(path) = not_a_folder(&self.root, &dir) {
            let to = move_aside(&path)?;
            done.push(format!("{} was a file, not a folder; moved it aside to {}", path.display(), to.display()));
        }
        if !dir.is_dir() {
            return Ok(done);
        }
        let _lock = lock(skill, &dir)?;
        match current_generation(&dir) {
            Ok(None) => {}
            Ok(Some(name)) => match EmbeddedSkillIndex::open(skill, &dir.join(&name)) {
                Ok(_) => {}
                Err(StoreError::Corrupt { detail, .. }) => {
                    // Quarantined, so that it never serves wrong scores; CURRENT goes with it.
                    let to = move_aside(&dir.join(&name))?;
                    let current = dir.join(CURRENT);
                    std::fs::remove_file(&current).map_err(|e| StoreError::io(&current, e))?;
                    done.push(format!("skill `{skill}`: {detail}; moved {name} aside to {}", to.display()));
                }
                Err(e) => return Err(e),
            },
            Err(StoreError::Corrupt { detail, .. }) => {
                let to = move_aside(&dir.join(CURRENT))?;
                done.push(format!("skill `{skill}`: {detail}; moved it aside to {}", to.display()));
            }
            Err(e) => return Err(e),
        }
        Ok(done)
    }

    fn size_on_disk(&self, skill: &str) -> Option<u64> {
        let dir = self.skill_dir(skill).ok()?;
        let generation = current_generation(&dir).ok()??;
        Some(bytes_under(&dir.join(generation)))
    }
}

#[cfg(test)]
mod tests;
