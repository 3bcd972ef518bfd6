//! Skills as the page manages them (`POST /v1/skills`, `GET`/`PUT /v1/skills/{id}/skill-md`,
//! `DELETE /v1/skills/{id}`). Like document writes, these are off unless the server was started
//! with `--allow-writes`, are serialized with every other write, and never leave the skill
//! roots: a new skill folder is built under a temporary name and renamed into place, `SKILL.md`
//! is replaced by a rename from a temporary file beside it, and a `SKILL.md` that `lint` finds an
//! error in is refused (422, with lint's messages) before anything is written. A deleted skill is
//! moved to `<state>/trash/`, not erased. Each change reopens the served assistant, since the
//! skills themselves (their routing, descriptions and boundaries) changed, not only an index.

use crate::error::ApiError;
use crate::service::{blocking, IndexJob, Reopen, Service};
use axum::http::StatusCode;
use serde::Serialize;
use skillrag_core::Diagnostic;
use skillrag_skill::{SkillDraft, SKILL_FILE};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A lint message about a `SKILL.md`, without the server's paths.
#[derive(Debug, Clone, Serialize)]
pub struct LintMessage {
    pub line: Option<usize>,
    pub severity: skillrag_core::Severity,
    pub message: String,
}

/// A skill written: its id, what lint still says of it (warnings only), and the re-index.
#[derive(Debug, Serialize)]
pub struct SkillWritten {
    pub skill: String,
    /// Its `SKILL.md`, relative to the project.
    pub path: String,
    pub diagnostics: Vec<LintMessage>,
    pub job: IndexJob,
}

/// A skill turned off or on; `job` is the re-index of a skill turned on.
#[derive(Debug, Serialize)]
pub struct SkillToggled {
    pub skill: String,
    pub enabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<IndexJob>,
}

/// A skill deleted, and where its folder went.
#[derive(Debug, Serialize)]
pub struct SkillDeleted {
    pub skill: String,
    /// Relative to the project: move it back to restore the skill.
    pub trash: String,
}

fn messages(diagnostics: &[Diagnostic]) -> Vec<LintMessage> {
    diagnostics.iter().map(|d| LintMessage { line: d.line, severity: d.severity, message: d.message.clone() }).collect()
}

/// 422 with lint's messages when any of them is an error; the messages otherwise.
fn passes_lint(diagnostics: Vec<Diagnostic>) -> Result<Vec<LintMessage>, ApiError> {
    let all = messages(&diagnostics);
    let errors: Vec<String> = diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| match d.line {
            Some(line) => format!("line {line}: {}", d.message),
            None => d.message.clone(),
        })
        .collect();
    if errors.is_empty() {
        return Ok(all);
    }
    let message = format!("SKILL.md fails lint, nothing was written: {}", errors.join("; "));
    let detail = serde_json::to_value(&all).unwrap_or_default();
    Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message).with_detail("diagnostics", detail))
}

impl Service {
    /// Creates the skill `draft` describes in the first skill root, then indexes it.
    pub async fn create_skill(self: &Arc<Self>, draft: SkillDraft) -> Result<SkillWritten, ApiError> {
        let text = skillrag_skill::compose(&draft).map_err(|e| {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("`{}`: {}", e.field, e.message))
                .with_detail("field", e.field.into())
        })?;
        let _writing = self.writes.lock().await;
        self.check_can_write()?;
        let name = draft.name.clone();
        if self.live().assistant.engine.skill_or_disabled(&name).is_ok() {
            return Err(ApiError::conflict(format!("a skill named `{name}` exists already")));
        }
        let root = self.new_skill_root();
        let diagnostics = passes_lint(skillrag_skill::check_skill_text(&root.join(&name), &text))?;
        self.note_pending(std::slice::from_ref(&name));
        let dir = blocking({
            let (root, name) = (root.clone(), name.clone());
            move || build_skill_folder(&root, &name, &text)
        })
        .await?;
        let job = self.start_job(vec![name.clone()], false, Reopen::Always)?;
        Ok(SkillWritten { skill: name, path: self.relative(&dir.join(SKILL_FILE)), diagnostics, job })
    }

    /// Replaces a skill's `SKILL.md` with `text` when lint finds no error in it, then re-indexes
    /// the skill (its `metadata` may change how it is chunked) and reopens the assistant.
    pub async fn write_skill_file(self: &Arc<Self>, skill: String, text: String) -> Result<SkillWritten, ApiError> {
        let _writing = self.writes.lock().await;
        self.check_writable(&skill)?;
        let dir = self.live().assistant.engine.skill(&skill)?.dir.clone();
        let diagnostics = passes_lint(skillrag_skill::check_skill_text(&dir, &text))?;
        self.note_pending(std::slice::from_ref(&skill));
        let file = dir.join(SKILL_FILE);
        blocking({
            let file = file.clone();
            move || replace_file(&file, text.as_bytes())
        })
        .await?;
        let job = self.start_job(vec![skill.clone()], false, Reopen::Always)?;
        Ok(SkillWritten { skill, path: self.relative(&file), diagnostics, job })
    }

    /// Turns a skill off (the [`skillrag_skill::DISABLED_MARKER`] in its folder: not routed to,
    /// its index kept) or on, and reopens the assistant. An enabled skill is indexed again,
    /// since its files may have changed while it was off.
    pub async fn set_skill_enabled(self: &Arc<Self>, skill: String, enabled: bool) -> Result<SkillToggled, ApiError> {
        let _writing = self.writes.lock().await;
        self.check_can_write()?;
        let dir = self.live().assistant.engine.skill_or_disabled(&skill)?.dir.clone();
        let marker = dir.join(skillrag_skill::DISABLED_MARKER);
        if std::fs::symlink_metadata(&marker).is_ok_and(|m| !m.is_file()) {
            return Err(ApiError::conflict(format!("{} is not a file: remove it by hand", self.relative(&marker))));
        }
        blocking(move || {
            skillrag_skill::set_disabled(&dir, !enabled).map_err(|e| {
                ApiError::internal(format!("cannot {} the skill: {e}", if enabled { "enable" } else { "disable" }))
            })
        })
        .await?;
        self.reload(Reopen::Always).await?;
        let job = if enabled { Some(self.start_job(vec![skill.clone()], false, Reopen::Always)?) } else { None };
        Ok(SkillToggled { skill, enabled, job })
    }

    /// Moves a skill's folder to `<state>/trash/` and drops its index; the assistant is reopened
    /// without it. A disabled skill may be deleted too.
    pub async fn delete_skill(self: &Arc<Self>, skill: String) -> Result<SkillDeleted, ApiError> {
        let _writing = self.writes.lock().await;
        self.check_can_write()?;
        let live = self.live();
        let found = live.assistant.engine.skill_or_disabled(&skill)?;
        let roots = live.assistant.engine.project.skill_roots();
        let trash = self.project_state().join("trash").join(format!("{skill}-{}", crate::now_secs()));
        blocking({
            let (dir, trash) = (found.dir.clone(), trash.clone());
            move || move_to_trash(&dir, &roots, &trash)
        })
        .await?;
        drop(live);
        self.reload(Reopen::Always).await?;
        let live = self.live();
        let id = skill.clone();
        blocking(move || Ok(live.assistant.engine.store().remove(&id).map_err(skillrag_engine::EngineError::from)?))
            .await?;
        Ok(SkillDeleted { skill, trash: self.relative(&trash) })
    }

    /// Renames a skill: its folder (in the same skill root) and its `SKILL.md` `name:` take
    /// `name`; the old index is dropped and the skill indexed under its new name (its chunk
    /// edits travel with the folder). Logs and `router.json` keep the old name until `tune`.
    pub async fn rename_skill(self: &Arc<Self>, skill: String, name: String) -> Result<SkillWritten, ApiError> {
        skillrag_skill::check_skill_name(&name)
            .map_err(|m| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, m).with_detail("field", "name".into()))?;
        let _writing = self.writes.lock().await;
        self.check_writable(&skill)?;
        let live = self.live();
        if live.assistant.engine.skill_or_disabled(&name).is_ok() {
            return Err(ApiError::conflict(format!("a skill named `{name}` exists already")));
        }
        let found = live.assistant.engine.skill(&skill)?.clone();
        let roots = live.assistant.engine.project.skill_roots();
        let text =
            skillrag_skill::read_skill_file(&found.dir, &found.id).map_err(|d| ApiError::conflict(d.to_string()))?;
        let renamed_text = skillrag_skill::with_name(&text, &name);
        let dir = found.dir.with_file_name(&name);
        let diagnostics = passes_lint(skillrag_skill::check_skill_text(&dir, &renamed_text))?;
        drop(live);
        self.note_pending(std::slice::from_ref(&name));
        blocking({
            let (from, to) = (found.dir.clone(), dir.clone());
            move || {
                // Only a real folder directly in a skill root is renamed, within that root.
                let meta = std::fs::symlink_metadata(&from).map_err(|e| ApiError::not_found(e.to_string()))?;
                let parent = from.parent().and_then(|p| p.canonicalize().ok());
                let inside = roots.iter().filter_map(|r| r.canonicalize().ok()).any(|r| Some(&r) == parent.as_ref());
                if !meta.is_dir() || !inside {
                    return Err(ApiError::conflict(
                        "the skill folder is a link or not in a skills folder: rename it by hand",
                    ));
                }
                if std::fs::symlink_metadata(&to).is_ok() {
                    return Err(ApiError::conflict("a folder of that name exists in the skills folder already"));
                }
                std::fs::rename(&from, &to)
                    .map_err(|e| ApiError::internal(format!("cannot rename the folder: {e}")))?;
                if let Err(e) = replace_file(&to.join(SKILL_FILE), renamed_text.as_bytes()) {
                    // Back as it was, so the skill keeps loading under its old name.
                    let _ = std::fs::rename(&to, &from);
                    return Err(e);
                }
                Ok(())
            }
        })
        .await?;
        self.reload(Reopen::Always).await?;
        let old = skill.clone();
        let live = self.live();
        blocking(move || Ok(live.assistant.engine.store().remove(&old).map_err(skillrag_engine::EngineError::from)?))
            .await?;
        let job = self.start_job(vec![name.clone()], false, Reopen::Always)?;
        Ok(SkillWritten { skill: name, path: self.relative(&dir.join(SKILL_FILE)), diagnostics, job })
    }

    /// Where a new skill goes: the first configured skill root (as `skillrag new` does).
    fn new_skill_root(&self) -> PathBuf {
        let project = &self.live().assistant.engine.project;
        project.config.skill_roots(&project.root).into_iter().next().unwrap_or_else(|| project.root.join("skills"))
    }

    fn project_state(&self) -> PathBuf {
        self.live().assistant.engine.project.state_dir()
    }

    /// `path` relative to the project root (clients never see the server's filesystem).
    fn relative(&self, path: &Path) -> String {
        let root = self.live().assistant.engine.project.root.clone();
        path.strip_prefix(&root).unwrap_or(path).display().to_string()
    }
}

/// The folder `root/name` with `SKILL.md` and an empty `knowledge/`, built under a temporary
/// name in `root` and renamed into place, so a half-written skill is never discovered.
fn build_skill_folder(root: &Path, name: &str, text: &str) -> Result<PathBuf, ApiError> {
    let cannot = |what: &str, e: std::io::Error| ApiError::internal(format!("cannot {what} `{name}`: {e}"));
    std::fs::create_dir_all(root).map_err(|e| cannot("create the skills folder for", e))?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .tempdir_in(root)
        .map_err(|e| cannot("prepare the folder of", e))?;
    std::fs::create_dir(staging.path().join("knowledge")).map_err(|e| cannot("create the knowledge folder of", e))?;
    std::fs::write(staging.path().join(SKILL_FILE), text).map_err(|e| cannot("write the SKILL.md of", e))?;
    let dir = root.join(name);
    // `symlink_metadata`: a dangling link of that name counts as taken, and is never followed.
    if std::fs::symlink_metadata(&dir).is_ok() {
        return Err(ApiError::conflict(format!(
            "`{name}` exists in the skills folder already (not a loadable skill: see `skillrag lint`)"
        )));
    }
    let staged = staging.keep();
    std::fs::rename(&staged, &dir).map_err(|e| {
        let _ = std::fs::remove_dir_all(&staged);
        cannot("create the folder of", e)
    })?;
    Ok(dir)
}

/// Replaces `file` with `bytes` through a temporary file beside it (created exclusively, then
/// renamed over it): a reader sees the old text or the new, never half of one. A `SKILL.md` that
/// is a link is not replaced (the link's target is what the author edits).
pub(crate) fn replace_file(file: &Path, bytes: &[u8]) -> Result<(), ApiError> {
    let shown = file.file_name().and_then(|n| n.to_str()).unwrap_or(SKILL_FILE).to_string();
    if std::fs::symlink_metadata(file).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(ApiError::conflict(format!("{shown} is a link: edit the file it points to")));
    }
    let dir = file.parent().ok_or_else(|| ApiError::internal("SKILL.md has no folder"))?;
    let cannot = |e: std::io::Error| ApiError::internal(format!("cannot save {shown}: {e}"));
    let mut staged = tempfile::Builder::new().prefix(".SKILL.md.").tempfile_in(dir).map_err(cannot)?;
    staged.write_all(bytes).map_err(cannot)?;
    staged.as_file().sync_all().map_err(cannot)?;
    staged.persist(file).map_err(|e| cannot(e.error))?;
    Ok(())
}

/// Moves the skill folder `dir` to `trash` when it is a real folder directly inside one of the
/// skill `roots` (never a link to somewhere else, which would move that instead).
fn move_to_trash(dir: &Path, roots: &[PathBuf], trash: &Path) -> Result<(), ApiError> {
    let shown = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
    let meta = std::fs::symlink_metadata(dir).map_err(|e| ApiError::not_found(format!("`{shown}`: {e}")))?;
    if !meta.is_dir() {
        return Err(ApiError::conflict(format!("`{shown}` is a link, not a skill folder: remove it by hand")));
    }
    let parent = dir.parent().and_then(|p| p.canonicalize().ok());
    let inside = roots.iter().filter_map(|r| r.canonicalize().ok()).any(|r| Some(&r) == parent.as_ref());
    if !inside {
        return Err(ApiError::conflict(format!("`{shown}` is not directly in a skills folder: remove it by hand")));
    }
    let cannot =
        |e: std::io::Error| ApiError::internal(format!("cannot move `{shown}` to the trash, nothing was deleted: {e}"));
    std::fs::create_dir_all(trash.parent().unwrap_or(trash)).map_err(cannot)?;
    std::fs::rename(dir, trash).map_err(cannot)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_skill_folder_appears_whole_or_not_at_all() {
        let root = tempfile::tempdir().unwrap();
        let dir = build_skill_folder(root.path(), "tea", "---\nname: tea\ndescription: d\n---\n").unwrap();
        assert!(dir.join("knowledge").is_dir() && dir.join(SKILL_FILE).is_file());
        let again = build_skill_folder(root.path(), "tea", "x").unwrap_err();
        assert_eq!(again.status, StatusCode::CONFLICT);
        // Nothing of the refused attempt is left behind: only `tea` itself.
        let names: Vec<_> = std::fs::read_dir(root.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["tea"]);
    }

    #[test]
    fn a_linked_skill_md_is_not_replaced_and_a_file_is_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(SKILL_FILE);
        std::fs::write(&file, "old").unwrap();
        replace_file(&file, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        let elsewhere = dir.path().join("elsewhere.md");
        std::fs::write(&elsewhere, "theirs").unwrap();
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
        assert_eq!(replace_file(&file, b"mine").unwrap_err().status, StatusCode::CONFLICT);
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "theirs");
    }

    #[test]
    fn only_a_real_folder_inside_a_skill_root_goes_to_the_trash() {
        let project = tempfile::tempdir().unwrap();
        let (root, outside) = (project.path().join("skills"), project.path().join("outside"));
        std::fs::create_dir_all(root.join("tea")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("linked")).unwrap();
        let trash = project.path().join(".skillrag/trash");
        let roots = [root.clone()];
        let refused = move_to_trash(&root.join("linked"), &roots, &trash.join("linked-1")).unwrap_err();
        assert_eq!(refused.status, StatusCode::CONFLICT);
        assert!(outside.is_dir());
        let refused = move_to_trash(&outside, &roots, &trash.join("outside-1")).unwrap_err();
        assert_eq!(refused.status, StatusCode::CONFLICT);
        move_to_trash(&root.join("tea"), &roots, &trash.join("tea-1")).unwrap();
        assert!(!root.join("tea").exists() && trash.join("tea-1").is_dir());
    }
}
