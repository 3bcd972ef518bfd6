//! The bounded retry loop and the filter (docs/design.md §4.4–4.6) inside one routed skill.
//!
//! Evidence is always measured against the *original* question (coverage of its informative
//! terms by the best chunk), so a reformulation can find other chunks but never inflate the
//! evidence. When the evidence stays below the fitted threshold after at most two reformulations
//! the result is `not_found` — decided here, in code.

use super::InSkill;
use crate::base::question::Question;
use crate::stages::route::Probe;
use skillrag_core::{Hit, Mode, Query};
use skillrag_engine::{EngineError, SearchOptions};
use skillrag_skill::Skill;

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

/// What the bounded loop found in one skill.
#[derive(Debug, Clone)]
pub struct Retried {
    pub probe: Probe,
    pub attempts: usize,
    pub queries: Vec<String>,
    /// The best chunk covers enough of the question.
    pub strong: bool,
}

/// One reformulation as a search: its label (listed in the answer's `queries`), the query, the
/// (bm25, dense) weights and the lists that take part.
struct Search {
    label: String,
    query: Query,
    weights: Option<(f32, f32)>,
    mode: Mode,
}

fn reformulate(reformulation: Reformulation, question: &Question, prepared: &Query, skill: &Skill) -> Search {
    match reformulation {
        Reformulation::Original => {
            Search { label: question.text.clone(), query: prepared.clone(), weights: None, mode: Mode::Hybrid }
        }
        Reformulation::Keywords => {
            let keywords = skillrag_text::keywords(&question.text, 8);
            let terms: Vec<String> = keywords.iter().flat_map(|k| skillrag_text::analyze(k)).collect();
            Search {
                label: keywords.join(" "),
                query: Query { terms, ..prepared.clone() },
                weights: Some((1.0, 2.0)),
                mode: Mode::Hybrid,
            }
        }
        Reformulation::ExpandTriggers => {
            let mut words = skillrag_text::keywords(&question.text, 8);
            words.extend(skill.triggers.iter().cloned());
            let terms: Vec<String> = words.iter().flat_map(|k| skillrag_text::analyze(k)).collect();
            Search {
                label: words.join(" "),
                query: Query { terms, vector: None, visibility: None },
                weights: None,
                mode: Mode::Lexical,
            }
        }
    }
}

/// Runs the original question (reusing the routing probe `first` when there is one) and, while
/// `answerable` says the evidence is weak, the reformulations, up to `max_attempts` in total.
pub fn retry(
    at: &InSkill<'_>,
    first: Option<Probe>,
    max_attempts: usize,
    answerable: &dyn Fn(&Probe) -> bool,
) -> Result<Retried, EngineError> {
    let InSkill { engine, skill, question, prepared, stats, hits } = *at;
    let mut first = first;
    let mut search = |reformulation: Reformulation| -> Result<Option<(String, Probe)>, EngineError> {
        let Search { label, query, weights, mode } = reformulate(reformulation, question, prepared, skill);
        if query.terms.is_empty() && query.vector.is_none() {
            return Ok(None);
        }
        if let (Reformulation::Original, Some(p)) = (reformulation, first.take()) {
            return Ok(Some((label, p)));
        }
        let options =
            SearchOptions { skills: vec![skill.id.clone()], k: Some(hits), mode, weights, ..Default::default() };
        let result = engine.search_prepared(&question.text, &query, &options)?;
        let mut p = Probe::new(&skill.id, result.hits, question, stats);
        if let Some(s) = result.skills.first() {
            p.dense_used = s.dense_used;
            p.dense_skipped = s.dense_skipped.clone();
        }
        Ok(Some((label, p)))
    };
    let mut retried = bounded_loop(max_attempts, &mut search, answerable)?;
    if retried.probe.skill.is_empty() {
        retried.probe.skill = skill.id.clone();
    }
    Ok(retried)
}

/// The loop's stop rule, apart from searching: each reformulation in turn, at most
/// `max_attempts` run (one whose query is empty is skipped and not counted), keeping the probe
/// whose best document covers most; it stops as soon as that probe is answerable, or when a
/// retry returns the top chunks already seen (another wording would not find more).
fn bounded_loop<E>(
    max_attempts: usize,
    search: &mut dyn FnMut(Reformulation) -> Result<Option<(String, Probe)>, E>,
    answerable: &dyn Fn(&Probe) -> bool,
) -> Result<Retried, E> {
    let mut best: Option<Probe> = None;
    let mut seen: Vec<Vec<u64>> = Vec::new();
    let mut queries = Vec::new();
    let mut attempts = 0;
    for &reformulation in ATTEMPTS.iter().take(max_attempts.max(1)) {
        let Some((label, current)) = search(reformulation)? else { continue };
        attempts += 1;
        queries.push(label);
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
    let probe = best.unwrap_or_default();
    let strong = !probe.hits.is_empty() && answerable(&probe);
    Ok(Retried { probe, attempts, queries, strong })
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
    use crate::stages::retrieve::tests::hit;

    fn probe(ids: &[u64], best_coverage: f32) -> Probe {
        Probe { skill: "s".into(), hits: ids.iter().map(|&i| hit(i)).collect(), best_coverage, ..Default::default() }
    }

    /// Runs the loop over scripted probes, one per reformulation (`None` = an empty query).
    fn run(max: usize, script: Vec<Option<Probe>>) -> Retried {
        let mut script = script.into_iter();
        let mut search = |r: Reformulation| -> Result<Option<(String, Probe)>, ()> {
            Ok(script.next().flatten().map(|p| (format!("{r:?}"), p)))
        };
        bounded_loop(max, &mut search, &|p: &Probe| p.best_coverage >= 0.5).unwrap()
    }

    #[test]
    fn the_loop_stops_at_answerable_evidence() {
        let r = run(3, vec![Some(probe(&[1], 0.2)), Some(probe(&[2], 0.6)), Some(probe(&[3], 0.9))]);
        assert_eq!((r.attempts, r.strong, r.probe.best_coverage), (2, true, 0.6));
        assert_eq!(r.queries, ["Original", "Keywords"]);
        let r = run(3, vec![Some(probe(&[1], 0.7))]);
        assert_eq!(r.attempts, 1, "strong at once: no retry");
    }

    #[test]
    fn the_loop_keeps_the_best_and_is_bounded() {
        let r = run(3, vec![Some(probe(&[1], 0.3)), Some(probe(&[2], 0.1)), Some(probe(&[3], 0.2))]);
        assert_eq!((r.attempts, r.strong, r.probe.best_coverage), (3, false, 0.3));
        let r = run(2, vec![Some(probe(&[1], 0.3)), Some(probe(&[2], 0.1)), Some(probe(&[3], 0.9))]);
        assert_eq!((r.attempts, r.strong), (2, false), "max_attempts bounds the loop");
        let r = run(0, vec![Some(probe(&[1], 0.1)), Some(probe(&[2], 0.9))]);
        assert_eq!(r.attempts, 1, "at least one attempt");
    }

    #[test]
    fn the_loop_stops_when_a_retry_finds_the_same_chunks() {
        let r = run(3, vec![Some(probe(&[1, 2], 0.2)), Some(probe(&[1, 2], 0.3)), Some(probe(&[3], 0.9))]);
        assert_eq!((r.attempts, r.probe.best_coverage, r.strong), (2, 0.3, false));
    }

    #[test]
    fn an_empty_reformulation_is_skipped_uncounted() {
        let r = run(3, vec![Some(probe(&[1], 0.2)), None, Some(probe(&[3], 0.9))]);
        assert_eq!((r.attempts, r.queries.len(), r.strong), (2, 2, true));
        let r = run(3, vec![None, None, None]);
        assert_eq!((r.attempts, r.strong), (0, false));
        assert!(r.probe.hits.is_empty());
    }

    #[test]
    fn overlap_of_spans() {
        assert_eq!(overlap((0, 100), (50, 150)), 0.5);
        assert_eq!(overlap((0, 100), (100, 200)), 0.0);
        assert_eq!(overlap((0, 100), (10, 20)), 1.0);
    }
}
