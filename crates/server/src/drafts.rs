//! Gaps that get closed (`POST /v1/gaps/{id}/draft`, `POST /v1/drafts/{id}/approve`,
//! `POST /v1/gaps/{id}/resolve`): a gap becomes a draft of new knowledge for the owner to edit
//! and approve, and the approved entry is written into the skill and indexed.
//!
//! - A question the knowledge lacks (`content`) or answered badly (`retrieval`) drafts a
//!   question/answer entry: the question as users asked it, and as the answer the best passage
//!   the skill has on it, to be rewritten by the owner. Approved, it is appended to the skill's
//!   `knowledge/answers-from-gaps.md` as a `## question` section (a chunk of its own, found by
//!   the question's words).
//!   With an LLM configured, the answer is the model's, written from the passages it cites and
//!   checked sentence by sentence as every answer is (the question asked again, unrecorded,
//!   of the gap's skill); when the model finds nothing it can support, the best passage stands in.
//! - An answer users rated 👍 (`liked`) drafts an entry with that answer, the question as they
//!   asked it: found by those words next time, whatever the passages' own wording.
//! - A question that went to the wrong skill (`routing`, a 👎 naming the right one) drafts a
//!   routing example for that skill; approved, it joins the `## Examples` of its `SKILL.md`
//!   (checked by lint first, like every `SKILL.md` write).
//!
//! Drafts are kept in `<state>/drafts/` until approved; approving marks the gap (or the liked
//! answer) resolved.

use crate::error::ApiError;
use crate::service::{blocking, IndexJob, Reopen, Service};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use skillrag_ask::GapCause;
use skillrag_engine::{Engine, SearchOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// Where approved question/answer entries go, in the skill's knowledge folder.
pub const ANSWERS_FILE: &str = "answers-from-gaps.md";
const ANSWERS_TITLE: &str = "# Answers added from gaps\n";
/// The longest question and answer a draft takes.
const MAX_QUESTION_CHARS: usize = 500;
const MAX_ANSWER_CHARS: usize = 20_000;

/// What a draft becomes when approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DraftKind {
    /// A question and its answer in the skill's knowledge.
    Entry,
    /// A routing example in the skill's `SKILL.md`.
    Example,
}

/// Who wrote a draft's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DraftedBy {
    /// The skill's best passage on the question, to be rewritten (no LLM, or none it supports).
    #[default]
    Passage,
    /// The LLM, from the passages it cites, each sentence checked against them.
    Llm,
    /// The answer users rated 👍.
    RatedAnswer,
    /// Nothing to start from: a routing example, or a question no passage is near.
    Nobody,
}

/// A draft of new knowledge built from a gap or a liked answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Draft {
    pub id: String,
    /// The gap (`g-…`) or the liked answer (`l-…`) it was drafted from.
    pub gap: String,
    pub kind: DraftKind,
    #[serde(default)]
    pub drafted_by: DraftedBy,
    /// The skill it is written into; `null` for a question no skill took (the owner names one).
    pub skill: Option<String>,
    pub question: String,
    /// The entry's answer (empty for an example).
    pub answer: String,
    /// Where the drafted answer came from (`source`, the best passage the skill has).
    pub sources: Vec<String>,
    pub created: u64,
}

/// The owner's changes when approving; each optional.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Approval {
    #[serde(default)]
    pub skill: Option<String>,
    #[serde(default)]
    pub question: Option<String>,
    #[serde(default)]
    pub answer: Option<String>,
}

/// A draft written: into which file, and the re-index that serves it.
#[derive(Debug, Serialize)]
pub struct Approved {
    pub draft: String,
    pub gap: String,
    pub skill: String,
    pub kind: DraftKind,
    /// The file written, relative to the project.
    pub path: String,
    pub job: IndexJob,
}

fn unprocessable(field: &'static str, message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message).with_detail("field", field.into())
}

impl Service {
    /// A draft for the gap (`g-…`) or liked answer (`l-…`) `id`, kept until approved.
    pub async fn draft(self: &Arc<Self>, id: String) -> Result<Draft, ApiError> {
        if id.starts_with("l-") {
            self.draft_from_liked(id).await
        } else {
            self.draft_from_gap(id).await
        }
    }

    /// An entry keeping the answer users rated 👍, under the question as they asked it.
    async fn draft_from_liked(self: &Arc<Self>, id: String) -> Result<Draft, ApiError> {
        let liked = self
            .liked(None, usize::MAX)
            .await?
            .into_iter()
            .find(|l| l.id == id)
            .ok_or_else(|| ApiError::not_found(format!("no liked answer `{id}` (see `liked` in GET /v1/gaps)")))?;
        let draft = Draft {
            id: draft_id(&liked.id),
            gap: liked.id,
            kind: DraftKind::Entry,
            drafted_by: DraftedBy::RatedAnswer,
            skill: Some(liked.skill),
            question: liked.query,
            // The entry is its own source: the answer's markers pointed at the passages it quoted.
            answer: without_markers(&liked.answer),
            sources: liked.sources,
            created: crate::now_secs(),
        };
        let drafts = self.drafts_dir();
        blocking(move || keep(&drafts, draft)).await
    }

    /// A draft entry (or routing example) for the gap `id`.
    async fn draft_from_gap(self: &Arc<Self>, id: String) -> Result<Draft, ApiError> {
        let gap = self
            .gaps(None, usize::MAX)
            .await?
            .into_iter()
            .find(|g| g.id == id)
            .ok_or_else(|| ApiError::not_found(format!("no open gap `{id}` (see GET /v1/gaps)")))?;
        let live = self.live();
        let drafts = self.drafts_dir();
        blocking(move || {
            let kind = if gap.cause == GapCause::Routing { DraftKind::Example } else { DraftKind::Entry };
            let (answer, sources, drafted_by) = match (&gap.skill, kind) {
                (Some(skill), DraftKind::Entry) if live.assistant.engine.skill(skill).is_ok() => {
                    written_by_llm(&live.assistant, skill, &gap.query)
                        .or_else(|| best_passage(&live.assistant.engine, skill, &gap.query))
                        .unwrap_or((String::new(), Vec::new(), DraftedBy::Nobody))
                }
                _ => (String::new(), Vec::new(), DraftedBy::Nobody),
            };
            let draft = Draft {
                id: draft_id(&gap.id),
                gap: gap.id,
                kind,
                drafted_by,
                skill: gap.skill,
                question: gap.query,
                answer,
                sources,
                created: crate::now_secs(),
            };
            keep(&drafts, draft)
        })
        .await
    }

    /// Writes the draft `id` (with the owner's changes) into its skill, resolves its gap and
    /// starts the re-index that serves it.
    pub async fn approve_draft(self: &Arc<Self>, id: String, approval: Approval) -> Result<Approved, ApiError> {
        let file = self.drafts_dir().join(format!("{id}.json"));
        let draft: Draft =
            std::fs::read(&file).ok().and_then(|b| serde_json::from_slice(&b).ok()).ok_or_else(|| {
                ApiError::not_found(format!("no draft `{id}` (drafts are made by POST /v1/gaps/{{id}}/draft)"))
            })?;
        let skill = approval
            .skill
            .or(draft.skill.clone())
            .ok_or_else(|| unprocessable("skill", "this question went to no skill: name the skill to write it into"))?;
        crate::paths::skill_id(&skill)?;
        let question = one_line(approval.question.as_deref().unwrap_or(&draft.question));
        if question.is_empty() || question.chars().count() > MAX_QUESTION_CHARS {
            return Err(unprocessable("question", format!("give a question of 1 to {MAX_QUESTION_CHARS} characters")));
        }
        let answer = approval.answer.unwrap_or(draft.answer.clone()).trim().to_string();
        if draft.kind == DraftKind::Entry && answer.is_empty() {
            return Err(unprocessable("answer", "write the answer the entry gives"));
        }
        if answer.chars().count() > MAX_ANSWER_CHARS {
            return Err(unprocessable("answer", format!("longer than {MAX_ANSWER_CHARS} characters")));
        }

        let _writing = self.writes.lock().await;
        self.check_writable(&skill)?;
        self.note_pending(std::slice::from_ref(&skill));
        let live = self.live();
        let kind = draft.kind;
        let target = skill.clone();
        let written = blocking(move || {
            let engine = &live.assistant.engine;
            let found = engine.skill(&target)?;
            match kind {
                DraftKind::Entry => append_entry(engine, found, &question, &answer),
                DraftKind::Example => add_example(found, &question),
            }
        })
        .await?;
        let reopen = if kind == DraftKind::Example { Reopen::Always } else { Reopen::IfPublished };
        let job = self.start_job(vec![skill.clone()], false, reopen)?;
        if let Some(log) = self.live().assistant.gap_log() {
            // The entry is written: a failure to note the gap resolved only leaves it listed.
            let _ = log.resolve(&draft.gap);
        }
        let _ = std::fs::remove_file(&file);
        let root = self.live().assistant.engine.project.root.clone();
        let path = written.strip_prefix(&root).unwrap_or(&written).display().to_string();
        Ok(Approved { draft: id, gap: draft.gap, skill, kind, path, job })
    }

    /// Marks the gap or liked answer `id` resolved.
    pub async fn resolve_gap(self: &Arc<Self>, id: String) -> Result<(), ApiError> {
        let open = if id.starts_with("l-") {
            self.liked(None, usize::MAX).await?.into_iter().any(|l| l.id == id)
        } else {
            self.gaps(None, usize::MAX).await?.into_iter().any(|g| g.id == id)
        };
        if !open {
            return Err(ApiError::not_found(format!("no open gap or liked answer `{id}` (see GET /v1/gaps)")));
        }
        let live = self.live();
        let log = live.assistant.gap_log().ok_or_else(|| ApiError::not_found("this project keeps no gaps"))?;
        log.resolve(&id).map_err(|e| ApiError::internal(format!("cannot mark the gap resolved: {e}")))
    }

    fn drafts_dir(&self) -> PathBuf {
        self.live().assistant.engine.project.state_dir().join("drafts")
    }
}

fn draft_id(from: &str) -> String {
    format!("d-{}", &skillrag_load::content_hash(format!("{from}\n{}", crate::now_secs()).as_bytes())[..12])
}

/// Writes `draft` into `<state>/drafts/`, where approving finds it.
fn keep(drafts: &std::path::Path, draft: Draft) -> Result<Draft, ApiError> {
    std::fs::create_dir_all(drafts).map_err(|e| ApiError::internal(format!("cannot keep the draft: {e}")))?;
    let json = serde_json::to_vec_pretty(&draft).map_err(|e| ApiError::internal(e.to_string()))?;
    std::fs::write(drafts.join(format!("{}.json", draft.id)), json)
        .map_err(|e| ApiError::internal(format!("cannot keep the draft: {e}")))?;
    Ok(draft)
}

/// The configured LLM's answer to `question` from `skill`'s passages, its citations' documents
/// as the sources: `None` without an LLM, when it refuses, or when none of its sentences is
/// supported (the extractive fallback is not the model's writing).
fn written_by_llm(
    assistant: &skillrag_ask::Assistant,
    skill: &str,
    question: &str,
) -> Option<(String, Vec<String>, DraftedBy)> {
    assistant.generator()?;
    let options = skillrag_ask::AskOptions { skill: Some(skill.to_string()), unrecorded: true, ..Default::default() };
    let answer = assistant.ask(question, &options, None, None).ok()?;
    let written = answer.generation.as_ref().is_some_and(|g| g.fallback.is_none());
    if answer.refusal.is_some() || !written {
        return None;
    }
    let mut sources: Vec<String> = Vec::new();
    for c in &answer.citations {
        if !sources.contains(&c.source) {
            sources.push(c.source.clone());
        }
    }
    Some((without_markers(&answer.answer), sources, DraftedBy::Llm))
}

/// The best passage `skill` has on `question`: what the owner rewrites.
fn best_passage(engine: &Engine, skill: &str, question: &str) -> Option<(String, Vec<String>, DraftedBy)> {
    let options = SearchOptions { skills: vec![skill.to_string()], k: Some(1), ..Default::default() };
    let hit = engine.search(question, &options).ok()?.hits.into_iter().next()?;
    Some((hit.text, vec![hit.source], DraftedBy::Passage))
}

/// `text` without its citation markers (`[1]`), which point into an answer's context, not
/// into the entry it becomes.
fn without_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('[') {
        out.push_str(&rest[..at]);
        match skillrag_ask::marker_len(&rest[at..]) {
            Some(len) => rest = &rest[at + len..],
            None => {
                out.push('[');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
    out.lines().map(str::trim_end).collect::<Vec<_>>().join("\n").trim().to_string()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Appends `## question` and its answer to the skill's answers file (made with its title when
/// missing). Headings inside the answer are escaped so the entry stays one section.
fn append_entry(
    engine: &Engine,
    skill: &skillrag_skill::Skill,
    question: &str,
    answer: &str,
) -> Result<PathBuf, ApiError> {
    // Where uploads go (`knowledge/` by default), never through a link out of the skill.
    let folder = crate::documents::upload_folder(engine, &skill.id)?;
    let file = crate::documents::knowledge_dir(engine, &skill.id, &folder)?.join(ANSWERS_FILE);
    if std::fs::symlink_metadata(&file).is_ok_and(|m| !m.is_file()) {
        return Err(ApiError::conflict(format!("{ANSWERS_FILE} of `{}` is not a plain file", skill.id)));
    }
    let body: Vec<String> = answer
        .lines()
        .map(|l| if l.trim_start().starts_with('#') { format!("\\{}", l.trim_start()) } else { l.to_string() })
        .collect();
    let fresh = !file.exists();
    let mut text = String::new();
    if fresh {
        text.push_str(ANSWERS_TITLE);
    }
    text.push_str(&format!("\n## {question}\n\n{}\n", body.join("\n")));
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .map_err(|e| ApiError::internal(format!("cannot write {ANSWERS_FILE}: {e}")))?;
    out.write_all(text.as_bytes()).map_err(|e| ApiError::internal(format!("cannot write {ANSWERS_FILE}: {e}")))?;
    Ok(file)
}

/// Adds `question` to the `## Examples` of the skill's `SKILL.md` (a section is added when it
/// has none); refused when lint would find an error in the result.
fn add_example(skill: &skillrag_skill::Skill, question: &str) -> Result<PathBuf, ApiError> {
    let file = skill.skill_file();
    let text = skillrag_skill::read_skill_file(&skill.dir, &skill.id).map_err(|d| ApiError::conflict(d.to_string()))?;
    let updated = skillrag_skill::with_example(&text, question);
    let errors: Vec<String> = skillrag_skill::check_skill_text(&skill.dir, &updated)
        .into_iter()
        .filter(|d| d.is_error())
        .map(|d| d.message)
        .collect();
    if !errors.is_empty() {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("SKILL.md with the example fails lint, nothing was written: {}", errors.join("; ")),
        ));
    }
    crate::skills::replace_file(&file, updated.as_bytes())?;
    Ok(file)
}
