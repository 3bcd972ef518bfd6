//! What a generation holds: its settings (meta) and the files it was built from (manifest).

use serde::{Deserialize, Serialize};
use skillrag_core::{DocType, Filter, Tier};
use std::collections::{BTreeMap, HashSet};

/// Bumped when the on-disk layout changes; older generations are rebuilt. 2: the BM25 index
/// keeps term positions (phrase statistics for routing).
pub const FORMAT_VERSION: u32 = 2;

/// Settings a generation was built with. Any difference from the current settings (other than
/// the counters) means the generation cannot be extended incrementally.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IndexMeta {
    pub format_version: u32,
    pub skill: String,
    /// Embedding model id, `None` for a lexical-only index.
    pub model_id: Option<String>,
    pub dim: usize,
    pub analyzer_version: u32,
    /// Chunking settings fingerprint (size, overlap, doc type presets).
    pub chunking: String,
    #[serde(default)]
    pub generation: u64,
    #[serde(default)]
    pub created_at: i64,
    #[serde(default)]
    pub chunks: usize,
    #[serde(default)]
    pub next_chunk_id: u64,
    /// Passages the model sees less of than this share were stored without a vector (they are
    /// never searched densely, so embedding them was wasted work); 0 = every passage embedded.
    #[serde(default)]
    pub min_visibility: f32,
    /// How many of the generation's chunks have no vector (set on commit).
    #[serde(default)]
    pub vectorless: usize,
}

impl IndexMeta {
    pub fn new(skill: &str, model_id: Option<String>, dim: usize, chunking: String) -> IndexMeta {
        IndexMeta {
            format_version: FORMAT_VERSION,
            skill: skill.to_string(),
            model_id,
            dim,
            analyzer_version: skillrag_text::ANALYZER_VERSION,
            chunking,
            generation: 0,
            created_at: 0,
            chunks: 0,
            next_chunk_id: 0,
            min_visibility: 0.0,
            vectorless: 0,
        }
    }

    /// The vector a new chunk brings, checked against this index: of the model's dimension, or
    /// none for a passage the model cannot see; ignored in a lexical-only index.
    pub(crate) fn checked_vector(&self, vector: Option<Vec<f32>>) -> Result<Option<Vec<f32>>, crate::StoreError> {
        match (vector, self.model_id.is_some()) {
            (Some(v), true) if v.len() == self.dim => Ok(Some(v)),
            (Some(v), true) => Err(crate::StoreError::Dimension { expected: self.dim, got: v.len() }),
            (_, _) => Ok(None),
        }
    }

    /// Numbers a chunk added to this generation: the next id of the skill's sequence, or, when
    /// `keep_id` (a copy from another store), its own id, with the sequence moved past it.
    pub(crate) fn number(&mut self, chunk: &mut skillrag_core::Chunk, keep_id: bool) {
        if keep_id {
            self.next_chunk_id = self.next_chunk_id.max(chunk.id + 1);
        } else {
            chunk.id = self.next_chunk_id;
            self.next_chunk_id += 1;
        }
    }

    /// Why `self` (the stored generation) cannot be extended by a run with `wanted` settings,
    /// or `None` when it can.
    pub fn rebuild_reason(&self, wanted: &IndexMeta) -> Option<String> {
        if self.format_version != wanted.format_version {
            return Some(format!("index format changed ({} → {})", self.format_version, wanted.format_version));
        }
        if self.model_id != wanted.model_id {
            let name = |m: &Option<String>| m.clone().unwrap_or_else(|| "none (lexical only)".into());
            return Some(format!("embedding model changed ({} → {})", name(&self.model_id), name(&wanted.model_id)));
        }
        if self.analyzer_version != wanted.analyzer_version {
            return Some("text analyzer changed".into());
        }
        if self.chunking != wanted.chunking {
            return Some(format!("chunking settings changed ({} → {})", self.chunking, wanted.chunking));
        }
        // Passages below the old threshold have no vector, and the new one wants some of them.
        // (A lower stored threshold holds every vector the new one needs.)
        if self.model_id.is_some() && self.min_visibility > wanted.min_visibility + 1e-6 {
            return Some(format!(
                "retrieval.min_visibility was lowered ({} → {}): passages stored without a vector now need one",
                self.min_visibility, wanted.min_visibility
            ));
        }
        None
    }
}

/// One indexed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    pub content_hash: String,
    pub mtime: i64,
    pub size: u64,
    pub chunks: usize,
    pub title: String,
    pub doc_type: DocType,
    pub tier: Tier,
    pub encoding: String,
    /// The questions of a FAQ file (routing examples when the skill opts in).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<String>,
    /// Of its chunks, those stored without a vector (the embedding model cannot see them).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub vectorless: usize,
    /// Pages whose text OCR read (0 for a picture), with the engine's confidence in percent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ocr_pages: Vec<(u32, u8)>,
    /// A picture's width and height in pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<(u32, u32)>,
    /// The fingerprint of the chunk edits this file was indexed with (`chunk-edits.json`): when
    /// the edits change, the file is chunked again though its bytes did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edits: Option<String>,
    /// When this version of the file was chunked (Unix seconds): a file carried over unchanged
    /// keeps its time, so "last indexed" is the file's, not the latest re-index's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub indexed_at: Option<i64>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The files a generation was built from, by source path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub files: BTreeMap<String, FileEntry>,
}

impl Manifest {
    /// The sources `filter` lets through; `None` when it lets everything through.
    pub fn allowed_sources(&self, filter: &Filter) -> Option<HashSet<String>> {
        filter.allowed_sources(self.files.iter().map(|(source, file)| (source.as_str(), file.doc_type)))
    }
}
