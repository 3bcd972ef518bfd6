//! Text from scans and pictures: the OCR stage of the index path.
//!
//! A [`Recognizer`] reads one image (Tesseract, run as a program: [`Tesseract`]); a
//! [`PdfRenderer`] turns a scanned PDF page into one (poppler's `pdftoppm`). [`Ocr`] puts them
//! together for the loader: it checks an image's size before anything decodes it, renders pages
//! at a resolution that fits the pixel budget, runs pages in parallel (one child per core), keeps
//! every page's result in an [`OcrCache`] the moment it is read, and reports progress. Both
//! tools are found at run time; without them a scan is reported with [`INSTALL_HINT`].

mod cache;
mod child;
mod languages;
mod pages;
mod render;
mod tesseract;
mod tsv;

pub use cache::OcrCache;
pub use languages::{BadLanguages, Languages};
pub use render::PdfRenderer;
pub use tesseract::{Tesseract, INSTALL_HINT};

use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// What OCR read from one page or picture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageText {
    /// Paragraphs apart by a blank line; empty when the page holds no text.
    pub text: String,
    /// The engine's mean word confidence, weighted by characters, from 0 to 1.
    pub confidence: f32,
    pub words: usize,
}

/// The seam to an OCR engine: one image in, its text out.
pub trait Recognizer: Send + Sync {
    /// Engine and version (part of the cache key: a new engine reads pages anew).
    fn name(&self) -> &str;
    fn installed_languages(&self) -> &[String];
    /// Reads `image`; `dpi` when the caller knows it (a rendered page).
    fn recognize(&self, image: &Path, languages: &Languages, dpi: Option<u32>) -> Result<PageText, OcrError>;
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OcrError {
    #[error("{tool} is not installed; {hint}", hint = INSTALL_HINT)]
    Unavailable { tool: &'static str },
    #[error("the OCR language `{language}` is not installed (installed: {installed}); install `tesseract-ocr-{package}` or change `[index] ocr_languages`")]
    MissingLanguage { language: String, package: String, installed: String },
    #[error("the image is {width} × {height} pixels ({megapixels} megapixels), over the limit of {limit} (a decompression bomb? `[index] max_ocr_megapixels` raises it)")]
    ImageTooLarge { width: usize, height: usize, megapixels: u64, limit: u32 },
    #[error("page {page} is {width_in:.0} × {height_in:.0} inches: even at {min_dpi} dpi it is over the limit of {limit} megapixels (`[index] max_ocr_megapixels` raises it)")]
    PageTooLarge { page: u32, width_in: f64, height_in: f64, min_dpi: u32, limit: u32 },
    #[error("page {page} draws an image of {width} × {height} pixels ({megapixels} megapixels), over the limit of {limit}; not decoded (a decompression bomb? `[index] max_ocr_megapixels` raises it)")]
    PageImageTooLarge { page: u32, width: u64, height: u64, megapixels: u64, limit: u32 },
    #[error("page {page} of the TIFF is {width} × {height} pixels ({megapixels} megapixels), over the limit of {limit} (a decompression bomb? `[index] max_ocr_megapixels` raises it)")]
    TiffPageTooLarge { page: usize, width: usize, height: usize, megapixels: u64, limit: u32 },
    #[error("a malformed TIFF, not read: page {page}: {reason} (a damaged or hostile file?)")]
    MalformedTiff { page: usize, reason: String },
    #[error("the TIFF has more than {limit} pages; not read (split it into smaller files)")]
    TooManyPages { limit: usize },
    #[error("not an image this indexer reads ({0})")]
    NotAnImage(String),
    #[error("{0}")]
    Unreadable(String),
    #[error("{tool} took longer than {seconds} s on it and was stopped")]
    Timeout { tool: &'static str, seconds: u64 },
    #[error("{0}")]
    Io(String),
    #[error("{0} (remembered from an earlier run: the file has not changed since; it is read again when it does)")]
    Remembered(String),
}

impl OcrError {
    /// Whether the failure comes from the file itself, so that reading it again would fail
    /// the same way (and cost the same time): a tool that timed out or rejected it.
    fn is_lasting(&self) -> bool {
        matches!(self, OcrError::Timeout { .. } | OcrError::Unreadable(_))
    }
}

/// Limits and quality settings (`[index]` in skillrag.toml).
#[derive(Debug, Clone, Copy)]
pub struct OcrSettings {
    /// Resolution scanned PDF pages are rendered at.
    pub dpi: u32,
    /// Largest image, or rendered page, OCR takes on.
    pub max_megapixels: u32,
    /// Longest one child (a page's rendering or its OCR) may run.
    pub timeout: Duration,
    /// Address space one child may use.
    pub memory_mb: u64,
    /// Children at once: pages and pictures are read in parallel.
    pub threads: usize,
}

impl Default for OcrSettings {
    fn default() -> Self {
        OcrSettings {
            dpi: 300,
            max_megapixels: 64,
            timeout: Duration::from_secs(300),
            memory_mb: 4096,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// Confidence under which a page is read again in the fallback languages
/// ([`Ocr::with_fallback`]).
pub const FALLBACK_BELOW: f32 = 0.5;

/// Lowest resolution a page is rendered at before it counts as too large to read.
const MIN_DPI: u32 = 100;

/// A scanned page to read: its number and media box size in points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageBox {
    pub number: u32,
    pub width_pt: f64,
    pub height_pt: f64,
    /// The largest image the page draws, `(width, height)` as its PDF dictionary declares it:
    /// a renderer decodes it whole whatever the resolution asked, so it is bounded first.
    pub image: Option<(u64, u64)>,
}

/// A picture's text and size.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageText {
    pub page: PageText,
    pub width: usize,
    pub height: usize,
}

/// Progress of the OCR work, for a bar with pages/s and an ETA.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OcrEvent {
    /// Pages about to be read (cached pages are not counted).
    Queued(usize),
    /// One page read (or failed).
    Done,
}

type ProgressFn = dyn Fn(OcrEvent) + Send + Sync;

/// The OCR stage, cheap to clone (engines, cache and the page slots are shared).
#[derive(Clone)]
pub struct Ocr {
    recognizer: Arc<dyn Recognizer>,
    renderer: Option<Arc<PdfRenderer>>,
    cache: Option<OcrCache>,
    settings: OcrSettings,
    languages: Languages,
    /// Languages a page is read again in when `languages` read it with low confidence.
    fallback: Option<Languages>,
    slots: Arc<Slots>,
    progress: Option<Arc<ProgressFn>>,
}

impl std::fmt::Debug for Ocr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ocr").field("engine", &self.recognizer.name()).field("languages", &self.languages).finish()
    }
}

impl Ocr {
    /// OCR with the tools found on this machine: Tesseract is required, pdftoppm only for PDFs.
    pub fn find(settings: OcrSettings) -> Result<Ocr, OcrError> {
        let tesseract = Tesseract::find(settings.timeout, settings.memory_mb)?;
        let renderer = PdfRenderer::find(settings.timeout, settings.memory_mb).ok();
        Ok(Ocr::new(Arc::new(tesseract), renderer, settings))
    }

    pub fn new(recognizer: Arc<dyn Recognizer>, renderer: Option<PdfRenderer>, settings: OcrSettings) -> Ocr {
        Ocr {
            recognizer,
            renderer: renderer.map(Arc::new),
            cache: None,
            settings,
            languages: Languages::for_text(""),
            fallback: None,
            slots: Arc::new(Slots::new(settings.threads.max(1))),
            progress: None,
        }
    }

    /// The same engines reading `languages`; an error names a language that is not installed.
    pub fn with_languages(&self, languages: Languages) -> Result<Ocr, OcrError> {
        let installed = self.recognizer.installed_languages();
        if let Some(missing) = languages.names().iter().find(|l| !installed.contains(l)) {
            return Err(OcrError::MissingLanguage {
                language: missing.clone(),
                package: missing.replace('_', "-"),
                installed: installed.iter().filter(|l| *l != "osd").cloned().collect::<Vec<_>>().join(", "),
            });
        }
        Ok(Ocr { languages, ..self.clone() })
    }

    /// Reads a page again in `languages` when the configured ones read it with a confidence
    /// under [`FALLBACK_BELOW`], keeping the better reading: languages guessed for a whole skill
    /// can be wrong for one page (English read a Chinese scan at 0.17, Chinese and English at
    /// 0.94). Languages that are not installed are left out.
    pub fn with_fallback(mut self, languages: Languages) -> Ocr {
        let installed = self.recognizer.installed_languages();
        let usable = languages.names().iter().all(|l| installed.contains(l)) && languages != self.languages;
        self.fallback = usable.then_some(languages);
        self
    }

    pub fn with_cache(mut self, cache: OcrCache) -> Ocr {
        self.cache = Some(cache);
        self
    }

    pub fn with_progress(mut self, progress: impl Fn(OcrEvent) + Send + Sync + 'static) -> Ocr {
        self.progress = Some(Arc::new(progress));
        self
    }

    pub fn languages(&self) -> &Languages {
        &self.languages
    }

    pub fn engine(&self) -> &str {
        self.recognizer.name()
    }

    pub fn installed_languages(&self) -> &[String] {
        self.recognizer.installed_languages()
    }

    /// What reads scans on this machine, in one line (`skillrag doctor`).
    pub fn describe(&self) -> String {
        let languages: Vec<&str> =
            self.installed_languages().iter().map(String::as_str).filter(|l| *l != "osd").collect();
        let pdf = if self.renderer.is_some() {
            "pdftoppm renders scanned PDF pages".to_string()
        } else {
            format!("no pdftoppm: scanned PDF pages are skipped; {INSTALL_HINT}")
        };
        format!("{} (languages: {}); {pdf}", self.engine(), languages.join(", "))
    }

    /// Reads the scanned pages `pages` of the PDF at `pdf` (whose bytes hash to `content_hash`),
    /// in parallel; results in the order asked.
    pub fn pdf_pages(&self, pdf: &Path, content_hash: &str, pages: &[PageBox]) -> Vec<Result<PageText, OcrError>> {
        let Some(renderer) = &self.renderer else {
            return pages.iter().map(|_| Err(OcrError::Unavailable { tool: "pdftoppm" })).collect();
        };
        let spec = self.cache_spec();
        let planned: Vec<Result<(u32, String), OcrError>> = pages
            .iter()
            .map(|page| {
                let dpi = self.dpi_for(page)?;
                Ok((dpi, cache::key(content_hash, page.number, &spec, dpi, self.recognizer.name())))
            })
            .collect();
        let mut results: Vec<Option<Result<PageText, OcrError>>> = planned
            .iter()
            .map(|plan| match plan {
                Err(e) => Some(Err(e.clone())),
                Ok((_, key)) => self.cached(key),
            })
            .collect();
        let todo: Vec<usize> = (0..pages.len()).filter(|&i| results[i].is_none()).collect();
        self.report(OcrEvent::Queued(todo.len()));
        let folder = match tempfile::tempdir() {
            Ok(f) => f,
            Err(e) => return pages.iter().map(|_| Err(OcrError::Io(format!("no temporary folder: {e}")))).collect(),
        };
        let read = |i: usize| -> Result<PageText, OcrError> {
            let Ok((dpi, key)) = &planned[i] else { unreachable!("planned pages only") };
            let _slot = self.slots.take();
            let page = renderer.render(pdf, pages[i].number, *dpi, folder.path()).and_then(|image| {
                let page = self.recognize(&image, Some(*dpi));
                let _ = std::fs::remove_file(&image);
                page
            });
            self.keep(key, page)
        };
        let done = parallel(&todo, self.settings.threads, |&i| {
            let result = read(i);
            self.report(OcrEvent::Done);
            result
        });
        for (i, result) in todo.into_iter().zip(done) {
            results[i] = Some(result);
        }
        results.into_iter().map(|r| r.unwrap_or_else(|| Err(OcrError::Io("page not read".into())))).collect()
    }

    /// Reads a picture file whose bytes hash to `content_hash`; its size is checked from the
    /// header before anything decodes it.
    pub fn image(&self, path: &Path, content_hash: &str) -> Result<ImageText, OcrError> {
        let size = imagesize::size(path).map_err(|e| OcrError::NotAnImage(e.to_string()))?;
        self.check_size(size.width, size.height)?;
        if pages::is_tiff(path) {
            pages::walk_tiff(path, |page, width, height| {
                self.check_size(width, height).map_err(|_| {
                    let (pixels, limit) = (width as u64 * height as u64, self.settings.max_megapixels);
                    OcrError::TiffPageTooLarge { page, width, height, megapixels: pixels / 1_000_000, limit }
                })
            })?;
        }
        let key = cache::key(content_hash, 0, &self.cache_spec(), 0, self.recognizer.name());
        let page = match self.cached(&key) {
            Some(page) => page?,
            None => {
                self.report(OcrEvent::Queued(1));
                let page = {
                    let _slot = self.slots.take();
                    self.recognize(path, None)
                };
                self.report(OcrEvent::Done);
                self.keep(&key, page)?
            }
        };
        Ok(ImageText { page, width: size.width, height: size.height })
    }

    /// Reads a picture held in memory (one embedded in a DOCX or next to an HTML page);
    /// `extension` says its format.
    pub fn image_bytes(&self, bytes: &[u8], extension: &str) -> Result<ImageText, OcrError> {
        let size = imagesize::blob_size(bytes).map_err(|e| OcrError::NotAnImage(e.to_string()))?;
        self.check_size(size.width, size.height)?;
        let extension: String = extension.chars().filter(char::is_ascii_alphanumeric).take(8).collect();
        let mut file = tempfile::Builder::new()
            .suffix(&format!(".{extension}"))
            .tempfile()
            .map_err(|e| OcrError::Io(format!("no temporary file: {e}")))?;
        std::io::Write::write_all(&mut file, bytes).map_err(|e| OcrError::Io(e.to_string()))?;
        self.image(file.path(), &blake3::hash(bytes).to_hex())
    }

    /// Reads one image in the languages, and again in the fallback if they read it poorly.
    fn recognize(&self, image: &Path, dpi: Option<u32>) -> Result<PageText, OcrError> {
        let first = self.recognizer.recognize(image, &self.languages, dpi)?;
        // A page without words (blank) is not read again: no language finds text there.
        let poor = first.words > 0 && first.confidence < FALLBACK_BELOW;
        let Some(fallback) = self.fallback.as_ref().filter(|_| poor) else {
            return Ok(first);
        };
        match self.recognizer.recognize(image, fallback, dpi) {
            Ok(second) if second.confidence > first.confidence => Ok(second),
            _ => Ok(first),
        }
    }

    /// The languages part of a cache key: the fallback changes what a page reads as.
    fn cache_spec(&self) -> String {
        match &self.fallback {
            Some(fallback) => format!("{}|{}", self.languages.spec(), fallback.spec()),
            None => self.languages.spec(),
        }
    }

    /// A page read before: its text, or the lasting failure it gave.
    fn cached(&self, key: &str) -> Option<Result<PageText, OcrError>> {
        let cache = self.cache.as_ref()?;
        cache.get(key).map(Ok).or_else(|| cache.failure(key).map(|why| Err(OcrError::Remembered(why))))
    }

    /// Keeps a page's result in the cache: its text, or a failure that would recur.
    fn keep(&self, key: &str, page: Result<PageText, OcrError>) -> Result<PageText, OcrError> {
        if let Some(cache) = &self.cache {
            match &page {
                Ok(text) => cache.put(key, text),
                Err(e) if e.is_lasting() => cache.put_failure(key, &e.to_string()),
                Err(_) => {}
            }
        }
        page
    }

    fn check_size(&self, width: usize, height: usize) -> Result<(), OcrError> {
        let pixels = width as u64 * height as u64;
        let limit = self.settings.max_megapixels;
        if pixels > u64::from(limit) * 1_000_000 {
            return Err(OcrError::ImageTooLarge { width, height, megapixels: pixels / 1_000_000, limit });
        }
        Ok(())
    }

    /// The configured resolution, lowered for a large page so that it fits the pixel budget; a
    /// page drawing an image over the budget is refused before a renderer decodes it.
    fn dpi_for(&self, page: &PageBox) -> Result<u32, OcrError> {
        let limit = self.settings.max_megapixels;
        if let Some((width, height)) = page.image {
            let pixels = width.saturating_mul(height);
            if pixels > u64::from(limit) * 1_000_000 {
                let megapixels = pixels / 1_000_000;
                return Err(OcrError::PageImageTooLarge { page: page.number, width, height, megapixels, limit });
            }
        }
        let (w, h) = (page.width_pt.abs() / 72.0, page.height_pt.abs() / 72.0);
        let area = (w * h).max(1e-6);
        let fitting = (f64::from(limit) * 1e6 / area).sqrt().floor();
        let dpi = f64::from(self.settings.dpi).min(fitting);
        if dpi < f64::from(MIN_DPI) {
            return Err(OcrError::PageTooLarge {
                page: page.number,
                width_in: w,
                height_in: h,
                min_dpi: MIN_DPI,
                limit,
            });
        }
        Ok(dpi as u32)
    }

    fn report(&self, event: OcrEvent) {
        if let Some(progress) = &self.progress {
            if event != OcrEvent::Queued(0) {
                progress(event);
            }
        }
    }
}

/// Maps `items` on up to `threads` scoped threads, results in order (pages of a scan here, the
/// pictures of a document in the loader).
pub fn parallel<T: Sync, R: Send>(items: &[T], threads: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if items.len() <= 1 || threads <= 1 {
        return items.iter().map(&f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..items.len()).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..threads.min(items.len()) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                let r = f(item);
                if let Ok(mut results) = results.lock() {
                    results[i] = Some(r);
                }
            });
        }
    });
    results.into_inner().unwrap_or_default().into_iter().flatten().collect()
}

/// Counts the OCR children running at once across every file and skill being indexed, so
/// that parallel files each reading parallel pages never run more children than cores.
struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

struct Slot<'a>(&'a Slots);

impl Slots {
    fn new(n: usize) -> Slots {
        Slots { free: Mutex::new(n), freed: Condvar::new() }
    }

    fn take(&self) -> Slot<'_> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
        Slot(self)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests;
