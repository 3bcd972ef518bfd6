//! `skillrag eval`

use super::{environment, print_json};
use crate::cli::{Cli, EvalArgs};
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use skillrag_ask::{Answer, AskOptions, Assistant};
use skillrag_engine::config::Config;
use skillrag_engine::{config, Project};
use skillrag_eval::leave_gold_out::{self, LeaveGoldOut, Plan};
use skillrag_eval::BenchRow;
use skillrag_generate::Generator;
use std::io::IsTerminal;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

pub fn eval(cli: &Cli, args: &EvalArgs) -> Result<ExitCode> {
    let bench = args.bench.canonicalize().with_context(|| format!("benchmark folder {}", args.bench.display()))?;
    if !bench.join("queries.jsonl").is_file() || !bench.join("skills").is_dir() {
        bail!("{} is not a benchmark folder (it needs skills/ and queries.jsonl)", bench.display());
    }
    let name = bench.file_name().map_or_else(|| "bench".to_string(), |n| n.to_string_lossy().into_owned());
    let mut rows = skillrag_eval::load_queries(&bench)?;
    // Drawn from every row (a skill's sample is over all its gold files, whatever --limit keeps),
    // and before the minutes of indexing, so a bad --share or a benchmark without gold fails now.
    let plan = args.leave_gold_out.then(|| leave_gold_out::plan(&rows, args.share, args.seed)).transpose()?;
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
    let eval_dir = std::path::absolute(settings.state_dir(&cli.project).join("eval"))?;
    let state = eval_dir.join(&name);
    let assistant = open_assistant(cli, args, settings.clone(), loaded.has_file, &bench.join("skills"), &state, None)?;
    warn_if_tuned_on(&assistant, &rows);
    let answers = ask_all(cli, &assistant, &rows, "questions")?;
    // The LLM and the reader (loaded models, perhaps) serve the variant too; the indexes are freed first.
    let models =
        Models { generator: assistant.generator().cloned(), reader: assistant.reader().map(|r| r.model().clone()) };
    drop(assistant);

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

    let variant_dir = eval_dir.join(format!("{name}-leave-gold-out"));
    let lgo = match &plan {
        Some(plan) => {
            let run = VariantRun { bench: &bench, name: &name, state: &state, dir: &variant_dir };
            Some(run.evaluate(cli, args, settings, loaded.has_file, plan, models)?)
        }
        None => None,
    };

    let other_refs: Vec<&skillrag_eval::Report> = others.iter().collect();
    let mut markdown = skillrag_eval::markdown(&ours, &other_refs);
    if let Some((report, _)) = &lgo {
        markdown.push_str(&leave_gold_out::markdown(report));
    }

    let out = args.out.clone().unwrap_or_else(|| state.join("report"));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    std::fs::write(out.join("report.md"), &markdown)?;
    let mut json = serde_json::json!({"report": ours, "compare": others});
    if let Some((report, answers)) = &lgo {
        json["leave_gold_out"] = serde_json::to_value(report)?;
        write_answers(&out.join("answers-leave-gold-out.jsonl"), answers)?;
    }
    std::fs::write(out.join("report.json"), serde_json::to_string_pretty(&json)? + "\n")?;
    std::fs::write(out.join("chart.svg"), skillrag_eval::svg_chart(&ours))?;
    write_answers(&out.join("answers.jsonl"), &answers)?;
    if cli.json {
        print_json(&json)?;
    } else {
        println!("{markdown}");
    }
    eprintln!("report written to {}", out.display());
    Ok(ExitCode::SUCCESS)
}

/// The leave-gold-out variant of one benchmark: where it is built and what it is built from.
struct VariantRun<'a> {
    bench: &'a Path,
    name: &'a str,
    /// The benchmark's own evaluation state, whose caches the variant starts from.
    state: &'a Path,
    /// Holds the copy (`skills/`, `queries.jsonl`) and its state (`state/`).
    dir: &'a Path,
}

impl VariantRun<'_> {
    /// Builds the copy, indexes it, fits the router on it as for the benchmark, and asks it the
    /// converted rows.
    #[allow(clippy::too_many_arguments)]
    fn evaluate(
        &self,
        cli: &Cli,
        args: &EvalArgs,
        mut settings: Config,
        has_config_file: bool,
        plan: &Plan,
        models: Models,
    ) -> Result<(LeaveGoldOut, Vec<Answer>)> {
        let mut variant = leave_gold_out::build(self.bench, plan, self.dir)
            .with_context(|| format!("building the leave-gold-out copy in {}", self.dir.display()))?;
        eprintln!(
            "leave-gold-out: {} gold files left out of a copy of the skills in {}; {} questions lost all their gold files",
            plan.removed.values().map(|f| f.len()).sum::<usize>(),
            self.dir.display(),
            variant.rows.len()
        );
        if let Some(n) = args.limit {
            variant.rows.truncate(n);
        }
        let mut answers = Vec::new();
        if !variant.rows.is_empty() {
            let state = self.dir.join("state");
            seed_caches(self.state, &state);
            // A throwaway index: a shared PostgreSQL store would have the benchmark's (or the
            // project's) skills of the same names replaced by the copy.
            settings.store = "embedded".into();
            let skills = self.dir.join("skills");
            let assistant = open_assistant(cli, args, settings, has_config_file, &skills, &state, Some(models))?;
            answers = ask_all(cli, &assistant, &variant.rows, "leave-gold-out")?;
        }
        Ok((leave_gold_out::report(plan, &variant, &answers, self.name)?, answers))
    }
}

/// The models an evaluation keeps open across its two runs.
struct Models {
    generator: Option<Arc<dyn Generator>>,
    reader: Option<Arc<dyn Generator>>,
}

/// Indexes `skills` with `state` as its state folder and opens the assistant over it, which fits
/// the router on the skills' examples as `ask` would. `models`: `None` opens the configured
/// LLM and reader, `Some` reuses those already open.
fn open_assistant(
    cli: &Cli,
    args: &EvalArgs,
    mut settings: Config,
    has_config_file: bool,
    skills: &Path,
    state: &Path,
    models: Option<Models>,
) -> Result<Assistant> {
    settings.skills = vec![skills.display().to_string()];
    settings.index.dir = state.display().to_string();
    let project = Project { root: cli.project.clone(), config: settings, has_config_file, warnings: vec![] };
    let engine = super::open_engine(project)?;
    let progress = crate::progress::Bars::new();
    let report = engine.index(&Default::default(), &progress)?;
    eprintln!("index ready: {} chunks", report.skills.iter().map(|s| s.chunks).sum::<usize>());
    let assistant = match models {
        Some(Models { generator, reader }) => {
            let generator = generator.filter(|_| !args.no_llm);
            Assistant::open_with(engine, generator)?.with_reader(reader.filter(|_| !args.no_reader))
        }
        None => super::ask::open_with_models(engine, !args.no_llm, !args.no_reader)?,
    };
    let assistant = assistant.without_gap_log();
    let model = assistant.router();
    eprintln!(
        "router fitted on the skills' examples: cross-validated accuracy {:.3}, calibration error {:.3}",
        model.report.accuracy, model.report.calibration_error
    );
    Ok(assistant)
}

/// Asks every row, with a progress bar on a terminal.
fn ask_all(cli: &Cli, assistant: &Assistant, rows: &[BenchRow], label: &str) -> Result<Vec<Answer>> {
    let bar = if std::io::stderr().is_terminal() && !cli.json {
        ProgressBar::with_draw_target(Some(rows.len() as u64), ProgressDrawTarget::stderr())
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{prefix:>14} [{bar:32.cyan/blue}] {pos}/{len} {per_sec} eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(label.to_string());
    let mut answers = Vec::with_capacity(rows.len());
    for row in rows {
        let answer = assistant
            .ask(&row.query, &AskOptions { skill: None, id: Some(row.id.clone()), ..Default::default() }, None, None)
            .with_context(|| format!("question {}", row.id))?;
        answers.push(answer);
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(answers)
}

/// Gives the variant the benchmark's embedding and OCR caches: the copy holds a subset of the
/// benchmark's files, so every passage and page it has is already there, and nothing is
/// embedded or read by OCR again. A cache file is copied when the variant's is missing or
/// shorter (the caches only grow); failing to copy only costs time.
fn seed_caches(from: &Path, to: &Path) {
    for cache in ["cache/embeddings", "cache/ocr"] {
        copy_newer(&from.join(cache), &to.join(cache));
    }
}

fn copy_newer(from: &Path, to: &Path) {
    let Ok(entries) = std::fs::read_dir(from) else { return };
    if std::fs::create_dir_all(to).is_err() {
        return;
    }
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_newer(&entry.path(), &target);
        } else if kind.is_file() {
            let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
            if len(&target) < len(&entry.path()) {
                let _ = std::fs::copy(entry.path(), &target);
            }
        }
    }
}

fn write_answers(path: &Path, answers: &[Answer]) -> Result<()> {
    let lines: Vec<String> = answers.iter().map(serde_json::to_string).collect::<Result<_, _>>()?;
    let text = if lines.is_empty() { String::new() } else { lines.join("\n") + "\n" };
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
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
