//! `skillrag extract`

use super::print_json;
use crate::cli::{Cli, ExtractArgs};
use anyhow::{Context, Result};
use skillrag_load::{load_document, LoadOptions};
use std::process::ExitCode;

pub fn extract(cli: &Cli, args: &ExtractArgs) -> Result<ExitCode> {
    let path = &args.file;
    let source = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let doc = load_document(path, &source, &LoadOptions::default()).with_context(|| path.display().to_string())?;
    if cli.json {
        print_json(&serde_json::json!({
            "source": doc.source,
            "title": doc.title,
            "format": doc.format.name(),
            "encoding": doc.encoding,
            "chars": doc.text.chars().count(),
            "pages": doc.pages.iter().map(|&(offset, page)| serde_json::json!({"page": page, "offset": offset})).collect::<Vec<_>>(),
            "faq": doc.faq.iter().map(|p| serde_json::json!({"question": p.question, "answer": p.answer, "line": p.line})).collect::<Vec<_>>(),
            "text": doc.text,
        }))?;
        return Ok(ExitCode::SUCCESS);
    }
    // Page marks go in front of each page's first character.
    let mut pages = doc.pages.iter().peekable();
    let mut out = String::with_capacity(doc.text.len() + 64 * doc.pages.len());
    for (i, c) in doc.text.chars().enumerate() {
        while let Some(&(_, page)) = pages.next_if(|&&(offset, _)| offset <= i) {
            out.push_str(&format!("\n----- page {page} -----\n"));
        }
        out.push(c);
    }
    println!("{}", out.trim_start_matches('\n'));
    let mut summary = format!(
        "{}: {}, {}, title \"{}\", {} characters",
        path.display(),
        doc.format.name(),
        doc.encoding,
        doc.title,
        doc.text.chars().count()
    );
    if !doc.pages.is_empty() {
        summary.push_str(&format!(", {} page(s) with text", doc.pages.len()));
    }
    if !doc.faq.is_empty() {
        summary.push_str(&format!(", {} question/answer pair(s)", doc.faq.len()));
    }
    eprintln!("{summary}");
    Ok(ExitCode::SUCCESS)
}
