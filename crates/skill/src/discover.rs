//! Finding the skills of a project: every folder under the skills roots. A folder that holds
//! the [`DISABLED_MARKER`] is a disabled skill: listed, kept indexed, never routed to or asked.

use crate::parse::parse_skill;
use crate::Skill;
use skillrag_core::Diagnostic;
use skillrag_load::Confinement;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The skills found under one or more roots, and every problem met on the way.
#[derive(Debug, Default)]
pub struct Discovery {
    /// The enabled skills: the ones routed to, searched and answered from.
    pub skills: Vec<Skill>,
    /// Skills turned off by their owner (`skillrag skills --disable`, the page's Skills tab).
    pub disabled: Vec<Skill>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Discovery {
    /// An enabled skill.
    pub fn get(&self, id: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.id == id)
    }

    /// A disabled skill.
    pub fn get_disabled(&self, id: &str) -> Option<&Skill> {
        self.disabled.iter().find(|s| s.id == id)
    }
}

/// The file whose presence in a skill folder disables the skill. A file beside `SKILL.md`
/// rather than a key in it, since one of the three `SKILL.md` forms has no frontmatter to hold
/// a key, and turning a skill off should not rewrite what its author wrote. Hidden, so no
/// knowledge pattern lists it.
pub const DISABLED_MARKER: &str = ".disabled";

/// Whether the skill folder `dir` holds the [`DISABLED_MARKER`].
pub fn is_disabled(dir: &std::path::Path) -> bool {
    std::fs::symlink_metadata(dir.join(DISABLED_MARKER)).is_ok()
}

/// Turns the skill in `dir` off (writes the marker, saying why it is there) or on (removes it).
pub fn set_disabled(dir: &std::path::Path, disabled: bool) -> std::io::Result<()> {
    let marker = dir.join(DISABLED_MARKER);
    if disabled {
        std::fs::write(
            &marker,
            "This skill is disabled: it is not routed to or answered from. Delete this file, or run\n\
             `skillrag skills --enable NAME`, to turn it back on.\n",
        )
    } else {
        match std::fs::remove_file(&marker) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

/// Loads every skill folder under `roots` (in order; folders sorted by name). A broken skill
/// is reported and skipped; a second skill with an id already seen is reported and skipped.
pub fn discover(roots: &[PathBuf]) -> Discovery {
    let mut out = Discovery::default();
    let mut seen: BTreeMap<String, PathBuf> = BTreeMap::new();
    for root in roots {
        let entries = match std::fs::read_dir(root) {
            Ok(e) => e,
            Err(e) => {
                out.diagnostics.push(Diagnostic::error(root, None, format!("cannot read skills folder: {e}")));
                continue;
            }
        };
        let confinement = Confinement::for_folder(root, &[]);
        let mut dirs: Vec<PathBuf> = Vec::new();
        for entry in entries.flatten().filter(|e| !e.file_name().as_encoded_bytes().starts_with(b".")) {
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            // A skill folder linked in from outside the project would serve whatever it holds.
            if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                if let Err(escape) = confinement.check(&path) {
                    out.diagnostics.push(Diagnostic::error(&path, None, format!("skill folder {escape}")));
                    continue;
                }
            }
            dirs.push(path);
        }
        dirs.sort();
        for dir in dirs {
            let parsed = parse_skill(&dir);
            out.diagnostics.extend(parsed.diagnostics);
            let Some(skill) = parsed.skill else { continue };
            if let Some(first) = seen.get(&skill.id) {
                out.diagnostics.push(Diagnostic::error(
                    skill.skill_file(),
                    None,
                    format!(
                        "a skill named `{}` is already defined in {}; this one is skipped (skill names must be unique)",
                        skill.id,
                        first.display()
                    ),
                ));
                continue;
            }
            seen.insert(skill.id.clone(), dir.clone());
            if is_disabled(&dir) {
                out.disabled.push(skill);
            } else {
                out.skills.push(skill);
            }
        }
    }
    let disabled: Vec<String> = out.disabled.iter().map(|s| s.id.clone()).collect();
    let dependency_problems = crate::dependencies::resolve(&mut out.skills, &disabled);
    out.diagnostics.extend(dependency_problems);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    fn write_skill(root: &Path, folder: &str, text: &str) {
        let dir = root.join(folder);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("SKILL.md"), text).unwrap();
    }

    #[test]
    fn broken_skills_are_skipped_and_the_rest_load() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write_skill(root, "good", "---\nname: good\ndescription: fine\n---\n");
        write_skill(root, "bad-yaml", "---\nname: bad-yaml\ndescription: : :\n  - x\n---\n");
        write_skill(root, "mismatch", "---\nname: other\ndescription: d\n---\n");
        fs::create_dir_all(root.join("empty-folder")).unwrap();
        fs::create_dir_all(root.join(".hidden")).unwrap();
        let d = discover(&[root.to_path_buf()]);
        let ids: Vec<_> = d.skills.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, vec!["good"]);
        let errors: Vec<String> = d.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
        assert_eq!(errors.len(), 3, "{errors:#?}");
        assert!(
            errors.iter().any(|e| e.contains("bad-yaml/SKILL.md:3") && e.contains("malformed YAML")),
            "{errors:#?}"
        );
        assert!(errors.iter().any(|e| e.contains("mismatch/SKILL.md:2")), "{errors:#?}");
        assert!(errors.iter().any(|e| e.contains("empty-folder") && e.contains("no SKILL.md")), "{errors:#?}");
    }

    #[test]
    fn duplicate_names_across_roots_keep_the_first() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        write_skill(a.path(), "faq", "---\nname: faq\ndescription: first\n---\n");
        write_skill(b.path(), "faq", "---\nname: faq\ndescription: second\n---\n");
        let d = discover(&[a.path().to_path_buf(), b.path().to_path_buf()]);
        assert_eq!(d.skills.len(), 1);
        assert_eq!(d.skills[0].description, "first");
        assert!(d.diagnostics.iter().any(|d| d.message.contains("already defined")));
    }

    #[test]
    fn a_disabled_skill_is_listed_apart_and_its_users_are_warned() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        write_skill(root, "off", "# off\n\n## Description\nheadings only, no frontmatter\n");
        write_skill(root, "user", "---\nname: user\ndescription: d\nmetadata:\n  uses: off\n---\n");
        set_disabled(&root.join("off"), true).unwrap();
        let d = discover(&[root.to_path_buf()]);
        assert_eq!(d.skills.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), vec!["user"]);
        assert!(d.get("off").is_none() && d.get_disabled("off").is_some());
        assert!(d.get("user").unwrap().settings.uses.is_empty(), "a disabled skill's knowledge is not retrieved");
        let warning = d.diagnostics.iter().find(|x| x.message.contains("disabled")).expect("a warning for `uses`");
        assert!(!warning.is_error(), "{warning}");
        set_disabled(&root.join("off"), false).unwrap();
        set_disabled(&root.join("off"), false).unwrap();
        let d = discover(&[root.to_path_buf()]);
        assert!(d.get("off").is_some() && d.disabled.is_empty());
        assert_eq!(d.get("user").unwrap().settings.uses, vec!["off".to_string()]);
    }

    #[cfg(unix)]
    #[test]
    fn skill_files_that_leave_the_project_or_block_are_refused() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let project = tmp.path();
        fs::write(project.join("skillrag.toml"), "").unwrap();
        let root = project.join("skills");
        write_skill(&root, "good", "---\nname: good\ndescription: fine\n---\n");
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("passwd"), "root:x:0:0:root:/root:/bin/bash\n").unwrap();
        write_skill(outside.path(), "elsewhere", "---\nname: elsewhere\ndescription: far\n---\n");
        fs::create_dir_all(root.join("passwd")).unwrap();
        symlink(outside.path().join("passwd"), root.join("passwd/SKILL.md")).unwrap();
        fs::create_dir_all(root.join("piped")).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(root.join("piped/SKILL.md")).status().unwrap().success());
        symlink(outside.path().join("elsewhere"), root.join("elsewhere")).unwrap();
        // A link that stays inside the project is followed.
        write_skill(project, "kept/inside", "---\nname: inside\ndescription: near\n---\n");
        symlink(project.join("kept/inside"), root.join("inside")).unwrap();
        let d = discover(std::slice::from_ref(&root));
        let ids: Vec<_> = d.skills.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, vec!["good", "inside"]);
        let errors: Vec<String> = d.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
        assert_eq!(errors.len(), 3, "{errors:#?}");
        assert!(
            errors
                .iter()
                .any(|e| e.contains("passwd/SKILL.md") && e.contains("outside the project") && e.contains("passwd)")),
            "{errors:#?}"
        );
        assert!(errors.iter().any(|e| e.contains("piped/SKILL.md") && e.contains("named pipe (FIFO)")), "{errors:#?}");
        assert!(
            errors.iter().any(|e| e.contains("skills/elsewhere") && e.contains("skill folder symlink points outside")),
            "{errors:#?}"
        );
    }

    #[test]
    fn deep_frontmatter_is_refused_with_its_line() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let deep = format!("---\nname: deep\ndescription: d\nx: {}{}\n---\n", "[".repeat(30_000), "]".repeat(30_000));
        write_skill(root, "deep", &deep);
        write_skill(root, "good", "---\nname: good\ndescription: fine\n---\n");
        let start = std::time::Instant::now();
        let d = discover(&[root.to_path_buf()]);
        assert!(start.elapsed() < std::time::Duration::from_secs(2), "{:?}", start.elapsed());
        assert_eq!(d.skills.len(), 1);
        let errors: Vec<String> = d.diagnostics.iter().map(|d| d.to_string()).collect();
        assert!(
            errors.iter().any(|e| e.contains("deep/SKILL.md:4") && e.contains("nests deeper than 32")),
            "{errors:#?}"
        );
    }
}
