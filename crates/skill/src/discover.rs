//! Finding the skills of a project: every folder under the skills roots.

use crate::parse::parse_skill;
use crate::Skill;
use skillrag_core::Diagnostic;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The skills found under one or more roots, and every problem met on the way.
#[derive(Debug, Default)]
pub struct Discovery {
    pub skills: Vec<Skill>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Discovery {
    pub fn get(&self, id: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.id == id)
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
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .filter(|e| !e.file_name().as_encoded_bytes().starts_with(b"."))
            .filter(|e| e.path().is_dir())
            .map(|e| e.path())
            .collect();
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
            out.skills.push(skill);
        }
    }
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
}
