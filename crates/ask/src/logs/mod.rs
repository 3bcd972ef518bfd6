//! What the ask path writes down: unanswered questions (gaps), users' feedback, saved
//! conversations, the trace, and the JSON-lines files they share. Imports `base` only.

pub mod feedback;
pub mod gaps;
pub mod history;
pub mod jsonl;
pub mod trace;
