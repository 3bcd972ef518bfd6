//! Extractors for the document formats that are not plain text: PDF, DOCX, HTML and FAQ tables
//! (CSV/TSV/JSON/JSONL). Each turns a file into an [`Extracted`] text the chunker understands —
//! Markdown with `#` headings for structured formats, plain text with page starts for PDF, and
//! question/answer pairs for FAQ files — or a clear [`ExtractError`] saying why the file is
//! skipped. DOCX and HTML can also carry the text of their pictures, read by a
//! [`PictureReader`] the caller gives (OCR), at the pictures' places (see `embedded`).

mod docx;
mod embedded;
mod faq;
mod html;
mod html_guard;
mod markdown;
mod pdf;

#[cfg(test)]
pub(crate) use docx::fixtures as docx_fixtures;
pub use docx::{extract_docx, extract_docx_with_pictures};
pub use embedded::{PictureReader, Pictures, MAX_PICTURES};
pub use faq::{extract_faq, FaqFormat};
pub use html::{extract_html, extract_html_with_pictures};
pub use html_guard::MAX_HTML_DEPTH;
pub use pdf::{extract_pdf, extract_pdf_pages, PdfPages, ScannedPage};

/// Runs `f`, turning a panic into `Err(message)` without printing it. Extractor crates panic on
/// some malformed files; that is a problem of the input, reported per file by the indexer, not
/// a crash to show with a backtrace hint. Panics elsewhere still reach the previous hook.
pub(crate) fn contained<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    use std::cell::Cell;
    use std::panic::{catch_unwind, set_hook, take_hook, AssertUnwindSafe};
    thread_local! {
        static QUIET: Cell<bool> = const { Cell::new(false) };
    }
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = take_hook();
        set_hook(Box::new(move |info| {
            if !QUIET.with(Cell::get) {
                previous(info);
            }
        }));
    });
    let was_quiet = QUIET.with(|q| q.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was_quiet));
    result.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown error".into())
    })
}

/// The text of a document in one of the rich formats.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extracted {
    /// NFC-normalized text with `\n` line endings.
    pub text: String,
    /// Whether `text` is Markdown (`#` headings make the heading path) or plain text.
    pub markdown: bool,
    /// Where each page starts: `(character offset in text, page number from 1)`, ascending.
    /// Empty for formats without pages.
    pub pages: Vec<(usize, u32)>,
    /// Question/answer pairs of a FAQ file, in file order; empty for other formats.
    pub faq: Vec<QaPair>,
    /// The document's title when the format says (PDF /Title, DOCX core title, HTML `<title>` or `<h1>`).
    pub title: Option<String>,
}

/// One row of a FAQ file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QaPair {
    pub question: String,
    pub answer: String,
    /// 1-based line (CSV/TSV/JSONL) or entry (JSON array) the pair came from.
    pub line: usize,
}

/// Limits that keep a hostile file from exhausting memory or time.
#[derive(Debug, Clone, Copy)]
pub struct ExtractLimits {
    /// Most bytes any one archive member (DOCX part), or all of a PDF's page content together,
    /// may inflate to.
    pub max_inflated_bytes: u64,
    /// Highest compression ratio accepted for an archive member or a PDF's content (bombs are
    /// far above it).
    pub max_ratio: u64,
    /// Most bytes one PDF page's content may inflate to: its glyphs are held in memory at
    /// once, at tens of bytes each.
    pub max_page_content_bytes: u64,
    /// Most pages a PDF may have.
    pub max_pages: usize,
    /// Most bytes of text one file may yield.
    pub max_text_bytes: usize,
}

impl Default for ExtractLimits {
    fn default() -> Self {
        ExtractLimits {
            max_inflated_bytes: 64 * 1024 * 1024,
            max_ratio: 200,
            max_page_content_bytes: 16 * 1024 * 1024,
            max_pages: 5_000,
            max_text_bytes: 32 * 1024 * 1024,
        }
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExtractError {
    #[error("the PDF is encrypted; decrypt it (e.g. `qpdf --decrypt`) to index it")]
    Encrypted,
    #[error(
        "no text layer: the PDF's {pages} page(s) hold only images (a scan?); run OCR on it first (e.g. `ocrmypdf`)"
    )]
    NoTextLayer { pages: usize },
    #[error("damaged or truncated {format}: {reason}")]
    Corrupt { format: &'static str, reason: String },
    #[error("{member} inflates beyond {limit_mb} MB (compression ratio {ratio}:1); looks like a zip bomb")]
    ZipBomb { member: String, limit_mb: u64, ratio: u64 },
    #[error(
        "{what} exceeds the limit of {limit}; not extracted (a generated or hostile file? `[index] {setting}` raises it)"
    )]
    OverLimit { what: String, limit: String, setting: &'static str },
    #[error("line {line}: expected {expected} fields, found {found}")]
    RaggedRow { line: usize, expected: usize, found: usize },
    #[error(
        "no question/answer columns: expected headers such as `question`/`answer` or `问题`/`答案`, found {found}"
    )]
    NoQaColumns { found: String },
    #[error("line {line}: {reason}")]
    Malformed { line: usize, reason: String },
    #[error(
        "line {line}: {what} nests deeper than {limit} levels; refusing to parse it (a generated or hostile file?)"
    )]
    TooDeep { line: usize, what: &'static str, limit: usize },
}
