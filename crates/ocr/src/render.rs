//! Scanned PDF pages rendered to images for OCR by poppler's `pdftoppm`, found at run time.
//!
//! A program for the reason Tesseract is one (see `tesseract`): no C library at build time, and
//! a page that is one huge or hostile image costs a child its memory, not the indexer.

use crate::child::{self, ChildError};
use crate::OcrError;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct PdfRenderer {
    program: PathBuf,
    timeout: Duration,
    memory_mb: u64,
}

impl PdfRenderer {
    /// `pdftoppm` on `PATH` (or the one `SKILLRAG_PDFTOPPM` names); `Unavailable` without one.
    pub fn find(timeout: Duration, memory_mb: u64) -> Result<PdfRenderer, OcrError> {
        let program = std::env::var_os("SKILLRAG_PDFTOPPM").map_or_else(|| PathBuf::from("pdftoppm"), PathBuf::from);
        let mut command = child::command(&program, memory_mb);
        command.arg("-v");
        // `pdftoppm -v` prints its version to stderr and exits 0 (older versions 99).
        match child::run(command, Duration::from_secs(30)) {
            Ok(done) if done.stderr.contains("pdftoppm") => Ok(PdfRenderer { program, timeout, memory_mb }),
            _ => Err(OcrError::Unavailable { tool: "pdftoppm" }),
        }
    }

    /// Renders page `page` (from 1) of `pdf` at `dpi` as a grayscale PGM in `folder`. PGM, not
    /// PNG: compressing a noisy 300 dpi scan as PNG took pdftoppm 30 s of a page's 30.4 s
    /// (bench/results/ocr.md); the uncompressed file (8.7 MB for A4) is deleted once read.
    pub(crate) fn render(&self, pdf: &Path, page: u32, dpi: u32, folder: &Path) -> Result<PathBuf, OcrError> {
        let stem = folder.join(format!("page-{page}"));
        let mut command = child::command(&self.program, self.memory_mb);
        command
            .args(["-f", &page.to_string(), "-l", &page.to_string(), "-r", &dpi.to_string()])
            .args(["-gray", "-singlefile"])
            .arg(pdf)
            .arg(&stem);
        let done = child::run(command, self.timeout).map_err(|e| match e {
            ChildError::Spawn { .. } => OcrError::Unavailable { tool: "pdftoppm" },
            ChildError::Timeout { seconds, .. } => OcrError::Timeout { tool: "pdftoppm", seconds },
        })?;
        let image = stem.with_extension("pgm");
        if !done.success || !image.is_file() {
            let detail = done.stderr.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no image written");
            return Err(OcrError::Unreadable(format!("page {page} cannot be rendered: {detail}")));
        }
        Ok(image)
    }
}
