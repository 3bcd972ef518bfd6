//! One module per command. Each takes parsed arguments and an opened project or engine,
//! prints human output or JSON, and returns the exit code.

mod ask;
mod doctor;
mod eval;
mod extract;
mod index;
mod init;
mod lint;
mod migrate;
mod search;
mod serve;
mod skills;

use crate::cli::{Cli, Command};
use anyhow::Result;
use skillrag_engine::{Engine, Project};
use std::collections::BTreeMap;
use std::process::ExitCode;

pub fn run(cli: Cli) -> Result<ExitCode> {
    match &cli.command {
        Command::Init(args) => init::init(&cli, args),
        Command::New(args) => init::new_skill(&cli, args),
        Command::Lint(args) => lint::lint(&cli, args),
        Command::Index(args) => index::index(&cli, args),
        Command::Search(args) => search::search(&cli, args),
        Command::Skills(args) => skills::skills(&cli, args),
        Command::Sources(args) => skills::sources(&cli, args),
        Command::Extract(args) => extract::extract(&cli, args),
        Command::Ask(args) => ask::ask(&cli, args),
        Command::Context(args) => ask::context(&cli, args),
        Command::Chat(args) => ask::chat(&cli, args),
        Command::Batch(args) => ask::batch(&cli, args),
        Command::Route(args) => ask::route(&cli, args),
        Command::Tune(args) => ask::tune(&cli, args),
        Command::Eval(args) => eval::eval(&cli, args),
        Command::Serve(args) => serve::serve(&cli, args),
        Command::Mcp => serve::mcp(&cli),
        Command::Gaps(args) => serve::gaps(&cli, args),
        Command::Migrate(args) => migrate::migrate(&cli, args),
        Command::Doctor(args) => doctor::doctor(&cli, args),
    }
}

/// The process environment (variables that are valid UTF-8).
pub fn environment() -> BTreeMap<String, String> {
    std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))).collect()
}

/// The sections of `skillrag.toml` that the layers above the engine own, loaded with the rest.
pub fn config_sections() -> [skillrag_engine::config::Section; 1] {
    [skillrag_server::ServeConfig::section()]
}

/// Opens the project in `-C DIR`, with global flags applied over the configuration.
pub fn open_project(cli: &Cli) -> Result<Project> {
    let mut project = Project::open_with(&cli.project, &environment(), &config_sections())?;
    if let Some(model) = &cli.embed_model {
        project.config.embed.model = model.clone();
    }
    for w in &project.warnings {
        eprintln!("warning: {w}");
    }
    Ok(project)
}

/// Opens the engine and says once, on stderr, when retrieval is lexical-only and which skills
/// are skipped because their index is damaged.
pub fn open_engine(project: Project) -> Result<Engine> {
    let engine = Engine::open(project)?;
    note_if_lexical(&engine);
    for (_, damage) in engine.damaged_skills()? {
        eprintln!("warning: {damage}; the other skills keep answering");
    }
    Ok(engine)
}

/// Says on stderr when no embedding model is configured (retrieval is BM25 only).
pub fn note_if_lexical(engine: &Engine) {
    if engine.model().is_none() {
        eprintln!(
            "note: no embedding model configured; using BM25 only (set SKILLRAG_EMBED_MODEL or [embed] model in skillrag.toml)"
        );
    }
}

/// Prints a value as pretty JSON on stdout. A reader that went away (`| head`) is not an error.
pub fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    use std::io::Write;
    let text = serde_json::to_string_pretty(value)?;
    match writeln!(std::io::stdout().lock(), "{text}") {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}
