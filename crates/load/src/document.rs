//! Loading one knowledge file into a [`Document`].

use crate::decode::{decode, is_all_zero, normalize, DecodeError, DecodeWarning};
use crate::formats::{self, ExtractError, ExtractLimits, Extracted, FaqFormat, PictureReader, Pictures, QaPair};
use crate::pictures;
use crate::read::{ImageSize, LoadError, OcrChoice, OcrPage, Read};
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
    /// A picture (PNG, JPEG, WebP, TIFF): its text is read by OCR, its caption given beside it.
    Image,
}

impl Format {
    /// The file extensions this loader reads (a file without one is read as text): what
    /// [`Format::from_path`] accepts, listed for users (the server's upload form says them).
    pub const EXTENSIONS: [&str; 25] = [
        "md", "markdown", "mdx", "txt", "text", "rst", "adoc", "org", "html", "htm", "xhtml", "pdf", "docx", "csv",
        "tsv", "tab", "json", "jsonl", "ndjson", "png", "jpg", "jpeg", "webp", "tif", "tiff",
    ];

    /// The format for a file name, by extension; `None` for files this loader does not read.
    pub fn from_path(path: &Path) -> Option<Format> {
        let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("md" | "markdown" | "mdx") => Some(Format::Markdown),
            Some("txt" | "text" | "rst" | "adoc" | "org") | None => Some(Format::Text),
            Some("html" | "htm" | "xhtml") => Some(Format::Html),
            Some("pdf") => Some(Format::Pdf),
            Some("docx") => Some(Format::Docx),
            Some("png" | "jpg" | "jpeg" | "webp" | "tif" | "tiff") => Some(Format::Image),
            Some(other) => FaqFormat::from_extension(other).map(Format::Faq),
        }
    }

    /// Whether reading it may need OCR: a scan, a picture, or a picture inside a page or a DOCX.
    pub fn may_need_ocr(self) -> bool {
        matches!(self, Format::Pdf | Format::Image | Format::Docx | Format::Html)
    }

    /// Whether the document's text is Markdown (headings make the heading path).
    pub fn is_markdown(self) -> bool {
        matches!(self, Format::Markdown | Format::Html | Format::Docx | Format::Image)
    }

    /// Whether the file is text read in some character encoding (not PDF, DOCX or a picture).
    pub fn is_text(self) -> bool {
        !matches!(self, Format::Pdf | Format::Docx | Format::Image)
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Markdown => "Markdown",
            Format::Text => "text",
            Format::Html => "HTML",
            Format::Pdf => "PDF",
            Format::Docx => "DOCX",
            Format::Faq(_) => "FAQ table",
            Format::Image => "image",
        }
    }
}

/// A title a generator writes when the author gave none (a PDF's "untitled", Word's
/// "Document1"): the text's own title, or the file name, says more.
fn is_placeholder_title(title: &str) -> bool {
    let t = title.trim().to_lowercase();
    let stem = t.trim_end_matches(|c: char| c.is_ascii_digit()).trim();
    matches!(stem, "untitled" | "untitled document" | "document" | "无标题" | "無標題" | "新建文档" | "microsoft word")
        || t.starts_with("microsoft word - ")
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
    /// The pages (or the picture) whose text OCR read, with its confidence.
    pub ocr: Vec<OcrPage>,
    /// A picture's size in pixels.
    pub image: Option<ImageSize>,
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
pub fn load_document(path: &Path, source: &str, options: &LoadOptions, ocr: &OcrChoice) -> Result<Document, LoadError> {
    load_document_with_warnings(path, source, options, ocr).map(|(doc, _)| doc)
}

/// As [`load_document`], with the warnings about repairs made while reading it (bad UTF-8
/// bytes replaced, lines read in another encoding), each naming the file.
pub fn load_document_with_warnings(
    path: &Path,
    source: &str,
    options: &LoadOptions,
    ocr: &OcrChoice,
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
    let mut warnings = Vec::new();
    let (extracted, encoding, repairs, read) = match format {
        Format::Pdf => {
            let (extracted, read) = pdf(path, &bytes, &content_hash, options, ocr, &mut warnings)?;
            (extracted, "PDF", Vec::new(), read)
        }
        Format::Image => {
            let (extracted, read) = pictures::picture(path, &content_hash, ocr)?;
            (extracted, "image", Vec::new(), read)
        }
        _ => {
            let (extracted, encoding, repairs) = extract(format, path, &bytes, options, ocr, &mut warnings)?;
            (extracted, encoding, repairs, Read::default())
        }
    };
    let max_text = options.extract.max_text_bytes;
    if extracted.text.len() > max_text {
        return Err(ExtractError::OverLimit {
            what: format!("its text ({} MB)", extracted.text.len().div_ceil(1 << 20)),
            limit: format!("{} MB", max_text.div_ceil(1 << 20)),
            setting: "max_text_mb",
        }
        .into());
    }
    warnings.extend(repairs.into_iter().map(|w| {
        let line = match &w {
            DecodeWarning::MixedEncoding { first_line, .. } => Some(*first_line),
            DecodeWarning::InvalidUtf8 { .. } => None,
        };
        Diagnostic::warning(path, line, w.to_string())
    }));
    let mtime = crate::mtime_secs(&meta);
    let title = extracted
        .title
        .clone()
        .filter(|t| !t.trim().is_empty() && !is_placeholder_title(t))
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
        ocr: read.pages,
        image: read.image,
    };
    Ok((document, warnings))
}

/// The text of a file in `format`, the encoding it was read as (the format name for binary
/// formats), and the repairs decoding made. The pictures in a DOCX or HTML file are read by
/// `ocr`; what went wrong with them is added to `warnings`.
fn extract(
    format: Format,
    path: &Path,
    bytes: &[u8],
    options: &LoadOptions,
    ocr: &OcrChoice,
    warnings: &mut Vec<Diagnostic>,
) -> Result<(Extracted, &'static str, Vec<DecodeWarning>), LoadError> {
    let reader = OcrPictures(ocr);
    let mut pictures = Pictures::new(&reader).max_bytes(options.max_file_bytes);
    let mut picture_warnings = |pictures: &Pictures<'_>| {
        warnings.extend(pictures.warnings().into_iter().map(|w| Diagnostic::warning(path, None, w)));
    };
    match format {
        Format::Pdf | Format::Image => unreachable!("read with OCR at hand"),
        Format::Docx => {
            let extracted = formats::extract_docx_with_pictures(bytes, &options.extract, &mut pictures)?;
            picture_warnings(&pictures);
            Ok((normalized(extracted), "DOCX", Vec::new()))
        }
        Format::Markdown | Format::Text | Format::Html | Format::Faq(_) => {
            let decoded = decode(bytes)?;
            let extracted = match format {
                Format::Html => {
                    // Pictures are read from the page's own folder (or below it).
                    let folder = match path.parent() {
                        Some(p) if !p.as_os_str().is_empty() => p,
                        _ => Path::new("."),
                    };
                    let mut pictures = pictures.beside(folder);
                    let extracted = formats::extract_html_with_pictures(&decoded.text, &mut pictures)?;
                    picture_warnings(&pictures);
                    normalized(extracted)
                }
                Format::Faq(faq) => normalized(formats::extract_faq(&decoded.text, faq)?),
                _ => Extracted { text: decoded.text, ..Default::default() },
            };
            Ok((extracted, decoded.encoding, decoded.warnings))
        }
    }
}

/// OCR as the reader of the pictures inside DOCX and HTML files. What it reads there is not
/// listed in [`Document::ocr`]: a chunk's OCR confidence is taken from the pages it lies on, and
/// for a page-less entry that is every chunk of the document, not just the picture's text.
struct OcrPictures<'a>(&'a OcrChoice);

impl PictureReader for OcrPictures<'_> {
    fn unavailable(&self) -> Option<String> {
        match self.0 {
            OcrChoice::Ready(_) => None,
            OcrChoice::Unavailable(why) => Some(format!("OCR is not available: {why}")),
        }
    }

    fn read(&self, bytes: &[u8], extension: &str) -> Result<String, String> {
        match self.0 {
            OcrChoice::Ready(ocr) => {
                ocr.image_bytes(bytes, extension).map(|read| read.page.text).map_err(|e| e.to_string())
            }
            OcrChoice::Unavailable(why) => Err(format!("OCR is not available: {why}")),
        }
    }

    /// The OCR engine bounds the children running at once across all files; this bounds the
    /// pictures of one document held in memory while they wait.
    fn parallelism(&self) -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get()).min(8)
    }
}

/// A PDF's text layer, with the pages that have none read by OCR and put in their place. A
/// page OCR cannot read is a warning naming it; the file fails only when no page yields text.
fn pdf(
    path: &Path,
    bytes: &[u8],
    content_hash: &str,
    options: &LoadOptions,
    ocr: &OcrChoice,
    warnings: &mut Vec<Diagnostic>,
) -> Result<(Extracted, Read), LoadError> {
    // The PDF extractor normalizes itself: its page offsets count normalized characters.
    let pdf = formats::extract_pdf_pages(bytes, &options.extract)?;
    let numbers =
        |pages: &[formats::ScannedPage]| pages.iter().map(|p| p.number.to_string()).collect::<Vec<_>>().join(", ");
    let ocr = match (ocr, pdf.text) {
        (_, Some(text)) if pdf.scanned.is_empty() => return Ok((text, Read::default())),
        (OcrChoice::Ready(ocr), text) => (ocr, text),
        (OcrChoice::Unavailable(why), None) => {
            let what = format!("no text layer: the PDF's {} page(s) hold only images (a scan?)", pdf.scanned.len());
            return Err(LoadError::NeedsOcr { what, why: why.clone() });
        }
        (OcrChoice::Unavailable(why), Some(text)) => {
            let message = format!(
                "page(s) {} have no text layer (scanned?) and are left out; OCR is not available: {why}",
                numbers(&pdf.scanned)
            );
            warnings.push(Diagnostic::warning(path, None, message));
            return Ok((text, Read::default()));
        }
    };
    let (ocr, text) = ocr;
    let boxes: Vec<skillrag_ocr::PageBox> = pdf
        .scanned
        .iter()
        .map(|p| skillrag_ocr::PageBox {
            number: p.number,
            width_pt: p.width_pt,
            height_pt: p.height_pt,
            image: p.image,
        })
        .collect();
    let mut read = Read::default();
    let mut scanned_text = Vec::new();
    let mut first_error = None;
    for (page, result) in pdf.scanned.iter().zip(ocr.pdf_pages(path, content_hash, &boxes)) {
        match result {
            Ok(page_text) if page_text.text.trim().is_empty() => {}
            Ok(page_text) => {
                read.pages.push(OcrPage { page: Some(page.number), confidence: page_text.confidence });
                scanned_text.push((page.number, normalize(&page_text.text)));
            }
            Err(e) => {
                warnings.push(Diagnostic::warning(path, None, format!("page {}: not read by OCR: {e}", page.number)));
                first_error.get_or_insert(e);
            }
        }
    }
    if text.is_none() && scanned_text.is_empty() {
        return Err(match first_error {
            Some(e) => LoadError::Ocr(e),
            None => LoadError::Extract(ExtractError::NoTextLayer { pages: pdf.scanned.len() }),
        });
    }
    let mut merged = merge_pages(text.unwrap_or_default(), scanned_text);
    merged.title = merged.title.or(pdf.title);
    Ok((merged, read))
}

/// The text layer's pages and OCR'd pages in page order, each OCR'd page its own paragraphs.
fn merge_pages(layer: Extracted, scanned: Vec<(u32, String)>) -> Extracted {
    let chars: Vec<(usize, char)> = layer.text.char_indices().collect();
    let byte_at = |offset: usize| chars.get(offset).map_or(layer.text.len(), |&(b, _)| b);
    let mut segments: Vec<(u32, &str, bool)> = Vec::new();
    for (i, &(start, page)) in layer.pages.iter().enumerate() {
        let end = layer.pages.get(i + 1).map_or(chars.len(), |&(next, _)| next);
        segments.push((page, &layer.text[byte_at(start)..byte_at(end)], false));
    }
    if layer.pages.is_empty() && !layer.text.is_empty() {
        segments.push((0, layer.text.as_str(), false));
    }
    for (page, text) in &scanned {
        segments.push((*page, text.as_str(), true));
    }
    segments.sort_by_key(|&(page, _, _)| page);
    let (mut text, mut pages, mut count) = (String::new(), Vec::new(), 0usize);
    for (page, segment, scanned) in segments {
        if scanned && !text.is_empty() && !text.ends_with("\n\n") {
            let pad = if text.ends_with('\n') { "\n" } else { "\n\n" };
            text.push_str(pad);
            count += pad.len();
        }
        if page > 0 {
            pages.push((count, page));
        }
        let segment = if scanned { segment.trim() } else { segment };
        text.push_str(segment);
        count += segment.chars().count();
        if scanned {
            text.push_str("\n\n");
            count += 2;
        }
    }
    Extracted { text, markdown: false, pages, faq: Vec::new(), title: layer.title }
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
    use skillrag_ocr::{Ocr, OcrError};

    #[test]
    fn a_generator_s_placeholder_title_gives_way() {
        for placeholder in
            ["untitled", "Untitled", " UNTITLED ", "Untitled1", "无标题", "Document1", "Microsoft Word - notes.docx"]
        {
            assert!(is_placeholder_title(placeholder), "{placeholder}");
        }
        for title in ["Tea Brewing Manual", "Untitled Goose Game", "Documentation", "劳动合同法"] {
            assert!(!is_placeholder_title(title), "{title}");
        }
        assert!(Format::Markdown.is_text() && Format::Faq(FaqFormat::Csv).is_text());
        assert!(!Format::Pdf.is_text() && !Format::Docx.is_text() && !Format::Image.is_text());
    }

    #[test]
    fn the_listed_extensions_are_the_ones_read() {
        for ext in Format::EXTENSIONS {
            assert!(Format::from_path(Path::new(&format!("a.{ext}"))).is_some(), "{ext}");
        }
        for other in ["exe", "zip", "svg", "gif", "doc"] {
            assert!(Format::from_path(Path::new(&format!("a.{other}"))).is_none(), "{other}");
        }
    }

    fn no_ocr() -> OcrChoice {
        OcrChoice::Unavailable("tesseract is not installed".into())
    }

    #[test]
    fn loads_markdown_with_title_hash_and_mtime() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.md");
        std::fs::write(&path, "```\n# not title\n```\n# 劳动合同法\n\n第一条 ……\r\n").unwrap();
        let doc = load_document(&path, "knowledge/a.md", &LoadOptions::default(), &no_ocr()).unwrap();
        assert_eq!(doc.title, "劳动合同法");
        assert_eq!(doc.source, "knowledge/a.md");
        assert!(doc.text.ends_with("第一条 ……\n"));
        assert_eq!(doc.content_hash.len(), 64);
        assert!(doc.mtime > 1_600_000_000);
    }

    #[test]
    fn scanned_pages_join_the_text_layer_in_page_order() {
        // Pages 1 and 3 have a text layer (a paragraph flows from 1 on to 3), 2 and 4 are scans.
        let layer = Extracted {
            text: "第一页的文字，\n接着第三页。\n".into(),
            pages: vec![(0, 1), (8, 3)],
            title: Some("t".into()),
            ..Extracted::default()
        };
        let merged = merge_pages(layer, vec![(2, "第二页扫描".into()), (4, "第四页".into())]);
        assert_eq!(merged.text, "第一页的文字，\n\n第二页扫描\n\n接着第三页。\n\n第四页\n\n");
        let page_text = |i: usize| -> String {
            let start = merged.pages[i].0;
            merged.text.chars().skip(start).take(3).collect()
        };
        assert_eq!(merged.pages.iter().map(|p| p.1).collect::<Vec<_>>(), [1, 2, 3, 4]);
        assert_eq!([page_text(0), page_text(1), page_text(2), page_text(3)], ["第一页", "第二页", "接着第", "第四页"]);
        assert_eq!(merged.title.as_deref(), Some("t"));
        // Only scans.
        let merged = merge_pages(Extracted::default(), vec![(1, "甲".into()), (2, "乙".into())]);
        assert_eq!(merged.text, "甲\n\n乙\n\n");
        assert_eq!(merged.pages, [(0, 1), (3, 2)]);
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
        let err =
            load_document(&path, "big.txt", &LoadOptions { max_file_bytes: 1024, ..LoadOptions::default() }, &no_ocr())
                .unwrap_err();
        assert!(matches!(err, LoadError::TooLarge { .. }));
        let odd = tmp.path().join("a.xyz");
        std::fs::write(&odd, [1u8; 4]).unwrap();
        assert!(matches!(
            load_document(&odd, "a.xyz", &LoadOptions::default(), &no_ocr()),
            Err(LoadError::Unsupported(_))
        ));
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_refused_without_opening_it() {
        let tmp = tempfile::tempdir().unwrap();
        let fifo = tmp.path().join("pipe.md");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        // Opening would block until a writer came; the metadata check answers at once.
        let err = load_document(&fifo, "pipe.md", &LoadOptions::default(), &no_ocr()).unwrap_err();
        assert_eq!(err.to_string(), "named pipe (FIFO), not a regular file; skipped");
    }

    #[test]
    fn zero_files_and_repairs() {
        let tmp = tempfile::tempdir().unwrap();
        for name in ["zeros.pdf", "zeros.md", "zeros.docx"] {
            let path = tmp.path().join(name);
            std::fs::write(&path, vec![0u8; 8192]).unwrap();
            let err = load_document(&path, name, &LoadOptions::default(), &no_ocr()).unwrap_err();
            assert!(err.to_string().contains("all zero bytes"), "{name}: {err}");
        }
        let path = tmp.path().join("bad.md");
        std::fs::write(&path, b"# T\n\xe4\xbd\xa0\xe5\xa5\xbd \xff done\n").unwrap();
        let (doc, warnings) = load_document_with_warnings(&path, "bad.md", &LoadOptions::default(), &no_ocr()).unwrap();
        assert_eq!(doc.text, "# T\n你好 \u{FFFD} done\n");
        assert_eq!(warnings.len(), 1);
        assert_eq!(warnings[0].path, path);
        assert!(warnings[0].to_string().contains("1 byte(s) are not valid UTF-8"), "{}", warnings[0]);
    }

    /// An OCR engine that "reads" every picture as a sentence naming its size; counts its calls.
    struct FakeEngine(std::sync::atomic::AtomicUsize, Vec<String>);

    impl skillrag_ocr::Recognizer for FakeEngine {
        fn name(&self) -> &str {
            "fake 1"
        }
        fn installed_languages(&self) -> &[String] {
            &self.1
        }
        fn recognize(
            &self,
            image: &Path,
            _: &skillrag_ocr::Languages,
            _: Option<u32>,
        ) -> Result<skillrag_ocr::PageText, OcrError> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let size = std::fs::metadata(image).map_err(|e| OcrError::Io(e.to_string()))?.len();
            Ok(skillrag_ocr::PageText { text: format!("Text of a {size}-byte picture."), confidence: 0.9, words: 5 })
        }
    }

    fn fake_ocr() -> (std::sync::Arc<FakeEngine>, OcrChoice) {
        let engine = std::sync::Arc::new(FakeEngine(Default::default(), vec!["eng".into()]));
        let ocr = Ocr::new(engine.clone(), None, skillrag_ocr::OcrSettings::default());
        (engine, OcrChoice::Ready(ocr))
    }

    /// Tesseract, when installed; else `None` after saying the test is skipped. With
    /// `SKILLRAG_TEST_OCR` set, a missing Tesseract fails the test instead.
    fn real_ocr(languages: &str) -> Option<OcrChoice> {
        match Ocr::find(skillrag_ocr::OcrSettings::default()) {
            Ok(ocr) => {
                Some(OcrChoice::Ready(ocr.with_languages(skillrag_ocr::Languages::parse(languages).unwrap()).unwrap()))
            }
            Err(e) if std::env::var_os("SKILLRAG_TEST_OCR").is_some() => panic!("SKILLRAG_TEST_OCR is set but {e}"),
            Err(e) => {
                eprintln!("skipped: {e}");
                None
            }
        }
    }

    fn scan(name: &str) -> Vec<u8> {
        let path = format!("{}/../../testdata/scans/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// A DOCX with text, the warranty FAQ picture, a picture without text, a damaged picture,
    /// and text after them.
    fn docx_with_pictures() -> Vec<u8> {
        use crate::formats::docx_fixtures::{docx_with_media, drawing, plain};
        let body = [
            plain("Before the picture."),
            format!("<w:p>{}</w:p>", drawing("rId1", "Warranty card")),
            format!("<w:p>{}</w:p>", drawing("rId2", "")),
            format!("<w:p>{}</w:p>", drawing("rId3", "")),
            plain("After the picture."),
        ]
        .concat();
        let (faq, blank, truncated) = (scan("faq-en.jpg"), scan("blank.png"), scan("truncated.jpg"));
        docx_with_media(
            &body,
            &[("rId1", "media/image1.jpg"), ("rId2", "media/image2.png"), ("rId3", "media/image3.jpg")],
            &[
                ("word/media/image1.jpg", &faq),
                ("word/media/image2.png", &blank),
                ("word/media/image3.jpg", &truncated),
            ],
        )
    }

    /// A page beside `notice-zh.png`, also showing a picture above its folder and one by absolute path.
    fn html_with_pictures(tmp: &Path) -> PathBuf {
        let folder = tmp.join("skill/knowledge");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("notice-zh.png"), scan("notice-zh.png")).unwrap();
        std::fs::write(tmp.join("skill/outside.jpg"), scan("faq-en.jpg")).unwrap();
        let absolute = tmp.join("skill/outside.jpg");
        let page = folder.join("notice.html");
        let html = format!(
            r#"<html><body><h1>通知</h1><p>Before the picture.</p><p><img src="notice-zh.png" alt="开放时间"></p>
            <p><img src="../outside.jpg" alt="up"><img src="{}" alt="absolute"></p><p>After the picture.</p></body></html>"#,
            absolute.display()
        );
        std::fs::write(&page, html).unwrap();
        page
    }

    #[test]
    fn pictures_in_docx_and_html_are_read_where_they_are() {
        let tmp = tempfile::tempdir().unwrap();
        let docx = tmp.path().join("guide.docx");
        std::fs::write(&docx, docx_with_pictures()).unwrap();
        let (engine, ocr) = fake_ocr();
        let (doc, warnings) = load_document_with_warnings(&docx, "guide.docx", &LoadOptions::default(), &ocr).unwrap();
        let sizes = [scan("faq-en.jpg").len(), scan("blank.png").len(), scan("truncated.jpg").len()];
        assert_eq!(
            doc.text,
            format!(
                "Before the picture.\n\n[image: Warranty card] Text of a {}-byte picture.\n\n\
                 [image: image2.png] Text of a {}-byte picture.\n\n[image: image3.jpg] Text of a {}-byte picture.\n\n\
                 After the picture.",
                sizes[0], sizes[1], sizes[2]
            )
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(doc.ocr.is_empty());
        assert_eq!(engine.0.load(std::sync::atomic::Ordering::SeqCst), 3);

        let page = html_with_pictures(tmp.path());
        let (engine, ocr) = fake_ocr();
        let (doc, warnings) = load_document_with_warnings(&page, "notice.html", &LoadOptions::default(), &ocr).unwrap();
        assert_eq!(
            doc.text,
            format!(
                "# 通知\n\nBefore the picture.\n\n[image: 开放时间] Text of a {}-byte picture.\n\nAfter the picture.",
                scan("notice-zh.png").len()
            )
        );
        // Only the picture beside the page was read; the others are named in warnings.
        assert_eq!(engine.0.load(std::sync::atomic::Ordering::SeqCst), 1);
        let warnings: Vec<String> = warnings.iter().map(|w| w.message.clone()).collect();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].starts_with("picture `../outside.jpg` not read: its path leaves the page's folder"),
            "{warnings:?}"
        );
        assert!(warnings[1].contains("outside.jpg` not read: an absolute path or address"), "{warnings:?}");
    }

    #[test]
    fn without_ocr_documents_with_pictures_load_with_one_warning() {
        let tmp = tempfile::tempdir().unwrap();
        let docx = tmp.path().join("guide.docx");
        std::fs::write(&docx, docx_with_pictures()).unwrap();
        let (doc, warnings) =
            load_document_with_warnings(&docx, "guide.docx", &LoadOptions::default(), &no_ocr()).unwrap();
        assert_eq!(doc.text, "Before the picture.\n\nAfter the picture.");
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert_eq!(warnings[0].path, docx);
        assert_eq!(warnings[0].message, "3 picture(s) not read: OCR is not available: tesseract is not installed");

        let page = html_with_pictures(tmp.path());
        let (doc, warnings) =
            load_document_with_warnings(&page, "notice.html", &LoadOptions::default(), &no_ocr()).unwrap();
        assert_eq!(doc.text, "# 通知\n\nBefore the picture.\n\nAfter the picture.");
        let warnings: Vec<&str> = warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(warnings, ["1 picture(s) not read: OCR is not available: tesseract is not installed"]);
    }

    #[test]
    fn tesseract_reads_the_pictures_in_a_docx() {
        let Some(ocr) = real_ocr("eng") else { return };
        let tmp = tempfile::tempdir().unwrap();
        let docx = tmp.path().join("guide.docx");
        std::fs::write(&docx, docx_with_pictures()).unwrap();
        let (doc, warnings) = load_document_with_warnings(&docx, "guide.docx", &LoadOptions::default(), &ocr).unwrap();
        let (before, rest) = doc.text.split_once("\n\n").unwrap();
        assert_eq!(before, "Before the picture.");
        assert!(rest.starts_with("[image: Warranty card] "), "{}", doc.text);
        assert!(rest.contains("The warranty covers repairs for two years from the date of purchase."), "{}", doc.text);
        // The blank picture adds nothing; the damaged one is a warning naming it.
        assert_eq!(rest.matches("[image:").count(), 1, "{}", doc.text);
        assert!(rest.ends_with("\n\nAfter the picture."), "{}", doc.text);
        let warnings: Vec<&str> = warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("picture `word/media/image3.jpg` not read: "), "{warnings:?}");
    }

    #[test]
    fn tesseract_reads_the_pictures_beside_a_page() {
        let Some(ocr) = real_ocr("chi_sim+eng") else { return };
        let tmp = tempfile::tempdir().unwrap();
        let page = html_with_pictures(tmp.path());
        let (doc, warnings) = load_document_with_warnings(&page, "notice.html", &LoadOptions::default(), &ocr).unwrap();
        let picture = doc
            .text
            .split("\n\n")
            .find(|p| p.starts_with("[image: 开放时间] "))
            .unwrap_or_else(|| panic!("{}", doc.text));
        let read: String = picture.split_whitespace().collect();
        assert!(read.contains("办公室开放时间"), "{picture}");
        assert!(doc.text.ends_with("\n\nAfter the picture."), "{}", doc.text);
        assert!(!doc.text.contains("warranty"), "{}", doc.text);
        assert_eq!(warnings.len(), 2, "{warnings:?}");
    }

    #[test]
    fn deep_html_names_its_line() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("deep.html");
        std::fs::write(&path, format!("<p>x</p>\n\n{}", "<div>".repeat(50_000))).unwrap();
        let err = load_document(&path, "deep.html", &LoadOptions::default(), &no_ocr()).unwrap_err();
        assert_eq!(err.line(), Some(3));
        assert!(err.to_string().contains("HTML nests deeper than"), "{err}");
    }
}
