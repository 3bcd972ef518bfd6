use crate::{ChunkId, DocType, Tier};
use serde::{Deserialize, Serialize};

/// Scores of one hit in each retrieval list (DESIGN.md §1, §6). A list the hit did not
/// appear in (or that was not run) leaves its score `null`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct HitScores {
    pub bm25: Option<f32>,
    pub dense: Option<f32>,
    pub fused: f32,
    pub rerank: Option<f32>,
}

/// 1-based rank of the hit in each list it appeared in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct HitRanks {
    pub bm25: Option<usize>,
    pub dense: Option<usize>,
    pub fused: usize,
}

/// A retrieved chunk with its score breakdown, in the `hits` shape of the JSON contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    pub skill: String,
    pub source: String,
    pub heading: String,
    pub ordinal: u32,
    pub text: String,
    pub scores: HitScores,
    pub ranks: HitRanks,
    pub chunk_id: ChunkId,
    pub title: String,
    pub span: (usize, usize),
    pub doc_type: DocType,
    pub tier: Tier,
}
