//! Recursive splitting into units, and packing units into overlapping chunks.

use crate::ChunkConfig;
use skillrag_core::is_han_ideograph_or_ideographic_plane;
use std::ops::Range;
use unicode_segmentation::UnicodeSegmentation;

/// How strong the boundary at the end of a unit is; lower is stronger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Break {
    Paragraph,
    Line,
    Sentence,
    Word,
    Grapheme,
}

#[derive(Debug, Clone)]
struct Unit {
    range: Range<usize>,
    chars: usize,
    end: Break,
}

/// A code block with its explanation may grow to this many chunk sizes before it is cut.
const MAX_PROTECTED_SIZES: usize = 3;

/// Chunks one section body; returns trimmed, non-empty byte ranges. Stops after `limit + 1`
/// chunks: the caller refuses a document over its limit, and finishing it would be wasted work.
pub fn chunk_section(
    text: &str,
    body: Range<usize>,
    code: &[Range<usize>],
    config: &ChunkConfig,
    limit: usize,
) -> Vec<Range<usize>> {
    // Units are at most `size - overlap` characters so that an overlap prefix plus one unit
    // always fits in a chunk.
    let max_unit = config.size - config.overlap;
    let mut units = Vec::new();
    for block in blocks(text, body, code) {
        let chars = text[block.range.clone()].chars().count();
        if block.protected && chars <= config.size * MAX_PROTECTED_SIZES {
            units.push(Unit { range: block.range, chars, end: Break::Paragraph });
        } else {
            split_into(text, block.range, Break::Paragraph, max_unit, &mut units);
        }
    }
    pack(text, &units, config, limit)
}

struct Block {
    range: Range<usize>,
    /// A code block glued to the paragraph before it: kept whole when possible.
    protected: bool,
}

/// Paragraphs of the body; each code block is glued to the paragraph that precedes it
/// (or follows it, when the code comes first).
fn blocks(text: &str, body: Range<usize>, code: &[Range<usize>]) -> Vec<Block> {
    let mut raw: Vec<(Range<usize>, bool)> = Vec::new(); // (range, is_code)
    let mut pos = body.start;
    let mut code: Vec<Range<usize>> =
        code.iter().filter(|c| c.start >= body.start && c.end <= body.end).cloned().collect();
    code.sort_by_key(|c| c.start);
    for c in code {
        if c.start < pos {
            continue;
        }
        raw.extend(paragraphs(text, pos..c.start).into_iter().map(|r| (r, false)));
        raw.push((c.clone(), true));
        pos = c.end;
    }
    raw.extend(paragraphs(text, pos..body.end).into_iter().map(|r| (r, false)));

    let mut out: Vec<Block> = Vec::new();
    let mut pending_code: Option<Range<usize>> = None;
    for (range, is_code) in raw {
        if is_code {
            if let Some(prev) = out.last_mut() {
                prev.range.end = range.end;
                prev.protected = true;
            } else {
                match pending_code.as_mut() {
                    Some(p) => p.end = range.end,
                    None => pending_code = Some(range),
                }
            }
        } else if let Some(c) = pending_code.take() {
            out.push(Block { range: c.start..range.end, protected: true });
        } else {
            out.push(Block { range, protected: false });
        }
    }
    if let Some(c) = pending_code {
        out.push(Block { range: c, protected: true });
    }
    out
}

/// Splits `range` at blank lines; the separators stay attached to the preceding paragraph.
fn paragraphs(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = range.start;
    let mut pos = range.start;
    let mut saw_text = false;
    for line in text[range.clone()].split_inclusive('\n') {
        let blank = line.trim().is_empty();
        if !blank && saw_text && pos > start && text[start..pos].ends_with_blank_line() {
            out.push(start..pos);
            start = pos;
        }
        saw_text |= !blank;
        pos += line.len();
    }
    if start < range.end && !text[start..range.end].trim().is_empty() {
        out.push(start..range.end);
    } else if let Some(last) = out.last_mut() {
        last.end = range.end;
    }
    out
}

trait BlankLine {
    fn ends_with_blank_line(&self) -> bool;
}

impl BlankLine for str {
    /// True when the text ends with a line that holds only whitespace (after at least one line).
    fn ends_with_blank_line(&self) -> bool {
        let mut lines = self.split_inclusive('\n').rev();
        matches!((lines.next(), lines.next()), (Some(last), Some(_)) if last.trim().is_empty())
    }
}

/// Recursively splits `range` into units of at most `max` characters, trying each boundary
/// kind from `level` down.
fn split_into(text: &str, range: Range<usize>, level: Break, max: usize, out: &mut Vec<Unit>) {
    let chars = text[range.clone()].chars().count();
    if chars <= max {
        if chars > 0 {
            out.push(Unit { range, chars, end: level });
        }
        return;
    }
    let (cuts, next) = match level {
        Break::Paragraph => (cut_after(text, &range, |s, i| s[i..].starts_with('\n')), Break::Line),
        Break::Line => (sentence_cuts(text, &range), Break::Sentence),
        Break::Sentence => (cut_after(text, &range, |s, i| s[i..].starts_with(char::is_whitespace)), Break::Word),
        Break::Word | Break::Grapheme => {
            grapheme_windows(text, range, max, out);
            return;
        }
    };
    if cuts.len() <= 1 {
        split_into(text, range, next, max, out);
        return;
    }
    for piece in cuts {
        let len = out.len();
        split_into(text, piece, next, max, out);
        // The last unit of a piece ends at this level's boundary, not at a weaker one.
        if out.len() > len {
            if let Some(u) = out.last_mut() {
                u.end = u.end.min(level_of_cut(level));
            }
        }
    }
}

/// The boundary kind at the end of a piece cut at `level`.
fn level_of_cut(level: Break) -> Break {
    match level {
        Break::Paragraph => Break::Line,
        Break::Line => Break::Sentence,
        Break::Sentence => Break::Word,
        other => other,
    }
}

/// Cuts after every position where `is_sep` holds, keeping runs of separators together.
fn cut_after(text: &str, range: &Range<usize>, is_sep: impl Fn(&str, usize) -> bool) -> Vec<Range<usize>> {
    let slice = &text[range.clone()];
    let mut cuts = Vec::new();
    let mut start = 0;
    let mut in_sep = false;
    for (i, _) in slice.char_indices() {
        let sep = is_sep(slice, i);
        if in_sep && !sep {
            cuts.push(range.start + start..range.start + i);
            start = i;
        }
        in_sep = sep;
    }
    cuts.push(range.start + start..range.end);
    cuts
}

/// Sentence terminators that end a sentence wherever they appear (CJK punctuation).
const CJK_TERMINATORS: &[char] = &['。', '！', '？', '；', '…', '!', '?'];
/// Terminators that end a sentence only before whitespace (so `3.14` and `e.g.x` stay whole).
const ASCII_TERMINATORS: &[char] = &['.', '!', '?', ';'];
/// Closing marks that belong to the sentence before them.
const CLOSERS: &[char] = &['"', '\'', '”', '’', '」', '』', '）', ')', '】', '》', ']'];

fn sentence_cuts(text: &str, range: &Range<usize>) -> Vec<Range<usize>> {
    let slice = &text[range.clone()];
    let ends = sentence_ends(slice);
    let mut cuts = Vec::new();
    let mut start = 0;
    for end in ends {
        if end > start && end < slice.len() {
            cuts.push(range.start + start..range.start + end);
            start = end;
        }
    }
    cuts.push(range.start + start..range.end);
    cuts
}

/// Byte offsets (in `s`) where a new sentence starts: after a terminator, its closing marks
/// and the whitespace that follows.
fn sentence_ends(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let mut chars = s.char_indices().peekable();
    // Where the current line starts, kept as we go: looking it up backwards from each
    // terminator made one long line of short sentences quadratic.
    let mut line_start = 0;
    while let Some((i, c)) = chars.next() {
        if c == '\n' {
            line_start = i + 1;
        }
        let is_cjk_end = CJK_TERMINATORS.contains(&c) && !c.is_ascii();
        let is_ascii_end = ASCII_TERMINATORS.contains(&c);
        if !(is_cjk_end || is_ascii_end) {
            continue;
        }
        if inside_parentheses(s, i) {
            continue;
        }
        // "1. " at the start of a line numbers a list item; it ends nothing.
        let before = s[line_start..i].trim_start();
        if c == '.' && !before.is_empty() && before.chars().all(|d| d.is_ascii_digit()) {
            continue;
        }
        // Swallow repeated terminators and closing marks: `！？」`, `..."`.
        while let Some(&(_, next)) = chars.peek() {
            if CJK_TERMINATORS.contains(&next) || ASCII_TERMINATORS.contains(&next) || CLOSERS.contains(&next) {
                chars.next();
            } else {
                break;
            }
        }
        let at_space = chars.peek().is_none_or(|&(_, n)| n.is_whitespace());
        if is_ascii_end && !at_space {
            // `3.14`, `a.b` – not a sentence end; unless CJK follows directly (`.` then `中`).
            if chars.peek().is_none_or(|&(_, n)| !is_han_ideograph_or_ideographic_plane(n)) {
                continue;
            }
        }
        while let Some(&(j, n)) = chars.peek() {
            if n.is_whitespace() {
                if n == '\n' {
                    line_start = j + 1;
                }
                chars.next();
            } else {
                break;
            }
        }
        out.push(chars.peek().map_or(s.len(), |&(i, _)| i));
    }
    out
}

/// At most this many characters between a terminator and the brackets around it.
const BRACKET_REACH: usize = 20;

/// A terminator inside short parentheses (`毕升（？-约1051）`, `(see p. 3)`) ends nothing: an
/// opening bracket not closed yet within the reach before it, and the closing one within the
/// reach after it. An unclosed bracket farther away does not stop the sentences that follow.
fn inside_parentheses(s: &str, at: usize) -> bool {
    let before: Vec<char> = s[..at].chars().rev().take(BRACKET_REACH).collect();
    let opened = before.iter().position(|c| matches!(c, '（' | '('));
    let closed = before.iter().position(|c| matches!(c, '）' | ')'));
    let open = match (opened, closed) {
        (Some(o), Some(c)) => o < c,
        (Some(_), None) => true,
        _ => false,
    };
    open && s[at..].chars().skip(1).take(BRACKET_REACH).any(|c| matches!(c, '）' | ')'))
}

/// Sentences of `text` with their byte offsets, cut after sentence ends and at line breaks that
/// start a new block (blank line, list item, heading, table row, quote) — a hard-wrapped line of
/// prose continues its sentence. Surrounding whitespace trimmed, empty pieces dropped.
pub fn sentences(text: &str) -> Vec<(usize, &str)> {
    let mut cuts: Vec<usize> = sentence_ends(text);
    cuts.extend(
        text.match_indices('\n')
            .map(|(i, _)| i + 1)
            .filter(|&i| starts_block(&text[i..]) || ends_line_block(&text[..i])),
    );
    cuts.push(text.len());
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = Vec::new();
    let mut start = 0;
    for end in cuts {
        if end <= start {
            continue;
        }
        let piece = &text[start..end];
        let lead = piece.len() - piece.trim_start().len();
        let trimmed = piece.trim();
        if !trimmed.is_empty() {
            out.push((start + lead, trimmed));
        }
        start = end;
    }
    out
}

/// A line that begins a new block rather than continuing the previous line.
fn starts_block(line: &str) -> bool {
    let t = line.trim_start_matches([' ', '\t']);
    if t.is_empty() || t.starts_with('\n') {
        return true;
    }
    if t.starts_with(['-', '*', '+', '#', '|', '>', '•']) {
        return true;
    }
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && t[digits..].starts_with(['.', '、', ')', '）'])
}

/// The line before ends a block of its own (a label such as "步骤：" or a table row).
fn ends_line_block(before: &str) -> bool {
    let last = before.trim_end_matches('\n').trim_end();
    last.ends_with(['：', ':', '|'])
}

/// Windows of at most `max` characters, cut between grapheme clusters (never inside an emoji).
fn grapheme_windows(text: &str, range: Range<usize>, max: usize, out: &mut Vec<Unit>) {
    let slice = &text[range.clone()];
    let mut start = 0;
    let mut chars = 0;
    for (i, g) in slice.grapheme_indices(true) {
        let n = g.chars().count();
        if chars + n > max && chars > 0 {
            out.push(Unit { range: range.start + start..range.start + i, chars, end: Break::Grapheme });
            start = i;
            chars = 0;
        }
        chars += n;
    }
    if chars > 0 {
        out.push(Unit { range: range.start + start..range.end, chars, end: Break::Grapheme });
    }
}

/// Packs units greedily into chunks of at most `size` characters; each chunk after the
/// first starts with up to `overlap` characters of the previous one, from a sentence start.
/// Stops once it has more than `limit` chunks.
fn pack(text: &str, units: &[Unit], config: &ChunkConfig, limit: usize) -> Vec<Range<usize>> {
    let mut chunks = Vec::new();
    let mut i = 0;
    let mut prefix: Option<(usize, usize)> = None; // (byte start, chars)
    while i < units.len() && chunks.len() <= limit {
        let (start, mut len) = prefix.take().unwrap_or((units[i].range.start, 0));
        let mut j = i;
        len += units[j].chars;
        j += 1;
        while j < units.len() && len + units[j].chars <= config.size {
            len += units[j].chars;
            j += 1;
        }
        let end = units[j - 1].range.end;
        if let Some(r) = trimmed(text, start..end) {
            chunks.push(r);
        }
        if j < units.len() && config.overlap > 0 {
            prefix = overlap_start(text, start, end, config.overlap, units[j - 1].end)
                .map(|p| (p, text[p..end].chars().count()))
                .filter(|&(_, n)| n + units[j].chars <= config.size);
        }
        i = j;
    }
    chunks
}

/// Where the next chunk starts inside the tail `[end - overlap, end)` of the previous one:
/// the first sentence start there; a word or grapheme position only when the text around has
/// no sentence boundaries (the previous chunk itself ended mid-sentence).
fn overlap_start(text: &str, start: usize, end: usize, overlap: usize, end_break: Break) -> Option<usize> {
    let chunk = &text[start..end];
    let total = chunk.chars().count();
    if total <= overlap {
        return None;
    }
    let window_start = start + chunk.char_indices().nth(total - overlap).map_or(0, |(i, _)| i);
    let window = &text[window_start..end];
    // A sentence start inside the window (or exactly at its start).
    let preceding = text[..window_start].chars().next_back();
    if preceding.is_some_and(|c| c == '\n' || ends_sentence(c)) && !window.starts_with(char::is_whitespace) {
        return Some(window_start);
    }
    if let Some(offset) = sentence_ends(window).into_iter().find(|&o| o < window.len()) {
        return Some(window_start + offset);
    }
    if let Some(offset) = window.find('\n').map(|o| o + 1).filter(|&o| o < window.len()) {
        return Some(window_start + offset);
    }
    match end_break {
        Break::Word => window.find(char::is_whitespace).map(|o| {
            let rest = &window[o..];
            window_start + o + (rest.len() - rest.trim_start().len())
        }),
        Break::Grapheme => {
            chunk.grapheme_indices(true).map(|(i, _)| start + i).find(|&b| b >= window_start).filter(|&b| b < end)
        }
        _ => None,
    }
}

fn ends_sentence(c: char) -> bool {
    CJK_TERMINATORS.contains(&c) && !c.is_ascii()
}

fn trimmed(text: &str, range: Range<usize>) -> Option<Range<usize>> {
    let s = &text[range.clone()];
    let lead = s.len() - s.trim_start().len();
    let trail = s.len() - s.trim_end().len();
    (lead + trail < s.len()).then(|| range.start + lead..range.end - trail)
}
