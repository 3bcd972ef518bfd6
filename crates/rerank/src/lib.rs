//! The rerank stage (docs/design.md §4.5): after fusion, a cross-encoder reads the question and each
//! candidate passage *together* and scores how well the passage answers it — slower than the
//! bi-encoder and BM25 lists, so it runs on the few fused candidates only.
//!
//! [`Reranker`] is the seam. Backends:
//! - [`CrossEncoder`]: a local Hugging Face cross-encoder run with candle — BERT with a
//!   classification head (`BertForSequenceClassification`: ms-marco MiniLM cross-encoders…) or
//!   XLM-RoBERTa (`XLMRobertaForSequenceClassification`: bge-reranker-base/large, bge-reranker-v2-m3).
//! - [`HttpReranker`]: a TEI-style `POST /rerank` (`{"query","texts"}` → `[{"index","score"}]`) or
//!   a Jina/Cohere/llama.cpp-style `POST /v1/rerank` (`{"model","query","documents","top_n"}` →
//!   `{"results":[{"index","relevance_score"}]}`), chosen by [`RerankApi`].
//!
//! Scores are probabilities in [0, 1], higher = more relevant: the logistic function of the
//! model's logit (one-label models), the softmax probability of label 1 (two-label models). See
//! [`HttpReranker`] for how remote scores are brought to the same scale.

mod cross_encoder;
mod http;

pub use cross_encoder::CrossEncoder;
pub use http::{HttpRerankConfig, HttpReranker, RerankApi};
pub use skillrag_http::{HttpConfig, HttpError};

#[derive(Debug, thiserror::Error)]
pub enum RerankError {
    #[error("reranker model folder {path}: {message}")]
    ModelDir { path: String, message: String },
    #[error(transparent)]
    Folder(#[from] skillrag_embed::model_folder::ModelFolderError),
    #[error("reranker tokenizer: {0}")]
    Tokenizer(String),
    #[error("reranker inference: {0}")]
    Inference(#[from] candle_core::Error),
    #[error("rerank API: {0}")]
    Config(String),
    #[error("rerank API {0}")]
    Remote(skillrag_http::HttpError),
    #[error("rerank API {url}: {message}")]
    Response { url: String, message: String },
}

/// Scores passages against a query. Implementations batch internally and are safe to share.
pub trait Reranker: Send + Sync {
    /// Identifies the model (and server), for traces and logs.
    fn model_id(&self) -> &str;

    /// One relevance score per passage, in input order: a probability in [0, 1], higher = better.
    fn rerank(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, RerankError>;
}

/// The logistic function.
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}
