//! Which symlinks a skill may follow: only those whose canonical target stays inside the
//! project (or a folder allowed explicitly), and never into the project's own configuration
//! or hidden state (`skillrag.toml`, `.skillrag/`, `.env`, `.git/`). A link that leaves would
//! index and serve files such as `/etc/passwd` to anyone who can ask a question.

use std::path::{Component, Path, PathBuf};

/// The project configuration file; its folder is the project root.
const CONFIG_FILE: &str = "skillrag.toml";

/// Where the symlinks met while reading one skill may point.
#[derive(Debug, Clone)]
pub struct Confinement {
    /// The project root (canonical): the nearest folder above the skill holding
    /// `skillrag.toml`, else the skills folder the skill sits in.
    project: PathBuf,
    /// The skill folder itself (canonical), which may sit in a hidden folder such as `.claude/skills`.
    skill: PathBuf,
    /// Further folders links may point into (canonical), e.g. a shared document store.
    allowed: Vec<PathBuf>,
}

/// Why a link is not followed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Escape {
    #[error("symlink points outside the project (to {}); skipped (links may point only inside {})", .target.display(), .root.display())]
    Outside { target: PathBuf, root: PathBuf },
    #[error("symlink points to the project's {what} ({}); skipped", .target.display())]
    Private { target: PathBuf, what: &'static str },
    #[error("cannot resolve symlink: {0}; skipped")]
    Unresolvable(String),
}

impl Confinement {
    /// The confinement of the skill in `skill_dir`, plus `allowed` folders (missing ones are ignored).
    pub fn for_skill(skill_dir: &Path, allowed: &[PathBuf]) -> Confinement {
        let project = skill_dir
            .ancestors()
            .skip(1)
            .find(|dir| dir.join(CONFIG_FILE).is_file())
            .or_else(|| skill_dir.parent())
            .unwrap_or(skill_dir);
        Confinement {
            project: canonical_or_same(project),
            skill: canonical_or_same(skill_dir),
            allowed: allowed.iter().filter_map(|a| std::fs::canonicalize(a).ok()).collect(),
        }
    }

    /// [`Confinement::for_skill`] with the project root known (`-C DIR`), not inferred from
    /// where `skillrag.toml` lies: the root project-anchored knowledge paths (`/shared/…`) start from.
    pub fn for_skill_in(skill_dir: &Path, project_root: &Path, allowed: &[PathBuf]) -> Confinement {
        Confinement {
            project: canonical_or_same(project_root),
            skill: canonical_or_same(skill_dir),
            allowed: allowed.iter().filter_map(|a| std::fs::canonicalize(a).ok()).collect(),
        }
    }

    /// The confinement of the entries of `folder` (a skills folder, whose entries are skills
    /// linked in from elsewhere or not): its project root, else `folder` itself.
    pub fn for_folder(folder: &Path, allowed: &[PathBuf]) -> Confinement {
        let project = folder.ancestors().find(|dir| dir.join(CONFIG_FILE).is_file()).unwrap_or(folder);
        let project = canonical_or_same(project);
        Confinement {
            skill: project.clone(),
            project,
            allowed: allowed.iter().filter_map(|a| std::fs::canonicalize(a).ok()).collect(),
        }
    }

    pub fn project_root(&self) -> &Path {
        &self.project
    }

    /// Whether `path` (a symlink, or a path with a symlink in it) may be read; `Ok` with its
    /// canonical target when it may.
    pub fn check(&self, path: &Path) -> Result<PathBuf, Escape> {
        let target = std::fs::canonicalize(path).map_err(|e| Escape::Unresolvable(e.to_string()))?;
        if let Ok(inside) = target.strip_prefix(&self.skill) {
            return if hidden(inside) { Err(Escape::Private { target, what: HIDDEN }) } else { Ok(target) };
        }
        if let Ok(inside) = target.strip_prefix(&self.project) {
            return match private(inside) {
                Some(what) => Err(Escape::Private { target, what }),
                None => Ok(target),
            };
        }
        if self.allowed.iter().any(|root| target.starts_with(root)) {
            return Ok(target);
        }
        Err(Escape::Outside { target, root: self.project.clone() })
    }
}

/// What a path inside the project is when it must never be indexed: the configuration, or
/// anything hidden (the `.skillrag/` index state, `.env` with its API keys, `.git/`). Hidden
/// entries are already skipped by the walk; a link must not reach them either.
fn private(inside: &Path) -> Option<&'static str> {
    if inside == Path::new(CONFIG_FILE) {
        return Some("configuration file");
    }
    hidden(inside).then_some(HIDDEN)
}

const HIDDEN: &str = "hidden files (index state, .env, .git…)";

fn hidden(inside: &Path) -> bool {
    inside.components().any(|c| matches!(c, Component::Normal(n) if n.as_encoded_bytes().starts_with(b".")))
}

fn canonical_or_same(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_inside_the_project_pass_and_the_rest_do_not() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::write(root.join("skillrag.toml"), "").unwrap();
        fs::create_dir_all(root.join("skills/a/knowledge")).unwrap();
        fs::create_dir_all(root.join(".skillrag/index")).unwrap();
        fs::create_dir_all(root.join("shared")).unwrap();
        fs::write(root.join("shared/doc.md"), "x").unwrap();
        let k = root.join("skills/a/knowledge");
        symlink(root.join("shared/doc.md"), k.join("doc.md")).unwrap();
        symlink("/etc/passwd", k.join("passwd.md")).unwrap();
        symlink(root.join("skillrag.toml"), k.join("config.md")).unwrap();
        symlink(root.join(".skillrag/index"), k.join("state")).unwrap();
        let c = Confinement::for_skill(&root.join("skills/a"), &[]);
        assert_eq!(c.project_root(), fs::canonicalize(root).unwrap());
        assert!(c.check(&k.join("doc.md")).is_ok());
        assert!(matches!(c.check(&k.join("passwd.md")), Err(Escape::Outside { .. })));
        assert!(matches!(c.check(&k.join("config.md")), Err(Escape::Private { .. })));
        assert!(matches!(c.check(&k.join("state")), Err(Escape::Private { .. })));
        let allowed = Confinement::for_skill(&root.join("skills/a"), &[PathBuf::from("/etc")]);
        assert!(allowed.check(&k.join("passwd.md")).is_ok());
    }

    #[test]
    fn without_a_config_file_the_skills_folder_is_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let skills = tmp.path().join("skills");
        fs::create_dir_all(skills.join("a")).unwrap();
        let c = Confinement::for_skill(&skills.join("a"), &[]);
        assert_eq!(c.project_root(), fs::canonicalize(&skills).unwrap());
    }
}
