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

/// Reciprocal rank fusion of ranked hit lists (the question's and each extra query's): a chunk
/// scores Σ 1/(rrf_k + rank) over the lists it is in, divided by the number of lists so that
/// fused scores stay on the scale of one search. The first list's copy of a chunk is kept (its
/// BM25 and dense scores are the question's own). The best `k`, best first.
pub fn fuse_lists(lists: &[Vec<Hit>], rrf_k: f32, k: usize) -> Vec<Hit> {
    let mut fused: Vec<(Hit, f32)> = Vec::new();
    for list in lists {
        for (rank, hit) in list.iter().enumerate() {
            let score = 1.0 / (rrf_k + rank as f32 + 1.0);
            match fused.iter_mut().find(|(h, _)| h.chunk_id == hit.chunk_id) {
                Some((_, total)) => *total += score,
                None => fused.push((hit.clone(), score)),
            }
        }
    }
    let lists_run = lists.len().max(1) as f32;
    fused.sort_by(|a, b| b.1.total_cmp(&a.1));
    fused
        .into_iter()
        .take(k)
        .enumerate()
        .map(|(rank, (mut hit, score))| {
            hit.scores.fused = score / lists_run;
            hit.ranks.fused = rank + 1;
            hit
        })
        .collect()
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

    fn hit(id: u64) -> Hit {
        Hit {
            skill: "s".into(),
            source: format!("d{id}.md"),
            heading: String::new(),
            ordinal: 0,
            text: format!("chunk {id}"),
            scores: Default::default(),
            ranks: Default::default(),
            chunk_id: id,
            title: String::new(),
            span: (0, 10),
            doc_type: Default::default(),
            tier: Default::default(),
            pages: None,
            summary: None,
        }
    }

    #[test]
    fn rrf_fusion_rewards_chunks_found_by_several_queries() {
        let lists = vec![vec![hit(1), hit(2), hit(3)], vec![hit(3), hit(4)], vec![hit(3), hit(2)]];
        let fused = fuse_lists(&lists, 60.0, 3);
        let ids: Vec<u64> = fused.iter().map(|h| h.chunk_id).collect();
        assert_eq!(ids, vec![3, 2, 1], "3 is in all lists, 2 in two");
        assert_eq!(fused.iter().map(|h| h.ranks.fused).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert!(fused[0].scores.fused > fused[1].scores.fused);
        // One list alone keeps its order and the one-search scale.
        let single = fuse_lists(&lists[..1], 60.0, 10);
        assert_eq!(single.iter().map(|h| h.chunk_id).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert!((single[0].scores.fused - 1.0 / 61.0).abs() < 1e-6);
    }

    #[test]
    fn overlap_of_spans() {
        assert_eq!(overlap((0, 100), (50, 150)), 0.5);
        assert_eq!(overlap((0, 100), (100, 200)), 0.0);
        assert_eq!(overlap((0, 100), (10, 20)), 1.0);
    }
}
