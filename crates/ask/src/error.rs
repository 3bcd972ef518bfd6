//! The ask path's one error type: what can stop a turn before it becomes an [`Answer`]
//! (a refusal is an answer, not an error), and the error of reading labelled questions. A leaf:
//! it imports no module of this crate.
//!
//! [`Answer`]: crate::Answer

use skillrag_engine::EngineError;

#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("the question is empty")]
    Empty,
    /// A context budget of 0, or more than [`MAX_CONTEXT_BUDGET`](crate::MAX_CONTEXT_BUDGET).
    #[error("the budget must be between 1 and {max}, not {given}")]
    Budget { given: usize, max: usize },
    #[error(transparent)]
    Tune(#[from] TuneError),
    /// The configured LLM cannot be set up (a missing GGUF file, a bad URL).
    #[error("LLM: {0}")]
    Llm(#[from] skillrag_generate::GenerateError),
}

/// A labelled-questions file that cannot be read (`skillrag tune`).
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error("{path}:{line}: {message}")]
    Parse { path: String, line: usize, message: String },
    #[error("{path}:{line}: unknown skill `{skill}`")]
    UnknownSkill { path: String, line: usize, skill: String },
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
}
