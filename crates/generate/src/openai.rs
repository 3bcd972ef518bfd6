//! OpenAI-compatible chat completions (placeholder).
