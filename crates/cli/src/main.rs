//! `skillrag`: the command-line edge. Parsing lives in `cli`, each command in `commands/`,
//! and all real work in the `skillrag-engine` crate.

mod cli;
mod commands;
mod output;
mod progress;

use clap::Parser;
use std::process::ExitCode;

/// See Cargo.toml: model inference allocates heavily; mimalloc keeps freed pages for reuse.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match commands::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
