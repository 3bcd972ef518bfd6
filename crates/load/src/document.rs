//! Loading one knowledge file into a [`Document`].

use crate::decode::{decode, normalize, DecodeError};
use crate::formats::{self, ExtractError, ExtractLimits, Extracted, FaqFormat, QaPair};
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
    #[error("{0}; skipped")]
    Decode(#[from] DecodeError),
    #[error("file is {size_mb:.1} MB, above the {limit_mb} MB limit; skipped (raise `index.max_file_mb` to index it)")]
    TooLarge { size_mb: f64, limit_mb: u64 },
    #[error("not a regular file; skipped")]
    NotRegular,
    #[error("unsupported file type `.{0}`; skipped")]
    Unsupported(String),
    #[error("{0}; skipped")]
    Extract(#[from] ExtractError),
}

impl LoadError {
    /// The line of the file the problem is on, when it has one (a ragged CSV row).
    pub fn line(&self) -> Option<usize> {
        match self {
            LoadError::Extract(ExtractError::RaggedRow { line, .. } | ExtractError::Malformed { line, .. }) => {
                Some(*line).filter(|&l| l > 0)
            }
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
    let format = Format::from_path(path).ok_or_else(|| {
        LoadError::Unsupported(path.extension().map(|e| e.to_string_lossy().into_owned()).unwrap_or_default())
    })?;
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(LoadError::NotRegular);
    }
    if meta.len() > options.max_file_bytes {
        return Err(LoadError::TooLarge {
            size_mb: meta.len() as f64 / (1024.0 * 1024.0),
            limit_mb: options.max_file_bytes / (1024 * 1024),
        });
    }
    let bytes = std::fs::read(path)?;
    let content_hash = crate::content_hash(&bytes);
    let (extracted, encoding) = extract(format, &bytes, options)?;
    let mtime = crate::mtime_secs(&meta);
    let title = extracted
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or_else(|| if format.is_markdown() { markdown_title(&extracted.text) } else { text_title(&extracted.text) })
        .unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default());
    Ok(Document {
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
    })
}

/// The text of a file in `format`, and the encoding it was read as (the format name for
/// binary formats).
fn extract(format: Format, bytes: &[u8], options: &LoadOptions) -> Result<(Extracted, &'static str), LoadError> {
    match format {
        // The PDF extractor normalizes itself: its page offsets count normalized characters.
        Format::Pdf => Ok((formats::extract_pdf(bytes)?, "PDF")),
        Format::Docx => Ok((normalized(formats::extract_docx(bytes, &options.extract)?), "DOCX")),
        Format::Markdown | Format::Text | Format::Html | Format::Faq(_) => {
            let decoded = decode(bytes)?;
            let extracted = match format {
                Format::Html => normalized(formats::extract_html(&decoded.text)),
                Format::Faq(faq) => normalized(formats::extract_faq(&decoded.text, faq)?),
                _ => Extracted { text: decoded.text, ..Default::default() },
            };
            Ok((extracted, decoded.encoding))
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
}
