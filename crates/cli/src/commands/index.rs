//! `skillrag index`

use super::{open_engine, open_project, print_json};
use crate::cli::{Cli, IndexArgs};
use crate::progress::Bars;
use anyhow::Result;
use skillrag_engine::watch::Watcher;
use skillrag_engine::{Engine, IndexOptions, Progress, Project, SilentProgress};
use std::process::ExitCode;
use std::time::Duration;

pub fn index(cli: &Cli, args: &IndexArgs) -> Result<ExitCode> {
    let engine = open_engine(project(cli, args)?)?;
    let options = IndexOptions { skills: args.skills.clone(), rebuild: args.rebuild };
    run(cli, &engine, &options)?;
    if args.watch {
        watch(cli, args, engine)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn project(cli: &Cli, args: &IndexArgs) -> Result<Project> {
    let mut project = open_project(cli)?;
    if let Some(size) = args.chunk_size {
        project.config.index.chunk_size = size;
    }
    if let Some(overlap) = args.chunk_overlap {
        project.config.index.chunk_overlap = overlap;
    }
    Ok(project)
}

/// One indexing run with progress bars (or JSON) and a summary line.
fn run(cli: &Cli, engine: &Engine, options: &IndexOptions) -> Result<()> {
    let bars = Bars::new();
    let progress: &dyn Progress = if cli.json { &SilentProgress } else { &bars };
    let report = engine.index(options, progress)?;
    if cli.json {
        return print_json(&report);
    }
    let chunks: usize = report.skills.iter().map(|s| s.chunks).sum();
    let new: usize = report.skills.iter().map(|s| s.chunks_new).sum();
    let problems = report.diagnostics.iter().filter(|d| d.is_error()).count();
    let rate = if report.seconds > 0.0 { new as f64 / report.seconds } else { 0.0 };
    eprintln!(
        "indexed {} skill(s): {chunks} chunks ({new} new, {rate:.0} chunks/s) in {:.1} s{}",
        report.skills.len(),
        report.seconds,
        if problems > 0 { format!("; {problems} problem(s) reported above") } else { String::new() }
    );
    Ok(())
}

/// Re-indexes the skills whose files change, until interrupted. The engine is reopened when
/// skills appear, vanish or change their SKILL.md, so that discovery and settings are fresh.
fn watch(cli: &Cli, args: &IndexArgs, mut engine: Engine) -> Result<()> {
    let watcher = Watcher::new(&engine.project, Duration::from_millis(args.debounce_ms))?;
    let roots: Vec<String> = engine.project.skill_roots().iter().map(|r| r.display().to_string()).collect();
    eprintln!("watching {} for changes (Ctrl-C to stop)", roots.join(", "));
    let mut on_error = |e: String| eprintln!("warning: file watcher: {e}");
    while let Some(batch) = watcher.next(&mut on_error) {
        if batch.rediscover {
            engine = match open_engine(project(cli, args)?) {
                Ok(e) => e,
                Err(e) => {
                    // A broken skillrag.toml must not end the watch: the last good index keeps serving.
                    eprintln!("error: {e:#}; waiting for the next change");
                    continue;
                }
            };
        }
        // A removed skill is cleaned up by a full run; otherwise only the touched skills.
        let known: Vec<String> = batch.skills.iter().filter(|s| engine.skill(s).is_ok()).cloned().collect();
        let all = batch.rediscover && known.len() != batch.skills.len();
        let selected = if args.skills.is_empty() {
            if all {
                Vec::new()
            } else {
                known
            }
        } else {
            known.into_iter().filter(|s| args.skills.contains(s)).collect()
        };
        if selected.is_empty() && !all {
            continue;
        }
        eprintln!("change in {}: re-indexing", batch.skills.iter().cloned().collect::<Vec<_>>().join(", "));
        let options = IndexOptions { skills: selected, rebuild: false };
        if let Err(e) = run(cli, &engine, &options) {
            eprintln!("error: {e:#}; the previous index keeps serving");
        }
    }
    Ok(())
}
