//! The LLM's part in retrieval (`[llm]`): other wordings of the question and a hypothetical
//! passage (multi-query and HyDE, fused with the question's own list by RRF), and the rescue —
//! the model's own search query when the question's retrieval stayed weak.

use super::InSkill;
use crate::base::settings::LlmSteps;
use crate::llm::Assist;
use crate::stages::route::Probe;
use skillrag_core::{Hit, Language, Mode};
use skillrag_engine::reciprocal_rank_fusion;
use skillrag_engine::{EngineError, SearchOptions};
use std::collections::HashMap;

/// Multi-query and HyDE retrieval: the question's probe `base` fused (RRF) with the results of
/// the LLM's other wordings and of its hypothetical passage. Coverage is still measured against
/// the question itself, so the extra queries can find other chunks but never make weak evidence
/// look strong. Returns the probe and the queries run.
pub fn expand(
    at: &InSkill<'_>,
    assist: &Assist,
    steps: &LlmSteps,
    rrf_k: f32,
    base: Option<Probe>,
    language: Language,
) -> Result<(Option<Probe>, Vec<String>), EngineError> {
    let InSkill { engine, skill, question, stats, hits: k, .. } = *at;
    let Some(mut base) = base else { return Ok((None, Vec::new())) };
    let mut queries = match steps.multi_query {
        0 => Vec::new(),
        n => assist.wordings(&skill.description, &question.text, n, language),
    };
    let passage = steps.hyde.then(|| assist.hypothetical_passage(&skill.description, &question.text, language));
    let mut labels = queries.clone();
    if let Some(p) = passage.flatten() {
        labels.push(format!("HyDE: {p}"));
        queries.push(p);
    }
    if queries.is_empty() {
        return Ok((Some(base), labels));
    }
    let mut lists = vec![std::mem::take(&mut base.hits)];
    for query in &queries {
        let prepared = engine.prepare_query(query, Mode::Hybrid)?;
        // The question's own list is the reranked one; the extra lists only add candidates.
        let options = SearchOptions { skills: vec![skill.id.clone()], k: Some(k), rerank: false, ..Default::default() };
        lists.push(engine.search_prepared(query, &prepared, &options)?.hits);
    }
    let fused = fuse_lists(&lists, rrf_k, k);
    let probe = Probe {
        notice: base.notice,
        dense_used: base.dense_used,
        dense_skipped: base.dense_skipped,
        ..Probe::new(&skill.id, fused, question, stats)
    };
    Ok((Some(probe), labels))
}

/// The agent loop's last retry: the LLM's search query for the question, in the skill, `k`
/// hits. `None` when its query finds nothing.
pub fn rescue(
    at: &InSkill<'_>,
    rewriter: &Assist,
    k: usize,
    language: Language,
) -> Result<Option<(String, Vec<Hit>)>, EngineError> {
    let InSkill { engine, skill, question, .. } = *at;
    let Some(query) = rewriter.search_query(&skill.description, &question.text, language) else { return Ok(None) };
    let prepared = engine.prepare_query(&query, Mode::Hybrid)?;
    let options = SearchOptions { skills: vec![skill.id.clone()], k: Some(k.max(1)), ..Default::default() };
    let hits = engine.search_prepared(&query, &prepared, &options)?.hits;
    Ok((!hits.is_empty()).then_some((query, hits)))
}

/// Reciprocal rank fusion of ranked hit lists (the question's and each extra query's), each
/// weighing 1, divided by the number of lists so that fused scores stay on the scale of one
/// search. A chunk's first copy is kept (the question's list comes first, so its BM25 and dense
/// scores are the question's own). The best `k`, best first.
pub fn fuse_lists(lists: &[Vec<Hit>], rrf_k: f32, k: usize) -> Vec<Hit> {
    let fused = reciprocal_rank_fusion(lists.iter().map(|l| (1.0, l.iter().map(|h| h.chunk_id))), rrf_k);
    let mut copies: HashMap<u64, &Hit> = HashMap::new();
    for hit in lists.iter().flatten() {
        copies.entry(hit.chunk_id).or_insert(hit);
    }
    let lists_run = lists.len().max(1) as f32;
    let mut out = Vec::new();
    for (id, score) in fused.into_iter().take(k) {
        if let Some(&hit) = copies.get(&id) {
            let mut hit = hit.clone();
            hit.scores.fused = score / lists_run;
            hit.ranks.fused = out.len() + 1;
            out.push(hit);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stages::retrieve::tests::hit;

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
}
