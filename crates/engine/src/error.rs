//! What can go wrong in the engine, one variant per case a caller may need to tell apart (the
//! server answers each with its own HTTP status).

use crate::config::ConfigError;
use skillrag_rerank::RerankError;
use skillrag_store::StoreError;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0} is not a skillrag project: it has no skillrag.toml and no skills/ folder (run `skillrag init {0}`, or pass -C DIR)")]
    NotAProject(String),
    #[error("unknown skill `{skill}`{hint}")]
    UnknownSkill { skill: String, hint: String },
    #[error("skill `{0}` is disabled: it is not routed to or answered from (turn it on with `skillrag skills --enable {0}`, or in the page's Skills tab)")]
    DisabledSkill(String),
    #[error("skill `{0}` has no index yet: run `skillrag index --skill {0}`")]
    NotIndexed(String),
    #[error("skill `{skill}` has no knowledge document `{document}`")]
    UnknownSource { skill: String, document: String },
    /// Not `#[from]`: the message already carries the cause, which must not be printed twice
    /// by error chains.
    #[error("embedding model: {0}")]
    Embed(skillrag_embed::EmbedError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The reranker could not be loaded; shared, since the engine keeps the failure.
    #[error(transparent)]
    Rerank(Arc<RerankError>),
    /// A setting that cannot be used (`skillrag.toml`, the environment, or a skill's SKILL.md
    /// metadata): the message names it and what it accepts.
    #[error("{0}")]
    Settings(String),
    /// The configured embedding model cannot be identified or loaded (a folder without its
    /// configuration, an API that does not answer); the message names the cause.
    #[error("{0}")]
    ModelUnavailable(String),
    /// A knowledge document that is listed but cannot be read.
    #[error("cannot read {document}: {message}")]
    Unreadable { document: String, message: String },
    /// A file or folder of the project's state that could not be made, opened or moved.
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: std::io::Error },
    /// The file watcher could not be started on `what` (`files`, or a folder).
    #[error("cannot watch {what}: {message}")]
    Watch { what: String, message: String },
    /// A broken invariant of the engine itself (a bug).
    #[error("internal: {0}")]
    Internal(&'static str),
    #[error("another `skillrag index` is running in this project ({0}); wait for it to finish")]
    Busy(String),
}

impl EngineError {
    /// An I/O failure on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> EngineError {
        let path = path.into();
        move |error| EngineError::Io { path, error }
    }
}

impl From<skillrag_embed::EmbedError> for EngineError {
    fn from(e: skillrag_embed::EmbedError) -> Self {
        EngineError::Embed(e)
    }
}
