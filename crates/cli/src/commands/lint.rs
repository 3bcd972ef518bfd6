//! `skillrag lint`

use super::{open_project, print_json};
use crate::cli::{Cli, LintArgs};
use anyhow::Result;
use skillrag_core::Diagnostic;
use std::process::ExitCode;

pub fn lint(cli: &Cli, args: &LintArgs) -> Result<ExitCode> {
    let project = open_project(cli)?;
    let discovery = skillrag_skill::discover(&project.config.skill_roots(&project.root));
    let selected = |path: &std::path::Path| {
        args.skills.is_empty() || args.skills.iter().any(|s| path.components().any(|c| c.as_os_str() == s.as_str()))
    };
    let mut diagnostics: Vec<Diagnostic> =
        discovery.diagnostics.iter().filter(|d| selected(&d.path)).cloned().collect();
    for skill in discovery.skills.iter().filter(|s| selected(&s.dir)) {
        diagnostics.extend(skillrag_skill::advice(skill));
        let listing = project.knowledge_files(skill);
        diagnostics.extend(listing.diagnostics);
        if listing.files.is_empty() {
            diagnostics.push(Diagnostic::warning(
                skill.skill_file(),
                None,
                format!("no knowledge files (looked in {})", skill.knowledge_patterns().join(", ")),
            ));
        }
    }
    for name in &args.skills {
        if !discovery.skills.iter().any(|s| &s.id == name) && !diagnostics.iter().any(|d| selected(&d.path)) {
            diagnostics.push(Diagnostic::error(&project.root, None, format!("no skill folder named `{name}`")));
        }
    }
    diagnostics.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let checked = discovery.skills.iter().filter(|s| selected(&s.dir)).count();
    if cli.json {
        print_json(&serde_json::json!({
            "skills_loaded": checked,
            "errors": errors,
            "warnings": warnings,
            "diagnostics": diagnostics,
        }))?;
    } else {
        for d in &diagnostics {
            println!("{d}");
        }
        eprintln!("{checked} skill(s) loaded; {errors} error(s), {warnings} warning(s)");
    }
    Ok(if errors > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
