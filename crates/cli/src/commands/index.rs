//! `skillrag index`

use super::{open_engine, open_project, print_json};
use crate::cli::{Cli, IndexArgs};
use crate::progress::Bars;
use anyhow::Result;
use skillrag_engine::{IndexOptions, Progress, SilentProgress};
use std::process::ExitCode;

pub fn index(cli: &Cli, args: &IndexArgs) -> Result<ExitCode> {
    let mut project = open_project(cli)?;
    if let Some(size) = args.chunk_size {
        project.config.index.chunk_size = size;
    }
    if let Some(overlap) = args.chunk_overlap {
        project.config.index.chunk_overlap = overlap;
    }
    let engine = open_engine(project)?;
    let options = IndexOptions { skills: args.skills.clone(), rebuild: args.rebuild };
    let bars = Bars::new();
    let progress: &dyn Progress = if cli.json { &SilentProgress } else { &bars };
    let report = engine.index(&options, progress)?;
    if cli.json {
        print_json(&report)?;
        return Ok(ExitCode::SUCCESS);
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
    Ok(ExitCode::SUCCESS)
}
