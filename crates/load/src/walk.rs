//! Listing a skill's knowledge files: `references/` and `knowledge/` recursively, or the
//! paths and globs in `metadata.knowledge`. Problems (symlink loops, unreadable folders,
//! non-UTF-8 names, special files) are reported per path; the walk goes on.

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

/// Lists the knowledge files of the skill in `skill_dir` selected by `patterns` (folder names,
/// file paths or globs, relative to the skill folder). `defaults` are patterns that may be absent.
pub fn list_knowledge_files(skill_dir: &Path, patterns: &[String], defaults: &[&str]) -> Listing {
    let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut diagnostics = Vec::new();

    let (globs, plain): (Vec<&String>, Vec<&String>) = patterns.iter().partition(|p| is_glob(p));
    for pattern in plain {
        let clean = pattern.trim_start_matches("./").trim_end_matches('/');
        if Path::new(clean).is_absolute() || clean.split('/').any(|part| part == "..") {
            diagnostics.push(Diagnostic::error(
                skill_dir.join(SKILL_FILE),
                None,
                format!("knowledge path `{pattern}` leaves the skill folder; ignored"),
            ));
            continue;
        }
        let target = skill_dir.join(clean);
        if target.is_dir() || target.is_file() {
            walk(skill_dir, &target, &mut |_| true, &mut files, &mut diagnostics);
        } else if !defaults.contains(&clean) {
            diagnostics.push(Diagnostic::warning(
                skill_dir.join(SKILL_FILE),
                None,
                format!("knowledge path `{pattern}` does not exist"),
            ));
        }
    }
    if !globs.is_empty() {
        let mut builder = GlobSetBuilder::new();
        for g in &globs {
            match Glob::new(g.trim_start_matches("./")) {
                Ok(glob) => {
                    builder.add(glob);
                }
                Err(e) => diagnostics.push(Diagnostic::error(
                    skill_dir.join(SKILL_FILE),
                    None,
                    format!("invalid knowledge glob `{g}`: {e}"),
                )),
            }
        }
        match builder.build() {
            Ok(set) => {
                let mut keep = |source: &str| source != SKILL_FILE && set.is_match(source);
                walk(skill_dir, skill_dir, &mut keep, &mut files, &mut diagnostics);
            }
            Err(e) => diagnostics.push(Diagnostic::error(
                skill_dir.join(SKILL_FILE),
                None,
                format!("invalid knowledge globs: {e}"),
            )),
        }
    }
    Listing { files: files.into_iter().map(|(source, path)| KnowledgeFile { path, source }).collect(), diagnostics }
}

const SKILL_FILE: &str = "SKILL.md";

fn walk(
    skill_dir: &Path,
    start: &Path,
    keep: &mut dyn FnMut(&str) -> bool,
    files: &mut BTreeMap<String, PathBuf>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let walker = WalkDir::new(start)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || !e.file_name().as_encoded_bytes().starts_with(b"."));
    for entry in walker {
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
        if file_type.is_dir() {
            continue;
        }
        let path = entry.path();
        if !file_type.is_file() {
            diagnostics.push(Diagnostic::error(path, None, "not a regular file (device, socket or pipe); skipped"));
            continue;
        }
        let Ok(relative) = path.strip_prefix(skill_dir) else { continue };
        let Some(source) = relative.to_str().map(|s| s.replace(std::path::MAIN_SEPARATOR, "/")) else {
            diagnostics.push(Diagnostic::error(
                path,
                None,
                "file name is not valid UTF-8; rename the file to index it; skipped",
            ));
            continue;
        };
        if keep(&source) {
            files.insert(source, path.to_path_buf());
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
