//! The answer and its parts: the public JSON contract of docs/design.md §6 (extend, never rename).

use serde::{Deserialize, Serialize};
use skillrag_core::Hit;

/// How the dispatcher decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Single,
    Multi,
    Ambiguous,
    None,
}

impl Decision {
    /// The name used in the JSON contract (`single`, `multi`, `ambiguous`, `none`).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Single => "single",
            Decision::Multi => "multi",
            Decision::Ambiguous => "ambiguous",
            Decision::None => "none",
        }
    }
}

/// One candidate skill with the signals behind its confidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    pub skill: String,
    /// Calibrated confidence that this skill is the right one, in [0, 1].
    pub score: f32,
    /// Triggers found in the question.
    pub keyword_hits: Vec<String>,
    /// Embedding similarity of the question to the skill profile; `null` when the model cannot see the text.
    pub dense: Option<f32>,
    /// BM25-weighted share of the question's terms found in the skill profile.
    pub profile: f32,
    /// How much more the skill's knowledge uses the question's words than general language: the
    /// mean clipped log likelihood ratio of the skill's language model against general language,
    /// in [-1, 1] (0: no more than general language; resource selection, docs/design.md §4.2).
    pub specificity: f32,
    /// BM25-weighted share of the question's terms found in the skill's best chunk.
    pub knowledge: f32,
    /// Embedding similarity of the question to the skill's nearest chunk, when visible.
    pub knowledge_dense: Option<f32>,
    /// The question and the skill are in the same language (for Chinese: the same script,
    /// Simplified or Traditional).
    pub language_match: bool,
}

/// The dispatcher's decision (docs/design.md §1 Route).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Route {
    pub skills: Vec<String>,
    pub confidence: f32,
    pub decision: Decision,
    #[serde(default)]
    pub candidates: Vec<Candidate>,
    /// Why retrieval was skipped entirely (`chitchat` or `rewrite`), when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// The skill was named by the caller (`--skill`), not chosen.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forced: bool,
    /// The skills the LLM picked when it was asked to settle an ambiguous route (`[llm] route`);
    /// empty when it said none fits. Absent when it was not asked, or its replies were unusable
    /// or disagreed (it is asked with the skills in both orders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_vote: Option<Vec<String>>,
    /// For a `multi` route: each part of the question and the skill that answers it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<RoutePart>,
}

/// One part of a multi-intent question and the skill it was routed to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoutePart {
    pub text: String,
    pub skill: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalKind {
    /// No skill fits the question.
    OutOfScope,
    /// A skill fits, but its knowledge base has nothing after retries.
    NotFound,
    /// Two skills fit about equally: ask which.
    Ambiguous,
    /// The skill's SKILL.md says it does not do this.
    Boundary,
}

impl RefusalKind {
    /// The name used in the JSON contract (`out_of_scope`, `not_found`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalKind::OutOfScope => "out_of_scope",
            RefusalKind::NotFound => "not_found",
            RefusalKind::Ambiguous => "ambiguous",
            RefusalKind::Boundary => "boundary",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Refusal {
    pub kind: RefusalKind,
    pub message: String,
}

/// A numbered source of the answer: `n` is its `[n]` in the answer, numbered from 1 in the order
/// the answer uses them; `context_n` is the same passage's label in `context`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Citation {
    pub n: usize,
    #[serde(default)]
    pub context_n: usize,
    pub skill: String,
    pub source: String,
    pub heading: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<(u32, u32)>,
    /// The cited source is a picture (a PNG, JPEG, WebP or TIFF read by OCR): where to get it
    /// and its size. Absent for every other document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<CitedPicture>,
    /// What the cited passage holds, where its location and heading do not say it: the articles
    /// of a statute passage (`第十九条`, `第十八条–第二十条`), or its opening words when another
    /// citation of the answer reads the same (see `citation_labels`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// A cited picture: `path` is the source as the source endpoints take it
/// (`GET /v1/skills/{skill}/pictures/{path}` serves its bytes), `width` × `height` in pixels,
/// `bytes` its file size.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CitedPicture {
    pub path: String,
    pub width: u32,
    pub height: u32,
    pub bytes: u64,
}

impl Citation {
    /// `source` with its page (`manual.pdf p. 12`) when the document has pages.
    pub fn location(&self) -> String {
        skillrag_core::cited_location(&self.source, self.pages)
    }

    /// How the citation is listed under an answer (after its `[n]`):
    /// `skill/location › heading · label`.
    pub fn note(&self) -> String {
        let mut note = skillrag_core::cited_path(&self.skill, &self.location());
        if !self.heading.is_empty() {
            note.push_str(" › ");
            note.push_str(&self.heading);
        }
        if let Some(label) = &self.label {
            note.push_str(" · ");
            note.push_str(label);
        }
        note
    }
}

/// The byte length of a citation marker `[12]` at the start of `s`, if there is one.
pub fn marker_len(s: &str) -> Option<usize> {
    let rest = s.strip_prefix('[')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0 && rest[digits..].starts_with(']')).then_some(digits + 2)
}

/// A labelled piece of the compiled context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContextPiece {
    pub n: usize,
    pub tier: String,
    pub skill: String,
    pub source: String,
    pub heading: String,
    pub chunk_id: u64,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<(u32, u32)>,
    /// What the document is about, for a chunk of a long document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

impl ContextPiece {
    pub fn location(&self) -> String {
        skillrag_core::cited_location(&self.source, self.pages)
    }

    /// The citation an answer gives for this piece.
    pub fn citation(&self) -> Citation {
        Citation {
            n: self.n,
            context_n: self.n,
            skill: self.skill.clone(),
            source: self.source.clone(),
            heading: self.heading.clone(),
            pages: self.pages,
            image: None,
            label: None,
        }
    }
}

/// The material an answer may draw on, in tier order, within the budget.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Context {
    pub pieces: Vec<ContextPiece>,
    /// Chunks left out because the budget was spent: `skill/source#ordinal`.
    pub dropped: Vec<String>,
    pub budget: usize,
    pub used: usize,
    /// `chars` without an LLM tokenizer.
    pub unit: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    pub gate: f64,
    pub route: f64,
    pub retrieve: f64,
    pub generate: f64,
    pub total: f64,
}

/// One answered (or refused) question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// The caller's id (batch mode), echoed back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// This answer's own id (`a-…`), what feedback on it refers to (`POST /v1/feedback`).
    #[serde(default)]
    pub answer_id: String,
    pub query: String,
    pub route: Route,
    pub retrieved: bool,
    #[serde(default)]
    pub attempts: usize,
    #[serde(default)]
    pub hits: Vec<Hit>,
    pub answer: String,
    #[serde(default)]
    pub citations: Vec<Citation>,
    pub refusal: Option<Refusal>,
    #[serde(default)]
    pub timings_ms: Timings,
    /// Retrieval queries tried, in order (the original first).
    #[serde(default)]
    pub queries: Vec<String>,
    /// A compare question's plan: one retrieval step per side (empty for other questions).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub plan: Vec<PlanStep>,
    #[serde(default)]
    pub context: Context,
    /// Problems the user should fix (an index built with another embedding model…).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// How the LLM wrote the answer, when one is configured and was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<GenerationInfo>,
    /// What the reader decided, when one is configured and was asked (docs/design.md §4.9).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reader: Option<ReaderInfo>,
}

/// The reader's part in an answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReaderInfo {
    pub model: String,
    /// `answered` (it accepted a candidate answer), `refused` (it accepted none), or `failed`
    /// (it could not be asked; the lexical decision stood).
    pub decision: String,
    /// The candidate answers judged, in order, each with P(it answers the question).
    pub verdicts: Vec<f32>,
    /// The 1-based candidate it accepted: 1 is the extractive answer's own first choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<usize>,
    /// The lexical evidence was below its threshold, in the band only the reader may accept.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub weak_evidence: bool,
    pub ms: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One step of a compare question's plan: a side searched on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanStep {
    /// 1-based, in the question's order.
    pub step: usize,
    /// The skill the side's evidence came from (the routed skill when it found none).
    pub skill: String,
    /// What was searched for the side.
    pub query: String,
}

/// The LLM's part in an answer: speed, and what the citation check did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GenerationInfo {
    /// `openai:MODEL@URL` or `gguf:FILE`.
    pub model: String,
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    pub first_token_ms: f64,
    pub tokens_per_second: f64,
    /// Sentences of the model's answer, and how many of them their cited passage supports.
    pub sentences: usize,
    pub supported: usize,
    /// Sentences left out because no retrieved passage supports them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsupported: Vec<String>,
    /// Citations that pointed at no passage and were removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_citations: Vec<usize>,
    /// Markers that named no passage (`[n]` copied from the prompt, `[citation]`…), as written,
    /// and removed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_placeholders: Vec<String>,
    /// Why the extractive answer was given instead of the model's (an LLM error, or no
    /// supported sentence); `null` when the model's answer was used.
    pub fallback: Option<String>,
    /// The model's answer as written, before the check.
    pub raw: String,
    /// The evidence came from the model's own search query after the question's retrieval
    /// stayed weak (the model then judged it); a failure here is `not_found`, not extractive.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rescued: bool,
    /// The model's self-check (`[llm] self_check`): `true` when its verdicts were used (the
    /// sentences it rejected are among `unsupported`), `false` when its reply was unusable and
    /// only the lexical check applied; absent when it was not asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_checked: Option<bool>,
}

impl Route {
    /// Routed nowhere: no skill, no confidence, no signals. The other routes are built from it.
    pub fn none() -> Route {
        Route {
            skills: vec![],
            confidence: 0.0,
            decision: Decision::None,
            candidates: vec![],
            gate: None,
            forced: false,
            llm_vote: None,
            parts: vec![],
        }
    }
}

impl Answer {
    /// A question before any stage has run: routed nowhere, nothing retrieved, no refusal.
    pub fn new(id: Option<String>, query: String) -> Answer {
        Answer {
            id,
            answer_id: crate::base::ids::new_id('a'),
            query,
            route: Route::none(),
            retrieved: false,
            attempts: 0,
            hits: vec![],
            answer: String::new(),
            citations: vec![],
            refusal: None,
            timings_ms: Default::default(),
            queries: vec![],
            plan: vec![],
            context: Default::default(),
            warnings: vec![],
            generation: None,
            reader: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_the_json_contract() {
        for d in [Decision::Single, Decision::Multi, Decision::Ambiguous, Decision::None] {
            assert_eq!(serde_json::to_value(d).unwrap(), d.as_str());
        }
        for k in [RefusalKind::OutOfScope, RefusalKind::NotFound, RefusalKind::Ambiguous, RefusalKind::Boundary] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
    }
}

/// A request the gate answers without knowledge (docs/design.md §4.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateKind {
    Chitchat,
    Rewrite,
}

impl GateKind {
    pub fn as_str(self) -> &'static str {
        match self {
            GateKind::Chitchat => "chitchat",
            GateKind::Rewrite => "rewrite",
        }
    }
}
