//! Retrieve → filter → loop (DESIGN.md §4.4–4.6) inside the routed skill(s).
//!
//! Evidence is always measured against the *original* question (coverage of its informative
//! terms by the best chunk), so a reformulation can find other chunks but never inflate the
//! evidence. When the evidence stays below the fitted threshold after at most two reformulations
//! the result is `not_found` — decided here, in code.

use crate::evidence::TermStats;
use crate::route::{Probe, Question};
use skillrag_core::Hit;
use skillrag_engine::{Engine, EngineError, SearchOptions};
use skillrag_skill::Skill;
use skillrag_store::hybrid::{Mode, Query};

/// How a retry rewrites the retrieval query, without an LLM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reformulation {
    /// The question as asked.
    Original,
    /// Its keywords only (function words dropped), with the dense list weighted up.
    Keywords,
    /// Its keywords plus the skill's triggers, BM25 only.
    ExpandTriggers,
}

pub const ATTEMPTS: [Reformulation; 3] =
    [Reformulation::Original, Reformulation::Keywords, Reformulation::ExpandTriggers];

/// The outcome of retrieval in one skill.
#[derive(Debug, Clone)]
pub struct Retrieved {
    pub probe: Probe,
    pub attempts: usize,
    pub queries: Vec<String>,
    /// The best chunk covers enough of the question.
    pub strong: bool,
}

/// Runs the original question (reusing the routing probe when there is one) and, while
/// `answerable` says the evidence is weak, the reformulations, up to `max_attempts` in total; stops early when a retry
/// returns the chunks already seen.
#[allow(clippy::too_many_arguments)]
pub fn retrieve(
    engine: &Engine,
    skill: &Skill,
    question: &Question,
    prepared: &Query,
    stats: &TermStats,
    probe: Option<Probe>,
    hits: usize,
    max_attempts: usize,
    answerable: &dyn Fn(&Probe) -> bool,
) -> Result<Retrieved, EngineError> {
    let mut best: Option<Probe> = None;
    let mut seen: Vec<Vec<u64>> = Vec::new();
    let mut queries = Vec::new();
    let mut attempts = 0;
    for (i, reformulation) in ATTEMPTS.iter().take(max_attempts.max(1)).enumerate() {
        let (label, query, weights, mode) = match reformulation {
            Reformulation::Original => (question.text.clone(), prepared.clone(), None, Mode::Hybrid),
            Reformulation::Keywords => {
                let keywords = skillrag_text::keywords(&question.text, 8);
                let terms: Vec<String> = keywords.iter().flat_map(|k| skillrag_text::analyze(k)).collect();
                (keywords.join(" "), Query { terms, ..prepared.clone() }, Some((1.0, 2.0)), Mode::Hybrid)
            }
            Reformulation::ExpandTriggers => {
                let mut words = skillrag_text::keywords(&question.text, 8);
                words.extend(skill.triggers.iter().cloned());
                let terms: Vec<String> = words.iter().flat_map(|k| skillrag_text::analyze(k)).collect();
                (words.join(" "), Query { terms, vector: None, visibility: None }, None, Mode::Lexical)
            }
        };
        if query.terms.is_empty() && query.vector.is_none() {
            continue;
        }
        attempts += 1;
        queries.push(label);
        let current = match (i, &probe) {
            (0, Some(p)) => p.clone(),
            _ => {
                let options = SearchOptions {
                    skills: vec![skill.id.clone()],
                    k: Some(hits),
                    mode,
                    weights,
                    ..Default::default()
                };
                let result = engine.search_prepared(&question.text, &query, &options)?;
                let mut p = Probe::new(&skill.id, result.hits, question, stats);
                if let Some(s) = result.skills.first() {
                    p.dense_used = s.dense_used;
                    p.dense_skipped = s.dense_skipped.clone();
                }
                p
            }
        };
        let ids: Vec<u64> = current.hits.iter().take(5).map(|h| h.chunk_id).collect();
        let repeated = seen.contains(&ids);
        seen.push(ids);
        if best.as_ref().is_none_or(|b| current.best_coverage > b.best_coverage + 1e-6) {
            best = Some(current);
        }
        if best.as_ref().is_some_and(answerable) || repeated {
            break;
        }
    }
    let probe = best.unwrap_or_else(|| Probe { skill: skill.id.clone(), ..Default::default() });
    let strong = !probe.hits.is_empty() && answerable(&probe);
    Ok(Retrieved { probe, attempts, queries, strong })
}

/// Filters a probe's hits: drops chunks covering little of the question (unless the dense list
/// ranked them near the top) and near-duplicates (overlapping windows of one source).
pub fn filter(probe: &Probe, evidence: f32) -> Vec<(Hit, f32)> {
    let mut kept: Vec<(Hit, f32)> = Vec::new();
    for (hit, &cov) in probe.hits.iter().zip(&probe.coverages) {
        let dense_support = hit.ranks.dense.is_some_and(|r| r <= 3);
        if cov < evidence / 2.0 && !dense_support {
            continue;
        }
        let duplicate = kept.iter().any(|(k, _)| k.source == hit.source && overlap(k.span, hit.span) > 0.5);
        if !duplicate {
            kept.push((hit.clone(), cov));
        }
    }
    kept
}

/// Overlap of two spans as a share of the shorter one.
fn overlap(a: (usize, usize), b: (usize, usize)) -> f32 {
    let inter = a.1.min(b.1).saturating_sub(a.0.max(b.0));
    let shorter = (a.1 - a.0).min(b.1 - b.0).max(1);
    inter as f32 / shorter as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_of_spans() {
        assert_eq!(overlap((0, 100), (50, 150)), 0.5);
        assert_eq!(overlap((0, 100), (100, 200)), 0.0);
        assert_eq!(overlap((0, 100), (10, 20)), 1.0);
    }
}
