//! Pictures inside documents: the images a DOCX embeds and those an HTML page shows. An
//! extractor finds them while it reads the document and records each distinct one in
//! [`Pictures`]; they are then read together (in parallel) by a [`PictureReader`] — OCR, for the
//! loader; the extractors never know how — and the document is read again with each picture's
//! text at the picture's place, as a paragraph of its own:
//!
//! `[image: <alt text, else the file name>] <the text the picture shows>`
//!
//! - A picture that shows no text adds nothing, not even its alt text: the alt text is often
//!   written by a program ("A screenshot of a computer. Description automatically generated")
//!   or says nothing ("logo"), HTML pages were indexed without it so far, and a paragraph of a
//!   caption alone would make chunks that hold no knowledge. It labels the text the picture holds.
//! - A picture met again (a logo in every section) adds its text at its first place only.
//! - At most [`MAX_PICTURES`] distinct pictures are read per document (a warning says how many
//!   more were not).
//! - Pictures are read in PNG, JPEG, GIF, BMP, TIFF or WebP; vector pictures (EMF, WMF, SVG) hold
//!   no pixels to read and are passed over without a word.
//! - Nothing here fails a document: a picture that cannot be found, loaded or read is a warning
//!   naming it (pictures failing for the same reason share one), and when pictures cannot be read
//!   at all (no OCR) one warning counts them.
//!
//! An HTML page's pictures are read only from its own folder or below ([`html_source`],
//! [`read_beside`]): no absolute path, no address with a scheme, no `..` out of the folder, no
//! hidden file, no symlink, only regular files within the size limit; `data:image/…;base64,`
//! pictures are decoded.

use std::collections::HashMap;
use std::path::Path;

use super::markdown::clean_inline;

/// Most distinct pictures read in one document.
pub const MAX_PICTURES: usize = 200;

/// Longest label (alt text) written in a marker, in characters.
const MAX_LABEL_CHARS: usize = 120;

/// Picture names listed in one warning about several pictures.
const NAMES_LISTED: usize = 5;

/// Picture formats read, by file extension.
const EXTENSIONS: [&str; 9] = ["png", "jpg", "jpeg", "jpe", "gif", "bmp", "tif", "tiff", "webp"];

/// Reads the text a picture shows: the seam between the extractors and OCR.
pub trait PictureReader: Sync {
    /// Why no picture can be read at all (no OCR engine), said once per document with a count;
    /// `None` when pictures can be read.
    fn unavailable(&self) -> Option<String> {
        None
    }
    /// The text the picture shows (empty when it shows none), or why it could not be read.
    fn read(&self, bytes: &[u8], extension: &str) -> Result<String, String>;
    /// How many pictures of one document to read at once.
    fn parallelism(&self) -> usize {
        1
    }
}

/// Any `Fn(bytes, extension) -> Result<text, why>` reads pictures, one at a time.
impl<F: Fn(&[u8], &str) -> Result<String, String> + Sync> PictureReader for F {
    fn read(&self, bytes: &[u8], extension: &str) -> Result<String, String> {
        self(bytes, extension)
    }
}

/// The pictures of one document and how to read them; the warnings they gave afterwards.
pub struct Pictures<'a> {
    /// `None`: pictures are left out, silently (the extractors' plain entry points).
    reader: Option<&'a dyn PictureReader>,
    unavailable: Option<String>,
    /// The folder an HTML page's pictures are read from (the page's own).
    folder: Option<&'a Path>,
    max_bytes: u64,
    max_pictures: usize,
    /// Distinct pictures to read, in the order met.
    found: Vec<Found>,
    /// Every distinct picture met: the index in `found` of those to be read.
    keys: HashMap<String, Option<usize>>,
    not_available: usize,
    over_limit: usize,
    /// Pictures not read, by reason, in the order met.
    problems: Vec<(String, Vec<String>)>,
}

struct Found {
    key: String,
    name: String,
    label: String,
    extension: String,
}

impl<'a> Pictures<'a> {
    /// Pictures read by `reader`.
    pub fn new(reader: &'a dyn PictureReader) -> Pictures<'a> {
        Pictures { reader: Some(reader), unavailable: reader.unavailable(), ..Pictures::none() }
    }

    /// Pictures left out, without a warning.
    pub fn none() -> Pictures<'a> {
        Pictures {
            reader: None,
            unavailable: None,
            folder: None,
            max_bytes: 32 * 1024 * 1024,
            max_pictures: MAX_PICTURES,
            found: Vec::new(),
            keys: HashMap::new(),
            not_available: 0,
            over_limit: 0,
            problems: Vec::new(),
        }
    }

    /// An HTML page's pictures are files in `folder` (the page's own) or below it; without a
    /// folder only the pictures the page holds (`data:` URIs) are read.
    pub fn beside(mut self, folder: &'a Path) -> Pictures<'a> {
        self.folder = Some(folder);
        self
    }

    /// Largest picture read, in bytes (32 MB unless set).
    pub fn max_bytes(mut self, bytes: u64) -> Pictures<'a> {
        self.max_bytes = bytes;
        self
    }

    /// Most distinct pictures read ([`MAX_PICTURES`] unless set).
    pub fn max_pictures(mut self, pictures: usize) -> Pictures<'a> {
        self.max_pictures = pictures;
        self
    }

    /// What went wrong with the document's pictures, one line each.
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (reason, names) in &self.problems {
            let quoted = |n: &String| format!("`{n}`");
            if let [name] = names.as_slice() {
                out.push(format!("picture {} not read: {reason}", quoted(name)));
            } else {
                let mut list: Vec<String> = names.iter().take(NAMES_LISTED).map(quoted).collect();
                if names.len() > NAMES_LISTED {
                    list.push("…".to_string());
                }
                out.push(format!("{} pictures not read: {reason}: {}", names.len(), list.join(", ")));
            }
        }
        if self.over_limit > 0 {
            out.push(format!(
                "{} more picture(s) not read: only the first {} pictures of a document are read",
                self.over_limit, self.max_pictures
            ));
        }
        if let (n @ 1.., Some(why)) = (self.not_available, &self.unavailable) {
            out.push(format!("{n} picture(s) not read: {why}"));
        }
        out
    }

    /// Whether pictures are looked for at all.
    pub(super) fn active(&self) -> bool {
        self.reader.is_some()
    }

    pub(super) fn folder(&self) -> Option<&'a Path> {
        self.folder
    }

    pub(super) fn limit_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// A picture met in the document: `key` says where its bytes are (what the extractor's
    /// loader takes) and identifies it, `name` is how warnings call it.
    pub(super) fn found(&mut self, key: &str, name: &str, label: &str, extension: &str) {
        if self.reader.is_none() || self.keys.contains_key(key) {
            return;
        }
        let slot = if self.unavailable.is_some() {
            self.not_available += 1;
            None
        } else if self.found.len() >= self.max_pictures {
            self.over_limit += 1;
            None
        } else {
            let (key, name, extension) = (key.to_string(), name.to_string(), extension.to_string());
            self.found.push(Found { key, name, label: label_text(label), extension });
            Some(self.found.len() - 1)
        };
        self.keys.insert(key.to_string(), slot);
    }

    /// A picture that is not read, and why (a sentence part: "its path leaves the page's folder").
    pub(super) fn not_read(&mut self, name: &str, reason: &str) {
        if self.reader.is_none() || self.unavailable.is_some() {
            return;
        }
        match self.problems.iter_mut().find(|(r, _)| r == reason) {
            Some((_, names)) => names.push(name.to_string()),
            None => self.problems.push((reason.to_string(), vec![name.to_string()])),
        }
    }

    /// Whether any picture waits to be read.
    pub(super) fn any_found(&self) -> bool {
        !self.found.is_empty()
    }

    /// Loads (`load(key)`) and reads every picture found; the marker paragraph of each that
    /// shows text, by key.
    pub(super) fn read_all(
        &mut self,
        load: impl Fn(&str) -> Result<Vec<u8>, String> + Sync,
    ) -> HashMap<String, String> {
        let Some(reader) = self.reader else { return HashMap::new() };
        let found = std::mem::take(&mut self.found);
        let read_one = |f: &Found| load(&f.key).and_then(|bytes| reader.read(&bytes, &f.extension));
        let results = skillrag_ocr::parallel(&found, reader.parallelism(), read_one);
        let mut texts = HashMap::new();
        for (picture, result) in found.into_iter().zip(results) {
            match result {
                Ok(text) => {
                    let text: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
                    if !text.is_empty() {
                        texts.insert(picture.key, format!("[image: {}] {}", picture.label, text.join("\n")));
                    }
                }
                Err(why) => self.not_read(&picture.name, &why),
            }
        }
        texts
    }
}

/// `alt` when it says something, else `fallback`, as a marker label.
pub(super) fn label(alt: Option<&str>, fallback: &str) -> String {
    alt.map(clean_inline).filter(|a| !a.is_empty()).unwrap_or_else(|| fallback.to_string())
}

/// One line, no brackets that would end the marker, not too long.
fn label_text(label: &str) -> String {
    let label = clean_inline(&label.replace(['[', ']'], " "));
    if label.chars().count() <= MAX_LABEL_CHARS {
        return label;
    }
    let mut short: String = label.chars().take(MAX_LABEL_CHARS - 1).collect();
    short.push('…');
    short
}

/// The picture format of a file name or path, lowercase, when it is one that is read.
pub(super) fn picture_extension(name: &str) -> Option<String> {
    let file = name.rsplit('/').next().unwrap_or(name);
    let (_, ext) = file.rsplit_once('.')?;
    let ext = ext.to_ascii_lowercase();
    EXTENSIONS.contains(&ext.as_str()).then_some(ext)
}

/// The last part of a `/`-separated path.
pub(super) fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// `%XX` escapes decoded (URIs, DOCX relationship targets); the text as it is when they do not
/// make UTF-8.
pub(super) fn percent_decode(text: &str) -> String {
    if !text.contains('%') {
        return text.to_string();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if let (b'%', Some(h), Some(l)) =
            (bytes[i], bytes.get(i + 1).and_then(|&b| hex(b)), bytes.get(i + 2).and_then(|&b| hex(b)))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// Where an HTML `<img src>` points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum HtmlSource {
    /// A file in the page's folder or below: its `/`-separated path from there, and format.
    Beside { path: String, extension: String },
    /// A `data:image/…;base64,` URI.
    Data { extension: &'static str },
    /// Not read, and worth a warning: why.
    Refused(&'static str),
    /// Not read, without a word: on the web (never fetched), vector, or not a picture.
    Ignored,
}

const ABSOLUTE: &str = "an absolute path or address; only pictures in the page's folder or below it are read";
const LEAVES: &str =
    "its path leaves the page's folder (`..`); only pictures in the page's folder or below it are read";
const HIDDEN: &str = "it is a hidden file or in a hidden folder";

/// What an `<img src>` names, decided from the text alone (nothing is opened here).
pub(super) fn html_source(src: &str) -> HtmlSource {
    let src = src.trim();
    if src.is_empty() {
        return HtmlSource::Ignored;
    }
    if let Some(scheme) = scheme(src) {
        return match scheme.to_ascii_lowercase().as_str() {
            "data" => data_extension(src).map_or(HtmlSource::Ignored, |extension| HtmlSource::Data { extension }),
            "file" => HtmlSource::Refused(ABSOLUTE),
            // A drive letter (`C:\…`, `c:/…`).
            s if s.len() == 1 => HtmlSource::Refused(ABSOLUTE),
            _ => HtmlSource::Ignored,
        };
    }
    // Browsers read `\` as `/`.
    let src = src.replace('\\', "/");
    if src.starts_with("//") {
        return HtmlSource::Ignored; // on the web (`//cdn.example.com/…`)
    }
    if src.starts_with('/') {
        return HtmlSource::Refused(ABSOLUTE);
    }
    let path = src.split(['?', '#']).next().unwrap_or_default();
    let path = percent_decode(path);
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return HtmlSource::Refused(LEAVES);
                }
            }
            _ if part.starts_with('.') => return HtmlSource::Refused(HIDDEN),
            _ if part.contains('\0') => return HtmlSource::Refused(ABSOLUTE),
            _ => parts.push(part),
        }
    }
    let path = parts.join("/");
    match picture_extension(&path) {
        Some(extension) if !path.is_empty() => HtmlSource::Beside { path, extension },
        _ => HtmlSource::Ignored,
    }
}

/// The scheme of a URI (`https` of `https://…`), when it has one.
fn scheme(src: &str) -> Option<&str> {
    let (scheme, _) = src.split_once(':')?;
    let mut chars = scheme.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

/// The picture format of a `data:image/…;base64,` URI; `None` for other data URIs.
fn data_extension(uri: &str) -> Option<&'static str> {
    let (meta, _) = uri.split_once(',')?;
    let meta = meta.get(5..)?.to_ascii_lowercase(); // after `data:`
    let mut params = meta.split(';').map(str::trim);
    let mime = params.next()?;
    if !params.any(|p| p == "base64") {
        return None;
    }
    match mime {
        "image/png" => Some("png"),
        "image/jpeg" | "image/jpg" | "image/pjpeg" => Some("jpg"),
        "image/gif" => Some("gif"),
        "image/webp" => Some("webp"),
        "image/bmp" | "image/x-ms-bmp" => Some("bmp"),
        "image/tiff" => Some("tiff"),
        _ => None,
    }
}

/// How a `data:` URI is called in warnings: its start.
pub(super) fn data_name(uri: &str) -> String {
    let head: String = uri.trim().chars().take(40).collect();
    if head.len() < uri.trim().len() {
        format!("{head}…")
    } else {
        head
    }
}

/// The bytes of a `data:…;base64,` URI, refused above `max_bytes`.
pub(super) fn decode_data(uri: &str, max_bytes: u64) -> Result<Vec<u8>, String> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    use base64::Engine;
    const BASE64: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
    );
    let (_, payload) = uri.split_once(',').ok_or("not a data URI")?;
    let payload: String = percent_decode(payload).chars().filter(|c| !c.is_ascii_whitespace()).collect();
    let size = payload.len() as u64 / 4 * 3;
    if size > max_bytes {
        return Err(too_large(size, max_bytes));
    }
    BASE64.decode(payload.as_bytes()).map_err(|e| format!("its data is not valid base64 ({e})"))
}

fn too_large(size: u64, max_bytes: u64) -> String {
    format!(
        "it is {:.1} MB, over the limit of {} MB (`[index] max_file_mb` raises it)",
        size as f64 / (1024.0 * 1024.0),
        max_bytes.div_ceil(1024 * 1024)
    )
}

/// Reads the picture at `path` (`/`-separated, as [`html_source`] gives it) under `folder`:
/// every folder on the way must be a folder, not a link, and the picture a regular file, not a
/// link, at most `max_bytes` long.
pub(super) fn read_beside(folder: &Path, path: &str, max_bytes: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let parts: Vec<&str> = path.split('/').collect();
    let mut at = folder.to_path_buf();
    for (i, part) in parts.iter().enumerate() {
        at.push(part);
        let meta = std::fs::symlink_metadata(&at).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => "there is no such file beside the page".to_string(),
            _ => format!("cannot read it ({e})"),
        })?;
        if meta.file_type().is_symlink() {
            return Err("it is a symlink (or in a linked folder); links are not followed for pictures".to_string());
        }
        if i + 1 < parts.len() && !meta.is_dir() {
            return Err("there is no such file beside the page".to_string());
        }
    }
    let file = open_no_follow(&at).map_err(|e| format!("cannot read it ({e})"))?;
    let meta = file.metadata().map_err(|e| format!("cannot read it ({e})"))?;
    if !meta.is_file() {
        return Err(format!("it is a {}, not a regular file", crate::file_kind(&meta.file_type())));
    }
    if meta.len() > max_bytes {
        return Err(too_large(meta.len(), max_bytes));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| format!("cannot read it ({e})"))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64, max_bytes));
    }
    Ok(bytes)
}

/// Opens a file without following a link in its last part, and without waiting on a pipe put
/// there since it was looked at.
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beside(path: &str, extension: &str) -> HtmlSource {
        HtmlSource::Beside { path: path.into(), extension: extension.into() }
    }

    #[test]
    fn html_sources() {
        assert_eq!(html_source(" notice-zh.png "), beside("notice-zh.png", "png"));
        assert_eq!(html_source("./img/A.JPG?v=2#top"), beside("img/A.JPG", "jpg"));
        assert_eq!(html_source("img/../a%20b.png"), beside("a b.png", "png"));
        assert_eq!(html_source("img\\scan.tiff"), beside("img/scan.tiff", "tiff"));
        assert_eq!(html_source("../a.png"), HtmlSource::Refused(LEAVES));
        assert_eq!(html_source("img/../../a.png"), HtmlSource::Refused(LEAVES));
        assert_eq!(html_source("..%2F..%2Fa.png"), HtmlSource::Refused(LEAVES));
        assert_eq!(html_source("/etc/a.png"), HtmlSource::Refused(ABSOLUTE));
        assert_eq!(html_source("\\etc\\a.png"), HtmlSource::Refused(ABSOLUTE));
        assert_eq!(html_source("file:///etc/a.png"), HtmlSource::Refused(ABSOLUTE));
        assert_eq!(html_source("C:\\pics\\a.png"), HtmlSource::Refused(ABSOLUTE));
        assert_eq!(html_source(".git/a.png"), HtmlSource::Refused(HIDDEN));
        for ignored in
            ["https://example.com/a.png", "//cdn.example.com/a.png", "cid:part1", "a.svg", "a.php", "", "img/"]
        {
            assert_eq!(html_source(ignored), HtmlSource::Ignored, "{ignored}");
        }
        assert_eq!(html_source("DATA:image/PNG;base64,iVBO"), HtmlSource::Data { extension: "png" });
        assert_eq!(html_source("data:image/jpeg;name=x.jpg;base64,/9j/"), HtmlSource::Data { extension: "jpg" });
        assert_eq!(html_source("data:image/svg+xml;base64,PHN2Zz4="), HtmlSource::Ignored);
        assert_eq!(html_source("data:image/png,%89PNG"), HtmlSource::Ignored);
    }

    #[test]
    fn data_uris() {
        assert_eq!(decode_data("data:image/png;base64,aGVs\n bG8=", 100).unwrap(), b"hello");
        assert_eq!(decode_data("data:image/png;base64,aGVsbG8", 100).unwrap(), b"hello");
        assert!(decode_data("data:image/png;base64,a*b", 100).unwrap_err().contains("not valid base64"));
        assert!(decode_data(&format!("data:image/png;base64,{}", "A".repeat(4000)), 1000)
            .unwrap_err()
            .contains("over the limit"));
        assert_eq!(data_name(&format!("data:image/png;base64,{}", "A".repeat(100))).chars().count(), 41);
    }

    #[test]
    fn labels_and_names() {
        assert_eq!(label(Some("  开放\n时间 "), "x.png"), "开放 时间");
        assert_eq!(label(Some(" "), "x.png"), "x.png");
        assert_eq!(label_text("a [b] c"), "a b c");
        assert_eq!(label_text(&"长".repeat(200)).chars().count(), MAX_LABEL_CHARS);
        assert_eq!(picture_extension("word/media/image1.JPEG").as_deref(), Some("jpeg"));
        assert_eq!(picture_extension("word/media/image2.emf"), None);
        assert_eq!(picture_extension("word.d/noext"), None);
        assert_eq!(percent_decode("a%20b%E4%B8%AD%zz"), "a b中%zz");
        assert_eq!(percent_decode("bad%FF"), "bad%FF");
    }

    /// Reads a picture's bytes as its text; "fail" fails.
    fn echo(bytes: &[u8], extension: &str) -> Result<String, String> {
        match std::str::from_utf8(bytes) {
            Ok("fail") => Err(format!("cannot read this {extension}")),
            Ok(text) => Ok(text.to_string()),
            Err(e) => Err(e.to_string()),
        }
    }

    #[test]
    fn pictures_are_read_once_each_within_the_limit() {
        let reader = echo;
        let mut pictures = Pictures::new(&reader).max_pictures(4);
        for (key, label) in [("a", "A"), ("b", "b.png"), ("a", "again"), ("empty", ""), ("fail", ""), ("over", "")] {
            pictures.found(key, &format!("media/{key}.png"), label, "png");
        }
        pictures.not_read("http://x/1.png", "on the web");
        pictures.not_read("http://x/2.png", "on the web");
        assert!(pictures.any_found());
        let texts = pictures.read_all(|key| match key {
            "a" => Ok(b"line one\n\n  line two ".to_vec()),
            "b" => Ok("第二".as_bytes().to_vec()),
            "empty" => Ok(b" \n ".to_vec()),
            other => Ok(other.as_bytes().to_vec()),
        });
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert_eq!(texts["a"], "[image: A] line one\nline two");
        assert_eq!(texts["b"], "[image: b.png] 第二");
        assert_eq!(
            pictures.warnings(),
            [
                "2 pictures not read: on the web: `http://x/1.png`, `http://x/2.png`",
                "picture `media/fail.png` not read: cannot read this png",
                "1 more picture(s) not read: only the first 4 pictures of a document are read",
            ]
        );
    }

    struct Unavailable;
    impl PictureReader for Unavailable {
        fn unavailable(&self) -> Option<String> {
            Some("OCR is not available: tesseract is not installed".into())
        }
        fn read(&self, _: &[u8], _: &str) -> Result<String, String> {
            unreachable!("never asked")
        }
    }

    #[test]
    fn without_a_reader_one_warning_counts_the_pictures() {
        let mut pictures = Pictures::new(&Unavailable);
        for key in ["a", "b", "a"] {
            pictures.found(key, key, key, "png");
        }
        pictures.not_read("../c.png", LEAVES);
        assert!(!pictures.any_found());
        assert_eq!(pictures.warnings(), ["2 picture(s) not read: OCR is not available: tesseract is not installed"]);
        let mut none = Pictures::none();
        none.found("a", "a", "a", "png");
        none.not_read("b", "why");
        assert!(!none.any_found() && none.warnings().is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn pictures_beside_a_page_are_regular_files_inside_its_folder() {
        use std::os::unix::fs::symlink;
        let tmp = tempfile::tempdir().unwrap();
        let page = tmp.path().join("page");
        std::fs::create_dir_all(page.join("img")).unwrap();
        std::fs::write(page.join("img/a.png"), b"png bytes").unwrap();
        std::fs::write(tmp.path().join("outside.png"), b"secret").unwrap();
        symlink(tmp.path().join("outside.png"), page.join("link.png")).unwrap();
        symlink(page.join("img"), page.join("linked")).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(page.join("pipe.png")).status().unwrap().success());
        assert_eq!(read_beside(&page, "img/a.png", 100).unwrap(), b"png bytes");
        let err = |path: &str| read_beside(&page, path, 100).unwrap_err();
        assert!(err("link.png").contains("symlink"), "{}", err("link.png"));
        assert!(err("linked/a.png").contains("symlink"), "{}", err("linked/a.png"));
        assert!(err("pipe.png").contains("named pipe (FIFO), not a regular file"), "{}", err("pipe.png"));
        assert!(err("img").contains("folder, not a regular file"), "{}", err("img"));
        assert!(err("missing.png").contains("no such file"), "{}", err("missing.png"));
        assert!(err("img/a.png/x.png").contains("no such file"), "{}", err("img/a.png/x.png"));
        assert!(read_beside(&page, "img/a.png", 4).unwrap_err().contains("over the limit of 1 MB"));
    }
}
