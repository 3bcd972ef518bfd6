//! Columns: the gutter of a two-column page found from where glyphs are not, and a page's rows
//! cut into lines in reading order — left column, then right, full-width rows in their place.

use super::glyphs::{Glyph, Page};
use super::rows::{line_of, median, Kind, Line, Row};

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
pub(super) fn page_lines(page: &Page, rows: &[Row], next_block: &mut usize) -> Vec<Line> {
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

#[cfg(test)]
mod tests {
    use super::super::fixtures::*;
    use super::super::{collect_page, load, rows_of};
    use super::*;

    // Paragraphs as written in scripts/make-test-documents.
    const LEFT_P1: &str = "Most complaints about a slow wireless network turn out to be complaints about placement. A \
        router that sits on the floor behind a television, inside a metal cabinet or next to a microwave oven loses a \
        considerable part of its signal before the signal ever reaches the living room.";
    const ACROSS_COLUMNS: &str = "If the wired result is also disappointing, the bottleneck is upstream: the modem, \
        the provider or the contracted bandwidth, and no amount of antenna adjustment will compensate for it.";
    const RIGHT_P1: &str = "Finally, remember that signal strength indicators are approximations.";

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
}
