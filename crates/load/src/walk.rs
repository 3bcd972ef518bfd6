//! Listing a skill's knowledge files: `references/` and `knowledge/` recursively, or the
//! paths and globs in `metadata.knowledge`. Problems (symlink loops, unreadable folders,
//! non-UTF-8 names, special files, symlinks that leave the project) are reported per path;
//! the walk goes on.

use crate::confine::Confinement;
use globset::{Glob, GlobSetBuilder};
use skillrag_core::Diagnostic;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use walkdir::WalkDir;

/// A knowledge file found in a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnowledgeFile {
    pub path: PathBuf,
    /// Path relative to the skill folder, `/`-separated.
    pub source: String,
}

#[derive(Debug, Default)]
pub struct Listing {
    /// Sorted by source, no duplicates.
    pub files: Vec<KnowledgeFile>,
    pub diagnostics: Vec<Diagnostic>,
}

fn is_glob(pattern: &str) -> bool {
    pattern.contains(['*', '?', '[', '{'])
}

/// Where a knowledge pattern starts: the skill folder, or — written with a leading `/`, as in
/// `.gitignore` — the project root, for a folder several skills share (`/shared/style-guide/**`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Anchor {
    Skill,
    Project,
}

impl Anchor {
    fn of(pattern: &str) -> (Anchor, &str) {
        match pattern.strip_prefix('/') {
            Some(rest) => (Anchor::Project, rest.trim_start_matches('/')),
            None => (Anchor::Skill, pattern.trim_start_matches("./")),
        }
    }

    /// What a file's source starts with: nothing inside the skill, `/` from the project root,
    /// so a shared document is never taken for one of the skill's own.
    fn source_prefix(self) -> &'static str {
        match self {
            Anchor::Skill => "",
            Anchor::Project => "/",
        }
    }
}

/// Lists the knowledge files of the skill in `skill_dir` selected by `patterns` (folder names,
/// file paths or globs, relative to the skill folder, or to the project root with a leading `/`).
/// `defaults` are patterns that may be absent. Symlinks are followed only inside the project
/// (see [`Confinement`]).
pub fn list_knowledge_files(skill_dir: &Path, patterns: &[String], defaults: &[&str]) -> Listing {
    list_knowledge_files_in(skill_dir, patterns, defaults, &Confinement::for_skill(skill_dir, &[]))
}

/// As [`list_knowledge_files`], within `confinement`: its project root anchors `/` patterns, and
/// symlinks may also point into its allowed folders (e.g. a document share linked into `knowledge/`).
pub fn list_knowledge_files_in(
    skill_dir: &Path,
    patterns: &[String],
    defaults: &[&str],
    confinement: &Confinement,
) -> Listing {
    let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut diagnostics = Vec::new();
    let skill_file = skill_dir.join(SKILL_FILE);
    let project_root = confinement.project_root();
    let mut globs: Vec<(Anchor, &str, &String)> = Vec::new();
    for pattern in patterns {
        let (anchor, clean) = Anchor::of(pattern);
        let clean = clean.trim_end_matches('/');
        if clean.split('/').any(|part| part == "..") || (anchor == Anchor::Skill && Path::new(clean).is_absolute()) {
            let message = match anchor {
                Anchor::Skill => format!(
                    "knowledge path `{pattern}` leaves the skill folder; ignored (name a folder of the project from its root with a leading `/`, e.g. `/shared/style-guide/**`)"
                ),
                Anchor::Project => format!("knowledge path `{pattern}` leaves the project; ignored"),
            };
            diagnostics.push(Diagnostic::error(&skill_file, None, message));
            continue;
        }
        if is_glob(clean) {
            globs.push((anchor, clean, pattern));
            continue;
        }
        let base = match anchor {
            Anchor::Skill => skill_dir,
            Anchor::Project => project_root,
        };
        let target = base.join(clean);
        // `exists`, not `is_file`: a pipe or socket named here is reported by the walk.
        // A default folder name that is a file (`knowledge` written as a file, a folder replaced
        // by one) is most likely a mistake: read it as one document, but say so.
        if anchor == Anchor::Skill && defaults.contains(&clean) && target.is_file() {
            diagnostics.push(Diagnostic::warning(
                &skill_file,
                None,
                format!(
                    "`{clean}` is a file, not a folder: knowledge documents belong inside a folder `{clean}/` \
                     (make `{clean}` a folder and move the file into it); read as one document meanwhile"
                ),
            ));
        }
        if target.exists() {
            // The chunk edits are never knowledge, even when a pattern names the skill folder.
            let mut keep = |relative: &str| !(anchor == Anchor::Skill && relative == CHUNK_EDITS_FILE);
            let at = Walk { base, prefix: anchor.source_prefix(), confinement };
            at.walk(&target, &mut keep, &mut files, &mut diagnostics);
        } else if !(anchor == Anchor::Skill && defaults.contains(&clean)) {
            diagnostics.push(Diagnostic::warning(
                &skill_file,
                None,
                format!("knowledge path `{pattern}` does not exist"),
            ));
        }
    }
    for anchor in [Anchor::Skill, Anchor::Project] {
        let mine: Vec<&(Anchor, &str, &String)> = globs.iter().filter(|g| g.0 == anchor).collect();
        if mine.is_empty() {
            continue;
        }
        let mut builder = GlobSetBuilder::new();
        for (_, clean, pattern) in &mine {
            match Glob::new(clean) {
                Ok(glob) => {
                    builder.add(glob);
                }
                Err(e) => diagnostics.push(Diagnostic::error(
                    &skill_file,
                    None,
                    format!("invalid knowledge glob `{pattern}`: {e}"),
                )),
            }
        }
        let set = match builder.build() {
            Ok(set) => set,
            Err(e) => {
                diagnostics.push(Diagnostic::error(&skill_file, None, format!("invalid knowledge globs: {e}")));
                continue;
            }
        };
        // A skill's own SKILL.md is its card and its chunk edits are about its knowledge, not
        // knowledge; the project's configuration is never knowledge.
        let own: &[&str] = match anchor {
            Anchor::Skill => &[SKILL_FILE, CHUNK_EDITS_FILE],
            Anchor::Project => &["skillrag.toml"],
        };
        let mut keep = |relative: &str| !own.contains(&relative) && set.is_match(relative);
        match anchor {
            Anchor::Skill => {
                let at = Walk { base: skill_dir, prefix: "", confinement };
                at.walk(skill_dir, &mut keep, &mut files, &mut diagnostics);
            }
            // Only the folders the globs name are walked, not the whole project.
            Anchor::Project => {
                let mut starts: Vec<PathBuf> =
                    mine.iter().map(|(_, clean, _)| project_root.join(literal_prefix(clean))).collect();
                starts.sort();
                starts.dedup();
                let at = Walk { base: project_root, prefix: "/", confinement };
                for start in starts.iter().filter(|s| s.is_dir()) {
                    at.walk(start, &mut keep, &mut files, &mut diagnostics);
                }
            }
        }
    }
    Listing { files: files.into_iter().map(|(source, path)| KnowledgeFile { path, source }).collect(), diagnostics }
}

/// For a project-anchored knowledge pattern (`/shared/style-guide/**`), the project folder it
/// reads (`shared/style-guide`), which a watcher must watch; `None` for a skill's own pattern.
pub fn project_folder(pattern: &str) -> Option<String> {
    match Anchor::of(pattern) {
        (Anchor::Project, clean) if !clean.split('/').any(|p| p == "..") => {
            let clean = clean.trim_end_matches('/');
            Some(if is_glob(clean) { literal_prefix(clean) } else { clean.to_string() })
        }
        _ => None,
    }
}

/// The folders of a glob before its first wildcard (`shared/style-guide` of `shared/style-guide/**/*.md`).
fn literal_prefix(glob: &str) -> String {
    let parts: Vec<&str> = glob.split('/').collect();
    let literal = parts.iter().take_while(|p| !is_glob(p)).count().min(parts.len().saturating_sub(1));
    parts[..literal].join("/")
}

const SKILL_FILE: &str = "SKILL.md";
/// The skill's chunk edits (`skillrag_engine::edits`), beside its documents.
pub const CHUNK_EDITS_FILE: &str = "chunk-edits.json";

/// One walk's frame: sources are `prefix` + the path relative to `base`.
struct Walk<'a> {
    base: &'a Path,
    prefix: &'static str,
    confinement: &'a Confinement,
}

impl Walk<'_> {
    fn walk(
        &self,
        start: &Path,
        keep: &mut dyn FnMut(&str) -> bool,
        files: &mut BTreeMap<String, PathBuf>,
        diagnostics: &mut Vec<Diagnostic>,
    ) {
        let mut walker = WalkDir::new(start)
            .follow_links(true)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().as_encoded_bytes().starts_with(b"."));
        while let Some(entry) = walker.next() {
            let entry = match entry {
                Ok(e) => e,
                Err(err) => {
                    let path = err.path().map(Path::to_path_buf).unwrap_or_else(|| start.to_path_buf());
                    let message = if let Some(ancestor) = err.loop_ancestor() {
                        format!("symlink loop (points back to {}); skipped", ancestor.display())
                    } else if let Some(io) = err.io_error() {
                        if io.kind() == std::io::ErrorKind::NotFound {
                            "broken symlink; skipped".to_string()
                        } else {
                            format!("cannot read: {io}; skipped")
                        }
                    } else {
                        format!("{err}; skipped")
                    };
                    diagnostics.push(Diagnostic::error(path, None, message));
                    continue;
                }
            };
            let file_type = entry.file_type();
            let path = entry.path();
            // The start itself may lie behind a link (`knowledge -> /usr/share/doc`, or a linked
            // folder above it), so it is checked whether or not it is one.
            if entry.path_is_symlink() || entry.depth() == 0 {
                if let Err(escape) = self.confinement.check(path) {
                    diagnostics.push(Diagnostic::warning(path, None, escape.to_string()));
                    if file_type.is_dir() {
                        walker.skip_current_dir();
                    }
                    continue;
                }
            }
            if file_type.is_dir() {
                continue;
            }
            if !file_type.is_file() {
                let kind = crate::file_kind(&file_type);
                diagnostics.push(Diagnostic::error(path, None, format!("{kind}, not a regular file; skipped")));
                continue;
            }
            let Ok(relative) = path.strip_prefix(self.base) else { continue };
            let Some(relative) = relative.to_str().map(|s| s.replace(std::path::MAIN_SEPARATOR, "/")) else {
                diagnostics.push(Diagnostic::error(
                    path,
                    None,
                    "file name is not valid UTF-8; rename the file to index it; skipped",
                ));
                continue;
            };
            if keep(&relative) {
                files.insert(format!("{}{relative}", self.prefix), path.to_path_buf());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn defaults() -> Vec<String> {
        vec!["references".into(), "knowledge".into()]
    }

    #[test]
    fn lists_default_folders_recursively_and_skips_hidden() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::create_dir_all(dir.join("knowledge/rules")).unwrap();
        fs::create_dir_all(dir.join("references")).unwrap();
        fs::write(dir.join("SKILL.md"), "x").unwrap();
        fs::write(dir.join("knowledge/b.md"), "b").unwrap();
        fs::write(dir.join("knowledge/rules/a.md"), "a").unwrap();
        fs::write(dir.join("knowledge/.DS_Store"), "x").unwrap();
        fs::write(dir.join("references/c.txt"), "c").unwrap();
        let listing = list_knowledge_files(dir, &defaults(), &["references", "knowledge"]);
        let sources: Vec<_> = listing.files.iter().map(|f| f.source.as_str()).collect();
        assert_eq!(sources, vec!["knowledge/b.md", "knowledge/rules/a.md", "references/c.txt"]);
        assert!(listing.diagnostics.is_empty());
    }

    #[test]
    fn the_chunk_edits_are_never_knowledge() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::write(dir.join(CHUNK_EDITS_FILE), "{}").unwrap();
        fs::write(dir.join("faq.json"), "[]").unwrap();
        for patterns in [vec!["*.json".to_string()], vec![".".to_string()]] {
            let listing = list_knowledge_files(dir, &patterns, &["references", "knowledge"]);
            let sources: Vec<_> = listing.files.iter().map(|f| f.source.as_str()).collect();
            assert!(sources.contains(&"faq.json") && !sources.contains(&CHUNK_EDITS_FILE), "{patterns:?}: {sources:?}");
        }
    }

    #[test]
    fn a_default_folder_that_is_a_file_is_said() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::write(dir.join("knowledge"), "a").unwrap();
        let listing = list_knowledge_files(dir, &defaults(), &["references", "knowledge"]);
        let messages: Vec<String> = listing.diagnostics.iter().map(|d| d.to_string()).collect();
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(messages[0].contains("`knowledge` is a file, not a folder"), "{messages:?}");
        // Named on purpose, a file is fine.
        let listing = list_knowledge_files(dir, &["knowledge".into()], &[]);
        assert!(listing.diagnostics.is_empty(), "{:?}", listing.diagnostics);
    }

    #[test]
    fn globs_and_missing_paths() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::create_dir_all(dir.join("docs/sub")).unwrap();
        fs::write(dir.join("docs/a.md"), "a").unwrap();
        fs::write(dir.join("docs/sub/b.txt"), "b").unwrap();
        fs::write(dir.join("docs/sub/c.png"), "c").unwrap();
        let patterns = vec!["docs/**/*.{md,txt}".to_string(), "missing".to_string(), "../etc".to_string()];
        let listing = list_knowledge_files(dir, &patterns, &["references", "knowledge"]);
        let sources: Vec<_> = listing.files.iter().map(|f| f.source.as_str()).collect();
        assert_eq!(sources, vec!["docs/a.md", "docs/sub/b.txt"]);
        assert_eq!(listing.diagnostics.len(), 2, "{:?}", listing.diagnostics);
    }

    #[cfg(unix)]
    #[test]
    fn symlink_loops_and_broken_links_are_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::create_dir_all(dir.join("knowledge/sub")).unwrap();
        fs::write(dir.join("knowledge/a.md"), "a").unwrap();
        std::os::unix::fs::symlink(dir.join("knowledge"), dir.join("knowledge/sub/loop")).unwrap();
        std::os::unix::fs::symlink(dir.join("nowhere.md"), dir.join("knowledge/dangling.md")).unwrap();
        let listing = list_knowledge_files(dir, &defaults(), &["references", "knowledge"]);
        let sources: Vec<_> = listing.files.iter().map(|f| f.source.as_str()).collect();
        assert_eq!(sources, vec!["knowledge/a.md"]);
        let messages: Vec<String> = listing.diagnostics.iter().map(|d| d.to_string()).collect();
        assert!(messages.iter().any(|m| m.contains("symlink loop") && m.contains("loop")), "{messages:?}");
        assert!(messages.iter().any(|m| m.contains("dangling.md") && m.contains("broken symlink")), "{messages:?}");
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_that_leave_the_project_are_skipped_with_a_warning() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::write(root.join("skillrag.toml"), "skills = [\"skills\"]\n").unwrap();
        fs::create_dir_all(root.join(".skillrag/index")).unwrap();
        fs::write(root.join(".env"), "SKILLRAG_LLM_API_KEY=secret\n").unwrap();
        fs::create_dir_all(root.join("shared")).unwrap();
        fs::write(root.join("shared/common.md"), "shared").unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir_all(outside.path().join("ssh")).unwrap();
        fs::write(outside.path().join("passwd"), "root:x:0:0").unwrap();
        fs::write(outside.path().join("ssh/ssh_config"), "Host *").unwrap();
        let dir = root.join("skills/a");
        let k = dir.join("knowledge");
        fs::create_dir_all(&k).unwrap();
        fs::write(k.join("a.md"), "a").unwrap();
        symlink(outside.path().join("passwd"), k.join("passwd.md")).unwrap();
        symlink(outside.path().join("ssh"), k.join("ssh")).unwrap();
        symlink(root.join("skillrag.toml"), k.join("config.md")).unwrap();
        symlink(root.join(".skillrag"), k.join("state")).unwrap();
        symlink(root.join(".env"), k.join("env.txt")).unwrap();
        symlink(root.join("shared/common.md"), k.join("common.md")).unwrap();
        symlink(k.join("a.md"), k.join("alias.md")).unwrap();
        let listing = list_knowledge_files(&dir, &defaults(), &["references", "knowledge"]);
        let sources: Vec<_> = listing.files.iter().map(|f| f.source.as_str()).collect();
        assert_eq!(sources, vec!["knowledge/a.md", "knowledge/alias.md", "knowledge/common.md"]);
        let messages: Vec<String> = listing.diagnostics.iter().map(|d| d.to_string()).collect();
        assert_eq!(messages.len(), 5, "{messages:#?}");
        let passwd = outside.path().canonicalize().unwrap().join("passwd");
        assert!(
            messages.iter().any(|m| m.contains("knowledge/passwd.md")
                && m.contains("outside the project")
                && m.contains(&passwd.display().to_string())),
            "{messages:#?}"
        );
        assert!(messages.iter().any(|m| m.contains("knowledge/ssh:") && m.contains("outside")), "{messages:#?}");
        assert!(messages.iter().any(|m| m.contains("config.md") && m.contains("configuration file")), "{messages:#?}");
        assert!(messages.iter().any(|m| m.contains("knowledge/state") && m.contains("hidden")), "{messages:#?}");
        assert!(messages.iter().any(|m| m.contains("env.txt") && m.contains("hidden")), "{messages:#?}");
        assert!(listing.diagnostics.iter().all(|d| !d.is_error()));

        // A whole knowledge folder linked out (`knowledge -> /usr/share/doc`) yields nothing…
        fs::remove_dir_all(&k).unwrap();
        symlink(outside.path(), &k).unwrap();
        let listing = list_knowledge_files(&dir, &defaults(), &["references", "knowledge"]);
        assert!(listing.files.is_empty(), "{:?}", listing.files);
        assert_eq!(listing.diagnostics.len(), 1, "{:?}", listing.diagnostics);
        // …unless the folder it points into is allowed.
        let listing = list_knowledge_files_in(
            &dir,
            &defaults(),
            &["references", "knowledge"],
            &Confinement::for_skill(&dir, &[outside.path().into()]),
        );
        let sources: Vec<_> = listing.files.iter().map(|f| f.source.as_str()).collect();
        assert_eq!(sources, vec!["knowledge/passwd", "knowledge/ssh/ssh_config"]);
        // Globs walk the skill folder itself; the same rule holds.
        let listing = list_knowledge_files(&dir, &["**/*".to_string()], &["references", "knowledge"]);
        assert!(listing.files.is_empty(), "{:?}", listing.files);
    }

    #[cfg(unix)]
    #[test]
    fn pipes_and_sockets_are_skipped_by_kind() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::create_dir_all(dir.join("knowledge")).unwrap();
        fs::write(dir.join("knowledge/a.md"), "a").unwrap();
        let fifo = dir.join("knowledge/pipe.md");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let _socket = std::os::unix::net::UnixListener::bind(dir.join("knowledge/socket.md")).unwrap();
        let patterns = vec!["knowledge".to_string(), "knowledge/pipe.md".to_string()];
        let listing = list_knowledge_files(dir, &patterns, &["references", "knowledge"]);
        let sources: Vec<_> = listing.files.iter().map(|f| f.source.as_str()).collect();
        assert_eq!(sources, vec!["knowledge/a.md"]);
        let messages: Vec<String> = listing.diagnostics.iter().map(|d| d.to_string()).collect();
        assert!(
            messages.iter().any(|m| m.contains("pipe.md") && m.contains("named pipe (FIFO), not a regular file")),
            "{messages:#?}"
        );
        assert!(messages.iter().any(|m| m.contains("socket.md") && m.contains("socket")), "{messages:#?}");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn non_utf8_names_are_reported() {
        use std::os::unix::ffi::OsStrExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        fs::create_dir_all(dir.join("knowledge")).unwrap();
        let name = std::ffi::OsStr::from_bytes(b"bad-\xff\xfe.md");
        fs::write(dir.join("knowledge").join(name), "x").unwrap();
        fs::write(dir.join("knowledge/ok.md"), "x").unwrap();
        let listing = list_knowledge_files(dir, &defaults(), &["references", "knowledge"]);
        assert_eq!(listing.files.len(), 1);
        assert!(listing.diagnostics[0].message.contains("not valid UTF-8"));
    }
}
