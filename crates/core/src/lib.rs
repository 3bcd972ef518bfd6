//! The vocabulary of skillrag (docs/design.md §1), shared by every pipeline stage.
//!
//! Nothing here does work; these are the nouns the load → chunk → embed → store
//! and gate → route → retrieve → compile → generate pipelines pass between them.

mod chunk;
mod diagnostic;
mod hit;
mod lang;
mod query;
pub mod question;

pub use chunk::{cited_location, cited_path, Chunk, ChunkId, DocType, Tier};
pub use diagnostic::{Diagnostic, Severity};
pub use hit::{Hit, HitRanks, HitScores};
pub use lang::{is_cjk, is_traditional, simplified, Language};
pub use query::{Filter, FilterError, Mode, Query, Scored};
