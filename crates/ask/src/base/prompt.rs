//! The fixed words the LLM is told to write, which code then reads back.

/// What the model is told to write when the context does not answer the question.
pub const NOT_FOUND_SENTINEL: &str = "NOT_FOUND";
