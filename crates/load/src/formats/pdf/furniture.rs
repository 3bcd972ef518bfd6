//! Page furniture: running headers and footers (rows at the top or bottom of a page whose text,
//! page numbers masked, repeats on at least half of the pages) and lone page numbers, which would
//! otherwise cut paragraphs that run from one page to the next.

use std::collections::{HashMap, HashSet};

use super::glyphs::Page;
use super::rows::{row_text, Row};
use skillrag_core::is_han_kana_hangul_or_fullwidth;

/// Rows of each page that are running headers, footers or page numbers.
pub(super) fn furniture(pages: &[Page], rows: &[Vec<Row>]) -> Vec<HashSet<usize>> {
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
        if c.is_alphabetic() && !is_han_kana_hangul_or_fullwidth(c) {
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

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::*;

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
