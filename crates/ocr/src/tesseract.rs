//! Tesseract, run as a program: found on `PATH` (or `SKILLRAG_TESSERACT`) at run time.
//!
//! Why the CLI and not a binding (`leptess`, `tesseract` over libtesseract): the binary builds
//! and runs without Tesseract's headers or libraries (OCR is optional, found when present); a
//! hostile image crashes one child, not the indexer, and its memory and time are capped
//! (`child::run`); and pages run in parallel as processes with no shared engine state. The cost
//! is loading the language model once per page, measured in bench/results/ocr.md next to the
//! page's own OCR time.

use crate::child::{self, ChildError};
use crate::{tsv, Languages, OcrError, PageText, Recognizer};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where to install the tools from, said in every message about a missing one.
pub const INSTALL_HINT: &str = "install Tesseract and poppler-utils (`scripts/setup-ocr`, or `apt-get install tesseract-ocr tesseract-ocr-chi-sim tesseract-ocr-chi-tra poppler-utils`)";

#[derive(Debug, Clone)]
pub struct Tesseract {
    program: PathBuf,
    version: String,
    languages: Vec<String>,
    timeout: Duration,
    memory_mb: u64,
}

impl Tesseract {
    /// The `tesseract` program on `PATH` (or the one `SKILLRAG_TESSERACT` names), with its
    /// version and installed languages; `Unavailable` when there is none that runs.
    pub fn find(timeout: Duration, memory_mb: u64) -> Result<Tesseract, OcrError> {
        let program = std::env::var_os("SKILLRAG_TESSERACT").map_or_else(|| PathBuf::from("tesseract"), PathBuf::from);
        let ask = |arg: &str| -> Option<String> {
            let mut command = child::command(&program, memory_mb);
            command.arg(arg);
            let done = child::run(command, Duration::from_secs(30)).ok()?;
            done.success.then(|| format!("{}{}", String::from_utf8_lossy(&done.stdout), done.stderr))
        };
        let unavailable = || OcrError::Unavailable { tool: "tesseract" };
        let version = ask("--version").ok_or_else(unavailable)?;
        let version = version.lines().next().unwrap_or("tesseract").trim().to_string();
        let listed = ask("--list-langs").ok_or_else(unavailable)?;
        // "List of available languages in "/usr/share/tesseract-ocr/5/tessdata/" (4):" then one per line.
        let languages = listed
            .lines()
            .skip_while(|l| !l.starts_with("List of available languages"))
            .skip(1)
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        Ok(Tesseract { program, version, languages, timeout, memory_mb })
    }
}

impl Recognizer for Tesseract {
    fn name(&self) -> &str {
        &self.version
    }

    fn installed_languages(&self) -> &[String] {
        &self.languages
    }

    fn recognize(&self, image: &Path, languages: &Languages, dpi: Option<u32>) -> Result<PageText, OcrError> {
        let mut command = child::command(&self.program, self.memory_mb);
        command.arg(image).arg("stdout").arg("-l").arg(languages.spec());
        if let Some(dpi) = dpi {
            command.arg("--dpi").arg(dpi.to_string());
        }
        command.arg("tsv");
        let done = child::run(command, self.timeout).map_err(|e| match e {
            ChildError::Spawn { .. } => OcrError::Unavailable { tool: "tesseract" },
            ChildError::Timeout { seconds, .. } => OcrError::Timeout { tool: "tesseract", seconds },
        })?;
        if !done.success || done.stdout.is_empty() {
            return Err(OcrError::Unreadable(reason(&done.stderr)));
        }
        Ok(tsv::page_text(&String::from_utf8_lossy(&done.stdout)))
    }
}

/// The line of Tesseract's (leptonica's) complaints that says what is wrong with the image.
pub(crate) fn reason(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Estimating resolution") && !l.starts_with("Warning:"))
        .collect();
    // libjpeg says "Premature end of JPEG file"; leptonica then "Error in pixRead…".
    let telling = lines
        .iter()
        .find(|l| !l.starts_with("Error in pix") && !l.starts_with("Error during processing"))
        .or(lines.first());
    match telling {
        Some(line) if line.contains("pix not read") || line.starts_with("Error in pix") => {
            "the image cannot be decoded (damaged, truncated or not an image)".to_string()
        }
        Some(line) => format!("the image cannot be read: {line}"),
        None => "the OCR engine read nothing from it".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_is_read_for_its_cause() {
        let truncated = "Premature end of JPEG file\nError in pixReadStreamJpeg: bad data\nError in pixRead: pix not read\nError during processing.\n";
        assert_eq!(reason(truncated), "the image cannot be read: Premature end of JPEG file");
        let pnm = "Error in pixReadStreamPnm: error in 5\nError in pixRead: pix not read\n";
        assert_eq!(reason(pnm), "the image cannot be decoded (damaged, truncated or not an image)");
        assert_eq!(reason("Estimating resolution as 300\n"), "the OCR engine read nothing from it");
    }
}
