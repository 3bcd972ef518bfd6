//! The stages of the ask path, in the order docs/design.md §4 lists them; each is a function
//! from its input and settings to its output value. Stages import `base`, `llm` and `logs`,
//! never the crate root.

pub mod answer;
pub mod compare;
pub mod compile;
pub mod gate;
pub mod plan;
pub mod refuse;
pub mod retrieve;
pub mod route;
pub mod task;
