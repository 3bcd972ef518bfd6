//! The readable-answer check (issue 18): an extractive answer hands over whole passages of the
//! knowledge — never a question, a heading alone, a table header without a row, or a fragment
//! that starts or ends mid-sentence.
//!
//! The answer is cut into *segments* at its citation markers (`[n]`) and at blank lines; each
//! segment is quoted from the documents its markers (the ones that end it, else the next ones)
//! cite. A related-provisions line (`相关条文：第二十条[2]`, `See also: …`) names other articles; it
//! is a pointer, not a quote, and is not checked.

use skillrag_ask::{marker_len, Answer};
use skillrag_core::is_bmp_east_asian_or_fullwidth_form;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// Lines that name other provisions after a statute answer.
const RELATED_PREFIXES: [&str; 2] = ["相关条文：", "See also:"];
/// Characters that end a sentence (`.` and `:` only before whitespace or the end, see
/// [`sentences`]).
const SENTENCE_ENDS: [char; 12] = ['。', '.', '！', '!', '？', '?', '；', ';', '：', ':', '…', '\u{FF0E}'];
/// Closing quotes and brackets that belong to the sentence they follow (`……不行。”`).
const CLOSERS: [char; 10] = ['”', '’', '」', '』', '）', ')', '"', '\'', '》', '】'];
/// Markdown emphasis around text, ignored at sentence boundaries.
const EMPHASIS: [char; 3] = ['*', '_', '`'];
/// A failing sentence is quoted up to this many characters in the reason.
const QUOTE_CHARS: usize = 80;

/// One stretch of the answer between citation markers or blank lines, with the citation
/// numbers that cite it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Segment<'a> {
    pub text: &'a str,
    pub cites: Vec<usize>,
}

/// What the check found in one answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Readability {
    /// Why the answer is not readable (the first problem found); `None` when it passes.
    pub failure: Option<String>,
    /// Sentences not checked for fragments because their cited document could not be read.
    pub unchecked: usize,
}

/// Cited documents, read once: `<bench>/skills/<skill>/<source>`, normalized.
#[derive(Default)]
pub(crate) struct Documents {
    cache: HashMap<PathBuf, Option<Document>>,
}

impl Documents {
    /// The document `source` of `skill` in the benchmark folder `bench`; `None` when it cannot be
    /// read as text (not `.md`/`.txt`, missing, not UTF-8, or a path that leaves the skill folder).
    fn get(&mut self, bench: &Path, skill: &str, source: &str) -> Option<&Document> {
        let inside = |p: &str| !p.is_empty() && Path::new(p).components().all(|c| matches!(c, Component::Normal(_)));
        if !inside(skill) || !inside(source.trim_start_matches("./")) {
            return None;
        }
        let path = bench.join("skills").join(skill).join(source.trim_start_matches("./"));
        self.cache.entry(path).or_insert_with_key(|path| read_text(path).map(|t| Document::new(&t))).as_ref()
    }
}

/// A text document (`.md`, `.markdown`, `.txt`) as UTF-8, without a byte-order mark.
fn read_text(path: &Path) -> Option<String> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if !matches!(ext.as_deref(), Some("md" | "markdown" | "txt")) {
        return None;
    }
    let text = String::from_utf8(std::fs::read(path).ok()?).ok()?;
    Some(text.trim_start_matches('\u{FEFF}').to_string())
}

/// A document's text normalized like the answer's ([`normalize`]), with where its line breaks were.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Document {
    text: String,
    /// Byte offsets in `text` where a run of whitespace with a line break was collapsed (the
    /// offset of the space it became, or of the next character when it was dropped), ascending.
    breaks: Vec<usize>,
}

impl Document {
    /// The document as an answer quotes it: without its own citation markers, normalized.
    pub fn new(text: &str) -> Document {
        let (text, breaks) = normalize(&strip_markers(text));
        Document { text, breaks }
    }

    /// A line break in `text[from..=to]`.
    fn break_within(&self, from: usize, to: usize) -> bool {
        let i = self.breaks.partition_point(|&b| b < from);
        self.breaks.get(i).is_some_and(|&b| b <= to)
    }

    /// The last line break at or before `at` (0, the document start, when none).
    fn line_start_before(&self, at: usize) -> usize {
        let i = self.breaks.partition_point(|&b| b <= at);
        if i == 0 {
            0
        } else {
            self.breaks[i - 1]
        }
    }
}

/// `text` without citation markers (`[12]`) and the spaces before them, as the extractive answer
/// quotes knowledge text (`ligands [23] .` → `ligands .`).
pub(crate) fn strip_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some((at, len)) = next_marker(rest) {
        out.push_str(rest[..at].trim_end_matches(' '));
        rest = &rest[at + len..];
    }
    out.push_str(rest);
    out
}

/// `text` as the answer shows knowledge text: each run of whitespace becomes one space, except
/// that a line break between two CJK characters is dropped (hard-wrapped lines joined). Also
/// returns where the line breaks were ([`Document::breaks`]).
pub(crate) fn normalize(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut breaks = Vec::new();
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_whitespace() {
            out.push(c);
            continue;
        }
        let mut newline = c == '\n';
        while let Some(&w) = chars.peek().filter(|w| w.is_whitespace()) {
            newline |= w == '\n';
            chars.next();
        }
        if newline {
            breaks.push(out.len());
        }
        let between_cjk = out.chars().last().is_some_and(is_bmp_east_asian_or_fullwidth_form)
            && chars.peek().is_some_and(|&n| is_bmp_east_asian_or_fullwidth_form(n));
        if !(newline && between_cjk) {
            out.push(' ');
        }
    }
    (out, breaks)
}

/// The answer's segments: cut at citation markers and blank lines, related-provisions lines left
/// out, empty ones (markers side by side, the `|` closing a table row after its marker) dropped.
/// A segment is cited by the markers right after it, else by the next ones in the answer.
pub(crate) fn segments(answer: &str) -> Vec<Segment<'_>> {
    let mut out: Vec<Segment> = Vec::new();
    for block in blocks(answer) {
        let mut rest = block;
        while !rest.is_empty() {
            if is_related(rest) {
                // The rest of the line: its markers cite the provisions it names.
                rest = rest.split_once('\n').map_or("", |(_, after)| after);
                continue;
            }
            let (text, after) = match next_marker(rest) {
                Some((at, _)) => (&rest[..at], &rest[at..]),
                None => (rest, ""),
            };
            let mut cites = Vec::new();
            let mut after = after;
            while let Some(len) = marker_len(after.trim_start_matches([' ', '\t'])) {
                let trimmed = after.trim_start_matches([' ', '\t']);
                cites.extend(trimmed[1..len - 1].parse::<usize>().ok());
                after = &trimmed[len..];
            }
            if !text.trim().chars().all(|c| c == '|' || c.is_whitespace()) {
                out.push(Segment { text: text.trim(), cites });
            } else if let Some(last) = out.last_mut().filter(|s| s.cites.is_empty()) {
                last.cites = cites;
            }
            rest = after;
        }
    }
    let mut next: Vec<usize> = Vec::new();
    for s in out.iter_mut().rev() {
        if s.cites.is_empty() {
            s.cites = next.clone();
        } else {
            next = s.cites.clone();
        }
    }
    out
}

/// A related-provisions line (`相关条文：第二十条[2]`): it names other articles, it quotes none.
fn is_related(line: &str) -> bool {
    RELATED_PREFIXES.iter().any(|p| line.trim_start().starts_with(p))
}

/// `text` cut at blank lines, without its related-provisions lines.
fn blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim().is_empty() || is_related(line) {
            if !text[start..offset].trim().is_empty() {
                out.push(&text[start..offset]);
            }
            start = offset + line.len();
        }
        offset += line.len();
    }
    if !text[start..].trim().is_empty() {
        out.push(&text[start..]);
    }
    out
}

/// The byte offset and length of the first citation marker in `s`.
fn next_marker(s: &str) -> Option<(usize, usize)> {
    s.match_indices('[').find_map(|(i, _)| marker_len(&s[i..]).map(|len| (i, len)))
}

/// `text` cut into sentences: after `。！？!?；;：…` (with the closing quotes, brackets and
/// emphasis that follow), and after `.` or `:` when whitespace or the end follows (not in `1.8`
/// or `10:30`).
pub(crate) fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    // Open brackets and quotes: a `？` inside them (毕升（？-约1051）), or a `：` in a title
    // (《地狱之绊：血腥战争》), ends no sentence.
    let mut depth = 0usize;
    while let Some((i, c)) = chars.next() {
        if PAIRS.iter().any(|p| p.0 == c) {
            depth += 1;
        } else if PAIRS.iter().any(|p| p.1 == c) {
            depth = depth.saturating_sub(1);
        }
        if !SENTENCE_ENDS.contains(&c) {
            continue;
        }
        // The closing marks that follow belong to the sentence, and may close what it opened:
        // `“不行。”` ends a sentence, `“……。……”` does not at its first `。`.
        let mut end = i + c.len_utf8();
        while let Some(&(j, n)) = chars.peek() {
            if SENTENCE_ENDS.contains(&n) || CLOSERS.contains(&n) || EMPHASIS.contains(&n) {
                if PAIRS.iter().any(|p| p.1 == n) {
                    depth = depth.saturating_sub(1);
                }
                end = j + n.len_utf8();
                chars.next();
            } else {
                break;
            }
        }
        if depth > 0 {
            continue;
        }
        let ascii = matches!(c, '.' | ':');
        if ascii && !text[end..].chars().next().is_none_or(char::is_whitespace) {
            continue;
        }
        if !text[start..end].trim().is_empty() {
            out.push(text[start..end].trim());
        }
        start = end;
    }
    if !text[start..].trim().is_empty() {
        out.push(text[start..].trim());
    }
    out
}

/// A Markdown table line (`| a | b |`; the closing `|` may be missing where a marker cut it).
fn is_table_line(line: &str) -> bool {
    line.trim_start().starts_with('|')
}

/// A table's separator row: `|---|:--:|`.
fn is_separator(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('|') && t.contains('-') && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// An ATX heading line: one to six `#`, then a space or the end.
fn is_heading(line: &str) -> bool {
    let t = line.trim_start();
    let hashes = t.chars().take_while(|&c| c == '#').count();
    (1..=6).contains(&hashes) && t[hashes..].chars().next().is_none_or(char::is_whitespace)
}

/// The list marker a line starts with (`- `, `* `, `+ `, `1. `, `1) `, `(1)`, `（一）`), if any:
/// the marker's byte length.
fn list_marker(line: &str) -> Option<usize> {
    let t = line.trim_start();
    let lead = line.len() - t.len();
    if t.starts_with(['-', '*', '+']) && t[1..].starts_with(' ') {
        return Some(lead + 2);
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && (t[digits..].starts_with(". ") || t[digits..].starts_with(") ")) {
        return Some(lead + digits + 2);
    }
    for (open, close) in [('（', '）'), ('(', ')')] {
        if let Some(inner) = t.strip_prefix(open) {
            let numeral = inner.chars().take_while(|&c| is_numeral(c)).map(char::len_utf8).sum::<usize>();
            if numeral > 0 && inner[numeral..].starts_with(close) {
                return Some(lead + open.len_utf8() + numeral + close.len_utf8());
            }
        }
    }
    None
}

fn is_numeral(c: char) -> bool {
    c.is_ascii_digit() || "零〇一二三四五六七八九十百千两".contains(c)
}

/// **No question**: the first sentence of the segment (tables aside) that is a question, ending
/// with `?` or `？` before any trailing emphasis and spaces.
pub(crate) fn question(segment: &str) -> Option<&str> {
    segment
        .lines()
        .filter(|l| !is_table_line(l))
        .flat_map(sentences)
        .find(|s| s.trim_end_matches(['*', '_', ' ']).ends_with(['?', '？']))
}

/// **No heading alone**: the first line of the segment that is a heading.
pub(crate) fn heading(segment: &str) -> Option<&str> {
    segment.lines().find(|l| is_heading(l)).map(str::trim)
}

/// **No table header alone**: a segment with table lines has a separator row and a data row
/// after it. Returns the first table line when it does not.
pub(crate) fn headless_table(segment: &str) -> Option<&str> {
    let rows: Vec<&str> = segment.lines().filter(|l| is_table_line(l)).map(str::trim).collect();
    let first = rows.first()?;
    let separator = rows.iter().position(|r| is_separator(r));
    let has_data = separator.is_some_and(|s| {
        rows[s + 1..].iter().any(|r| !is_separator(r) && r.chars().any(|c| c != '|' && !c.is_whitespace()))
    });
    (!has_data).then_some(*first)
}

/// The sentences of the segment's prose: not table rows, list items or headings.
pub(crate) fn prose_sentences(segment: &str) -> Vec<&str> {
    segment
        .lines()
        .filter(|l| !l.trim().is_empty() && !is_table_line(l) && !is_heading(l) && list_marker(l).is_none())
        .map(|l| l.trim_start().trim_start_matches('>').trim_start())
        .flat_map(sentences)
        .collect()
}

/// Where a sentence lies in its document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Place {
    /// Found with sentence boundaries on both sides.
    Whole,
    /// Found, but the text before it does not end a sentence.
    StartsMidSentence,
    /// Found and starts a sentence, but the sentence goes on after it.
    EndsMidSentence,
    /// Not in the document.
    Missing,
}

/// **No fragment**: where `sentence` (normalized) lies in `doc`. It is whole when the document
/// text before it — emphasis, spaces and a line's list or heading marker aside — ends with a
/// sentence end or a line break, or is the document's start; and when the sentence ends with
/// terminal punctuation or is followed by a line break or the document's end.
pub(crate) fn place(sentence: &str, doc: &Document) -> Place {
    let (needle, _) = normalize(sentence);
    if needle.is_empty() {
        return Place::Whole;
    }
    let mut best = Place::Missing;
    for (at, _) in doc.text.match_indices(needle.as_str()) {
        match (starts_sentence(doc, at), ends_sentence(doc, at + needle.len(), &needle)) {
            (true, true) => return Place::Whole,
            (true, false) => best = Place::EndsMidSentence,
            (false, _) if best == Place::Missing => best = Place::StartsMidSentence,
            _ => {}
        }
    }
    best
}

/// The document text before `at` ends a sentence or a line, or is the start.
fn starts_sentence(doc: &Document, at: usize) -> bool {
    let before = doc.text[..at].trim_end_matches(|c: char| c == ' ' || EMPHASIS.contains(&c));
    if before.is_empty() || doc.break_within(before.len(), at) {
        return true;
    }
    if before.trim_end_matches(CLOSERS).ends_with(SENTENCE_ENDS) {
        return true;
    }
    // Only a list or heading marker between the line's start and the sentence.
    let line = doc.line_start_before(before.len());
    doc.text[line..before.len()].split_whitespace().all(is_line_marker)
}

/// A marker that opens a line: `#`…, `>`, `-`, `*`, `+`, `1.`, `1)`, `(1)`, `（一）`, or emphasis.
fn is_line_marker(token: &str) -> bool {
    let t = token.trim_matches(EMPHASIS);
    t.is_empty()
        || t.chars().all(|c| c == '#')
        || matches!(t, ">" | "-" | "+")
        || t.strip_suffix(['.', ')', '、']).is_some_and(|n| !n.is_empty() && n.chars().all(is_numeral))
        || list_marker(&format!("{t} ")).is_some_and(|len| len >= t.len())
}

/// `sentence`, found in the document up to `end`, ends there.
fn ends_sentence(doc: &Document, end: usize, sentence: &str) -> bool {
    let line_end = doc.breaks.get(doc.breaks.partition_point(|&b| b < end)).copied().unwrap_or(doc.text.len());
    if closes_later(sentence, &doc.text[end..line_end.max(end)]) {
        return false;
    }
    let last = sentence.trim_end_matches(|c: char| c == ' ' || EMPHASIS.contains(&c) || CLOSERS.contains(&c));
    if last.ends_with(SENTENCE_ENDS) {
        return true;
    }
    let after = &doc.text[end..];
    let skipped = after.len() - after.trim_start_matches(|c: char| c == ' ' || EMPHASIS.contains(&c)).len();
    skipped == after.len() || doc.break_within(end, end + skipped)
}

/// Brackets and quotation marks that open and close in pairs (ASCII `"` does not say which).
const PAIRS: [(char, char); 7] =
    [('（', '）'), ('(', ')'), ('“', '”'), ('「', '」'), ('『', '』'), ('《', '》'), ('【', '】')];

/// `sentence` leaves a bracket or quotation mark open that `rest` (the rest of its line in the
/// document) closes: the sentence goes on, whatever mark it ends with (`(Smith et al., 2019;`).
/// Kept apart from the extractor's own rule: the check does not trust the code it checks.
fn closes_later(sentence: &str, rest: &str) -> bool {
    let mut depth = 0i32;
    let mut step = |c: char| {
        if PAIRS.iter().any(|p| p.0 == c) {
            depth += 1;
        } else if PAIRS.iter().any(|p| p.1 == c) {
            depth = (depth - 1).max(0);
        }
        depth
    };
    sentence.chars().map(&mut step).last().is_some_and(|d| d > 0) && rest.chars().any(|c| step(c) == 0)
}

/// The readable-answer check of one answer. `bench`: the benchmark folder whose `skills/` hold
/// the cited documents (`None`: fragments are not checked, and count as unchecked).
/// What the answer quotes. A compare answer (its `plan` lists the sides) is a table of our own:
/// its header, separator and each row's first cell (the side) are labels, not quotes; each other
/// cell is a quote, checked as a block of its own.
fn quoted_text(answer: &Answer) -> std::borrow::Cow<'_, str> {
    if answer.plan.is_empty() {
        return std::borrow::Cow::Borrowed(&answer.answer);
    }
    let mut blocks: Vec<String> = Vec::new();
    for line in answer.answer.lines().skip(2) {
        let line = line.trim();
        match line.strip_prefix('|').and_then(|l| l.strip_suffix('|')) {
            Some(row) => blocks.extend(row.split(" | ").skip(1).map(|cell| cell.trim().replace("\\|", "|"))),
            None => blocks.push(line.to_string()),
        }
    }
    std::borrow::Cow::Owned(blocks.join("\n\n"))
}

pub(crate) fn check(answer: &Answer, bench: Option<&Path>, docs: &mut Documents) -> Readability {
    let mut unchecked = 0;
    let fail = |reason: String, unchecked| Readability { failure: Some(reason), unchecked };
    let quoted = quoted_text(answer);
    for segment in segments(&quoted) {
        if let Some(q) = question(segment.text) {
            return fail(format!("question: «{}»", quote(q)), unchecked);
        }
        if let Some(h) = heading(segment.text) {
            return fail(format!("heading: «{}»", quote(h)), unchecked);
        }
        if let Some(t) = headless_table(segment.text) {
            return fail(format!("table header without a data row: «{}»", quote(t)), unchecked);
        }
        for sentence in prose_sentences(segment.text) {
            let cited: Vec<_> =
                segment.cites.iter().filter_map(|&n| answer.citations.iter().find(|c| c.n == n)).collect();
            if cited.is_empty() {
                return fail(format!("cites no source: «{}»", quote(sentence)), unchecked);
            }
            let Some(bench) = bench else {
                unchecked += 1;
                continue;
            };
            let mut places = Vec::new();
            for c in &cited {
                places.push((c.source.as_str(), docs.get(bench, &c.skill, &c.source).map(|d| place(sentence, d))));
            }
            if places.iter().any(|(_, p)| *p == Some(Place::Whole)) {
                continue;
            }
            if places.iter().any(|(_, p)| p.is_none()) {
                unchecked += 1;
                continue;
            }
            let (source, p) = places[0];
            let what = match p {
                Some(Place::StartsMidSentence) => "starts mid-sentence in",
                Some(Place::EndsMidSentence) => "ends mid-sentence in",
                _ => "not found in",
            };
            return fail(format!("fragment: «{}» {what} {source}", quote(sentence)), unchecked);
        }
    }
    Readability { failure: None, unchecked }
}

/// `text` on one line, cut to [`QUOTE_CHARS`] characters.
fn quote(text: &str) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match one_line.char_indices().nth(QUOTE_CHARS) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillrag_ask::Citation;

    #[test]
    fn segments_are_cut_at_markers_and_blank_lines_and_cited_by_the_next_marker() {
        let text = "第十九条 试用期不得超过六个月。\n\n同一用人单位只能约定一次试用期。[1]Second.[2][3]\n\n相关条文：第二十条[2]；第二十一条[3]";
        let s = segments(text);
        assert_eq!(
            s,
            vec![
                Segment { text: "第十九条 试用期不得超过六个月。", cites: vec![1] },
                Segment { text: "同一用人单位只能约定一次试用期。", cites: vec![1] },
                Segment { text: "Second.", cites: vec![2, 3] },
            ]
        );
        // The `|` a marker leaves at the end of a table row is no segment.
        let row = "| LED | Meaning |\n|---|---|\n| Blinking amber | Factory reset [1] |";
        assert_eq!(segments(row).len(), 1);
        assert_eq!(segments(row)[0].cites, vec![1]);
        assert!(segments("See also: Article 5[2], Article 6[3]").is_empty());
    }

    #[test]
    fn sentences_end_at_terminal_punctuation_not_inside_numbers() {
        assert_eq!(
            sentences("It fell to 1.8 million. Then 10:30 came! Why?"),
            ["It fell to 1.8 million.", "Then 10:30 came!", "Why?"]
        );
        assert_eq!(sentences("他说：“不行。”然后走了……好"), ["他说：", "“不行。”", "然后走了……", "好"]);
        assert_eq!(sentences("毕升（？-约1051）发明了活字。好"), ["毕升（？-约1051）发明了活字。", "好"]);
        assert_eq!(
            sentences("见《地狱之绊：血腥战争》一书。“生江南山谷。茎中空。”好"),
            ["见《地狱之绊：血腥战争》一书。", "“生江南山谷。茎中空。”", "好"]
        );
    }

    #[test]
    fn documents_lose_their_own_citation_markers_as_quoted() {
        assert_eq!(
            strip_markers("ligands [23] . See [2][13] and [a] or [21, 22]."),
            "ligands . See and [a] or [21, 22]."
        );
        let doc = Document::new("It binds ligands [23] . Next.");
        assert_eq!(place("It binds ligands .", &doc), Place::Whole);
    }

    #[test]
    fn normalizing_joins_hard_wrapped_cjk_lines_and_keeps_where_lines_broke() {
        let (text, breaks) = normalize("试用期\n不得超过。\n\nThe admin\n  password");
        assert_eq!(text, "试用期不得超过。 The admin password");
        assert_eq!(breaks, [9, 24, 34]);
    }

    #[test]
    fn a_question_is_not_an_answer() {
        assert_eq!(question("Q: Can I use the Nimbus outdoors?"), Some("Can I use the Nimbus outdoors?"));
        assert_eq!(question("- **How do I reset it？**"), Some("- **How do I reset it？**"));
        assert_eq!(question("No. The Nimbus is for indoor use only."), None);
        // A table row holding the question next to its answer is a table, checked as one.
        assert_eq!(question("| Q | A |\n|---|---|\n| Outdoors? | No |"), None);
    }

    #[test]
    fn a_heading_is_not_an_answer() {
        assert_eq!(heading("## Factory reset"), Some("## Factory reset"));
        assert_eq!(heading("Hold the reset pin for 10 s.\n#"), Some("#"));
        assert_eq!(heading("Hold the reset pin for 10 s."), None);
        assert_eq!(heading("#1 priority is safety."), None);
    }

    #[test]
    fn a_table_needs_its_separator_and_a_row() {
        assert_eq!(headless_table("| LED | Meaning |"), Some("| LED | Meaning |"));
        assert_eq!(headless_table("| LED | Meaning |\n|---|---|"), Some("| LED | Meaning |"));
        assert_eq!(headless_table("| LED | Meaning |\n|---|:--:|\n| Blinking amber | Factory reset"), None);
        assert_eq!(headless_table("No table here."), None);
    }

    #[test]
    fn prose_leaves_out_tables_lists_and_headings() {
        let segment =
            "To update the firmware:\n1. Open **System**.\n- Click it\n（一）用人单位\n| a | b |\n> Quoted. Two.";
        assert_eq!(prose_sentences(segment), ["To update the firmware:", "Quoted.", "Two."]);
    }

    #[test]
    fn a_whole_sentence_starts_and_ends_where_its_source_sentence_does() {
        let doc = Document::new(
            "# 第二章\n第十九条 劳动合同期限三个月以上不满一年的，试用期不得超过一个月；\n三年以上的，试用期不得超过六个月。\n\n- **水温**：80–85°C\n\nOne router is the main\nnode, the second becomes a mesh node.\n- Click Save\n1. Open System",
        );
        assert_eq!(place("第十九条 劳动合同期限三个月以上不满一年的，试用期不得超过一个月；", &doc), Place::Whole);
        assert_eq!(place("三年以上的，试用期不得超过六个月。", &doc), Place::Whole);
        assert_eq!(place("试用期不得超过六个月。", &doc), Place::StartsMidSentence);
        assert_eq!(place("第十九条 劳动合同期限三个月以上不满一年的，", &doc), Place::EndsMidSentence);
        assert_eq!(place("第十九条 劳动合同期限", &doc), Place::EndsMidSentence);
        assert_eq!(place("80–85°C", &doc), Place::Whole);
        assert_eq!(place("One router is the main node, the second becomes a mesh node.", &doc), Place::Whole);
        assert_eq!(place("the second becomes a mesh node.", &doc), Place::StartsMidSentence);
        assert_eq!(place("Open System", &doc), Place::Whole);
        assert_eq!(place("Click Save", &doc), Place::Whole);
        assert_eq!(place("Save", &doc), Place::StartsMidSentence);
        assert_eq!(place("试用期不得超过十二个月。", &doc), Place::Missing);
    }

    #[test]
    fn a_sentence_cut_inside_brackets_that_close_later_ends_mid_sentence() {
        let doc = Document::new(
            "Cytokines rise after injury (Gabryelska et al., 2019; Lee, 2020). They act fast.\n《本草拾遗》：“博落回，生江南山谷。茎叶如蓖麻。”\nA stray (mark. Ends here.",
        );
        assert_eq!(place("Cytokines rise after injury (Gabryelska et al., 2019;", &doc), Place::EndsMidSentence);
        assert_eq!(place("Cytokines rise after injury (Gabryelska et al., 2019; Lee, 2020).", &doc), Place::Whole);
        assert_eq!(place("《本草拾遗》：“博落回，生江南山谷。", &doc), Place::EndsMidSentence);
        assert_eq!(place("《本草拾遗》：“博落回，生江南山谷。茎叶如蓖麻。”", &doc), Place::Whole);
        // Nothing on its line closes the bracket: a stray mark of the source.
        assert_eq!(place("A stray (mark.", &doc), Place::Whole);
    }

    fn answer(text: &str, sources: &[&str]) -> Answer {
        let mut a = Answer::new(None, "q".into());
        a.answer = text.into();
        a.citations = sources
            .iter()
            .enumerate()
            .map(|(i, s)| Citation {
                n: i + 1,
                context_n: i + 1,
                skill: "law".into(),
                source: s.to_string(),
                heading: String::new(),
                pages: None,
                image: None,
                label: None,
            })
            .collect();
        a
    }

    #[test]
    fn the_check_reads_cited_documents_once_and_names_the_first_problem() {
        let bench = tempfile_dir();
        let knowledge = bench.join("skills/law/knowledge");
        std::fs::create_dir_all(&knowledge).unwrap();
        std::fs::write(
            knowledge.join("a.md"),
            "# 劳动合同\n\n第十九条 试用期不得超过\n六个月。同一用人单位只能约定一次试用期。",
        )
        .unwrap();
        std::fs::write(knowledge.join("b.pdf"), b"%PDF").unwrap();
        let mut docs = Documents::default();
        let check =
            |text: &str, sources: &[&str], docs: &mut Documents| check(&answer(text, sources), Some(&bench), docs);

        let whole =
            check("第十九条 试用期不得超过六个月。[1]\n\n相关条文：第二十条[1]", &["knowledge/a.md"], &mut docs);
        assert_eq!(whole, Readability::default());
        let fragment = check("只能约定一次试用期。[1]", &["knowledge/a.md"], &mut docs);
        assert_eq!(
            fragment.failure.as_deref(),
            Some("fragment: «只能约定一次试用期。» starts mid-sentence in knowledge/a.md")
        );
        let question = check("试用期多长？[1]", &["knowledge/a.md"], &mut docs);
        assert_eq!(question.failure.as_deref(), Some("question: «试用期多长？»"));
        let heading = check("# 劳动合同[1]", &["knowledge/a.md"], &mut docs);
        assert_eq!(heading.failure.as_deref(), Some("heading: «# 劳动合同»"));
        let table = check("| LED | Meaning |[1]", &["knowledge/a.md"], &mut docs);
        assert_eq!(table.failure.as_deref(), Some("table header without a data row: «| LED | Meaning |»"));
        let uncited = check("同一用人单位只能约定一次试用期。", &["knowledge/a.md"], &mut docs);
        assert_eq!(uncited.failure.as_deref(), Some("cites no source: «同一用人单位只能约定一次试用期。»"));
        let unreadable = check("Anything at all.[1]", &["knowledge/b.pdf"], &mut docs);
        assert_eq!(unreadable, Readability { failure: None, unchecked: 1 });
        let outside = check("Anything at all.[1]", &["../../etc/passwd"], &mut docs);
        assert_eq!(outside.unchecked, 1);
        assert_eq!(docs.cache.len(), 2, "each readable document is read once");

        // A compare answer's table: the header and the side labels are ours; each cell is a quote.
        let mut compared = answer(
            "| 比较对象 | 知识库中的依据 |\n|---|---|\n| 试用期 | 第十九条 试用期不得超过六个月。[1] |\n| 次数 | 只能约定一次试用期。[2] |",
            &["knowledge/a.md", "knowledge/a.md"],
        );
        compared.plan = vec![skillrag_ask::PlanStep { step: 1, skill: "law".into(), query: "试用期".into() }];
        let failure = check_answer(&compared, &bench, &mut docs).failure;
        assert_eq!(failure.as_deref(), Some("fragment: «只能约定一次试用期。» starts mid-sentence in knowledge/a.md"));
        compared.answer = compared.answer.replace("只能约定一次试用期。", "同一用人单位只能约定一次试用期。");
        assert_eq!(check_answer(&compared, &bench, &mut docs), Readability::default());
        let _ = std::fs::remove_dir_all(&bench);
    }

    fn check_answer(answer: &Answer, bench: &Path, docs: &mut Documents) -> Readability {
        check(answer, Some(bench), docs)
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("skillrag-eval-readable-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }
}
