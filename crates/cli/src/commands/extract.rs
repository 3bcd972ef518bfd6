//! `skillrag extract`

use super::print_json;
use crate::cli::{Cli, ExtractArgs};
use anyhow::{Context, Result};
use skillrag_load::ocr::{Languages, Ocr, OcrSettings};
use skillrag_load::{load_document, Format, LoadOptions, OcrChoice};
use std::process::ExitCode;

pub fn extract(cli: &Cli, args: &ExtractArgs) -> Result<ExitCode> {
    let path = &args.file;
    let source = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let (options, ocr) = ocr_choice(cli, args)?;
    let doc = load_document(path, &source, &options, &ocr).with_context(|| path.display().to_string())?;
    if cli.json {
        print_json(&serde_json::json!({
            "source": doc.source,
            "title": doc.title,
            "format": doc.format.name(),
            "encoding": doc.encoding,
            "chars": doc.text.chars().count(),
            "pages": doc.pages.iter().map(|&(offset, page)| serde_json::json!({"page": page, "offset": offset})).collect::<Vec<_>>(),
            "ocr": (!doc.ocr.is_empty()).then(|| serde_json::json!({
                "languages": match &ocr { OcrChoice::Ready(o) => o.languages().spec(), OcrChoice::Unavailable(_) => String::new() },
                "pages": doc.ocr.iter().map(|p| serde_json::json!({"page": p.page, "confidence": p.confidence})).collect::<Vec<_>>(),
            })),
            "image": doc.image.map(|i| serde_json::json!({"width": i.width, "height": i.height})),
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
    // A text file's encoding follows its format; a binary format has none to show.
    let encoding = if matches!(doc.format, Format::Pdf | Format::Docx | Format::Image) {
        String::new()
    } else {
        format!(", {}", doc.encoding)
    };
    let mut summary = format!(
        "{}: {}{encoding}, title \"{}\", {} characters",
        path.display(),
        doc.format.name(),
        doc.title,
        doc.text.chars().count()
    );
    if !doc.pages.is_empty() {
        summary.push_str(&format!(", {} page(s) with text", doc.pages.len()));
    }
    if !doc.faq.is_empty() {
        summary.push_str(&format!(", {} question/answer pair(s)", doc.faq.len()));
    }
    if !doc.ocr.is_empty() {
        let mean = doc.ocr.iter().map(|p| p.confidence).sum::<f32>() / doc.ocr.len() as f32;
        summary.push_str(&format!(", {} page(s) read by OCR (mean confidence {mean:.2})", doc.ocr.len()));
    }
    eprintln!("{summary}");
    Ok(ExitCode::SUCCESS)
}

/// In a project: its limits, OCR settings and cache, and the languages of the skill the file
/// belongs to. Elsewhere: the default limits, and OCR in `--ocr-languages` or Chinese and English.
fn ocr_choice(cli: &Cli, args: &ExtractArgs) -> Result<(LoadOptions, OcrChoice)> {
    let project =
        skillrag_engine::Project::open_with(&cli.project, &super::environment(), &super::config_sections()).ok();
    let options = project.as_ref().map_or_else(LoadOptions::default, |p| p.config.index.load_options());
    if let Some(engine) = project.and_then(|p| skillrag_engine::Engine::open(p).ok()) {
        let file = std::fs::canonicalize(&args.file).unwrap_or_else(|_| args.file.clone());
        let skill =
            engine.discovery.skills.iter().find(|s| std::fs::canonicalize(&s.dir).is_ok_and(|d| file.starts_with(d)));
        let (choice, problem) = engine.ocr_choice(skill, args.ocr_languages.as_deref());
        if let Some(problem) = problem {
            eprintln!("{problem}");
        }
        return Ok((options, choice));
    }
    let choice = match Ocr::find(OcrSettings::default()) {
        Err(e) => OcrChoice::unavailable(&e),
        Ok(ocr) => {
            let languages = match &args.ocr_languages {
                Some(spec) => Languages::parse(spec)?,
                // Whichever of Simplified Chinese and English is installed.
                None => {
                    let installed = ocr.installed_languages();
                    let wanted: Vec<&str> =
                        ["chi_sim", "eng"].into_iter().filter(|l| installed.iter().any(|i| i == l)).collect();
                    let wanted = wanted.join("+");
                    Languages::parse(if wanted.is_empty() { "eng" } else { &wanted })?
                }
            };
            match ocr.with_languages(languages) {
                Ok(ocr) => OcrChoice::Ready(ocr),
                Err(e) => anyhow::bail!("{e}"),
            }
        }
    };
    Ok((options, choice))
}
