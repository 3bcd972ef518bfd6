//! Route (DESIGN.md §4.2): which skill(s) a question belongs to, with a calibrated confidence.
//!
//! Signals per candidate skill: trigger hits (substrings and jieba terms), BM25-weighted term
//! coverage of the question by the skill profile, embedding similarity to the profile (only when
//! the model can see the text), the same two measures against the skill's knowledge (its best
//! chunks), and whether the question is in the skill's language. A fitted logistic regression
//! ([`model`]) turns them into a confidence; fitted thresholds decide single / multi /
//! ambiguous / none.

pub mod model;
pub mod profile;

use crate::answer::{Candidate, Decision, Route};
use crate::evidence::{coverage, TermStats};
use model::{RouterModel, Signals};
use profile::SkillProfile;
use skillrag_core::{Hit, Language};
use std::collections::{HashMap, HashSet};

/// A question as the dispatcher sees it.
#[derive(Debug, Clone)]
pub struct Question {
    pub text: String,
    pub lower: String,
    pub terms: Vec<String>,
    pub term_set: HashSet<String>,
    pub language: Language,
    /// Its embedding, when the model can see it.
    pub vector: Option<Vec<f32>>,
}

impl Question {
    pub fn new(text: &str, terms: Vec<String>, vector: Option<Vec<f32>>) -> Question {
        Question {
            text: text.to_string(),
            lower: text.to_lowercase(),
            term_set: terms.iter().cloned().collect(),
            terms,
            language: Language::detect(text),
            vector,
        }
    }
}

/// What searching one skill's knowledge with the question found.
#[derive(Debug, Clone, Default)]
pub struct Probe {
    pub skill: String,
    pub hits: Vec<Hit>,
    /// Coverage of the question by each hit.
    pub coverages: Vec<f32>,
    /// Coverage by the best single document: the union of its retrieved chunks. An answer spread
    /// over neighbouring chunks (articles of one statute) counts; words scattered over unrelated
    /// documents do not.
    pub best_coverage: f32,
    /// Coverage by each document (union of its retrieved chunks), best first.
    pub source_coverages: Vec<(String, f32)>,
    pub best_dense: Option<f32>,
    pub dense_used: bool,
    pub dense_skipped: Option<String>,
    /// Why this skill's search was degraded (index built with another model…).
    pub notice: Option<String>,
}

impl Probe {
    pub fn new(skill: &str, hits: Vec<Hit>, question: &Question, stats: &TermStats) -> Probe {
        let term_sets: Vec<HashSet<String>> = hits
            .iter()
            .map(|h| skillrag_text::analyze(&format!("{}\n{}\n{}", h.title, h.heading, h.text)).into_iter().collect())
            .collect();
        let coverages: Vec<f32> =
            term_sets.iter().map(|set| coverage(&question.terms, stats, |t| set.contains(t))).collect();
        let mut by_source: HashMap<&str, HashSet<&str>> = HashMap::new();
        for (hit, set) in hits.iter().zip(&term_sets) {
            by_source.entry(hit.source.as_str()).or_default().extend(set.iter().map(String::as_str));
        }
        let mut source_coverages: Vec<(String, f32)> = by_source
            .iter()
            .map(|(source, set)| (source.to_string(), coverage(&question.terms, stats, |t| set.contains(t))))
            .collect();
        source_coverages.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let best_coverage = source_coverages.first().map_or(0.0, |s| s.1);
        let best_dense = hits.iter().filter_map(|h| h.scores.dense).max_by(f32::total_cmp);
        Probe {
            skill: skill.to_string(),
            hits,
            coverages,
            best_coverage,
            source_coverages,
            best_dense,
            ..Default::default()
        }
    }
}

/// The profiles of every skill.
pub struct Dispatcher {
    pub profiles: Vec<SkillProfile>,
}

impl Dispatcher {
    /// Signals of `question` for every skill. `leave_out` = (skill, example index) removes one
    /// example from its own profile, for fitting on the examples themselves.
    pub fn signals(
        &self,
        question: &Question,
        stats: &TermStats,
        probes: &HashMap<String, Probe>,
        leave_out: Option<(&str, usize)>,
    ) -> Vec<Signals> {
        self.profiles
            .iter()
            .map(|p| {
                let skip = leave_out.filter(|(s, _)| *s == p.skill).map(|(_, i)| i);
                let keyword_hits: Vec<String> = p
                    .triggers
                    .iter()
                    .filter(|t| t.matches(&question.lower, &question.term_set))
                    .map(|t| t.text.clone())
                    .collect();
                let probe = probes.get(&p.skill);
                Signals {
                    skill: p.skill.clone(),
                    keyword_hits,
                    profile: coverage(&question.terms, stats, |t| p.has_term(t, skip)),
                    dense: question.vector.as_ref().and_then(|v| p.dense_similarity(v, skip)),
                    vocabulary: coverage(&question.terms, stats, |t| stats.known_in(&p.skill, t)),
                    knowledge: probe.map_or(0.0, |p| p.best_coverage),
                    knowledge_dense: probe.and_then(|p| p.best_dense),
                    language_match: p.language == question.language,
                }
            })
            .collect()
    }

    /// The decision for signals already computed.
    pub fn decide(&self, model: &RouterModel, signals: &[Signals]) -> Route {
        let mut candidates: Vec<Candidate> = signals
            .iter()
            .map(|s| Candidate {
                skill: s.skill.clone(),
                score: model.confidence(s),
                keyword_hits: s.keyword_hits.clone(),
                dense: s.dense,
                profile: s.profile,
                vocabulary: s.vocabulary,
                knowledge: s.knowledge,
                knowledge_dense: s.knowledge_dense,
                language_match: s.language_match,
            })
            .collect();
        candidates.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.skill.cmp(&b.skill)));
        let top = candidates.first().map_or(0.0, |c| c.score);
        let second = candidates.get(1).map_or(0.0, |c| c.score);
        let (decision, skills) = if candidates.is_empty() || top < model.accept {
            (Decision::None, Vec::new())
        } else if second >= model.in_domain && top - second < model.margin {
            (Decision::Ambiguous, vec![candidates[0].skill.clone(), candidates[1].skill.clone()])
        } else {
            (Decision::Single, vec![candidates[0].skill.clone()])
        };
        Route { skills, confidence: top, decision, candidates, gate: None, forced: false, llm_vote: None }
    }
}

/// Splits a question into the parts that may each ask something different (multi-intent).
pub fn clauses(question: &str) -> Vec<String> {
    let mut parts = vec![question.to_string()];
    for sep in ["另外", "还有", "此外", "以及", "顺便问一下", "顺便问下", " also ", " Also "] {
        parts = parts.iter().flat_map(|p| p.split(sep).map(str::to_string).collect::<Vec<_>>()).collect();
    }
    parts = parts
        .iter()
        .flat_map(|p| {
            p.split_inclusive(['？', '?', '；', ';', '。', '！', '!']).map(str::to_string).collect::<Vec<_>>()
        })
        .collect();
    parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| p.chars().filter(|c| c.is_alphanumeric()).count() >= 4)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_clauses() {
        assert_eq!(clauses("试用期最长多久？另外，年休假有几天？"), vec!["试用期最长多久？", "，年休假有几天？"]);
        assert_eq!(clauses("What is R0? Also, how do I reset the router?").len(), 2);
        assert_eq!(clauses("试用期最长多久").len(), 1);
    }
}
