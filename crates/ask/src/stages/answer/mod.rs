//! Answer (docs/design.md §4.8): with an LLM, the model writes the answer from the compiled context
//! and every sentence is checked against it; without one — or when the model's answer cannot be
//! used — the extractive answer stands. A gated request gets a fixed reply, or the model's.

mod expect;
mod extract;
mod generate;
mod read;
mod units;

use crate::base::settings::GenerateSettings;
pub use generate::OnText;
pub(crate) use units::Surroundings;

use crate::base::contract::GateKind;
use crate::base::contract::{Citation, Context, GenerationInfo, ReaderInfo};
use crate::base::evidence::TermStats;
use crate::base::messages;
use crate::base::question::Question;
use crate::reader::Reader;
use generate::{Fallback, Written};
use skillrag_core::{Hit, Language};
use skillrag_generate::Generator;
use skillrag_skill::Skill;

/// How the answer stage ended for a question with evidence.
#[derive(Debug, PartialEq)]
pub enum Outcome {
    /// The model's checked answer.
    Written { text: String, citations: Vec<Citation>, generation: GenerationInfo },
    /// The model judged that the context does not answer the question, or could not use
    /// evidence only it could judge (the rescue's), or the context holds nothing that can be
    /// quoted as an answer (only headings, questions or rules): `not_found`.
    NotFound { generation: Option<GenerationInfo> },
    /// The extractive answer; with what the model did and why it was not used, when it was asked.
    Extracted { text: String, citations: Vec<Citation>, generation: Option<GenerationInfo>, warning: Option<String> },
}

/// What the answer is drawn from.
pub struct Evidence<'a> {
    /// The question as retrieval saw it (coverage is measured against its terms).
    pub question: &'a Question,
    pub stats: &'a TermStats,
    pub context: &'a Context,
    /// The evidence came from the LLM's own query: the model must judge it.
    pub rescued: bool,
    /// The evidence is below the threshold, within the reader's band: only an answer the reader
    /// (or the LLM, judging) accepts is given.
    pub unsure: bool,
    /// The document text around each context piece (for the extractive answer).
    pub surroundings: &'a [Surroundings],
    /// The retrieved hits, best first.
    pub hits: &'a [Hit],
    /// A multi-intent question's parts, each answered from its own skill (empty otherwise).
    pub parts: &'a [Part<'a>],
    /// A compare question's sides, compiled side by side in `context` (empty otherwise): the
    /// model is told to cover and cite each side; the extractive answer is a table, one row per side.
    pub sides: &'a [Side<'a>],
}

/// A part of a multi-intent question: its skill, its text, and its analysis.
pub struct Part<'a> {
    pub skill: &'a str,
    pub text: &'a str,
    pub question: &'a Question,
    pub stats: &'a TermStats,
}

/// Answers `asked` (the question as the user wrote it) in `language` from the evidence, with
/// `generator` when one may be used in this turn; the extractive answer is chosen by `reader`
/// among its candidates when one is configured. Also returns what the reader did.
#[allow(clippy::too_many_arguments)]
pub fn answer(
    generator: Option<&dyn Generator>,
    reader: Option<&Reader>,
    skill: &Skill,
    asked: &str,
    evidence: &Evidence<'_>,
    settings: &GenerateSettings,
    language: Language,
    on_text: Option<OnText<'_>>,
) -> (Outcome, Option<ReaderInfo>) {
    let Evidence { question, stats, context, rescued, unsure, surroundings, hits, parts, sides } = *evidence;
    let written = generator.map(|g| {
        // Evidence the lexical check could not judge is always judged by the model.
        let settings = GenerateSettings { judge: settings.judge || rescued || unsure, ..settings.clone() };
        let mut messages = generate::prompt(skill, context, asked, question.language, settings.judge);
        if let (false, Some(system)) = (sides.is_empty(), messages.first_mut()) {
            let names: Vec<&str> = sides.iter().map(|s| s.name).collect();
            system.content.push_str(&messages::compare_instruction(question.language, &names));
        }
        generate::write(g, messages, context, &settings, language, on_text)
    });
    let mut read_info = None;
    let outcome = settle(written, rescued, language, || {
        let max = reader.map_or(1, |r| r.max_calls);
        let candidates = match (parts, sides) {
            ([], []) => {
                let mut candidates =
                    extract::candidates(question, stats, context, surroundings, hits, max, reader.is_some());
                for passage in extract::passages(context, surroundings, hits, reader.map_or(0, |r| r.passages)) {
                    if !candidates.iter().any(|c| c.0 == passage.0) {
                        candidates.push(passage);
                    }
                }
                candidates
            }
            ([], sides) => extract::extract_sides(sides, context, surroundings, hits, language)
                .or_else(|| extract::extract(question, stats, context, surroundings, hits))
                .into_iter()
                .collect(),
            (parts, _) => extract::extract_parts(parts, context, surroundings, hits, language).into_iter().collect(),
        };
        match reader {
            Some(reader) if !candidates.is_empty() => {
                let (pick, info) = read::select(reader, asked, candidates, unsure);
                read_info = Some(info);
                pick
            }
            // Weak evidence without a reader to accept it is not answered (it is kept only for one).
            _ if unsure => None,
            _ => candidates.into_iter().next(),
        }
    });
    (outcome, read_info)
}

/// A side of a compare question: its name, its own analysis, and its pieces in the context.
pub struct Side<'a> {
    pub name: &'a str,
    pub question: &'a Question,
    pub stats: &'a TermStats,
    /// Indexes into the context's pieces.
    pub pieces: &'a [usize],
}

/// Which answer stands, given what the model wrote (`None`: it was not asked). The extractive
/// answer is made only when the model's is not used.
fn settle(
    written: Option<Result<Written, Box<Fallback>>>,
    rescued: bool,
    language: Language,
    extract: impl FnOnce() -> Option<(String, Vec<Citation>)>,
) -> Outcome {
    match written {
        Some(Ok(w)) if w.judged_not_found => {
            Outcome::NotFound { generation: Some(GenerationInfo { rescued, ..w.info }) }
        }
        Some(Ok(w)) => {
            Outcome::Written { text: w.text, citations: w.citations, generation: GenerationInfo { rescued, ..w.info } }
        }
        Some(Err(fallback)) => {
            let Fallback { reason, info } = *fallback;
            let generation = GenerationInfo { rescued, fallback: Some(reason.clone()), ..info };
            if rescued {
                // Weak evidence the model could not use: the extractive answer would be weak too.
                return Outcome::NotFound { generation: Some(generation) };
            }
            match extract() {
                Some((text, citations)) => Outcome::Extracted {
                    text,
                    citations,
                    generation: Some(generation),
                    warning: Some(messages::llm_failed(language, &reason)),
                },
                None => Outcome::NotFound { generation: Some(generation) },
            }
        }
        None => match extract() {
            Some((text, citations)) => Outcome::Extracted { text, citations, generation: None, warning: None },
            None => Outcome::NotFound { generation: None },
        },
    }
}

/// The reply to a gated request.
#[derive(Debug, PartialEq, Default)]
pub struct Reply {
    pub text: String,
    pub generation: Option<GenerationInfo>,
    pub warning: Option<String>,
}

/// The model's reply to a gated request when `generator` may write one, else the fixed reply
/// (also when the model fails, with a notice). `skills` are `(id, description)`.
pub fn gated(
    generator: Option<&dyn Generator>,
    kind: GateKind,
    text: &str,
    skills: &[(String, String)],
    settings: &GenerateSettings,
    language: Language,
    on_text: Option<OnText<'_>>,
) -> Reply {
    let fixed = messages::gate_reply(kind, language, skills);
    let Some(generator) = generator else { return Reply { text: fixed, generation: None, warning: None } };
    match generate::reply_without_retrieval(generator, kind, text, skills, settings, language, on_text) {
        Ok((text, info)) => Reply { text, generation: Some(info), warning: None },
        Err(fallback) => {
            let Fallback { reason, info } = *fallback;
            let warning = Some(messages::llm_failed(language, &reason));
            Reply { text: fixed, generation: Some(GenerationInfo { fallback: Some(reason), ..info }), warning }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(judged_not_found: bool) -> Option<Result<Written, Box<Fallback>>> {
        let info = GenerationInfo { model: "m".into(), ..Default::default() };
        Some(Ok(Written { text: "The answer [1].".into(), citations: vec![], info, judged_not_found }))
    }

    fn failed() -> Option<Result<Written, Box<Fallback>>> {
        let info = GenerationInfo { model: "m".into(), ..Default::default() };
        Some(Err(Box::new(Fallback { reason: "server down".into(), info })))
    }

    fn extracted() -> Option<(String, Vec<Citation>)> {
        Some(("Extracted [1].".into(), vec![]))
    }

    #[test]
    fn the_model_answer_stands_when_usable() {
        let outcome = settle(written(false), false, Language::Other, || panic!("not extracted"));
        assert!(matches!(outcome, Outcome::Written { ref text, .. } if text == "The answer [1]."));
        let outcome = settle(written(true), true, Language::Other, || panic!("not extracted"));
        assert!(matches!(outcome, Outcome::NotFound { generation: Some(ref generation) } if generation.rescued));
    }

    #[test]
    fn the_extractive_answer_stands_in_for_a_failed_model() {
        match settle(failed(), false, Language::Other, extracted) {
            Outcome::Extracted { text, generation, warning, .. } => {
                assert_eq!(text, "Extracted [1].");
                assert_eq!(generation.and_then(|g| g.fallback).as_deref(), Some("server down"));
                assert!(warning.is_some_and(|w| w.contains("server down")));
            }
            other => panic!("{other:?}"),
        }
        let none = settle(None, false, Language::Other, extracted);
        let expected =
            Outcome::Extracted { text: "Extracted [1].".into(), citations: vec![], generation: None, warning: None };
        assert_eq!(none, expected, "without a model");
        // Rescued evidence the model could not judge is not answered extractively.
        assert!(matches!(
            settle(failed(), true, Language::Other, || panic!("not extracted")),
            Outcome::NotFound { .. }
        ));
    }

    #[test]
    fn a_gated_request_without_a_model_gets_the_fixed_reply() {
        let settings =
            GenerateSettings { max_tokens: 10, temperature: 0.0, judge: false, min_support: 0.5, self_check: false };
        let skills = vec![("tea".to_string(), "Tea".to_string())];
        let reply = gated(None, GateKind::Chitchat, "hi", &skills, &settings, Language::Other, None);
        assert_eq!(reply.text, messages::gate_reply(GateKind::Chitchat, Language::Other, &skills));
        assert_eq!((reply.generation, reply.warning), (None, None));
    }
}
