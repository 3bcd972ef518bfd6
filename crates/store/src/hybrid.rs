//! Hybrid retrieval inside one skill: BM25 top-N and dense top-N, fused with Reciprocal Rank
//! Fusion (DESIGN.md §4.4), with the score and rank of every hit in each list.
//!
//! A dense list is only fused when the embedding model could see the text: a model that reads
//! most of a question (or of the skill's passages) as `[UNK]` ranks by noise, and fusing noise
//! drags good BM25 hits down. Such a blind dense signal is dropped and the reason reported.

use crate::{Filter, Scored, SkillIndex, StoreError};
use skillrag_core::{Chunk, ChunkId, Hit, HitRanks, HitScores};
use std::collections::HashMap;

/// Which lists take part (the benchmark compares all three).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Hybrid,
    Lexical,
    Dense,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "hybrid" => Some(Mode::Hybrid),
            "bm25" | "lexical" => Some(Mode::Lexical),
            "dense" => Some(Mode::Dense),
            _ => None,
        }
    }
}

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

/// A question prepared for retrieval: analyzed terms and, when a model is configured, its vector.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub terms: Vec<String>,
    /// The question's embedding; `None` without a model, or when it was not worth computing.
    pub vector: Option<Vec<f32>>,
    /// Share of the question the embedding model can see (`None` without a model).
    pub visibility: Option<f32>,
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

/// Reciprocal Rank Fusion of the two lists; every hit keeps its score and rank in each.
pub fn fuse(index: &dyn SkillIndex, lexical: &[Scored], dense: &[Scored], params: &Params) -> Vec<Hit> {
    struct Entry {
        bm25: Option<(f32, usize)>,
        dense: Option<(f32, usize)>,
        fused: f32,
    }
    let mut entries: HashMap<ChunkId, Entry> = HashMap::new();
    let mut add = |list: &[Scored], weight: f32, is_dense: bool| {
        for (i, s) in list.iter().enumerate() {
            let rank = i + 1;
            let e = entries.entry(s.id).or_insert(Entry { bm25: None, dense: None, fused: 0.0 });
            e.fused += weight / (params.rrf_k + rank as f32);
            if is_dense {
                e.dense = Some((s.score, rank));
            } else {
                e.bm25 = Some((s.score, rank));
            }
        }
    };
    add(lexical, params.bm25_weight, false);
    add(dense, params.dense_weight, true);

    let mut ranked: Vec<(ChunkId, Entry)> = entries.into_iter().collect();
    ranked.sort_by(|(ida, a), (idb, b)| {
        b.fused
            .total_cmp(&a.fused)
            .then_with(|| a.bm25.map(|x| x.1).unwrap_or(usize::MAX).cmp(&b.bm25.map(|x| x.1).unwrap_or(usize::MAX)))
            .then_with(|| ida.cmp(idb))
    });
    ranked
        .into_iter()
        .filter_map(|(id, e)| index.chunk(id).map(|c| (c, e)))
        .take(params.k)
        .enumerate()
        .map(|(i, (chunk, e))| {
            hit(
                chunk,
                HitScores { bm25: e.bm25.map(|x| x.0), dense: e.dense.map(|x| x.0), fused: e.fused, rerank: None },
                HitRanks { bm25: e.bm25.map(|x| x.1), dense: e.dense.map(|x| x.1), fused: i + 1 },
            )
        })
        .collect()
}

/// A chunk as a hit with the given scores.
pub fn hit(chunk: Chunk, scores: HitScores, ranks: HitRanks) -> Hit {
    Hit {
        heading: chunk.heading_line(),
        skill: chunk.skill,
        source: chunk.source,
        ordinal: chunk.ordinal,
        text: chunk.text,
        scores,
        ranks,
        chunk_id: chunk.id,
        title: chunk.title,
        span: chunk.span,
        doc_type: chunk.doc_type,
        tier: chunk.tier,
        pages: chunk.pages,
        summary: chunk.summary,
    }
}
