//! `skillrag serve`, `mcp` and `gaps`: the server edges over `skillrag-server`.

use super::{note_if_lexical, open_engine, open_project, print_json};
use crate::cli::{Cli, GapsArgs, ServeArgs};
use crate::output::Table;
use anyhow::{Context, Result};
use skillrag_ask::GapCause;
use skillrag_server::{Limits, ServeConfig, ServeOptions, Service};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")
}

/// Opens the project's service (loads the model, fits the router when needed).
fn open_service(project: skillrag_engine::Project, args: Option<&ServeArgs>) -> Result<Arc<Service>> {
    let c = ServeConfig::from_config(&project.config).context("[serve]")?;
    let mut limits = Limits::default();
    if c.workers > 0 {
        limits.workers = c.workers;
    }
    limits.queue = c.queue;
    limits.cache_entries = c.cache_entries;
    if let Some(a) = args {
        limits.workers = a.workers.unwrap_or(limits.workers);
        limits.queue = a.queue.unwrap_or(limits.queue);
    }
    let service = Service::open(project, limits).map_err(|e| anyhow::anyhow!(e.message))?;
    report_startup(&service.live().assistant.engine);
    Ok(Arc::new(service))
}

/// What a server operator should know before the first request: skills skipped as broken,
/// skills not indexed yet, a lexical-only setup.
fn report_startup(engine: &skillrag_engine::Engine) {
    for d in engine.discovery.diagnostics.iter().filter(|d| d.is_error()) {
        // A skill with a bad `uses` still serves, without those dependencies (the message says so).
        let loaded = engine.skills().iter().any(|s| d.path.starts_with(&s.dir));
        eprintln!("{d}{}", if loaded { "" } else { " (skill skipped)" });
    }
    for (skill, generation) in engine.served_generations() {
        // A damaged index is served as none; it needs a repair, not a first `index`.
        if let (None, Some(damage)) = (generation, engine.damage(&skill)) {
            eprintln!("warning: {damage}; it is served as soon as it is repaired, the other skills meanwhile");
        } else if generation.is_none() {
            eprintln!(
                "warning: skill `{skill}` has no index yet: run `skillrag index --skill {skill}`; it is served as soon as one is published"
            );
        }
    }
    note_if_lexical(engine);
}

pub fn serve(cli: &Cli, args: &ServeArgs) -> Result<ExitCode> {
    let project = open_project(cli)?;
    let c = ServeConfig::from_config(&project.config).context("[serve]")?;
    let addr = args.addr.as_deref().unwrap_or(&c.addr);
    let mut addr: std::net::SocketAddr =
        addr.parse().with_context(|| format!("--addr {addr}: expected HOST:PORT such as 127.0.0.1:8080"))?;
    if let Some(port) = args.port {
        addr.set_port(port);
    }
    let options = ServeOptions {
        // Taken exactly as set: ServeOptions::check refuses whitespace rather than trimming it.
        token: std::env::var("SKILLRAG_API_TOKEN").ok().filter(|t| !t.is_empty()),
        max_body: args.max_body_kb.unwrap_or(c.max_body_kb).saturating_mul(1024),
        rate_limit: args.rate_limit.unwrap_or(c.rate_limit),
        cors_origins: if args.cors_origins.is_empty() { c.cors_origins.clone() } else { args.cors_origins.clone() },
        allowed_hosts: c.allowed_hosts.clone(),
        header_timeout: Duration::from_secs(c.header_timeout_secs),
        body_timeout: Duration::from_secs(c.body_timeout_secs),
        connections_per_client: c.connections_per_client,
        allow_writes: args.allow_writes,
        max_upload: args.max_upload_mb.saturating_mul(1024 * 1024),
        ..ServeOptions::new(addr)
    };
    // Before loading the model: a refused address or weak token should not take seconds to say so.
    options.check().map_err(anyhow::Error::msg)?;
    let service = open_service(project, Some(args))?;
    let skills = service.live().assistant.engine.skills().len();
    runtime()?.block_on(async move {
        skillrag_server::serve(service, options, shutdown_signal(), |bound| {
            // Scripts wait for this line to know the port (with --addr 127.0.0.1:0).
            eprintln!(
                "skillrag serving {skills} skill(s) on http://{bound}  (web page /, API /v1, MCP /mcp; Ctrl-C stops)"
            );
        })
        .await
        .context("serving")
    })?;
    eprintln!("skillrag stopped");
    Ok(ExitCode::SUCCESS)
}

/// Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

pub fn mcp(cli: &Cli) -> Result<ExitCode> {
    let service = open_service(open_project(cli)?, None)?;
    runtime()?.block_on(skillrag_server::mcp::serve_stdio(service)).context("MCP over stdio")?;
    Ok(ExitCode::SUCCESS)
}

pub fn gaps(cli: &Cli, args: &GapsArgs) -> Result<ExitCode> {
    let engine = open_engine(open_project(cli)?)?;
    if let Some(s) = &args.skill {
        engine.skill(s)?;
    }
    let state = engine.project.state_dir();
    let log = skillrag_ask::GapLog::new(&state);
    let feedback = skillrag_ask::FeedbackLog::new(&state);
    let (judged, skipped) = feedback.list().with_context(|| feedback.path().display().to_string())?;
    if !skipped.is_empty() {
        eprintln!("warning: {}: {skipped}", feedback.path().display());
    }
    let (mut gaps, unreadable) =
        log.list_with_feedback(args.skill.as_deref(), &judged).with_context(|| log.path().display().to_string())?;
    gaps.truncate(args.limit);
    if !unreadable.is_empty() {
        eprintln!("warning: {}: {unreadable}", log.path().display());
    }
    if cli.json {
        print_json(&serde_json::json!({"gaps": gaps}))?;
        return Ok(ExitCode::SUCCESS);
    }
    if gaps.is_empty() {
        println!("No unanswered questions logged yet ({}).", log.path().display());
        return Ok(ExitCode::SUCCESS);
    }
    // By cause: what the knowledge lacks, what retrieval answered badly, what went to the wrong skill.
    for (cause, heading) in [
        (GapCause::Content, "Not in the knowledge (refused; add a document):"),
        (GapCause::Retrieval, "Answered badly (rated 👎; the knowledge may hold it, retrieval or the answer missed):"),
        (GapCause::Routing, "Wrong skill (rated 👎 naming another skill; `skillrag tune` learns from it):"),
    ] {
        let of_cause: Vec<_> = gaps.iter().filter(|g| g.cause == cause).collect();
        if of_cause.is_empty() {
            continue;
        }
        println!("{heading}");
        let mut table = Table::new(&["COUNT", "SKILL", "KIND", "QUESTION"]);
        for g in of_cause {
            let skill = g.skill.clone().unwrap_or_else(|| "-".into());
            let kind = g.kind.map_or("rated down", |k| k.as_str());
            table.row(vec![g.count.to_string(), skill, kind.into(), g.query.clone()]);
        }
        table.print();
        println!();
    }
    Ok(ExitCode::SUCCESS)
}
