use crate::{Chunk, ChunkId, DocType, Tier};
use serde::{Deserialize, Serialize};

/// Scores of one hit in each retrieval list (docs/design.md §1, §6). A list the hit did not
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
    // Extensions of the contract; optional when reading answers produced elsewhere.
    #[serde(default)]
    pub ranks: HitRanks,
    #[serde(default)]
    pub chunk_id: ChunkId,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub span: (usize, usize),
    #[serde(default)]
    pub doc_type: DocType,
    #[serde(default)]
    pub tier: Tier,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<(u32, u32)>,
    /// The document summary of a long document (see [`crate::Chunk::summary`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

impl Hit {
    /// A chunk as a hit with the given scores.
    pub fn from_chunk(chunk: Chunk, scores: HitScores, ranks: HitRanks) -> Hit {
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

    /// Where the hit can be found, as cited: `manual.pdf p. 12`, or just the source.
    pub fn location(&self) -> String {
        crate::chunk::cited_location(&self.source, self.pages)
    }
}
