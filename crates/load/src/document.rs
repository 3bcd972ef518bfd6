//! Loading one knowledge file into a [`Document`].

use crate::decode::{decode, is_all_zero, normalize, DecodeError, DecodeWarning};
use crate::formats::{self, ExtractError, ExtractLimits, Extracted, FaqFormat, QaPair};
use skillrag_core::Diagnostic;
use std::path::{Path, PathBuf};

/// The formats this loader reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Text,
    Html,
    Pdf,
    Docx,
    /// A question/answer table.
    Faq(FaqFormat),
}

impl Format {
    /// The format for a file name, by extension; `None` for files this loader does not read.
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("md" | "markdown" | "mdx") => Some(Format::Markdown),
            Some("txt" | "text" | "rst" | "adoc" | "org") | None => Some(Format::Text),
            Some("html" | "htm" | "xhtml") => Some(Format::Html),
            Some("pdf") => Some(Format::Pdf),
            Some("docx") => Some(Format::Docx),
            Some(other) => FaqFormat::from_extension(other).map(Format::Faq),
        }
    }

    /// Whether the document's text is Markdown (headings make the heading path).
    pub fn is_markdown(self) -> bool {
        matches!(self, Format::Markdown | Format::Html | Format::Docx)
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Markdown => "Markdown",
            Format::Text => "text",
            Format::Html => "HTML",
            Format::Pdf => "PDF",
            Format::Docx => "DOCX",
            Format::Faq(_) => "FAQ table",
        }
    }
}

/// A loaded knowledge file.
#[derive(Debug, Clone)]
pub struct Document {
    /// Path relative to the skill folder, `/`-separated; the citation source.
    pub source: String,
    pub path: PathBuf,
    pub format: Format,
    /// First `#` heading of a Markdown file, else the file stem.
    pub title: String,
    pub text: String,
    /// Where each page starts, `(character offset, page number)`, for paged formats (PDF).
    pub pages: Vec<(usize, u32)>,
    /// The question/answer pairs of a FAQ table.
    pub faq: Vec<QaPair>,
    /// The encoding a text format was read as; the format name for binary formats.
    pub encoding: &'static str,
    /// Seconds since the Unix epoch.
    pub mtime: i64,
    pub size: u64,
    pub content_hash: String,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    // Not `#[from]`/`#[source]`: the message already carries the cause, which error chains
    // (`{:#}`) would otherwise print twice.
    #[error("{0}; skipped")]
    Decode(DecodeError),
    #[error("file is {size_mb:.1} MB, above the {limit_mb} MB limit; skipped (raise `index.max_file_mb` to index it)")]
    TooLarge { size_mb: f64, limit_mb: u64 },
    #[error("{kind}, not a regular file; skipped")]
    NotRegular { kind: &'static str },
    #[error("unsupported file type `.{0}`; skipped")]
    Unsupported(String),
    #[error("{0}; skipped")]
    Extract(ExtractError),
}

impl From<DecodeError> for LoadError {
    fn from(e: DecodeError) -> Self {
        LoadError::Decode(e)
    }
}

impl From<ExtractError> for LoadError {
    fn from(e: ExtractError) -> Self {
        LoadError::Extract(e)
    }
}

impl LoadError {
    /// The line of the file the problem is on, when it has one (a ragged CSV row).
    pub fn line(&self) -> Option<usize> {
        match self {
            LoadError::Extract(
                ExtractError::RaggedRow { line, .. }
                | ExtractError::Malformed { line, .. }
                | ExtractError::TooDeep { line, .. },
            ) => Some(*line).filter(|&l| l > 0),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct LoadOptions {
    pub max_file_bytes: u64,
    pub extract: ExtractLimits,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions { max_file_bytes: 32 * 1024 * 1024, extract: ExtractLimits::default() }
    }
}

/// Reads, decodes and normalizes one file. `source` is its path relative to the skill folder.
pub fn load_document(path: &Path, source: &str, options: &LoadOptions) -> Result<Document, LoadError> {
    load_document_with_warnings(path, source, options).map(|(doc, _)| doc)
}

/// As [`load_document`], with the warnings about repairs made while reading it (bad UTF-8
/// bytes replaced, lines read in another encoding), each naming the file.
pub fn load_document_with_warnings(
    path: &Path,
    source: &str,
    options: &LoadOptions,
) -> Result<(Document, Vec<Diagnostic>), LoadError> {
    let format = Format::from_path(path).ok_or_else(|| {
        LoadError::Unsupported(path.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default())
    })?;
    // Checked before opening: opening a FIFO blocks until someone writes to it.
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(LoadError::NotRegular { kind: crate::file_kind(&meta.file_type()) });
    }
    if meta.len() > options.max_file_bytes {
        return Err(LoadError::TooLarge {
            size_mb: meta.len() as f64 / (1024.0 * 1024.0),
            limit_mb: options.max_file_bytes / (1024 * 1024),
        });
    }
    let bytes = std::fs::read(path)?;
    let content_hash = crate::content_hash(&bytes);
    // Before the format's own checks, which would call a PDF of zeros a scan without text.
    if is_all_zero(&bytes) {
        return Err(DecodeError::AllZero.into());
    }
    let (extracted, encoding, repairs) = extract(format, &bytes, options)?;
    let max_text = options.extract.max_text_bytes;
    if extracted.text.len() > max_text {
        return Err(ExtractError::OverLimit {
            what: format!("its text ({} MB)", extracted.text.len().div_ceil(1 << 20)),
            limit: format!("{} MB", max_text.div_ceil(1 << 20)),
            setting: "max_text_mb",
        }
        .into());
    }
    let warnings = repairs
        .into_iter()
        .map(|w| {
            let line = match &w {
                DecodeWarning::MixedEncoding { first_line, .. } => Some(*first_line),
                DecodeWarning::InvalidUtf8 { .. } => None,
            };
            Diagnostic::warning(path, line, w.to_string())
        })
        .collect();
    let mtime = crate::mtime_secs(&meta);
    let title = extracted
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or_else(|| if format.is_markdown() { markdown_title(&extracted.text) } else { text_title(&extracted.text) })
        .unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
    let document = Document {
        source: source.to_string(),
        path: path.to_path_buf(),
        format,
        title,
        text: extracted.text,
        pages: extracted.pages,
        faq: extracted.faq,
        encoding,
        mtime,
        size: bytes.len() as u64,
        content_hash,
    };
    Ok((document, warnings))
}

/// The text of a file in `format`, the encoding it was read as (the format name for binary
/// formats), and the repairs decoding made.
fn extract(
    format: Format,
    bytes: &[u8],
    options: &LoadOptions,
) -> Result<(Extracted, &'static str, Vec<DecodeWarning>), LoadError> {
    match format {
        // The PDF extractor normalizes itself: its page offsets count normalized characters.
        Format::Pdf => Ok((formats::extract_pdf(bytes, &options.extract)?, "PDF", Vec::new())),
        Format::Docx => Ok((normalized(formats::extract_docx(bytes, &options.extract)?), "DOCX", Vec::new())),
        Format::Markdown | Format::Text | Format::Html | Format::Faq(_) => {
            let decoded = decode(bytes)?;
            let extracted = match format {
                Format::Html => normalized(formats::extract_html(&decoded.text)?),
                Format::Faq(faq) => normalized(formats::extract_faq(&decoded.text, faq)?),
                _ => Extracted { text: decoded.text, ..Default::default() },
            };
            Ok((extracted, decoded.encoding, decoded.warnings))
        }
    }
}

/// NFC and line endings, as for text files.
fn normalized(mut extracted: Extracted) -> Extracted {
    extracted.text = normalize(&extracted.text);
    extracted
}

/// The first level-1 ATX heading, outside code fences.
fn markdown_title(text: &str) -> Option<String> {
    let mut in_fence = false;
    for line in text.lines().take(200) {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some(rest) = t.strip_prefix("# ") {
            let title = rest.trim().trim_end_matches('#').trim();
            if !title.is_empty() {
                return Some(title.to_string());
            }
        }
    }
    None
}

/// A plain-text file's first line when it reads like a title: short, followed by a blank line
/// or more text, and not ending like a sentence.
fn text_title(text: &str) -> Option<String> {
    let mut lines = text.lines().map(str::trim).skip_while(|l| l.is_empty());
    let first = lines.next()?;
    let short = (1..=60).contains(&first.chars().count());
    let sentence = first.ends_with(['。', '.', '!', '?', '！', '？', '；', ';', ',', '，', ':', '：']);
    (short && !sentence && lines.next().is_some()).then(|| first.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_markdown_with_title_hash_and_mtime() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.md");
        std::fs::write(&path, "```\n# not title\n```\n# 劳动合同法\n\n第一条 ……\r\n").unwrap();
        let doc = load_document(&path, "knowledge/a.md", &LoadOptions::default()).unwrap();
        assert_eq!(doc.title, "劳动合同法");
        assert_eq!(doc.source, "knowledge/a.md");
        assert!(doc.text.ends_with("第一条 ……\n"));
        assert_eq!(doc.content_hash.len(), 64);
        assert!(doc.mtime > 1_600_000_000);
    }

    #[test]
    fn text_titles() {
        assert_eq!(text_title("\n普洱茶冲泡要点\n\n普洱茶分生茶和熟茶。").as_deref(), Some("普洱茶冲泡要点"));
        assert_eq!(text_title("This is a sentence.\nMore."), None);
        assert_eq!(text_title("Only one line"), None);
    }

    #[test]
    fn too_large_and_unsupported_are_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("big.txt");
        std::fs::write(&path, "x".repeat(2048)).unwrap();
        let err = load_document(&path, "big.txt", &LoadOptions { max_file_bytes: 1024, ..LoadOptions::default() })
            .unwrap_err();
        assert!(matches!(err, LoadError::TooLarge { .. }));
        let png = tmp.path().join("a.png");
        std::fs::write(&png, [0u8; 4]).unwrap();
        assert!(matches!(load_document(&png, "a.png", &LoadOptions::default()), Err(LoadError::Unsupported(_))));
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_refused_without_opening_it() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("pipe.md");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        // Opening would block until a writer came; the metadata check answers at once.
        let err = load_document(&fifo, "pipe.md", &LoadOptions::default()).unwrap_err();
        assert_eq!(err.to_string(), "named pipe (FIFO), not a regular file; skipped");
    }

    #[test]
    fn zero_files_and_repairs() {
        let tmp = tempfile::tempdir().unwrap();
        for name in ["zeros.pdf", "zeros.md", "zeros.docx"] {
            let path = tmp.path().join(name);
            std::fs::write(&path, vec![0u8; 8192]).unwrap();
            let err = load_document(&path, name, &LoadOptions::default()).unwrap_err();
            assert!(err.to_string().contains("all zero bytes"), "{name}: {err}");
        }
        let path = tmp.path().join("bad.md");
        std::fs::write(&path, b"# T\n\xe4\xbd\xa0\xe5\xa5\xbd \xff done\n").unwrap();
        let (doc, warnings) = load_document_with_warnings(&path, "bad.md", &LoadOptions::default()).unwrap();
        assert_eq!(doc.text, "# T\n你好 \u{FFFD} done\n");
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].path, path);
        assert!(warnings[0].to_string().contains("1 byte(s) are not valid UTF-8"), "{}", warnings[0]);
    }

    #[test]
    fn deep_html_names_its_line() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("deep.html");
        std::fs::write(&path, format!("<p>x</p>\n\n{}", "<div>".repeat(50_000))).unwrap();
        let err = load_document(&path, "deep.html", &LoadOptions::default()).unwrap_err();
        assert_eq!(err.line(), Some(3));
        assert!(err.to_string().contains("HTML nests deeper than"), "{err}");
    }
}
