//! `skillrag index`

use super::{note_if_lexical, open_project, print_json};
use crate::cli::{Cli, IndexArgs};
use crate::progress::Bars;
use anyhow::Result;
use skillrag_engine::watch::Watcher;
use skillrag_engine::{Engine, IndexOptions, Progress, Project, SilentProgress};
use std::process::ExitCode;
use std::time::Duration;

/// Opens the engine without opening every index first (as `open_engine` does to warn about
/// damaged ones): indexing verifies each skill's index itself, and repairs it.
fn open_engine(project: Project) -> Result<Engine> {
    let engine = Engine::open(project)?;
    note_if_lexical(&engine);
    Ok(engine)
}

pub fn index(cli: &Cli, args: &IndexArgs) -> Result<ExitCode> {
    let engine = open_engine(project(cli, args)?)?;
    let options = IndexOptions { skills: args.skills.clone(), rebuild: args.rebuild };
    let failed = run(cli, &engine, &options)?;
    if args.watch {
        watch(cli, args, engine)?;
    }
    // The other skills were indexed; the exit status still tells a script that one was not.
    Ok(if failed > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
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

/// One indexing run with progress bars (or JSON) and a summary line; returns how many skills
/// could not be indexed.
fn run(cli: &Cli, engine: &Engine, options: &IndexOptions) -> Result<usize> {
    let bars = Bars::new();
    let progress: &dyn Progress = if cli.json { &SilentProgress } else { &bars };
    let report = engine.index(options, progress)?;
    let failed = report.skills.iter().filter(|s| s.error.is_some()).count();
    if cli.json {
        print_json(&report)?;
        return Ok(failed);
    }
    let chunks: usize = report.skills.iter().map(|s| s.chunks).sum();
    let new: usize = report.skills.iter().map(|s| s.chunks_new).sum();
    let problems = report.diagnostics.iter().filter(|d| d.is_error()).count();
    let repaired = report.skills.iter().filter(|s| !s.repaired.is_empty()).count();
    if repaired > 0 || report.cache_dropped > 0 {
        eprintln!(
            "repaired: {repaired} damaged index(es) moved aside and rebuilt, {} damaged embedding cache record(s) re-embedded",
            report.cache_dropped
        );
    }
    let rate = if report.seconds > 0.0 { new as f64 / report.seconds } else { 0.0 };
    let not_indexed = if failed > 0 { format!(" ({failed} not indexed, see above)") } else { String::new() };
    eprintln!(
        "indexed {} skill(s){not_indexed}: {chunks} chunks ({new} new, {rate:.0} chunks/s) in {:.1} s{}",
        report.skills.len() - failed,
        report.seconds,
        if problems > 0 { format!("; {problems} problem(s) reported above") } else { String::new() }
    );
    Ok(failed)
}

/// Re-indexes the skills whose files change, until interrupted. The engine is reopened when
/// skills appear, vanish or change their SKILL.md, so that discovery and settings are fresh.
fn watch(cli: &Cli, args: &IndexArgs, mut engine: Engine) -> Result<()> {
    let shared = engine.shared_folders();
    let mut roots: Vec<String> = engine.project.skill_roots().iter().map(|r| r.display().to_string()).collect();
    roots.extend(shared.iter().map(|(folder, _)| folder.display().to_string()));
    let watcher = Watcher::new(&engine.project, shared, Duration::from_millis(args.debounce_ms))?;
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
