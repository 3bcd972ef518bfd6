//! A local GGUF chat model run in-process with candle (placeholder until the backend lands).
