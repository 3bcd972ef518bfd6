//! `skillrag migrate`

use super::{open_project, print_json};
use crate::cli::{Cli, MigrateArgs};
use crate::progress::Bars;
use anyhow::{bail, Result};
use skillrag_engine::{open_store, Engine, Progress, SilentProgress};
use skillrag_store::redact;
use std::process::ExitCode;

/// The store a setting names, with the empty default spelled out.
fn named(store: &str) -> &str {
    if store.is_empty() {
        "embedded"
    } else {
        store
    }
}

pub fn migrate(cli: &Cli, args: &MigrateArgs) -> Result<ExitCode> {
    let mut project = open_project(cli)?;
    if let Some(from) = &args.from {
        project.config.store = from.clone();
    }
    let from = project.config.store.trim().to_string();
    let to = args.to.trim();
    if named(&from) == named(to) {
        bail!("the source and the target are the same store ({}); pass --to another one", redact(to));
    }
    let target = open_store(to, &project)?;
    // The source engine loads no model: vectors are copied as they are.
    let engine = Engine::open(project)?;
    let bars = Bars::new();
    let progress: &dyn Progress = if cli.json { &SilentProgress } else { &bars };
    let started = std::time::Instant::now();
    let copied = engine.migrate_to(target.as_ref(), &args.skills, progress)?;
    if cli.json {
        print_json(&copied)?;
        return Ok(ExitCode::SUCCESS);
    }
    drop(bars);
    let chunks: usize = copied.iter().map(|c| c.chunks).sum();
    let seconds = started.elapsed().as_secs_f64();
    for c in &copied {
        eprintln!("  {}: {} sources, {} chunks → generation {}", c.skill, c.sources, c.chunks, c.generation);
    }
    eprintln!(
        "copied {} skill(s), {chunks} chunks, from {} to {} in {seconds:.1} s; set `store = \"{}\"` (or SKILLRAG_STORE) to use it",
        copied.len(),
        redact(named(&from)),
        redact(to),
        redact(to)
    );
    Ok(ExitCode::SUCCESS)
}
