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

/// mimalloc.h's `mi_option_purge_delay` (the same slot in mimalloc v2 and v3): how long freed
/// memory waits before it is given back to the OS; -1 never.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

fn main() -> ExitCode {
    // Model inference frees and reallocates the same large tensors on every layer; memory given
    // back to the OS comes back as page faults that zero every page again. Keeping it makes the
    // process hold its peak (which it reaches on the first batch anyway): MiniLM embedding went
    // from 16 to 20 chunks/s on 2 cores, for about 80 MB more resident memory.
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: sets one allocator option; mimalloc reads options at each purge decision.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    }
    let cli = cli::Cli::parse();
    if !matches!(cli.command, cli::Command::Serve(_) | cli::Command::Mcp) {
        stop_quietly_on_closed_pipe();
    }
    match commands::run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `skillrag search … | head` must end quietly when `head` closes the pipe, as Unix tools do.
/// Rust starts with SIGPIPE ignored, so `println!` would panic on the closed pipe instead; a
/// one-shot command gets the default back (the kernel ends it). The servers keep ignoring it: a
/// client that hangs up must never stop them.
fn stop_quietly_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: sets one signal's disposition at startup, before any thread is spawned.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
