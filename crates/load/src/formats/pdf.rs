//! PDF text extraction.
//!
//! `pdf-extract` (on `lopdf`) decodes each page's content stream — simple and CID fonts, ToUnicode
//! maps, Identity-H — and hands every glyph with its position to our [`OutputDev`]. The layout
//! work happens here, from glyph positions alone:
//!
//! 1. glyphs are grouped into rows by baseline, and each row into words by the gaps between glyphs;
//! 2. running headers and footers — rows at the top or bottom of a page whose text (digits
//!    replaced) repeats on at least half of the pages — are dropped, as are lone page numbers;
//! 3. a column gutter, a vertical band that no glyph crosses on most rows, splits a page into a
//!    left and a right column, read one after the other; rows that do cross it (a full-width
//!    title) are read in their place;
//! 4. lines are joined into paragraphs: a vertical gap larger than the line spacing is a paragraph
//!    break (a blank line), a line that ends early is a line break, hyphenated words are joined
//!    ("exam-" + "ple"), broken Chinese lines are joined without a space, other lines with one.

use std::collections::{HashMap, HashSet};

use pdf_extract::{Document, MediaBox, Object, OutputDev, OutputError, Transform};
use unicode_normalization::UnicodeNormalization;

use super::{contained, ExtractError, Extracted};

/// Extracts the text of a PDF: pages in order, columns in reading order, running headers and
/// footers dropped, hyphenation and broken Chinese lines joined, NFC-normalized.
pub fn extract_pdf(bytes: &[u8]) -> Result<Extracted, ExtractError> {
    let doc = load(bytes)?;
    let title = info_title(&doc);
    let numbers: Vec<u32> = doc.get_pages().keys().copied().collect();
    if numbers.is_empty() {
        return Err(corrupt("the document has no pages"));
    }
    let mut pages = Vec::with_capacity(numbers.len());
    let mut first_error = None;
    for &number in &numbers {
        match collect_page(&doc, number) {
            Ok(page) => pages.push(page),
            Err(reason) => {
                first_error.get_or_insert(format!("page {number}: {reason}"));
            }
        }
    }
    if pages.is_empty() {
        return Err(corrupt(first_error.unwrap_or_default()));
    }
    if pages.iter().all(|p| !p.has_text()) {
        return Err(match first_error {
            // Some pages failed and the others have no text: we cannot tell it is a scan.
            Some(reason) => corrupt(reason),
            None => ExtractError::NoTextLayer { pages: numbers.len() },
        });
    }
    let (text, page_starts) = layout(&pages);
    Ok(Extracted { text, markdown: false, pages: page_starts, faq: Vec::new(), title })
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
        .map_err(|msg| corrupt(format!("the PDF parser failed ({msg})")))?
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

// ---------------------------------------------------------------------------------------------
// Glyphs
// ---------------------------------------------------------------------------------------------

/// One glyph on a page, in points, y growing downwards from the top of the media box.
#[derive(Debug, Clone, Copy)]
struct Glyph {
    x0: f64,
    /// Where the next glyph would start.
    x1: f64,
    /// Where the ink ends: closing Chinese punctuation fills only the left half of its box, and
    /// LibreOffice lets it hang past the end of a justified line, into the gutter.
    ink1: f64,
    /// Baseline.
    y: f64,
    /// Font size on the page.
    size: f64,
    /// Byte range of the glyph's text in [`Page::chars`].
    start: u32,
    end: u32,
    space: bool,
}

#[derive(Debug, Default)]
struct Page {
    number: u32,
    /// Upper edge of the media box, where y = 0 after flipping.
    top: f64,
    height: f64,
    glyphs: Vec<Glyph>,
    chars: String,
    /// Text of rotated or mirrored glyphs, in drawing order.
    rotated: String,
}

impl Page {
    fn has_text(&self) -> bool {
        self.glyphs.iter().any(|g| !g.space) || !self.rotated.trim().is_empty()
    }

    fn text(&self, g: &Glyph) -> &str {
        &self.chars[g.start as usize..g.end as usize]
    }
}

fn collect_page(doc: &Document, number: u32) -> Result<Page, String> {
    let mut page = Page { number, ..Page::default() };
    // See `load`: pdf-extract panics on some malformed content. A page that fails is left out
    // (the others are still indexed); only when every page fails is the file `Corrupt`.
    match contained(|| pdf_extract::output_doc_page(doc, &mut page, number)) {
        Ok(Ok(())) => Ok(page),
        Ok(Err(e)) => Err(e.to_string()),
        Err(msg) => Err(format!("the PDF parser failed ({msg})")),
    }
}

impl OutputDev for Page {
    fn begin_page(
        &mut self,
        _page_num: u32,
        media_box: &MediaBox,
        _art_box: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        // Positions are measured from the top of the page: the media box's upper edge.
        self.top = media_box.ury;
        self.height = (media_box.ury - media_box.lly).abs();
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        let top = self.top;
        for g in &mut self.glyphs {
            g.y = top - g.y;
        }
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        text: &str,
    ) -> Result<(), OutputError> {
        let scale_x = trm.m11.hypot(trm.m12);
        let scale_y = trm.m21.hypot(trm.m22);
        let size = font_size.abs() * scale_y;
        let advance = width * font_size.abs() * scale_x;
        if !(size.is_finite() && advance.is_finite() && trm.m31.is_finite() && trm.m32.is_finite()) || size <= 0.0 {
            return Ok(());
        }
        let upright =
            trm.m11 > 0.0 && trm.m22 > 0.0 && trm.m12.abs() <= 0.05 * trm.m11 && trm.m21.abs() <= 0.05 * trm.m22;
        let start = self.chars.len();
        push_glyph_text(&mut self.chars, text);
        if !upright {
            let s = self.chars.split_off(start);
            self.rotated.push_str(&s);
            return Ok(());
        }
        let glyph_text = &self.chars[start..];
        let space = glyph_text.chars().all(char::is_whitespace);
        let advance = advance.max(0.0);
        let half = glyph_text.chars().count() == 1 && glyph_text.chars().all(is_closing_cjk_punctuation);
        self.glyphs.push(Glyph {
            x0: trm.m31,
            x1: trm.m31 + advance,
            ink1: trm.m31 + if half { advance / 2.0 } else { advance },
            // Flipped to top-down in `end_page`, once the media box is surely known.
            y: trm.m32,
            size,
            start: start as u32,
            end: self.chars.len() as u32,
            space,
        });
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

/// Appends a glyph's text: control characters dropped, Latin ligatures spelled out, spaces of
/// every kind made plain spaces, a soft hyphen made visible (it only shows at a line end).
fn push_glyph_text(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '\u{FB00}' => out.push_str("ff"),
            '\u{FB01}' => out.push_str("fi"),
            '\u{FB02}' => out.push_str("fl"),
            '\u{FB03}' => out.push_str("ffi"),
            '\u{FB04}' => out.push_str("ffl"),
            '\u{FB05}' | '\u{FB06}' => out.push_str("st"),
            '\u{00AD}' | '\u{2010}' | '\u{2011}' => out.push('-'),
            '\u{FFFD}' | '\u{FEFF}' | '\u{200B}' => {}
            c if c.is_whitespace() => out.push(' '),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Rows and lines
// ---------------------------------------------------------------------------------------------

/// Glyphs sharing a baseline, left to right.
#[derive(Debug, Clone)]
struct Row {
    glyphs: Vec<Glyph>,
    y: f64,
    size: f64,
}

/// What a block of lines is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The text of a page without columns.
    Page,
    /// A column of a two-column page.
    Column,
    /// Rows across the gutter of a two-column page (a title above the columns).
    Full,
}

/// A row, or the part of a row inside one column, as text.
#[derive(Debug, Clone)]
struct Line {
    text: String,
    x1: f64,
    y: f64,
    size: f64,
    /// Width of the first word (the first character for Chinese): what would have fitted at the
    /// end of the previous line had the break not been intended.
    first_word: f64,
    /// Which block (a column, or a run of full-width rows) of which page the line is in.
    block: usize,
    kind: Kind,
    /// Right edge of the line's block.
    right: f64,
    page: u32,
}

fn rows_of(page: &Page) -> Vec<Row> {
    let mut order: Vec<usize> = (0..page.glyphs.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (&page.glyphs[a], &page.glyphs[b]);
        a.y.total_cmp(&b.y).then(a.x0.total_cmp(&b.x0))
    });
    let mut rows: Vec<Row> = Vec::new();
    let mut anchor = (f64::NEG_INFINITY, 0.0); // baseline and size of the row's first glyph
    for i in order {
        let g = page.glyphs[i];
        if let Some(row) = rows.last_mut() {
            if g.y - anchor.0 <= 0.4 * g.size.max(anchor.1) {
                row.glyphs.push(g);
                continue;
            }
        }
        anchor = (g.y, g.size);
        rows.push(Row { glyphs: vec![g], y: g.y, size: g.size });
    }
    rows.retain_mut(|row| {
        row.glyphs.sort_by(|a, b| a.x0.total_cmp(&b.x0));
        // A glyph drawn twice at the same spot (fake bold, shadows) counts once.
        let mut kept: Vec<Glyph> = Vec::with_capacity(row.glyphs.len());
        for g in &row.glyphs {
            let dup = kept.iter().rev().take(3).any(|k| {
                (k.x0 - g.x0).abs() < 0.1 * g.size && (k.y - g.y).abs() < 0.1 * g.size && page.text(k) == page.text(g)
            });
            if !dup {
                kept.push(*g);
            }
        }
        row.glyphs = kept;
        let mut ys: Vec<f64> = row.glyphs.iter().filter(|g| !g.space).map(|g| g.y).collect();
        let mut sizes: Vec<f64> = row.glyphs.iter().filter(|g| !g.space).map(|g| g.size).collect();
        if ys.is_empty() {
            return false;
        }
        row.y = median(&mut ys);
        row.size = median(&mut sizes);
        true
    });
    rows
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Joins glyphs (left to right) into text; returns the text, where its ink ends and the first
/// word's width.
fn line_of(page: &Page, glyphs: &[Glyph]) -> Option<(String, f64, f64)> {
    let mut text = String::new();
    let mut prev: Option<&Glyph> = None;
    let mut pending_space = false;
    let mut x0 = f64::INFINITY;
    let mut x1 = f64::NEG_INFINITY;
    let mut first_word_end: Option<f64> = None;
    for g in glyphs {
        if g.space {
            pending_space = prev.is_some();
            continue;
        }
        let s = page.text(g);
        if let Some(p) = prev {
            let gap = g.x0 - p.x1;
            let cjk = s.chars().next().is_some_and(is_cjk) && text.chars().next_back().is_some_and(is_cjk);
            // Justified Chinese spreads characters apart; only a wide gap is a space there.
            let threshold = if cjk { 0.5 } else { 0.18 } * g.size.max(p.size);
            if pending_space || gap > threshold {
                text.push(' ');
                first_word_end.get_or_insert(p.x1);
            }
        }
        if prev.is_none() && s.chars().next().is_some_and(is_cjk) {
            first_word_end = Some(g.x1);
        }
        text.push_str(s);
        x0 = x0.min(g.x0);
        x1 = x1.max(g.ink1);
        prev = Some(g);
        pending_space = false;
    }
    let text = text.trim().to_string();
    if text.is_empty() {
        return None;
    }
    let first_word = first_word_end.unwrap_or(x1) - x0;
    Some((text, x1, first_word))
}

fn row_text(page: &Page, row: &Row) -> String {
    line_of(page, &row.glyphs).map(|l| l.0).unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Running headers and footers
// ---------------------------------------------------------------------------------------------

/// Rows of each page that are running headers, footers or page numbers.
fn furniture(pages: &[Page], rows: &[Vec<Row>]) -> Vec<HashSet<usize>> {
    // (page index, row index, at the top, key)
    let mut candidates = Vec::new();
    for (p, (page, rows)) in pages.iter().zip(rows).enumerate() {
        let height = if page.height > 0.0 { page.height } else { 842.0 };
        let n = rows.len();
        let top = (0..n.min(2)).filter(|&i| rows[i].y < 0.15 * height);
        let bottom = (n.saturating_sub(2)..n).filter(|&i| rows[i].y > 0.85 * height);
        let mut seen = HashSet::new();
        for i in top.chain(bottom) {
            if seen.insert(i) {
                let text = row_text(page, &rows[i]);
                candidates.push((p, i, rows[i].y < 0.5 * height, text));
            }
        }
    }
    let with_text = rows.iter().filter(|r| !r.is_empty()).count();
    let mut count: HashMap<(bool, String), HashSet<usize>> = HashMap::new();
    for (p, _, top, text) in &candidates {
        count.entry((*top, furniture_key(text))).or_default().insert(*p);
    }
    let mut drop = vec![HashSet::new(); pages.len()];
    for (p, i, top, text) in candidates {
        let repeats = count[&(top, furniture_key(&text))].len();
        let running = with_text >= 3 && repeats >= 2 && repeats * 2 >= with_text;
        if running || is_page_number(&text) {
            drop[p].insert(i);
        }
    }
    drop
}

/// A header or footer with its page number masked: "Page 3 of 10" and "Page 4 of 10" are equal.
fn furniture_key(text: &str) -> String {
    let mut key = String::new();
    for c in text.chars().filter(|c| !c.is_whitespace()) {
        if c.is_numeric() {
            // A run of digits is one mark: page 9 and page 10 have the same header.
            if !key.ends_with('#') {
                key.push('#');
            }
        } else {
            key.extend(c.to_lowercase());
        }
    }
    key
}

/// "3", "- 3 -", "Page 3 of 10", "3 / 10", "第 3 页", "第3页 共10页", "iv".
fn is_page_number(text: &str) -> bool {
    let lower = text.trim().to_lowercase();
    if !lower.is_empty() && lower.len() <= 6 && lower.chars().all(|c| "ivxlc".contains(c)) {
        return true;
    }
    if !lower.chars().any(|c| c.is_ascii_digit()) {
        return false;
    }
    let mut word = String::new();
    let allowed = |w: &str| w.is_empty() || ["page", "pages", "pg", "p", "pp", "of", "seite", "von"].contains(&w);
    for c in lower.chars() {
        if c.is_alphabetic() && !is_cjk(c) {
            word.push(c);
            continue;
        }
        if !allowed(&word) {
            return false;
        }
        word.clear();
        let ok = c.is_ascii_digit() || c.is_whitespace() || "-–—/|.·•()[]:：,，第页頁共".contains(c);
        if !ok {
            return false;
        }
    }
    allowed(&word)
}

// ---------------------------------------------------------------------------------------------
// Columns
// ---------------------------------------------------------------------------------------------

/// The widest vertical band, in the middle of the text, that no glyph enters on most rows and
/// that has rows beside it on both sides: the gutter of a two-column page.
fn find_gutter(rows: &[Row]) -> Option<(f64, f64)> {
    let n = rows.len();
    if n < 4 {
        return None;
    }
    let ink = |r: &Row| r.glyphs.iter().filter(|g| !g.space).map(|g| (g.x0, g.ink1)).collect::<Vec<_>>();
    let left = rows.iter().flat_map(&ink).map(|s| s.0).fold(f64::INFINITY, f64::min);
    let right = rows.iter().flat_map(&ink).map(|s| s.1).fold(f64::NEG_INFINITY, f64::max);
    let width = right - left;
    if !(50.0..=20_000.0).contains(&width) {
        return None;
    }
    let mut sizes: Vec<f64> = rows.iter().map(|r| r.size).collect();
    let min_gap = median(&mut sizes).max(6.0);
    // How many rows cover each 1-pt bin, counting gaps narrower than a gutter as covered.
    let bins = width.ceil() as usize + 1;
    let mut diff = vec![0i32; bins + 1];
    for row in rows {
        let mut spans = ink(row);
        spans.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut merged: Vec<(f64, f64)> = Vec::new();
        for (a, b) in spans {
            match merged.last_mut() {
                Some(last) if a - last.1 < min_gap => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        for (a, b) in merged {
            let lo = ((a - left).floor().max(0.0) as usize).min(bins);
            let hi = ((b - left).ceil().max(0.0) as usize).min(bins);
            diff[lo] += 1;
            diff[hi] -= 1;
        }
    }
    let mut cover = Vec::with_capacity(bins);
    let mut acc = 0;
    for d in &diff[..bins] {
        acc += d;
        cover.push(acc);
    }
    let limit = (n / 4) as i32;
    let (lo, hi) = ((0.15 * width) as usize, (0.85 * width) as usize);
    let mut best: Option<(usize, usize)> = None;
    let mut start = None;
    for (b, &c) in cover.iter().enumerate().take(hi + 1).skip(lo) {
        let free = c <= limit;
        match (free, start) {
            (true, None) => start = Some(b),
            (false, Some(s)) => {
                if best.is_none_or(|(bs, be)| b - s > be - bs) {
                    best = Some((s, b));
                }
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        if best.is_none_or(|(bs, be)| hi + 1 - s > be - bs) {
            best = Some((s, hi + 1));
        }
    }
    let (s, e) = best?;
    if ((e - s) as f64) < min_gap {
        return None;
    }
    let (g0, g1) = (left + s as f64, left + e as f64);
    // Rows beside the band on each side, and how far down the page they reach.
    let (mut l, mut r, mut beside) = (Vec::new(), Vec::new(), 0);
    for row in rows {
        let spans = ink(row);
        if spans.iter().any(|&(a, b)| a < g1 - 0.5 && b > g0 + 0.5) {
            continue;
        }
        beside += 1;
        if spans.iter().any(|&(a, _)| a < g0) {
            l.push(row.y);
        }
        if spans.iter().any(|&(_, b)| b > g1) {
            r.push(row.y);
        }
    }
    if l.len() < 2 || r.len() < 2 || beside * 2 < n {
        return None;
    }
    // The two sides must stand next to each other, not one above the other.
    let range = |v: &[f64]| {
        (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max))
    };
    let ((la, lb), (ra, rb)) = (range(&l), range(&r));
    let overlap = lb.min(rb) - la.max(ra);
    if overlap < 0.3 * (lb - la).min(rb - ra) {
        return None;
    }
    Some((g0, g1))
}

/// A page's rows as lines in reading order, numbered into blocks from `next_block`.
fn page_lines(page: &Page, rows: &[Row], next_block: &mut usize) -> Vec<Line> {
    // A row may hold the lines of both columns, a little apart; each part keeps its own baseline.
    let line = |glyphs: &[Glyph]| {
        let mut ys: Vec<f64> = glyphs.iter().filter(|g| !g.space).map(|g| g.y).collect();
        let mut sizes: Vec<f64> = glyphs.iter().filter(|g| !g.space).map(|g| g.size).collect();
        if ys.is_empty() {
            return None;
        }
        let (y, size) = (median(&mut ys), median(&mut sizes));
        line_of(page, glyphs).map(|(text, x1, first_word)| Line {
            text,
            x1,
            y,
            size,
            first_word,
            block: 0,
            kind: Kind::Page,
            right: 0.0,
            page: page.number,
        })
    };
    let mut blocks: Vec<(Kind, Vec<Line>)> = Vec::new();
    match find_gutter(rows) {
        None => blocks.push((Kind::Page, rows.iter().filter_map(|r| line(&r.glyphs)).collect())),
        Some((g0, g1)) => {
            let mid = (g0 + g1) / 2.0;
            let (mut left, mut right, mut full) = (Vec::new(), Vec::new(), Vec::new());
            for row in rows {
                // Punctuation hanging a little into the gutter does not make a row full-width.
                let crosses = row.glyphs.iter().any(|g| {
                    let inset = (0.6 * g.size).min((g1 - g0) / 3.0);
                    !g.space && g.x0 < g1 - inset && g.ink1 > g0 + inset
                });
                if crosses {
                    if !left.is_empty() || !right.is_empty() {
                        blocks.push((Kind::Column, std::mem::take(&mut left)));
                        blocks.push((Kind::Column, std::mem::take(&mut right)));
                    }
                    full.extend(line(&row.glyphs));
                    continue;
                }
                if !full.is_empty() {
                    blocks.push((Kind::Full, std::mem::take(&mut full)));
                }
                let (l, r): (Vec<Glyph>, Vec<Glyph>) = row.glyphs.iter().partition(|g| (g.x0 + g.x1) / 2.0 < mid);
                left.extend(line(&l));
                right.extend(line(&r));
            }
            blocks.extend([(Kind::Full, full), (Kind::Column, left), (Kind::Column, right)]);
        }
    }
    // A full-width line is measured against the whole text width, not against its neighbours.
    let page_right = blocks.iter().flat_map(|(_, b)| b).map(|l| l.x1).fold(f64::NEG_INFINITY, f64::max);
    let mut out = Vec::new();
    for (kind, mut block) in blocks.into_iter().filter(|(_, b)| !b.is_empty()) {
        let right = match kind {
            Kind::Full => page_right,
            _ => block.iter().map(|l| l.x1).fold(f64::NEG_INFINITY, f64::max),
        };
        for l in &mut block {
            l.block = *next_block;
            l.kind = kind;
            l.right = right;
        }
        *next_block += 1;
        out.extend(block);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Paragraphs
// ---------------------------------------------------------------------------------------------

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

enum Sep {
    /// A new paragraph.
    Blank,
    /// A line break inside a paragraph.
    Newline,
    Space,
    /// Joined directly (Chinese, or a hyphenated compound).
    Nothing,
    /// "exam-" + "ple": the hyphen goes.
    Dehyphen,
}

fn assemble(lines: &[Line]) -> (String, Vec<(usize, u32)>) {
    let words = WordSets::of(lines);
    let mut text = String::new();
    let mut chars = 0usize;
    let mut pages: Vec<(usize, u32)> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let line_text: String = line.text.nfc().collect();
        if i > 0 {
            match separator(lines, i, &words) {
                Sep::Blank => {
                    text.push_str("\n\n");
                    chars += 2;
                }
                Sep::Newline => {
                    text.push('\n');
                    chars += 1;
                }
                Sep::Space => {
                    text.push(' ');
                    chars += 1;
                }
                Sep::Nothing => {}
                Sep::Dehyphen => {
                    text.pop();
                    chars -= 1;
                }
            }
        }
        if pages.last().is_none_or(|&(_, p)| p != line.page) {
            pages.push((chars, line.page));
        }
        chars += line_text.chars().count();
        text.push_str(&line_text);
    }
    let normalized: String = text.nfc().collect();
    if normalized.chars().count() != chars {
        // Normalizing across a line join composed characters; recount the page starts.
        for (offset, _) in &mut pages {
            *offset = text.chars().take(*offset).nfc().count();
        }
    }
    let text = normalized;
    (text, pages)
}

fn separator(lines: &[Line], i: usize, words: &WordSets) -> Sep {
    let (a, b) = (&lines[i - 1], &lines[i]);
    let size = a.size.max(b.size);
    let resized = (a.size - b.size).abs() > 0.1 * size;
    // Would the next line's first word have fitted at the end of this one? Then the break was
    // meant: the end of a paragraph, a heading, a list item, a centred line.
    let meant = a.right - a.x1 > b.first_word + 0.4 * a.size + 1.0;
    if a.block == b.block {
        let step = b.y - a.y;
        let spacing = line_spacing(lines, i);
        if resized || step > spacing + 0.4 * size {
            return Sep::Blank;
        }
        if meant && !ends_with_hyphen_break(a, b) {
            return Sep::Newline;
        }
    } else if resized || a.kind == Kind::Full || b.kind == Kind::Full || (meant && !ends_with_hyphen_break(a, b)) {
        // A paragraph flows on from one column or page to the next, never into or out of a
        // full-width title; nor does it when its last line ended early.
        return Sep::Blank;
    }
    join(a, b, words)
}

fn ends_with_hyphen_break(a: &Line, b: &Line) -> bool {
    a.text.ends_with('-') && b.text.chars().next().is_some_and(char::is_lowercase)
}

/// The usual baseline step between lines near line `i` of its block: the smallest step among
/// up to four neighbours on either side, or 1.2 × the font size for a block of two lines.
fn line_spacing(lines: &[Line], i: usize) -> f64 {
    let block = lines[i].block;
    let step = |j: usize| -> Option<f64> {
        let (a, b) = (lines.get(j.checked_sub(1)?)?, lines.get(j)?);
        (a.block == block && b.block == block).then_some(b.y - a.y).filter(|&s| s > 0.5 * b.size)
    };
    let near = (i.saturating_sub(4)..=i + 4).filter(|&j| j != i).filter_map(step);
    near.fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.min(s)))).unwrap_or(1.2 * lines[i].size)
}

fn join(a: &Line, b: &Line, words: &WordSets) -> Sep {
    let (Some(last), Some(first)) = (a.text.chars().next_back(), b.text.chars().next()) else {
        return Sep::Space;
    };
    if last == '–' && a.text.chars().rev().nth(1).is_some_and(|c| c.is_ascii_digit()) && first.is_ascii_digit() {
        return Sep::Nothing; // "95–" + "100°C"
    }
    if last == '-' {
        let before = a.text.chars().rev().nth(1);
        if before.is_some_and(char::is_alphabetic) && first.is_lowercase() {
            let head = a.text[..a.text.len() - 1].rsplit(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
            let tail = b.text.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
            return if words.keeps_hyphen(head, tail) { Sep::Nothing } else { Sep::Dehyphen };
        }
        if before.is_some_and(char::is_alphanumeric) {
            return Sep::Nothing; // "Wi-" + "Fi"
        }
    }
    if is_cjk_side(&a.text, true) && is_cjk_side(&b.text, false) {
        return if ends_sentence(&a.text) { Sep::Newline } else { Sep::Nothing };
    }
    if ends_sentence(&a.text) {
        return Sep::Newline;
    }
    Sep::Space
}

/// Words of the document, to tell "non-" + "overlapping" (written "non-overlapping" elsewhere)
/// from "exam-" + "ple".
struct WordSets {
    plain: HashSet<String>,
    hyphenated: HashSet<String>,
}

impl WordSets {
    fn of(lines: &[Line]) -> WordSets {
        let mut plain = HashSet::new();
        let mut hyphenated = HashSet::new();
        for line in lines {
            let tokens: Vec<&str> = line.text.split(|c: char| !(c.is_alphanumeric() || c == '-')).collect();
            // The last token may be a hyphenated line end; it proves nothing.
            for token in tokens.iter().take(tokens.len().saturating_sub(1)) {
                let token = token.trim_matches('-');
                if token.is_empty() {
                    continue;
                }
                if token.contains('-') {
                    hyphenated.insert(token.to_lowercase());
                } else {
                    plain.insert(token.to_lowercase());
                }
            }
        }
        WordSets { plain, hyphenated }
    }

    fn keeps_hyphen(&self, head: &str, tail: &str) -> bool {
        let (head, tail) = (head.to_lowercase(), tail.to_lowercase());
        self.hyphenated.contains(&format!("{head}-{tail}")) && !self.plain.contains(&format!("{head}{tail}"))
    }
}

/// Whether a line's last (or first) character is Chinese, Japanese or Korean text or its
/// punctuation, quotes after or before such a character included.
fn is_cjk_side(text: &str, end: bool) -> bool {
    let quote = |c: char| "“”‘’\"'…—·".contains(c);
    let mut chars: Box<dyn Iterator<Item = char>> =
        if end { Box::new(text.chars().rev()) } else { Box::new(text.chars()) };
    for c in &mut chars {
        if is_cjk(c) {
            return true;
        }
        if !quote(c) {
            return false;
        }
    }
    false
}

/// Ends with sentence-final punctuation of Chinese text (closing quotes and brackets skipped).
fn ends_sentence(text: &str) -> bool {
    let last = text.trim_end_matches(|c: char| "”’」』）)】\"'".contains(c)).chars().next_back();
    last.is_some_and(|c| "。！？!?…".contains(c)) && is_cjk_side(text, true)
}

fn is_closing_cjk_punctuation(c: char) -> bool {
    "、。，．：；！？」』）】〉》〕〗〙〛｝］".contains(c)
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x1100..=0x11FF      // Hangul Jamo
        | 0x2E80..=0x2FDF    // CJK radicals
        | 0x3000..=0x303F    // CJK symbols and punctuation
        | 0x3040..=0x30FF    // Hiragana, Katakana
        | 0x3100..=0x312F    // Bopomofo
        | 0x3130..=0x318F    // Hangul compatibility Jamo
        | 0x31A0..=0x31FF
        | 0x3200..=0x4DBF    // enclosed, compatibility, extension A
        | 0x4E00..=0x9FFF    // CJK unified ideographs
        | 0xA960..=0xA97F
        | 0xAC00..=0xD7AF    // Hangul syllables
        | 0xF900..=0xFAFF    // compatibility ideographs
        | 0xFE30..=0xFE4F    // CJK compatibility forms
        | 0xFF00..=0xFF60    // full-width forms
        | 0xFFE0..=0xFFE6
        | 0x20000..=0x3FFFF) // extensions B and later
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A committed test document (generated by `scripts/make-test-documents`).
    fn doc(name: &str) -> Vec<u8> {
        let path = format!("{}/../../testdata/documents/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}; run scripts/make-test-documents"))
    }

    fn extract(name: &str) -> Extracted {
        extract_pdf(&doc(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn pos(text: &str, needle: &str) -> usize {
        text.find(needle).unwrap_or_else(|| panic!("{needle:?} not found in:\n{text}"))
    }

    /// The text at a character offset.
    fn at(text: &str, offset: usize) -> String {
        text.chars().skip(offset).take(40).collect()
    }

    // Paragraphs as written in scripts/make-test-documents.
    const LEFT_P1: &str = "Most complaints about a slow wireless network turn out to be complaints about placement. A \
        router that sits on the floor behind a television, inside a metal cabinet or next to a microwave oven loses a \
        considerable part of its signal before the signal ever reaches the living room.";
    const ACROSS_COLUMNS: &str = "If the wired result is also disappointing, the bottleneck is upstream: the modem, \
        the provider or the contracted bandwidth, and no amount of antenna adjustment will compensate for it.";
    const RIGHT_P1: &str = "Finally, remember that signal strength indicators are approximations.";
    const ZH_P1: &str = "路由器的摆放位置往往比任何高级设置都重要。把路由器放在房屋中央、离地一米以上、远离微波炉和厚重承重墙的开阔位置，\
        通常就能明显改善信号覆盖。调整位置后，请等待两分钟，再用同一台设备在相同的位置重新测速，这样前后结果才有可比性。";
    const ZH_P6: &str = "最便宜的排障工具是一份记录。把无线网络名称、信道规划、每个子节点的位置以及最近一次固件更新的日期写在同一页纸上，\
        等到网络出问题的时候，这页纸能省下好几个小时，尤其是在当初安装网络的人已经无法解释其设置思路的时候。";

    #[test]
    fn two_columns_are_read_left_then_right_after_the_title() {
        let x = extract("two-column.pdf");
        let t = &x.text;
        // The full-width title and subtitle come first, each its own paragraph.
        assert!(t.starts_with("Nimbus AX3000 Field Notes\n\nPlacement, interference and recovery — 摆放、干扰与恢复\n\n1 Placement\n\n"), "{t}");
        // Page 1: the whole left column (section 1, the start of section 2) before the right one.
        let left = pos(t, LEFT_P1);
        let left_bottom = pos(t, "A wired measurement separates the wireless problem");
        let right_top = pos(t, "the contracted bandwidth, and no amount of antenna adjustment");
        let right = pos(t, RIGHT_P1);
        assert!(left < left_bottom && left_bottom < right_top && right_top < right, "{t}");
        // A paragraph that runs from the foot of the left column to the head of the right one
        // is one paragraph again.
        pos(t, ACROSS_COLUMNS);
        // Sections in order across the pages.
        let sections: Vec<usize> = (1..=9).map(|n| pos(t, &format!("\n\n{n} "))).collect();
        assert!(sections.windows(2).all(|w| w[0] < w[1]), "{sections:?}");
        // Paragraphs are separated by a blank line, lines inside them are not.
        assert!(t.contains("in the same places.\n\n路由器的摆放位置"), "{t}");
        assert!(!t.contains("wire-\nless") && !t.contains("wireless\nnetwork"), "{t}");
    }

    #[test]
    fn single_column_pages_are_unaffected() {
        let x = extract("manual.pdf");
        let d = load(&doc("manual.pdf")).unwrap();
        for &n in d.get_pages().keys() {
            let page = collect_page(&d, n).unwrap();
            assert_eq!(find_gutter(&rows_of(&page)), None, "page {n} of the manual has no columns");
        }
        pos(
            &x.text,
            "Black tea is fully oxidised. Keemun, Lapsang souchong and Dianhong are brewed at 90 to 95 degrees, three \
             to five grams for 150 millilitres in a gaiwan, ten to twenty seconds per infusion, four to six infusions. A \
             large pot needs two to three minutes and should be emptied completely.",
        );
        // Chapters and sections in document order.
        let a = pos(&x.text, "1.1 水温与投茶量");
        let b = pos(&x.text, "1.2 玻璃杯泡法");
        let c = pos(&x.text, "2.1 盖碗泡法");
        let d = pos(&x.text, "3.2 存放 Storage");
        assert!(a < b && b < c && c < d);
    }

    #[test]
    fn running_headers_footers_and_page_numbers_are_dropped() {
        let two = extract("two-column.pdf").text;
        assert!(!two.contains("Draft for the support team"), "running header kept:\n{two}");
        assert!(!two.contains("Page 1") && !two.contains("of 3"), "page footer kept:\n{two}");
        let manual = extract("manual.pdf").text;
        assert!(!manual.contains("茶艺手册 · Tea Brewing Manual"), "running header kept:\n{manual}");
        assert!(!manual.contains('页'), "page footer kept:\n{manual}");
        // The title on page 1 is not a header: it does not repeat.
        assert!(manual.starts_with("茶艺手册 Tea Brewing Manual\n\n第一章"), "{manual}");
    }

    #[test]
    fn hyphenated_line_ends_are_joined() {
        let t = extract("two-column.pdf").text;
        // pdftotext shows these split at line ends ("trou-", "consider-", "televi-", "cabi-", ...).
        for word in
            ["troubleshoot", "considerable", "television", "cabinet", "approximations", "separate", "unobstructed"]
        {
            assert!(t.contains(word), "{word} not joined:\n{t}");
        }
        // A real hyphen stays: the document writes "known-good" and "non-overlapping" elsewhere too.
        assert!(t.contains("known-good cable") && t.contains("non-overlapping channels"), "{t}");
        assert!(t.contains("twelve-volt adapter"), "{t}");
        // No hyphen left at a line end before a lowercase letter.
        let chars: Vec<char> = t.chars().collect();
        assert!(!chars.windows(3).any(|w| w[0] == '-' && w[1] == '\n' && w[2].is_lowercase()), "{t}");
    }

    #[test]
    fn broken_chinese_lines_are_joined() {
        let x = extract("two-column.pdf");
        // Each Chinese paragraph wraps over four to six lines in its column.
        pos(&x.text, ZH_P1);
        pos(&x.text.replace("。\n", "。"), ZH_P6);
        let manual = extract("manual.pdf").text;
        pos(
            &manual,
            "普洱茶以云南大叶种晒青毛茶为原料，分为生茶和熟茶。生茶未经渥堆，新茶滋味浓烈、略带苦涩，存放多年后逐渐转为醇和；",
        );
        // Mixed lines: Chinese followed by English on the same line, English wrapped.
        pos(&manual, "常见的西湖龙井、碧螺春、黄山毛峰、信阳毛尖都属于绿茶。Green tea is not oxidised; its young leaves scald easily");
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
    fn identity_h_cid_fonts_give_the_same_text() {
        // The manual again, its Chinese in a CID TrueType font with Identity-H encoding (cairo).
        let cid = extract("manual-cid.pdf");
        let simple = extract("manual.pdf");
        let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        assert_eq!(squash(&cid.text), squash(&simple.text));
        assert_eq!(cid.pages.len(), 3);
    }

    #[test]
    fn errors() {
        assert_eq!(extract_pdf(&doc("encrypted.pdf")), Err(ExtractError::Encrypted));
        // Encrypted with an empty user password (an owner password only restricts copying):
        // opens like any viewer opens it.
        assert_eq!(extract_pdf(&doc("owner-password.pdf")), Ok(extract("two-column.pdf")));
        assert_eq!(extract_pdf(&doc("scanned.pdf")), Err(ExtractError::NoTextLayer { pages: 2 }));
        for bytes in [doc("truncated.pdf"), b"not a pdf at all".to_vec(), Vec::new(), b"%PDF-1.7\n%garbage".to_vec()] {
            match extract_pdf(&bytes) {
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
            let _ = extract_pdf(&bytes);
        }
    }

    fn line(text: &str, x1: f64, first_word: f64) -> Line {
        Line {
            text: text.into(),
            x1,
            y: 0.0,
            size: 10.0,
            first_word,
            block: 0,
            kind: Kind::Page,
            right: 100.0,
            page: 1,
        }
    }

    #[test]
    fn line_joins() {
        let words = WordSets::of(&[line("a well-known fact and", 100.0, 5.0)]);
        let sep = |a: &str, b: &str| join(&line(a, 100.0, 5.0), &line(b, 100.0, 5.0), &words);
        assert!(matches!(sep("for exam-", "ple, this"), Sep::Dehyphen));
        assert!(matches!(sep("a well-", "known fact"), Sep::Nothing), "written with a hyphen elsewhere");
        assert!(matches!(sep("the Wi-", "Fi name"), Sep::Nothing));
        assert!(matches!(sep("ends -", "no word"), Sep::Space));
        assert!(matches!(sep("路由器的摆放位置往往比任", "何高级设置都重要"), Sep::Nothing));
        assert!(matches!(sep("设置都重要，", "“醒茶”"), Sep::Nothing));
        assert!(matches!(sep("设置都重要。", "把路由器"), Sep::Newline));
        assert!(matches!(sep("约", "75 度"), Sep::Space));
        assert!(matches!(sep("at about 85 to", "90 degrees"), Sep::Space));
        assert!(matches!(sep("95–", "100°C"), Sep::Nothing));
    }

    #[test]
    fn page_number_lines() {
        for s in ["3", "- 3 -", "— 12 —", "Page 3", "page 3 of 10", "3 / 10", "第 3 页", "第3页 共10页", "iv", "p. 7"]
        {
            assert!(is_page_number(s), "{s}");
        }
        for s in ["3 Firmware", "Chapter 3", "2024 年报", "Nimbus AX3000", "", "第三章"] {
            assert!(!is_page_number(s), "{s}");
        }
        assert_eq!(furniture_key("Page 3 of 10"), furniture_key("Page 4 of 10"));
        assert_eq!(furniture_key("第 3 页"), furniture_key("第 12 页"));
        assert_ne!(furniture_key("第 3 页"), furniture_key("Page 3"));
    }
}
