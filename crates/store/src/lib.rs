//! The store stage of the index path: storage only, read by the retrieval half of the ask path.
//!
//! [`Store`] keeps one knowledge base per skill: chunks with their metadata, a BM25 index
//! and dense vectors. A store publishes whole *generations*: a writer builds the next one
//! beside the current and switches atomically, so a reader never sees a half-written index
//! and a crash leaves the last good generation serving. Fusing the lists a store returns is
//! the engine's work (`skillrag_engine`'s fusion), not the store's.
//!
//! [`EmbeddedStore`] is the default: tantivy for BM25 (with the project analyzer) and a flat
//! vector file scanned exactly, one folder per skill. [`PostgresStore`] keeps the same
//! generations in PostgreSQL with pgvector, for replicas and large deployments.

mod cache;
mod checksum;
#[cfg(any(test, feature = "testkit"))]
pub mod conformance;
mod dense;
mod embedded;
mod manifest;
mod postgres;

pub use cache::{CacheCheck, EmbeddingCache};
pub use embedded::EmbeddedStore;
pub use manifest::{FileEntry, IndexMeta, Manifest, FORMAT_VERSION};
pub use postgres::{is_postgres_url, redact, PgSkillIndex, PoolOptions, PostgresStore, SCHEMA_VERSION};

use skillrag_core::{Chunk, ChunkId, Filter, Scored};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    // The cause is in the message and not a `source`, so that error chains (`{:#}`) do not
    // print it twice.
    #[error("{path}: {cause}")]
    Io { path: String, cause: std::io::Error },
    #[error("index of skill `{skill}` is corrupt ({detail}); run `skillrag index --skill {skill} --rebuild`")]
    Corrupt { skill: String, detail: String },
    /// The search library's message; whether it was the device running out of space is read
    /// here, at the crate edge, so the library's error type stays inside this crate.
    #[error("search engine: {message}")]
    Search { message: String, disk_full: bool },
    #[error("another `skillrag index` is writing the index of skill `{0}`; wait for it to finish")]
    Locked(String),
    #[error("vector of dimension {got} does not match the index ({expected})")]
    Dimension { expected: usize, got: usize },
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Database(String),
    /// The database cannot be reached, or no pooled connection came free in time.
    #[error("{0}")]
    Unavailable(String),
    /// A write against a read-only replica.
    #[error("{0}")]
    ReadOnly(String),
    #[error("{detail}")]
    SchemaVersion { found: i32, expected: i32, detail: String },
}

impl From<tantivy::TantivyError> for StoreError {
    fn from(e: tantivy::TantivyError) -> Self {
        // tantivy wraps the I/O error in its own types, behind an `Arc` and not as a `source`.
        let disk_full = match &e {
            tantivy::TantivyError::IoError(io) => is_full(io),
            tantivy::TantivyError::OpenWriteError(tantivy::directory::error::OpenWriteError::IoError {
                io_error,
                ..
            }) => is_full(io_error),
            _ => false,
        };
        StoreError::Search { message: e.to_string(), disk_full }
    }
}

/// Whether an I/O error is the device running out of space.
fn is_full(e: &std::io::Error) -> bool {
    const ENOSPC: i32 = 28; // the same on Linux and macOS
    e.kind() == std::io::ErrorKind::StorageFull || e.raw_os_error() == Some(ENOSPC)
}

impl StoreError {
    pub(crate) fn io(path: impl AsRef<std::path::Path>, cause: std::io::Error) -> Self {
        StoreError::Io { path: path.as_ref().display().to_string(), cause }
    }

    /// Whether this is the device running out of space, which the user fixes by freeing some.
    pub fn is_disk_full(&self) -> bool {
        match self {
            StoreError::Io { cause, .. } => is_full(cause),
            StoreError::Search { disk_full, .. } => *disk_full,
            _ => false,
        }
    }
}

/// What [`Store::check`] verified of one skill's current generation.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Check {
    pub generation: Option<u64>,
    pub chunks: usize,
    /// Files read and compared with their checksums, and their bytes.
    pub files: usize,
    pub bytes: u64,
    /// False for a generation written before checksums existed (only tantivy's own were checked).
    pub checksummed: bool,
}

/// Persists skills' knowledge bases.
pub trait Store: Send + Sync {
    /// The current generation of a skill's index; `None` when it was never indexed.
    fn open(&self, skill: &str) -> Result<Option<Arc<dyn SkillIndex>>, StoreError>;

    /// Starts the next generation of a skill's index. Nothing is visible until
    /// [`IndexWriter::commit`]; dropping the writer abandons the generation.
    fn begin(&self, skill: &str, meta: IndexMeta) -> Result<Box<dyn IndexWriter>, StoreError>;

    /// The number of the published generation, cheap to ask: readers reopen when it changes.
    fn generation(&self, skill: &str) -> Result<Option<u64>, StoreError>;

    /// Skills that have an index.
    fn skills(&self) -> Result<Vec<String>, StoreError>;

    /// Deletes a skill's index (the skill was removed from the project).
    fn remove(&self, skill: &str) -> Result<(), StoreError>;

    /// Bytes used by a skill's current generation, if the store can tell.
    fn size_on_disk(&self, skill: &str) -> Option<u64>;

    /// Whether [`Store::begin`] can work here; a read replica says why not.
    fn writable(&self) -> Result<(), StoreError> {
        Ok(())
    }

    /// Verifies a skill's current generation; `None` when it was never indexed. A store that
    /// keeps no checksums of its own (a database) just opens it.
    fn check(&self, skill: &str) -> Result<Option<Check>, StoreError> {
        Ok(self.open(skill)?.map(|index| Check {
            generation: Some(index.meta().generation),
            chunks: index.len(),
            ..Check::default()
        }))
    }

    /// Moves aside whatever keeps a skill from being indexed again (a damaged generation, a bad
    /// `CURRENT`, a file where a folder belongs), one line per thing moved. Nothing by default.
    fn repair(&self, _skill: &str) -> Result<Vec<String>, StoreError> {
        Ok(Vec::new())
    }

    /// What earlier repairs moved aside for a skill (`gen-N.corrupt-TIME`…) and left for the
    /// user to inspect and delete, with its size in bytes. Nothing by default.
    fn set_aside(&self, _skill: &str) -> Vec<(PathBuf, u64)> {
        Vec::new()
    }
}

/// One published generation of one skill's index; cheap to share between threads.
pub trait SkillIndex: Send + Sync {
    fn meta(&self) -> &IndexMeta;
    fn manifest(&self) -> &Manifest;
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// BM25 over the analyzed `terms` (from [`skillrag_text::analyze`]).
    fn lexical(&self, terms: &[String], limit: usize, filter: &Filter) -> Result<Vec<Scored>, StoreError>;

    /// The number of chunks containing each analyzed term (for IDF across skills).
    fn doc_freqs(&self, terms: &[String]) -> Result<Vec<u64>, StoreError>;

    /// The number of chunks in which each pair of analyzed terms occurs side by side, in that
    /// order (a phrase of the knowledge: 劳动 关系 for 劳动关系, which jieba splits). `None` when the
    /// index keeps no term positions (the PostgreSQL store keeps term sets): routing then reads
    /// single words alone.
    fn phrase_doc_freqs(&self, _pairs: &[(String, String)]) -> Result<Option<Vec<u64>>, StoreError> {
        Ok(None)
    }

    /// Exact cosine similarity against every stored vector; empty when the index has none.
    fn dense(&self, query: &[f32], limit: usize, filter: &Filter) -> Result<Vec<Scored>, StoreError>;

    fn chunk(&self, id: ChunkId) -> Option<Chunk>;

    /// The stored vector of a chunk (`None` for a passage stored without one, which the model
    /// could not see) and the share of its text the model could see. `None` for an unknown
    /// chunk or an index without vectors.
    fn vector(&self, id: ChunkId) -> Option<(Option<Vec<f32>>, f32)>;

    /// Mean visibility of the stored passages to the embedding model (`None` without vectors).
    fn mean_visibility(&self) -> Option<f32>;

    /// All chunks of one source, in document order.
    fn chunks_of(&self, source: &str) -> Vec<Chunk>;

    /// The chunks of one source with their vectors, as another store's writer takes them
    /// ([`IndexWriter::import`]): a copy between stores without re-embedding.
    fn export(&self, source: &str) -> Result<Vec<NewChunk>, StoreError> {
        let has_vectors = self.meta().model_id.is_some();
        self.chunks_of(source)
            .into_iter()
            .map(|chunk| {
                let (vector, visibility) = match self.vector(chunk.id) {
                    Some(stored) => stored,
                    None if has_vectors => {
                        return Err(StoreError::Corrupt {
                            skill: self.meta().skill.clone(),
                            detail: format!("chunk {} of {source} has no vector", chunk.id),
                        })
                    }
                    None => (None, 0.0),
                };
                Ok(NewChunk { chunk, vector, visibility })
            })
            .collect()
    }
}

/// A chunk to store with its embedding (`None` in a lexical-only index).
#[derive(Debug, Clone)]
pub struct NewChunk {
    pub chunk: Chunk,
    pub vector: Option<Vec<f32>>,
    pub visibility: f32,
}

/// Builds the next generation of one skill's index.
pub trait IndexWriter {
    /// Carries every chunk of `source` over from the previous generation unchanged
    /// (no re-chunking, no re-embedding). Returns how many chunks were kept.
    fn keep(&mut self, source: &str) -> Result<usize, StoreError>;

    /// Adds new chunks. Their ids are assigned here, continuing the skill's sequence.
    fn add(&mut self, chunks: Vec<NewChunk>) -> Result<(), StoreError>;

    /// Adds chunks keeping their ids (a copy of a generation from another store, so citations
    /// and chunk links stay valid); the sequence continues after the largest.
    fn import(&mut self, chunks: Vec<NewChunk>) -> Result<(), StoreError>;

    /// Publishes the generation atomically, with `manifest` describing its files.
    fn commit(self: Box<Self>, manifest: Manifest) -> Result<IndexMeta, StoreError>;
}

#[cfg(test)]
mod error_tests {
    use super::StoreError;

    #[test]
    fn disk_full_is_recognised_and_printed_once() {
        let full = StoreError::io("/x/gen-2/vectors.f32", std::io::Error::from_raw_os_error(28));
        assert!(full.is_disk_full());
        assert!(!StoreError::io("/x", std::io::Error::from_raw_os_error(13)).is_disk_full());
        // The cause is in the message and is not also a `source` that a chain would repeat.
        assert!(std::error::Error::source(&full).is_none());
        assert_eq!(full.to_string().matches("os error 28").count(), 1, "{full}");
    }
}
