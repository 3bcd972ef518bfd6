//! Server-sent events (placeholder).
