//! The leaves of the ask path: the types and texts every stage shares. Nothing here imports a
//! stage, the LLM helpers or the logs (docs/design.md §4.1).

pub mod citation_labels;
pub mod contract;
pub mod conversation;
pub mod evidence;
pub mod ids;
pub mod labelled;
pub mod lexicon;
pub mod messages;
pub mod prompt;
pub mod question;
pub mod settings;
