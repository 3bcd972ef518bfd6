//! `skillrag eval`

use super::{environment, print_json};
use crate::cli::{Cli, EvalArgs};
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use skillrag_ask::{AskOptions, Assistant};
use skillrag_engine::{config, Project};
use std::io::IsTerminal;
use std::process::ExitCode;

pub fn eval(cli: &Cli, args: &EvalArgs) -> Result<ExitCode> {
    let bench = args.bench.canonicalize().with_context(|| format!("benchmark folder {}", args.bench.display()))?;
    if !bench.join("queries.jsonl").is_file() || !bench.join("skills").is_dir() {
        bail!("{} is not a benchmark folder (it needs skills/ and queries.jsonl)", bench.display());
    }
    let name = bench.file_name().map_or_else(|| "bench".to_string(), |n| n.to_string_lossy().into_owned());
    let mut rows = skillrag_eval::load_queries(&bench)?;
    if let Some(n) = args.limit {
        rows.truncate(n);
    }

    // The benchmark's skills with this project's settings (model, retrieval); state under this project.
    let env = environment();
    let loaded = config::load_with(&cli.project, &env, &super::config_sections())?;
    let mut settings = loaded.config;
    if let Some(model) = &cli.embed_model {
        settings.embed.model = model.clone();
    }
    // Absolute: `index.dir` is resolved against the project folder again when it is relative.
    let state = std::path::absolute(settings.state_dir(&cli.project).join("eval").join(&name))?;
    settings.skills = vec![bench.join("skills").display().to_string()];
    settings.index.dir = state.display().to_string();
    let project =
        Project { root: cli.project.clone(), config: settings, has_config_file: loaded.has_file, warnings: vec![] };
    let engine = super::open_engine(project)?;
    let progress = crate::progress::Bars::new();
    let report = engine.index(&Default::default(), &progress)?;
    eprintln!("index ready: {} chunks", report.skills.iter().map(|s| s.chunks).sum::<usize>());
    let assistant = super::ask::open_with_models(engine, !args.no_llm, !args.no_reader)?;
    let assistant = assistant.without_gap_log();
    warn_if_tuned_on(&assistant, &rows);
    let model = assistant.router();
    eprintln!(
        "router fitted on the skills' examples: cross-validated accuracy {:.3}, calibration error {:.3}",
        model.report.accuracy, model.report.calibration_error
    );

    let bar = if std::io::stderr().is_terminal() && !cli.json {
        ProgressBar::with_draw_target(Some(rows.len() as u64), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{prefix:>12} [{bar:32.cyan/blue}] {pos}/{len} {per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix("questions");
    let mut answers = Vec::with_capacity(rows.len());
    for row in &rows {
        let answer = assistant
            .ask(&row.query, &AskOptions { skill: None, id: Some(row.id.clone()) }, None, None)
            .with_context(|| format!("question {}", row.id))?;
        answers.push(answer);
        bar.inc(1);
    }
    bar.finish_and_clear();

    let ours = skillrag_eval::score(&name, "skillrag", &rows, &answers)?;
    let mut others = Vec::new();
    for spec in &args.compare {
        let (file, label) = match spec.split_once('=') {
            Some((f, l)) => (f.to_string(), l.to_string()),
            None => (spec.clone(), spec.clone()),
        };
        let theirs = skillrag_eval::load_answers(std::path::Path::new(&file))?;
        others.push(skillrag_eval::score(&name, &label, &rows, &theirs)?);
    }
    let other_refs: Vec<&skillrag_eval::Report> = others.iter().collect();
    let markdown = skillrag_eval::markdown(&ours, &other_refs);

    let out = args.out.clone().unwrap_or_else(|| state.join("report"));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    std::fs::write(out.join("report.md"), &markdown)?;
    let json = serde_json::json!({"report": ours, "compare": others});
    std::fs::write(out.join("report.json"), serde_json::to_string_pretty(&json)? + "\n")?;
    std::fs::write(out.join("chart.svg"), skillrag_eval::svg_chart(&ours))?;
    let lines: Vec<String> = answers.iter().map(serde_json::to_string).collect::<Result<_, _>>()?;
    std::fs::write(out.join("answers.jsonl"), lines.join("\n") + "\n")?;
    if cli.json {
        print_json(&json)?;
    } else {
        println!("{markdown}");
    }
    eprintln!("report written to {}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// Tuning on the questions being evaluated makes the numbers meaningless; say so loudly.
fn warn_if_tuned_on(assistant: &Assistant, rows: &[skillrag_eval::BenchRow]) {
    let labelled = assistant.labelled();
    let overlap = rows.iter().filter(|r| labelled.iter().any(|l| l.query == r.query)).count();
    if overlap > 0 {
        eprintln!(
            "warning: the router was tuned on {overlap} of this benchmark's questions; these results do not measure generalization"
        );
    }
}
