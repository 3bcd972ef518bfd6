//! Rows and lines: a page's glyphs grouped into rows by baseline (duplicates drawn for fake bold
//! counted once), and glyphs joined into words by the gaps between them.

use super::glyphs::{Glyph, Page};
use skillrag_core::is_han_kana_hangul_or_fullwidth;

/// Glyphs sharing a baseline, left to right.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub(super) glyphs: Vec<Glyph>,
    pub(super) y: f64,
    pub(super) size: f64,
}

/// What a block of lines is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// The text of a page without columns.
    Page,
    /// A column of a two-column page.
    Column,
    /// Rows across the gutter of a two-column page (a title above the columns).
    Full,
}

/// A row, or the part of a row inside one column, as text.
#[derive(Debug, Clone)]
pub(super) struct Line {
    pub(super) text: String,
    pub(super) x1: f64,
    pub(super) y: f64,
    pub(super) size: f64,
    /// Width of the first word (the first character for Chinese): what would have fitted at the
    /// end of the previous line had the break not been intended.
    pub(super) first_word: f64,
    /// Which block (a column, or a run of full-width rows) of which page the line is in.
    pub(super) block: usize,
    pub(super) kind: Kind,
    /// Right edge of the line's block.
    pub(super) right: f64,
    pub(super) page: u32,
}

pub(super) fn rows_of(page: &Page) -> Vec<Row> {
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

pub(super) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Joins glyphs (left to right) into text; returns the text, where its ink ends and the first
/// word's width.
pub(super) fn line_of(page: &Page, glyphs: &[Glyph]) -> Option<(String, f64, f64)> {
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
            let cjk = s.chars().next().is_some_and(is_han_kana_hangul_or_fullwidth)
                && text.chars().next_back().is_some_and(is_han_kana_hangul_or_fullwidth);
            // Justified Chinese spreads characters apart; only a wide gap is a space there.
            let threshold = if cjk { 0.5 } else { 0.18 } * g.size.max(p.size);
            if pending_space || gap > threshold {
                text.push(' ');
                first_word_end.get_or_insert(p.x1);
            }
        }
        if prev.is_none() && s.chars().next().is_some_and(is_han_kana_hangul_or_fullwidth) {
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

pub(super) fn row_text(page: &Page, row: &Row) -> String {
    line_of(page, &row.glyphs).map(|l| l.0).unwrap_or_default()
}
