//! Fusion, the one place retrieval lists are combined: hybrid retrieval inside one skill (BM25
//! top-N and dense top-N, fused with Reciprocal Rank Fusion, docs/design.md §4.4, with the score
//! and rank of every hit in each list), and [`reciprocal_rank_fusion`] for any other ranked lists
//! (the ask path's extra queries, routing's shortlist).
//!
//! A dense list is only fused when the embedding model could see the text: a model that reads
//! most of a question (or of the skill's passages) as `[UNK]` ranks by noise, and fusing noise
//! drags good BM25 hits down. Such a blind dense signal is dropped and the reason reported.

use skillrag_core::{ChunkId, Filter, Hit, HitRanks, HitScores, Mode, Query, Scored};
use skillrag_store::{SkillIndex, StoreError};
use std::collections::HashMap;
use std::hash::Hash;

#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// Hits to return.
    pub k: usize,
    /// Candidates taken from each list before fusion; 0 means `k`. Fusing only the top `k` of each
    /// list (Elasticsearch's `rank_window_size` default) keeps a chunk ranked first by one list
    /// from being outvoted by chunks both lists merely rank in their tail.
    pub candidates: usize,
    /// The RRF constant: fused = Σ weight / (rrf_k + rank).
    pub rrf_k: f32,
    pub bm25_weight: f32,
    pub dense_weight: f32,
    /// Minimum share of a text the embedding model must see for its dense ranking to count,
    /// applied to the question and to the skill's passages on average.
    pub min_visibility: f32,
    pub mode: Mode,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            k: 10,
            candidates: 0,
            rrf_k: 60.0,
            bm25_weight: 1.0,
            dense_weight: 1.0,
            min_visibility: 0.5,
            mode: Mode::Hybrid,
        }
    }
}

/// Hits plus what happened to each signal.
#[derive(Debug, Clone, Default)]
pub struct Retrieval {
    pub hits: Vec<Hit>,
    pub bm25_used: bool,
    pub dense_used: bool,
    /// Why the dense list was left out, when it was.
    pub dense_skipped: Option<String>,
}

/// Retrieves the best `params.k` chunks of one skill's index for `query`.
pub fn search(
    index: &dyn SkillIndex,
    query: &Query,
    params: &Params,
    filter: &Filter,
) -> Result<Retrieval, StoreError> {
    let mut out = Retrieval::default();
    let window = if params.candidates == 0 { params.k } else { params.candidates.max(params.k) };
    let lexical = if params.mode != Mode::Dense && !query.terms.is_empty() {
        out.bm25_used = true;
        index.lexical(&query.terms, window, filter)?
    } else {
        Vec::new()
    };

    let dense = if params.mode == Mode::Lexical {
        Vec::new()
    } else {
        match dense_gate(index, query, params) {
            Ok(vector) => {
                out.dense_used = true;
                index.dense(vector, window, filter)?
            }
            Err(reason) => {
                out.dense_skipped = Some(reason);
                Vec::new()
            }
        }
    };
    out.hits = fuse(index, &lexical, &dense, params);
    Ok(out)
}

/// The question vector when the dense signal can be trusted, else why not.
fn dense_gate<'q>(index: &dyn SkillIndex, query: &'q Query, params: &Params) -> Result<&'q [f32], String> {
    if query.vector.is_none() && query.visibility.is_none() {
        return Err("no embedding model configured".into());
    }
    if index.meta().model_id.is_none() {
        return Err("the index was built without an embedding model".into());
    }
    if params.mode != Mode::Dense {
        if let Some(visibility) = query.visibility.filter(|v| *v < params.min_visibility) {
            return Err(format!(
                "the embedding model sees only {:.0}% of the question (the rest is unknown tokens)",
                visibility * 100.0
            ));
        }
        if let Some(passages) = index.mean_visibility().filter(|v| *v < params.min_visibility) {
            return Err(format!(
                "the embedding model sees only {:.0}% of this skill's passages on average",
                passages * 100.0
            ));
        }
    }
    query.vector.as_deref().ok_or_else(|| "the question was not embedded".to_string())
}

/// Reciprocal Rank Fusion: every list, best first, adds `weight / (rrf_k + rank)` to the score
/// of each key it holds, the first key having rank 1. Returns every key once with its fused
/// score, best first. Ties go to the key the first list ranks better (a key it lacks ranks
/// last), then to the smaller key, so the order never depends on hashing. A key should appear
/// at most once per list.
///
/// Fusing several hit lists by chunk, each with weight 1:
/// `reciprocal_rank_fusion(lists.iter().map(|l| (1.0, l.iter().map(|h| h.chunk_id))), 60.0)`.
pub fn reciprocal_rank_fusion<K, L>(lists: impl IntoIterator<Item = (f32, L)>, rrf_k: f32) -> Vec<(K, f32)>
where
    K: Copy + Eq + Hash + Ord,
    L: IntoIterator<Item = K>,
{
    // Per key: (fused score, rank in the first list).
    let mut entries: HashMap<K, (f32, usize)> = HashMap::new();
    for (n, (weight, list)) in lists.into_iter().enumerate() {
        for (i, key) in list.into_iter().enumerate() {
            let rank = i + 1;
            let e = entries.entry(key).or_insert((0.0, usize::MAX));
            e.0 += weight / (rrf_k + rank as f32);
            if n == 0 {
                e.1 = rank;
            }
        }
    }
    let mut ranked: Vec<(K, (f32, usize))> = entries.into_iter().collect();
    ranked.sort_by(|(ka, a), (kb, b)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then_with(|| ka.cmp(kb)));
    ranked.into_iter().map(|(key, (score, _))| (key, score)).collect()
}

/// Reciprocal Rank Fusion of the two lists (BM25 first, so it breaks ties); every hit keeps
/// its score and rank in each.
fn fuse(index: &dyn SkillIndex, lexical: &[Scored], dense: &[Scored], params: &Params) -> Vec<Hit> {
    fn id(s: &Scored) -> ChunkId {
        s.id
    }
    let lists = [(params.bm25_weight, lexical.iter().map(id)), (params.dense_weight, dense.iter().map(id))];
    let fused = reciprocal_rank_fusion(lists, params.rrf_k);
    let score_and_rank = |list: &[Scored]| -> HashMap<ChunkId, (f32, usize)> {
        list.iter().enumerate().map(|(i, s)| (s.id, (s.score, i + 1))).collect()
    };
    let (bm25, dense) = (score_and_rank(lexical), score_and_rank(dense));
    fused
        .into_iter()
        .filter_map(|(id, fused)| index.chunk(id).map(|c| (c, fused, bm25.get(&id).copied(), dense.get(&id).copied())))
        .take(params.k)
        .enumerate()
        .map(|(i, (chunk, fused, bm25, dense))| {
            Hit::from_chunk(
                chunk,
                HitScores { bm25: bm25.map(|x| x.0), dense: dense.map(|x| x.0), fused, rerank: None },
                HitRanks { bm25: bm25.map(|x| x.1), dense: dense.map(|x| x.1), fused: i + 1 },
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hits(ids: &[ChunkId]) -> Vec<Hit> {
        let hit_of = |&id: &ChunkId| {
            let chunk = skillrag_core::Chunk {
                id,
                skill: String::new(),
                source: "a.md".into(),
                title: "a".into(),
                heading: vec![],
                ordinal: 0,
                span: (0, 4),
                doc_type: Default::default(),
                tier: Default::default(),
                mtime: 0,
                content_hash: String::new(),
                text: "text".into(),
                pages: None,
                summary: None,
                table_header: None,
                ocr_confidence: None,
                keywords: Vec::new(),
                questions: Vec::new(),
            };
            Hit::from_chunk(chunk, HitScores::default(), HitRanks::default())
        };
        ids.iter().map(hit_of).collect()
    }

    #[test]
    fn rrf_fuses_hit_lists_by_chunk_with_one_tie_break() {
        let lists = [hits(&[1, 2, 3]), hits(&[3, 2, 4])];
        let fused = reciprocal_rank_fusion(lists.iter().map(|l| (1.0, l.iter().map(|h| h.chunk_id))), 60.0);
        let ids: Vec<ChunkId> = fused.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, vec![3, 2, 1, 4]);
        assert_eq!(fused[0].1, 1.0 / 61.0 + 1.0 / 63.0);
        assert_eq!(fused[3].1, 1.0 / 63.0);
        // Equal scores: the first list's better rank wins, then the smaller key.
        let mirrored = reciprocal_rank_fusion([(1.0, vec![6, 5]), (1.0, vec![5, 6])], 60.0);
        assert_eq!(mirrored.iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![6, 5]);
        let unranked_first = reciprocal_rank_fusion([(1.0, vec![]), (1.0, vec![9]), (1.0, vec![8])], 60.0);
        assert_eq!(unranked_first.iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![8, 9]);
        // Weights scale each list's share.
        let weighted = reciprocal_rank_fusion([(0.0, vec![1]), (2.0, vec![2])], 60.0);
        assert_eq!(weighted, vec![(2, 2.0 / 61.0), (1, 0.0)]);
    }

    /// The two-list fusion `fuse` ran before the helper existed, as a reference.
    fn reference(lexical: &[ChunkId], dense: &[ChunkId], params: &Params) -> Vec<(ChunkId, f32)> {
        let mut entries: HashMap<ChunkId, (Option<usize>, f32)> = HashMap::new();
        for (i, id) in lexical.iter().enumerate() {
            let e = entries.entry(*id).or_insert((None, 0.0));
            e.1 += params.bm25_weight / (params.rrf_k + (i + 1) as f32);
            e.0 = Some(i + 1);
        }
        for (i, id) in dense.iter().enumerate() {
            entries.entry(*id).or_insert((None, 0.0)).1 += params.dense_weight / (params.rrf_k + (i + 1) as f32);
        }
        let mut ranked: Vec<(ChunkId, (Option<usize>, f32))> = entries.into_iter().collect();
        ranked.sort_by(|(ida, a), (idb, b)| {
            b.1.total_cmp(&a.1)
                .then_with(|| a.0.unwrap_or(usize::MAX).cmp(&b.0.unwrap_or(usize::MAX)))
                .then_with(|| ida.cmp(idb))
        });
        ranked.into_iter().map(|(id, (_, fused))| (id, fused)).collect()
    }

    #[test]
    fn rrf_ranks_and_scores_as_the_two_list_fusion_did() {
        let mut seed = 7u64;
        let mut next = move |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for round in 0..200 {
            let mut lexical: Vec<ChunkId> = (0..30).filter(|_| next(3) > 0).collect();
            let mut dense: Vec<ChunkId> = (0..30).collect();
            for list in [&mut lexical, &mut dense] {
                for i in (1..list.len()).rev() {
                    list.swap(i, next(i as u64 + 1) as usize);
                }
            }
            if round % 4 == 0 {
                // Mirrored lists tie every pair of chunks.
                dense = lexical.iter().rev().copied().collect();
            }
            let params = Params { bm25_weight: [1.0, 0.5, 2.0][round % 3], ..Params::default() };
            let fused = reciprocal_rank_fusion(
                [(params.bm25_weight, lexical.iter().copied()), (params.dense_weight, dense.iter().copied())],
                params.rrf_k,
            );
            assert_eq!(fused, reference(&lexical, &dense, &params), "round {round}");
        }
    }
}
