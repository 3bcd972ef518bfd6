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
mod script;

pub use chunk::{cited_location, cited_path, Chunk, ChunkId, DocType, Tier};
pub use diagnostic::{Diagnostic, Severity};
pub use hit::{Hit, HitRanks, HitScores};
pub use lang::{is_traditional, simplified, Language};
pub use query::{Filter, FilterError, Mode, Query, Scored};
pub use script::{
    is_bmp_east_asian_or_fullwidth_form, is_east_asian_or_fullwidth_form, is_han_ideograph,
    is_han_ideograph_or_ideographic_plane, is_han_kana_hangul_or_fullwidth, is_han_kana_or_hangul_syllable,
};
