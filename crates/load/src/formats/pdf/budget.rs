//! The work a PDF may cause, checked before any page is laid out.
//!
//! lopdf inflates a content stream whole when a page is read, and pdf-extract then keeps a
//! glyph for every character drawn: a 116 KB file whose content inflates to 50 MB took minutes
//! and gigabytes. So the pages are counted, and each page's content (with the forms it can
//! draw) is inflated once here through a bounded reader, which stops at the limit instead of
//! allocating it. That doubles the inflate work on a normal file, which is cheap beside layout.

use super::super::{ExtractError, ExtractLimits};
use pdf_extract::{Document, Object, Stream};
use std::io::Read;

/// Below this much content a high ratio is harmless (a short page of repeated text).
const RATIO_CHECK_MIN_BYTES: u64 = 1024 * 1024;

/// Checks the page count and the inflated size of every page's content against `limits`.
pub(super) fn check(doc: &Document, file_len: usize, limits: &ExtractLimits) -> Result<(), ExtractError> {
    let pages = doc.get_pages();
    if pages.len() > limits.max_pages {
        return Err(ExtractError::OverLimit {
            what: format!("its page count ({})", pages.len()),
            limit: format!("{} pages", limits.max_pages),
            setting: "max_pdf_pages",
        });
    }
    let forms = form_content(doc, limits)?;
    let mut total = forms;
    for (&number, &page) in &pages {
        let mut content = 0u64;
        for id in doc.get_page_contents(page) {
            if let Ok(Object::Stream(stream)) = doc.get_object(id) {
                content += inflated_len(stream, limits.max_page_content_bytes.saturating_sub(content));
            }
        }
        if content > limits.max_page_content_bytes {
            return Err(ExtractError::OverLimit {
                what: format!("page {number}'s content, inflated,"),
                limit: mb(limits.max_page_content_bytes),
                setting: "max_page_content_mb",
            });
        }
        total += content;
        if total > limits.max_inflated_bytes {
            return Err(ExtractError::OverLimit {
                what: format!("the inflated content of pages 1 to {number}"),
                limit: mb(limits.max_inflated_bytes),
                setting: "max_inflated_mb",
            });
        }
    }
    let ratio = total / (file_len.max(1) as u64);
    if total > RATIO_CHECK_MIN_BYTES && ratio > limits.max_ratio {
        return Err(ExtractError::ZipBomb {
            member: "the PDF's page content".into(),
            limit_mb: limits.max_inflated_bytes.div_ceil(1024 * 1024),
            ratio,
        });
    }
    Ok(())
}

/// The inflated size of all form XObjects (content a page can draw by name), bounded by the
/// document limit.
fn form_content(doc: &Document, limits: &ExtractLimits) -> Result<u64, ExtractError> {
    let mut total = 0u64;
    let forms = doc.objects.values().filter_map(|o| match o {
        Object::Stream(s) if s.dict.get(b"Subtype").and_then(Object::as_name).ok() == Some(b"Form") => Some(s),
        _ => None,
    });
    for form in forms {
        total += inflated_len(form, limits.max_inflated_bytes.saturating_sub(total));
        if total > limits.max_inflated_bytes {
            return Err(ExtractError::OverLimit {
                what: "the inflated content of its forms".to_string(),
                limit: mb(limits.max_inflated_bytes),
                setting: "max_inflated_mb",
            });
        }
    }
    Ok(total)
}

/// How many bytes `stream` inflates to, reading at most `budget + 1` of them: a result above
/// `budget` means "over". Only FlateDecode is inflated here, the filter bombs use; other
/// filters count their stored size (ASCII85 shrinks, and lopdf's LZW is rare in content).
fn inflated_len(stream: &Stream, budget: u64) -> u64 {
    let flate = stream.filters().is_ok_and(|f| f.first().is_some_and(|name| *name == b"FlateDecode"));
    if !flate {
        return stream.content.len() as u64;
    }
    let decoder = flate2::read::ZlibDecoder::new(stream.content.as_slice());
    // A damaged stream counts what inflated before the damage; the page then fails on its own.
    std::io::copy(&mut decoder.take(budget.saturating_add(1)), &mut std::io::sink()).unwrap_or(0)
}

fn mb(bytes: u64) -> String {
    format!("{} MB", bytes.div_ceil(1024 * 1024))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pdf_extract::{dictionary, Stream};

    /// A one-page PDF whose page content is `content`, stored compressed.
    fn pdf_with_content(content: &[u8], pages: usize) -> Document {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let mut kids = Vec::new();
        for _ in 0..pages {
            let mut stream = Stream::new(dictionary! {}, content.to_vec());
            stream.compress().unwrap();
            let content_id = doc.add_object(stream);
            let page = doc.add_object(dictionary! {
                "Type" => "Page", "Parent" => pages_id, "Contents" => content_id,
                "MediaBox" => vec![0.into(), 0.into(), 595.into(), 842.into()],
            });
            kids.push(page.into());
        }
        let count = kids.len() as i64;
        doc.objects
            .insert(pages_id, Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => count }));
        let catalog = doc.add_object(dictionary! { "Type" => "Catalog", "Pages" => pages_id });
        doc.trailer.set("Root", catalog);
        doc
    }

    fn bytes_of(mut doc: Document) -> Vec<u8> {
        let mut out = Vec::new();
        doc.save_to(&mut out).unwrap();
        out
    }

    #[test]
    fn a_content_bomb_is_refused_before_layout() {
        // 40 MB of drawing commands compress to a few tens of KB.
        let bomb = b"BT /F1 12 Tf (x) Tj ET\n".repeat(40 * 1024 * 1024 / 23);
        let doc = pdf_with_content(&bomb, 1);
        let file = bytes_of(doc.clone());
        assert!(file.len() < 200 * 1024, "{}", file.len());
        let limits = ExtractLimits::default();
        match check(&doc, file.len(), &limits) {
            Err(ExtractError::OverLimit { setting: "max_page_content_mb", what, .. }) => {
                assert!(what.contains("page 1"), "{what}")
            }
            other => panic!("{other:?}"),
        }
        // Spread over pages under the page limit, the ratio stops it.
        let per_page = b"BT /F1 12 Tf (x) Tj ET\n".repeat(8 * 1024 * 1024 / 23);
        let doc = pdf_with_content(&per_page, 4);
        let file = bytes_of(doc.clone());
        assert!(matches!(check(&doc, file.len(), &limits), Err(ExtractError::ZipBomb { .. })));
        // And the whole-document limit, when the ratio is allowed.
        let lax = ExtractLimits { max_ratio: u64::MAX, max_inflated_bytes: 20 * 1024 * 1024, ..limits };
        assert!(matches!(
            check(&doc, file.len(), &lax),
            Err(ExtractError::OverLimit { setting: "max_inflated_mb", .. })
        ));
    }

    #[test]
    fn page_count_is_bounded_and_normal_files_pass() {
        let doc = pdf_with_content(b"BT /F1 12 Tf (hello) Tj ET", 12);
        let file = bytes_of(doc.clone());
        assert_eq!(check(&doc, file.len(), &ExtractLimits::default()), Ok(()));
        let few = ExtractLimits { max_pages: 10, ..ExtractLimits::default() };
        match check(&doc, file.len(), &few) {
            Err(e @ ExtractError::OverLimit { setting: "max_pdf_pages", .. }) => {
                assert!(e.to_string().contains("page count (12) exceeds the limit of 10 pages"), "{e}")
            }
            other => panic!("{other:?}"),
        }
    }
}
