//! `skillrag search`

use super::{open_engine, open_project, print_json};
use crate::cli::{Cli, SearchArgs};
use crate::output::truncate;
use anyhow::{bail, Context, Result};
use skillrag_core::{DocType, Filter, Mode};
use skillrag_engine::SearchOptions;
use std::process::ExitCode;

pub fn search(cli: &Cli, args: &SearchArgs) -> Result<ExitCode> {
    let mut project = open_project(cli)?;
    if let Some(w) = args.bm25_weight {
        project.config.retrieval.bm25_weight = w;
    }
    if let Some(w) = args.dense_weight {
        project.config.retrieval.dense_weight = w;
    }
    let engine = open_engine(project)?;

    let mut filter = Filter::none();
    if let Some(glob) = &args.source {
        filter = filter.with_source_glob(glob)?;
    }
    if let Some(dir) = &args.directory {
        filter = filter.with_directory(dir);
    }
    let mut doc_types = Vec::new();
    for t in &args.doc_types {
        match DocType::parse(t) {
            Some(d) => doc_types.push(d),
            None => bail!("unknown --doc-type `{t}` (general, faq, legal or technical)"),
        }
    }
    filter = filter.with_doc_types(doc_types);
    let mode = Mode::parse(&args.mode).context("--mode must be hybrid, bm25 or dense")?;
    let options = SearchOptions { skills: args.skills.clone(), k: args.k, filter, mode, ..Default::default() };

    let result = engine.search(&args.query, &options)?;
    if cli.json {
        print_json(&result)?;
        return Ok(ExitCode::SUCCESS);
    }
    for s in &result.skills {
        if let Some(notice) = &s.notice {
            eprintln!("{}: {notice}", s.skill);
        } else if let (Some(reason), Mode::Hybrid) = (&s.dense_skipped, mode) {
            if engine.model().is_some() {
                eprintln!("{}: BM25 only — {reason}", s.skill);
            }
        }
    }
    if result.hits.is_empty() {
        println!("no hits");
        return Ok(ExitCode::SUCCESS);
    }
    for (i, hit) in result.hits.iter().enumerate() {
        let score = |s: Option<f32>, r: Option<usize>| match (s, r) {
            (Some(s), Some(r)) => format!("{s:.3} (#{r})"),
            _ => "-".to_string(),
        };
        let heading = if hit.heading.is_empty() { String::new() } else { format!(" › {}", hit.heading) };
        let at = skillrag_core::cited_path(&hit.skill, &hit.location());
        println!("{:>2}. {at}{heading}  [chunk {}]", i + 1, hit.ordinal);
        let rerank = hit.scores.rerank.map_or_else(String::new, |s| format!("   rerank {s:.3}"));
        println!(
            "    fused {:.4}   bm25 {}   dense {}{rerank}",
            hit.scores.fused,
            score(hit.scores.bm25, hit.ranks.bm25),
            score(hit.scores.dense, hit.ranks.dense)
        );
        let text = if args.full { hit.text.clone() } else { truncate(&hit.text, 160) };
        for line in text.lines() {
            println!("    {line}");
        }
    }
    eprintln!(
        "{} hit(s) in {:.1} ms (embed {:.1} ms, retrieve {:.1} ms)",
        result.hits.len(),
        result.timings_ms.total,
        result.timings_ms.embed,
        result.timings_ms.retrieve
    );
    Ok(ExitCode::SUCCESS)
}
