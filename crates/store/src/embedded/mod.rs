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
//! ```
//!
//! A generation is written completely, synced, and only then named in `CURRENT` by an atomic
//! rename. A crash at any point leaves `CURRENT` naming the previous, complete generation; the
//! next writer deletes the leftovers.

mod lexical;
mod snapshot;
mod vectors;
mod writer;

pub use snapshot::EmbeddedSkillIndex;

use crate::{IndexMeta, IndexWriter, SkillIndex, Store, StoreError};
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
}

/// The generation named in `CURRENT`, if any.
fn current_generation(skill_dir: &Path) -> Result<Option<String>, StoreError> {
    let path = skill_dir.join(CURRENT);
    match std::fs::read_to_string(&path) {
        Ok(name) => {
            let name = name.trim().to_string();
            if parse_generation(&name).is_none() {
                return Err(StoreError::Corrupt {
                    skill: skill_dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                    detail: format!("CURRENT holds `{name}`"),
                });
            }
            Ok(Some(name))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StoreError::io(path, e)),
    }
}

fn generation_name(n: u64) -> String {
    format!("gen-{n:08}")
}

fn parse_generation(name: &str) -> Option<u64> {
    name.strip_prefix("gen-")?.parse().ok()
}

fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    // Directory fsync makes renames and new entries durable; not supported everywhere.
    if let Ok(f) = std::fs::File::open(dir) {
        let _ = f.sync_all();
    }
    Ok(())
}

fn dir_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_size(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

impl Store for EmbeddedStore {
    fn open(&self, skill: &str) -> Result<Option<Arc<dyn SkillIndex>>, StoreError> {
        let dir = self.skill_dir(skill)?;
        let Some(generation) = current_generation(&dir)? else { return Ok(None) };
        let index = EmbeddedSkillIndex::open(skill, &dir.join(generation))?;
        Ok(Some(Arc::new(index)))
    }

    fn begin(&self, skill: &str, meta: IndexMeta) -> Result<Box<dyn IndexWriter>, StoreError> {
        let dir = self.skill_dir(skill)?;
        Ok(Box::new(writer::EmbeddedWriter::begin(skill, &dir, meta)?))
    }

    fn generation(&self, skill: &str) -> Result<Option<u64>, StoreError> {
        let dir = self.skill_dir(skill)?;
        Ok(current_generation(&dir)?.as_deref().and_then(parse_generation))
    }

    fn skills(&self) -> Result<Vec<String>, StoreError> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(&self.root, e)),
        };
        let mut out: Vec<String> = entries
            .flatten()
            .filter(|e| e.path().join(CURRENT).is_file())
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

    fn size_on_disk(&self, skill: &str) -> Option<u64> {
        let dir = self.skill_dir(skill).ok()?;
        let generation = current_generation(&dir).ok()??;
        Some(dir_size(&dir.join(generation)))
    }
}

#[cfg(test)]
mod tests;
