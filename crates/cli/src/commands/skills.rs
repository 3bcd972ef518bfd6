//! `skillrag skills` and `skillrag sources`

use super::{open_project, print_json};
use crate::cli::{Cli, SkillsArgs, SourcesArgs};
use crate::output::{human_bytes, truncate, Table};
use anyhow::{Context, Result};
use skillrag_engine::Freshness;
use std::process::ExitCode;

pub fn skills(cli: &Cli, args: &SkillsArgs) -> Result<ExitCode> {
    if !args.disable.is_empty() || !args.enable.is_empty() {
        return toggle(cli, args);
    }
    let engine = skillrag_engine::Engine::open(open_project(cli)?)?;
    for d in &engine.discovery.diagnostics {
        if d.is_error() {
            eprintln!("{d}");
        }
    }
    let status = engine.status()?;
    if cli.json {
        print_json(&status)?;
        return Ok(ExitCode::SUCCESS);
    }
    if status.is_empty() {
        println!("no skills (add one with `skillrag new NAME`)");
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["SKILL", "FILES", "CHUNKS", "SIZE", "INDEX", "TRIGGERS", "DESCRIPTION"]);
    for s in &status {
        let index = match &s.index {
            Freshness::Fresh => "fresh".to_string(),
            Freshness::Stale(reason) => format!("stale: {}", truncate(reason, 40)),
            Freshness::NotIndexed => "not indexed".to_string(),
            Freshness::Damaged(_) => "damaged (skipped; see below)".to_string(),
        };
        let index = if s.enabled { index } else { format!("disabled · {index}") };
        table.row(vec![
            s.skill.clone(),
            s.files.to_string(),
            s.chunks.to_string(),
            s.size_bytes.map(human_bytes).unwrap_or_else(|| "-".into()),
            index,
            truncate(&s.triggers.join(", "), 30),
            truncate(&s.description, 50),
        ]);
    }
    table.print();
    for s in status.iter().filter(|s| s.vectorless > 0) {
        eprintln!(
            "note: {}: {} of {} chunks have no vector (the embedding model cannot see them; BM25 finds them)",
            s.skill, s.vectorless, s.chunks
        );
    }
    for s in &status {
        if let Freshness::Damaged(reason) = &s.index {
            eprintln!("warning: {reason}; the other skills keep answering");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--disable` / `--enable`: writes or removes each skill's marker file; an enabled skill whose
/// index is not fresh is named with the command that brings it up to date.
fn toggle(cli: &Cli, args: &SkillsArgs) -> Result<ExitCode> {
    let engine = skillrag_engine::Engine::open(open_project(cli)?)?;
    let enable = !args.enable.is_empty();
    for id in if enable { &args.enable } else { &args.disable } {
        let skill = engine.skill_or_disabled(id)?;
        skillrag_skill::set_disabled(&skill.dir, !enable)
            .with_context(|| format!("cannot write in {}", skill.dir.display()))?;
        eprintln!("{id}: {}", if enable { "enabled" } else { "disabled (its index is kept)" });
    }
    if enable {
        let engine = skillrag_engine::Engine::open(open_project(cli)?)?;
        for id in &args.enable {
            let status = engine.skill_status(engine.skill(id)?)?;
            if status.index != Freshness::Fresh {
                eprintln!("note: {id}: its index is not fresh; run `skillrag index --skill {id}`");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub fn sources(cli: &Cli, args: &SourcesArgs) -> Result<ExitCode> {
    let engine = skillrag_engine::Engine::open(open_project(cli)?)?;
    let sources = engine.sources(&args.skill)?;
    if cli.json {
        print_json(&sources)?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = Table::new(&["SOURCE", "CHUNKS", "TYPE", "TIER", "SIZE", "ENCODING", "TITLE"]);
    for s in &sources {
        table.row(vec![
            s.source.clone(),
            match s.vectorless {
                0 => s.chunks.to_string(),
                n => format!("{} ({n} no vector)", s.chunks),
            },
            s.doc_type.clone(),
            s.tier.clone(),
            human_bytes(s.size),
            s.encoding.clone(),
            truncate(&s.title, 40),
        ]);
    }
    table.print();
    let chunks: usize = sources.iter().map(|s| s.chunks).sum();
    let vectorless: usize = sources.iter().map(|s| s.vectorless).sum();
    let without = match vectorless {
        0 => String::new(),
        n => format!(", {n} without a vector (the embedding model cannot see them; BM25 finds them)"),
    };
    eprintln!("{} document(s), {chunks} chunk(s){without}", sources.len());
    let ocr_pages: usize = sources.iter().map(|s| s.ocr_pages.len()).sum();
    if ocr_pages > 0 {
        eprintln!("{ocr_pages} page(s) or picture(s) read by OCR");
    }
    for s in sources.iter().filter(|s| !s.low_confidence_pages.is_empty()) {
        let pages: Vec<String> = s
            .low_confidence_pages
            .iter()
            .map(|p| match p.page {
                0 => format!("the picture ({:.2})", p.confidence),
                n => format!("p. {n} ({:.2})", p.confidence),
            })
            .collect();
        eprintln!(
            "low OCR confidence: {}: {} — check the text (`skillrag extract`) or rescan",
            s.source,
            pages.join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
