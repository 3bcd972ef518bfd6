//! The hostile suite: every failure the adversarial audit of issue 24 reproduced, as a test
//! that drives the real binary or the real server. One module per kind of attack.

#[path = "../common/mod.rs"]
mod common;

mod bombs;
mod chunking;
mod files;
mod index;
mod mcp;
mod recovery;
mod server;
mod settings;
mod stdio;
mod writes;
