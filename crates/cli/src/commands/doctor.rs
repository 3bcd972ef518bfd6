//! `skillrag doctor`

use super::{open_project, print_json};
use crate::cli::{Cli, DoctorArgs};
use crate::output::{human_bytes, truncate, Table};
use crate::progress::Bars;
use anyhow::Result;
use skillrag_engine::{DoctorReport, Engine, Progress, SilentProgress};
use std::process::ExitCode;

pub fn doctor(cli: &Cli, args: &DoctorArgs) -> Result<ExitCode> {
    let engine = Engine::open(open_project(cli)?)?;
    let found = engine.doctor()?;
    let report = if args.repair && found.problems + unverified(&found) > 0 {
        let bars = Bars::new();
        let progress: &dyn Progress = if cli.json { &SilentProgress } else { &bars };
        if !cli.json {
            print(&found);
            eprintln!("repairing…");
        }
        engine.doctor_repair(&found, progress)?
    } else {
        found
    };
    if cli.json {
        print_json(&report)?;
    } else {
        print(&report);
        summary(&report, args.repair);
    }
    Ok(if report.problems > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

fn unverified(report: &DoctorReport) -> usize {
    report.skills.iter().filter(|s| s.state == "unverified").count()
}

fn print(report: &DoctorReport) {
    let mut table = Table::new(&["SKILL", "STATE", "GENERATION", "CHUNKS", "VERIFIED", "MS", "PROBLEM"]);
    for s in &report.skills {
        table.row(vec![
            s.skill.clone(),
            s.state.replace('_', " "),
            s.generation.map_or_else(|| "-".into(), |g| g.to_string()),
            s.chunks.to_string(),
            if s.files > 0 { format!("{} files, {}", s.files, human_bytes(s.bytes)) } else { "-".into() },
            format!("{:.1}", s.ms),
            truncate(s.problem.as_deref().unwrap_or(""), 70),
        ]);
    }
    table.print();
    for c in &report.cache {
        let state = match (&c.unreadable, c.damaged) {
            (Some(why), _) => why.clone(),
            (None, _) if c.outdated => {
                "written by an older skillrag (no checksums); the next `skillrag index` migrates it".into()
            }
            (None, 0) => "ok".into(),
            (None, n) => format!("{n} damaged record(s)"),
        };
        println!("embedding cache {}: {} record(s), {state}", c.file, c.records);
    }
    println!("OCR: {}", report.ocr);
    println!("reader: {}", report.reader.detail);
    for line in &report.repaired {
        println!("repaired: {line}");
    }
    let set_aside: Vec<_> = report.skills.iter().flat_map(|s| &s.set_aside).collect();
    if !set_aside.is_empty() {
        println!("set aside by earlier repairs (never served; delete them once you no longer need them):");
        for a in set_aside {
            println!("  {} ({})", a.path, human_bytes(a.bytes));
        }
    }
}

fn summary(report: &DoctorReport, repaired: bool) {
    for s in report.skills.iter().filter(|s| s.problem.is_some() || s.state == "not_indexed") {
        let what = s.problem.as_deref().unwrap_or("not indexed");
        let fix = s.repair.as_deref().map_or_else(String::new, |r| format!("; repair: {r}"));
        eprintln!("{}: {what}{fix}", s.skill);
    }
    if report.problems == 0 {
        eprintln!("no damage found ({} skill(s), {:.1} s)", report.skills.len(), report.seconds);
    } else if repaired {
        eprintln!("{} problem(s) remain after repair", report.problems);
    } else {
        eprintln!(
            "{} problem(s) found: `skillrag doctor --repair` moves the damaged files aside and rebuilds from the knowledge files",
            report.problems
        );
    }
}
