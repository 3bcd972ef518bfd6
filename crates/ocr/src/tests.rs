use super::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A recognizer that "reads" an image as its file name and counts its calls.
struct Fake {
    calls: AtomicUsize,
    languages: Vec<String>,
}

impl Recognizer for Fake {
    fn name(&self) -> &str {
        "fake 1"
    }
    fn installed_languages(&self) -> &[String] {
        &self.languages
    }
    fn recognize(&self, image: &Path, languages: &Languages, _dpi: Option<u32>) -> Result<PageText, OcrError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let name = image.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("slow") {
            return Err(OcrError::Timeout { tool: "tesseract", seconds: 300 });
        }
        // English reads a Chinese page ("zh…") poorly.
        let confidence = if name.starts_with("zh") && !languages.reads_chinese() { 0.2 } else { 0.9 };
        Ok(PageText { text: format!("{name} {languages}"), confidence, words: 2 })
    }
}

fn fake() -> Arc<Fake> {
    Arc::new(Fake { calls: AtomicUsize::new(0), languages: vec!["eng".into(), "chi_sim".into(), "osd".into()] })
}

/// A 2×1 PNG, as written by any encoder (signature, IHDR, IDAT, IEND).
const TINY_PNG: &[u8] = &[
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00, 0x00, 0x56, 0x7B, 0x69, 0x5D, 0x00, 0x00, 0x00, 0x0B, 0x49,
    0x44, 0x41, 0x54, 0x78, 0x9C, 0x63, 0xF8, 0xFF, 0x1F, 0x00, 0x02, 0xFE, 0x01, 0xFE, 0x2B, 0xF3, 0x0B, 0xB8, 0x00,
    0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
];

/// The header of a PNG that says it is `width` × `height` (nothing after it: never decoded).
fn png_header(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = TINY_PNG[..16].to_vec();
    bytes.extend(width.to_be_bytes());
    bytes.extend(height.to_be_bytes());
    bytes.extend([8, 0, 0, 0, 0, 0, 0, 0, 0]);
    bytes
}

/// A little-endian TIFF of 8-bit grey pages of the given sizes (one strip each, 64 bytes of pixel data
/// shared by all), each page linking to the next; the last links to `last_next` (0: none).
fn tiff(sizes: &[(u16, u16)], last_next: u32) -> Vec<u8> {
    const ENTRIES: u32 = 8;
    let ifd_len = 2 + ENTRIES * 12 + 4;
    let pixels_at = 8 + ifd_len * sizes.len() as u32;
    let mut bytes = b"II*\0".to_vec();
    bytes.extend(8u32.to_le_bytes());
    for (i, &(width, height)) in sizes.iter().enumerate() {
        bytes.extend((ENTRIES as u16).to_le_bytes());
        let short = |tag: u16, value: u16| {
            [&tag.to_le_bytes()[..], &3u16.to_le_bytes(), &1u32.to_le_bytes(), &value.to_le_bytes(), &[0, 0]].concat()
        };
        let long = |tag: u16, value: u32| {
            [&tag.to_le_bytes()[..], &4u16.to_le_bytes(), &1u32.to_le_bytes(), &value.to_le_bytes()].concat()
        };
        for entry in [
            short(256, width),
            short(257, height),
            short(258, 8),
            short(259, 1),
            short(262, 1),
            long(273, pixels_at),
            short(278, height),
            long(279, 64),
        ] {
            bytes.extend(entry);
        }
        let next = if i + 1 < sizes.len() { 8 + ifd_len * (i as u32 + 1) } else { last_next };
        bytes.extend(next.to_le_bytes());
    }
    bytes.extend([255u8; 64]);
    bytes
}

/// Issue 46, item 15: a TIFF whose page links back to itself kept Tesseract reading until its
/// timeout. Item 22: only the first page's size was checked.
#[test]
fn tiff_pages_are_walked_before_tesseract_reads_them() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = fake();
    let ocr = Ocr::new(engine.clone(), None, OcrSettings::default());
    let write = |name: &str, bytes: Vec<u8>| {
        let path = tmp.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let looped = write("loop.tif", tiff(&[(8, 8)], 8));
    assert!(std::fs::metadata(&looped).unwrap().len() < 220);
    let err = ocr.image(&looped, "loop").unwrap_err();
    assert!(matches!(err, OcrError::MalformedTiff { page: 1, .. }), "{err}");
    assert!(err.to_string().contains("cycle"), "{err}");
    let tall = write("tall.tif", tiff(&[(8, 8), (60_000, 60_000)], 0));
    let err = ocr.image(&tall, "tall").unwrap_err();
    assert!(matches!(err, OcrError::TiffPageTooLarge { page: 2, megapixels: 3600, limit: 64, .. }), "{err}");
    let many = write("many.tif", tiff(&vec![(8, 8); pages::MAX_TIFF_PAGES + 1], 0));
    assert!(matches!(ocr.image(&many, "many"), Err(OcrError::TooManyPages { .. })));
    assert_eq!(engine.calls.load(Ordering::SeqCst), 0, "none of them reached Tesseract");
    let good = write("good.tif", tiff(&[(8, 8), (8, 8)], 0));
    assert_eq!(ocr.image(&good, "good").unwrap().page.text, "good.tif eng");
}

/// Issue 46, item 15: a failure that would recur (a timeout) is kept by content hash, so an
/// unchanged file does not cost every re-index the same 300 s.
#[test]
fn lasting_failures_are_remembered_by_content_hash() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = fake();
    let ocr = Ocr::new(engine.clone(), None, OcrSettings::default()).with_cache(OcrCache::new(tmp.path().join("c")));
    let slow = tmp.path().join("slow.png");
    std::fs::write(&slow, TINY_PNG).unwrap();
    assert!(matches!(ocr.image(&slow, "h1"), Err(OcrError::Timeout { .. })));
    let again = ocr.image(&slow, "h1").unwrap_err();
    assert!(matches!(&again, OcrError::Remembered(m) if m.contains("took longer than 300 s")), "{again}");
    assert_eq!(engine.calls.load(Ordering::SeqCst), 1);
    // Changed bytes are read again.
    assert!(matches!(ocr.image(&slow, "h2"), Err(OcrError::Timeout { .. })));
    assert_eq!(engine.calls.load(Ordering::SeqCst), 2);
}

/// Issue 46, item 4: a page the guessed languages read poorly is read again in the fallback.
#[test]
fn a_poorly_read_page_is_read_again_in_the_fallback_languages() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = fake();
    let ocr = Ocr::new(engine.clone(), None, OcrSettings::default())
        .with_languages(Languages::parse("eng").unwrap())
        .unwrap()
        .with_fallback(Languages::chinese_and_english());
    for name in ["zh.png", "en.png"] {
        std::fs::write(tmp.path().join(name), TINY_PNG).unwrap();
    }
    assert_eq!(ocr.image(&tmp.path().join("en.png"), "en").unwrap().page.text, "en.png eng");
    assert_eq!(engine.calls.load(Ordering::SeqCst), 1);
    assert_eq!(ocr.image(&tmp.path().join("zh.png"), "zh").unwrap().page.text, "zh.png chi_sim+eng");
    assert_eq!(engine.calls.load(Ordering::SeqCst), 3);
    // A fallback that is not installed is left out.
    let none = ocr.clone().with_fallback(Languages::parse("jpn").unwrap());
    assert_eq!(none.image(&tmp.path().join("zh.png"), "zh2").unwrap().page.text, "zh.png eng");
}

#[test]
fn languages_must_be_installed() {
    let ocr = Ocr::new(fake(), None, OcrSettings::default());
    assert!(ocr.with_languages(Languages::parse("chi_sim+eng").unwrap()).is_ok());
    let err = ocr.with_languages(Languages::parse("chi_tra").unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the OCR language `chi_tra` is not installed (installed: eng, chi_sim); install `tesseract-ocr-chi-tra` or change `[index] ocr_languages`"
    );
}

#[test]
fn pictures_are_sized_before_they_are_read_and_cached_after() {
    let tmp = tempfile::tempdir().unwrap();
    let engine = fake();
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let ocr = Ocr::new(engine.clone(), None, OcrSettings::default())
        .with_cache(OcrCache::new(tmp.path().join("cache")))
        .with_progress(move |e| seen.lock().unwrap().push(e));
    let png = tmp.path().join("a.png");
    std::fs::write(&png, TINY_PNG).unwrap();
    let first = ocr.image(&png, "hash-a").unwrap();
    assert_eq!((first.width, first.height), (2, 1));
    assert_eq!(first.page.text, "a.png eng");
    // The same bytes again: from the cache, not the engine.
    assert_eq!(ocr.image(&png, "hash-a").unwrap(), first);
    assert_eq!(engine.calls.load(Ordering::SeqCst), 1);
    assert_eq!(*events.lock().unwrap(), [OcrEvent::Queued(1), OcrEvent::Done]);

    // A 20 000 × 20 000 header is refused without decoding a pixel.
    let bomb = tmp.path().join("bomb.png");
    std::fs::write(&bomb, png_header(20_000, 20_000)).unwrap();
    let err = ocr.image(&bomb, "hash-bomb").unwrap_err();
    assert!(matches!(err, OcrError::ImageTooLarge { megapixels: 400, limit: 64, .. }), "{err}");
    assert!(err.to_string().contains("decompression bomb"), "{err}");
    let text = tmp.path().join("not.png");
    std::fs::write(&text, "just text").unwrap();
    assert!(matches!(ocr.image(&text, "hash-text"), Err(OcrError::NotAnImage(_))));
    assert!(matches!(ocr.image_bytes(&png_header(30_000, 30_000), "png"), Err(OcrError::ImageTooLarge { .. })));
    assert_eq!(engine.calls.load(Ordering::SeqCst), 1);
}

#[test]
fn large_pages_render_at_a_lower_resolution_or_not_at_all() {
    let ocr = Ocr::new(fake(), None, OcrSettings::default());
    let a4 = PageBox { number: 1, width_pt: 595.0, height_pt: 842.0, image: None };
    assert_eq!(ocr.dpi_for(&a4).unwrap(), 300);
    // A0 (33 × 47 in) at 300 dpi is 140 megapixels: rendered at the resolution that fits 64.
    let a0 = PageBox { number: 2, width_pt: 2384.0, height_pt: 3370.0, image: None };
    let dpi = ocr.dpi_for(&a0).unwrap();
    assert!((150..300).contains(&dpi), "{dpi}");
    let huge = PageBox { number: 3, width_pt: 14_400.0, height_pt: 14_400.0, image: None };
    let err = ocr.dpi_for(&huge).unwrap_err();
    assert_eq!(
        err.to_string(),
        "page 3 is 200 × 200 inches: even at 100 dpi it is over the limit of 64 megapixels (`[index] max_ocr_megapixels` raises it)"
    );
}

#[test]
fn without_pdftoppm_pages_say_what_to_install() {
    let ocr = Ocr::new(fake(), None, OcrSettings::default());
    let pages = [PageBox { number: 1, width_pt: 595.0, height_pt: 842.0, image: None }];
    let results = ocr.pdf_pages(Path::new("scan.pdf"), "h", &pages);
    let err = results[0].as_ref().unwrap_err();
    assert!(err.to_string().starts_with("pdftoppm is not installed; install Tesseract and poppler-utils"), "{err}");
}

#[test]
fn parallel_reads_keep_their_order() {
    let items: Vec<usize> = (0..50).collect();
    assert_eq!(parallel(&items, 8, |i| i * 2), items.iter().map(|i| i * 2).collect::<Vec<_>>());
    assert!(parallel(&[] as &[usize], 8, |i| *i).is_empty());
}

#[test]
fn slots_bound_the_children_running_at_once() {
    let slots = Slots::new(2);
    let running = AtomicUsize::new(0);
    let most = AtomicUsize::new(0);
    let items: Vec<usize> = (0..12).collect();
    let out = parallel(&items, 6, |&i| {
        let _slot = slots.take();
        let now = running.fetch_add(1, Ordering::SeqCst) + 1;
        most.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(5));
        running.fetch_sub(1, Ordering::SeqCst);
        i * 2
    });
    assert_eq!(out, (0..12).map(|i| i * 2).collect::<Vec<_>>());
    assert!(most.load(Ordering::SeqCst) <= 2);
}

/// The real engine, when the machine has it (`scripts/setup-ocr`; `SKILLRAG_TEST_OCR=1` makes
/// its absence a failure).
pub(crate) fn real_ocr() -> Option<Ocr> {
    match Ocr::find(OcrSettings::default()) {
        Ok(ocr) => Some(ocr),
        Err(e) if std::env::var_os("SKILLRAG_TEST_OCR").is_some() => panic!("SKILLRAG_TEST_OCR is set but {e}"),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}

fn scan(name: &str) -> std::path::PathBuf {
    std::path::PathBuf::from(format!("{}/../../testdata/scans/{name}", env!("CARGO_MANIFEST_DIR")))
}

#[test]
fn tesseract_reads_chinese_and_english_pictures() {
    let Some(ocr) = real_ocr() else { return };
    let zh = ocr.with_languages(Languages::parse("chi_sim+eng").unwrap()).unwrap();
    let notice = zh.image(&scan("notice-zh.png"), "t1").unwrap();
    let text: String = notice.page.text.split_whitespace().collect();
    assert!(text.contains("开放时间"), "{text}");
    assert!(notice.page.confidence > 0.7, "{}", notice.page.confidence);
    let en = ocr.with_languages(Languages::parse("eng").unwrap()).unwrap();
    let faq = en.image(&scan("faq-en.jpg"), "t2").unwrap();
    assert!(faq.page.text.contains("warranty covers repairs for two years"), "{}", faq.page.text);
    let tra = ocr.with_languages(Languages::parse("zh-Hant").unwrap()).unwrap();
    let text: String = tra.image(&scan("notice-tra.png"), "t3").unwrap().page.text.split_whitespace().collect();
    assert!(text.contains("圖書館"), "{text}");
}

#[test]
fn tesseract_reports_bad_pictures() {
    let Some(ocr) = real_ocr() else { return };
    let err = ocr.image(&scan("truncated.jpg"), "t4").unwrap_err();
    assert!(err.to_string().contains("Premature end of JPEG file"), "{err}");
    let blank = ocr.image(&scan("blank.png"), "t5").unwrap();
    assert_eq!(blank.page.text.trim(), "", "{:?}", blank.page);
}

#[test]
fn pdftoppm_renders_scanned_pages_for_tesseract() {
    let Some(ocr) = real_ocr() else { return };
    let zh = ocr.with_languages(Languages::parse("chi_sim+eng").unwrap()).unwrap();
    let a4 = |number| PageBox { number, width_pt: 595.0, height_pt: 842.0, image: None };
    let pages = zh.pdf_pages(&scan("scan-zh.pdf"), "t6", &[a4(2), a4(1)]);
    let two: String = pages[0].as_ref().unwrap().text.split_whitespace().collect();
    assert!(two.contains("试用期不得超过六个月"), "{two}");
    assert!(!pages[1].as_ref().unwrap().text.is_empty());
    let missing = zh.pdf_pages(&scan("scan-zh.pdf"), "t7", &[a4(9)]);
    assert!(matches!(&missing[0], Err(OcrError::Unreadable(m)) if m.contains("page 9")), "{:?}", missing[0]);
}
