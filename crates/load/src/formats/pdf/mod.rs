//! PDF text extraction.
//!
//! `pdf-extract` (on `lopdf`) decodes each page's content stream — simple and CID fonts, ToUnicode
//! maps, Identity-H — and hands every glyph with its position to our `OutputDev` ([`glyphs`]).
//! The layout work happens here, from glyph positions alone:
//!
//! 1. glyphs are grouped into rows by baseline, and each row into words by the gaps between glyphs
//!    ([`rows`]);
//! 2. running headers and footers — rows at the top or bottom of a page whose text (digits
//!    replaced) repeats on at least half of the pages — are dropped, as are lone page numbers
//!    ([`furniture`](mod@furniture));
//! 3. a column gutter, a vertical band that no glyph crosses on most rows, splits a page into a
//!    left and a right column, read one after the other; rows that do cross it (a full-width
//!    title) are read in their place ([`columns`]);
//! 4. lines are joined into paragraphs: a vertical gap larger than the line spacing is a paragraph
//!    break (a blank line), a line that ends early is a line break, hyphenated words are joined
//!    ("exam-" + "ple"), broken Chinese lines are joined without a space, other lines with one
//!    ([`paragraphs`]).
//!
//! This module loads the document and runs the steps in order.

mod budget;
mod cjk;
mod columns;
#[cfg(test)]
mod fixtures;
mod furniture;
mod glyphs;
mod images;
mod operators;
mod paragraphs;
mod rows;

use std::collections::HashSet;

use pdf_extract::{Document, Object};
use unicode_normalization::UnicodeNormalization;

use super::{contained, ExtractError, ExtractLimits, Extracted};
use columns::page_lines;
use furniture::furniture;
use glyphs::{collect_page, Page};
use paragraphs::assemble;
use rows::{rows_of, Kind, Line, Row};

/// Extracts the text of a PDF: pages in order, columns in reading order, running headers and
/// footers dropped, hyphenation and broken Chinese lines joined, NFC-normalized.
/// `limits` bound the pages, the inflated content and the text (see [`budget`]). A PDF whose
/// pages all lack a text layer is `NoTextLayer`; see [`extract_pdf_pages`] for one to OCR.
pub fn extract_pdf(bytes: &[u8], limits: &ExtractLimits) -> Result<Extracted, ExtractError> {
    let pdf = extract_pdf_pages(bytes, limits)?;
    pdf.text.ok_or(ExtractError::NoTextLayer { pages: pdf.scanned.len() })
}

/// A PDF's text layer and the pages that have none (scans, for OCR).
#[derive(Debug, Clone, PartialEq)]
pub struct PdfPages {
    /// The text of the pages that have a text layer; `None` when no page has one.
    pub text: Option<Extracted>,
    /// Pages without a text layer, in order.
    pub scanned: Vec<ScannedPage>,
    pub title: Option<String>,
}

/// A page without a text layer: its number (from 1) and media box size in points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScannedPage {
    pub number: u32,
    pub width_pt: f64,
    pub height_pt: f64,
    /// The largest image the page draws, `(width, height)` in pixels as its dictionary declares
    /// them (never decoded here): OCR refuses a bomb before rendering it.
    pub image: Option<(u64, u64)>,
}

/// As [`extract_pdf`], keeping a mixed or scanned PDF's pages without text apart.
pub fn extract_pdf_pages(bytes: &[u8], limits: &ExtractLimits) -> Result<PdfPages, ExtractError> {
    let mut doc = load(bytes)?;
    let title = info_title(&doc);
    let page_ids = doc.get_pages();
    let numbers: Vec<u32> = page_ids.keys().copied().collect();
    if numbers.is_empty() {
        return Err(corrupt("the document has no pages"));
    }
    budget::check(&doc, bytes.len(), limits)?;
    let images: std::collections::HashMap<u32, (u64, u64)> = page_ids
        .iter()
        .filter_map(|(&number, &id)| images::largest_on_page(&doc, id).map(|size| (number, size)))
        .collect();
    images::strip(&mut doc);
    let mut pages = Vec::with_capacity(numbers.len());
    let mut first_error = None;
    let mut text_bytes = 0usize;
    for &number in &numbers {
        let checked = page_ids.get(&number).map_or(Ok(()), |&id| operators::check_page(&doc, id));
        match checked.and_then(|()| collect_page(&doc, number)) {
            Ok(page) => {
                text_bytes += page.text_len();
                if text_bytes > limits.max_text_bytes {
                    return Err(ExtractError::OverLimit {
                        what: format!(
                            "the text passes {} MB by page {number}",
                            limits.max_text_bytes.div_ceil(1 << 20)
                        ),
                        limit: format!("{} MB", limits.max_text_bytes.div_ceil(1 << 20)),
                        setting: "max_text_mb",
                    });
                }
                pages.push(page)
            }
            Err(reason) => {
                first_error.get_or_insert(format!("page {number}: {reason}"));
            }
        }
    }
    if pages.is_empty() {
        return Err(corrupt(first_error.unwrap_or_default()));
    }
    let scanned: Vec<ScannedPage> = pages
        .iter()
        .filter(|p| !p.has_text())
        .map(|p| ScannedPage {
            number: p.number,
            width_pt: p.width,
            height_pt: p.height,
            image: images.get(&p.number).copied(),
        })
        .collect();
    if scanned.len() == pages.len() {
        if let Some(reason) = first_error {
            // Some pages failed and the others have no text: we cannot tell it is a scan.
            return Err(corrupt(reason));
        }
        return Ok(PdfPages { text: None, scanned, title });
    }
    let (text, page_starts) = layout(&pages);
    let text = Extracted { text, markdown: false, pages: page_starts, faq: Vec::new(), title: title.clone() };
    Ok(PdfPages { text: Some(text), scanned, title })
}

fn corrupt(reason: impl std::fmt::Display) -> ExtractError {
    let reason = format!("{reason}; try repairing it with `qpdf damaged.pdf repaired.pdf`, or export it again");
    ExtractError::Corrupt { format: "PDF", reason }
}

fn load(bytes: &[u8]) -> Result<Document, ExtractError> {
    let head = &bytes[..bytes.len().min(1024)];
    if !head.windows(5).any(|w| w == b"%PDF-") {
        let reason = "no %PDF- header, so this is not a PDF file; check its extension".into();
        return Err(ExtractError::Corrupt { format: "PDF", reason });
    }
    // lopdf and pdf-extract can panic on malformed input (unwrap/expect on unexpected object
    // types); a panic is turned into `Corrupt` so one bad file never takes the indexer down.
    let doc = contained(|| Document::load_mem(bytes))
        .map_err(|msg| corrupt(operators::describe_panic(&msg)))?
        .map_err(|e| match e {
            pdf_extract::Error::Decryption(_) | pdf_extract::Error::InvalidPassword => ExtractError::Encrypted,
            e => corrupt(e.to_string()),
        })?;
    // lopdf decrypts on load when the user password is empty (an owner password only restricts
    // printing or copying); the `Encrypt` entry is still there when a user password is needed.
    if doc.is_encrypted() {
        return Err(ExtractError::Encrypted);
    }
    Ok(doc)
}

/// The document information dictionary's `/Title`, when present and not blank.
fn info_title(doc: &Document) -> Option<String> {
    let info = match doc.trailer.get(b"Info").ok()? {
        Object::Reference(id) => doc.get_object(*id).ok()?,
        other => other,
    };
    let title = match info.as_dict().ok()?.get(b"Title").ok()? {
        Object::Reference(id) => doc.get_object(*id).ok()?,
        other => other,
    };
    let Object::String(bytes, _) = title else { return None };
    let text = decode_text_string(bytes);
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ").nfc().collect();
    (!text.is_empty()).then_some(text)
}

/// A PDF text string: UTF-16BE with a byte order mark, UTF-8 with one (PDF 2.0), or
/// PDFDocEncoding (Latin-1 for everything that matters in a title).
fn decode_text_string(bytes: &[u8]) -> String {
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        let units: Vec<u16> = rest.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
        return String::from_utf16_lossy(&units);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return String::from_utf8_lossy(rest).into_owned();
    }
    bytes.iter().map(|&b| b as char).filter(|c| !c.is_control()).collect()
}

fn layout(pages: &[Page]) -> (String, Vec<(usize, u32)>) {
    let rows: Vec<Vec<Row>> = pages.iter().map(rows_of).collect();
    let mut lines = lines_of(pages, &rows, true);
    if lines.is_empty() {
        // Nothing but what looked like headers and footers: keep them rather than return nothing.
        lines = lines_of(pages, &rows, false);
    }
    assemble(&lines)
}

fn lines_of(pages: &[Page], rows: &[Vec<Row>], drop_furniture: bool) -> Vec<Line> {
    let drop = if drop_furniture { furniture(pages, rows) } else { vec![HashSet::new(); pages.len()] };
    let mut next_block = 0;
    let mut lines = Vec::new();
    for ((page, rows), drop) in pages.iter().zip(rows).zip(&drop) {
        let kept: Vec<Row> =
            rows.iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, r)| r.clone()).collect();
        let before = lines.len();
        lines.extend(page_lines(page, &kept, &mut next_block));
        let rotated = page.rotated.split_whitespace().collect::<Vec<_>>().join(" ");
        if lines.len() == before && !rotated.is_empty() {
            // Only sideways text on this page: keep it, in drawing order.
            lines.push(Line {
                text: rotated,
                x1: 0.0,
                y: 0.0,
                size: 0.0,
                first_word: 0.0,
                block: next_block,
                kind: Kind::Full,
                right: f64::INFINITY,
                page: page.number,
            });
            next_block += 1;
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;

    /// The text at a character offset.
    fn at(text: &str, offset: usize) -> String {
        text.chars().skip(offset).take(40).collect()
    }

    #[test]
    fn pages_and_title() {
        let x = extract("two-column.pdf");
        assert_eq!(x.title.as_deref(), Some("Nimbus AX3000 Field Notes"));
        assert!(!x.markdown);
        assert_eq!(x.pages.iter().map(|p| p.1).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(x.pages[0].0, 0);
        assert!(x.pages.windows(2).all(|w| w[0].0 < w[1].0));
        // Page 2 starts inside the paragraph that flows on from page 1's right column.
        assert!(
            at(&x.text, x.pages[1].0).starts_with("both passwords and all mesh nodes."),
            "{:?}",
            at(&x.text, x.pages[1].0)
        );
        assert!(
            at(&x.text, x.pages[2].0).starts_with("次访问日志，留意陌生的登录记录。"),
            "{:?}",
            at(&x.text, x.pages[2].0)
        );

        let m = extract("manual.pdf");
        assert_eq!(m.title.as_deref(), Some("茶艺手册 Tea Brewing Manual"));
        assert_eq!(m.pages.iter().map(|p| p.1).collect::<Vec<_>>(), [1, 2, 3]);
        assert!(at(&m.text, m.pages[1].0).starts_with("第二章 乌龙茶与红茶"), "{:?}", at(&m.text, m.pages[1].0));
        assert!(at(&m.text, m.pages[2].0).starts_with("第三章 普洱与存放"), "{:?}", at(&m.text, m.pages[2].0));
        for x in [&x, &m] {
            assert_eq!(x.text, x.text.nfc().collect::<String>());
            assert!(x.faq.is_empty());
        }
    }

    #[test]
    fn errors() {
        assert_eq!(extract_pdf_default(&doc("encrypted.pdf")), Err(ExtractError::Encrypted));
        // Encrypted with an empty user password (an owner password only restricts copying):
        // opens like any viewer opens it.
        assert_eq!(extract_pdf_default(&doc("owner-password.pdf")), Ok(extract("two-column.pdf")));
        assert_eq!(extract_pdf_default(&doc("scanned.pdf")), Err(ExtractError::NoTextLayer { pages: 2 }));
        for bytes in [doc("truncated.pdf"), b"not a pdf at all".to_vec(), Vec::new(), b"%PDF-1.7\n%garbage".to_vec()] {
            match extract_pdf_default(&bytes) {
                Err(ExtractError::Corrupt { format: "PDF", reason }) => assert!(!reason.is_empty()),
                other => panic!("expected Corrupt, got {other:?}"),
            }
        }
    }

    #[test]
    fn damaged_files_never_panic() {
        let original = doc("manual.pdf");
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for i in 0..40 {
            let mut bytes = original.clone();
            if i % 2 == 0 {
                bytes.truncate((next() as usize) % bytes.len());
            } else {
                for _ in 0..20 {
                    let at = (next() as usize) % bytes.len();
                    bytes[at] = next() as u8;
                }
            }
            // Any outcome but a panic (the test would fail) is fine.
            let _ = extract_pdf_default(&bytes);
        }
    }
}
