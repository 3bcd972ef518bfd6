//! Answer units: the parts of a passage that can be handed to the user whole — an article with
//! its label, a list with the sentence that introduces it, the answer of a question/answer block,
//! a table row under its header, or a run of sentences of a paragraph. What is not an answer never
//! becomes a unit: a heading, a table header, a question, a line of a reference list, or a
//! fragment cut off where the known text of the document begins or ends.
//!
//! Written here because no Markdown parser knows these units: pulldown-cmark sees a statute's
//! articles as paragraphs and a `Q:`/`A:` block as one, and its events would have to be mapped
//! back to byte ranges for every kind anyway.

use skillrag_core::{Chunk, ChunkId};
use std::ops::Range;

/// At most this many characters of a paragraph in one unit (a single longer sentence is one).
const WINDOW_CHARS: usize = 320;
/// Sentences of a paragraph in one unit, at most.
const WINDOW_SENTENCES: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    /// A numbered article of a statute (`第十九条 …`, `Article 5 …`), whole.
    Article,
    /// A list, with the sentence that introduces it.
    List,
    /// The answer of a `Q:`/`A:` block.
    Answer,
    /// One data row of a table, shown under the table's header.
    TableRow,
    /// One to three consecutive sentences of a paragraph.
    Sentences,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub kind: UnitKind,
    /// Byte range in the text the units were taken from.
    pub range: Range<usize>,
    /// The text as an answer shows it (a table row under its header row).
    pub shown: String,
    /// An article's label (`第十九条`).
    pub label: Option<String>,
}

/// What is known of a document around a retrieved passage.
#[derive(Debug, Clone, PartialEq)]
pub struct Surroundings {
    /// The passage with the document text around it.
    pub text: String,
    /// Where the passage itself lies in `text`.
    pub passage: Range<usize>,
    /// `text` does not start at the document's start (its first line may be a fragment).
    pub cut_before: bool,
    /// `text` does not reach the document's end.
    pub cut_after: bool,
    /// The header of the table `text` begins inside (`Chunk::table_header` of its first chunk),
    /// so that its rows are shown under their header though it lies chunks before.
    pub table_header: Option<String>,
}

/// Chunks read on either side of a passage, so that a unit it cuts (an article, a table under
/// its header, a sentence begun in the chunk before) can be shown whole.
const NEIGHBOURS: u32 = 1;

/// What stands between two chunks that do not touch: a (blank) heading.
const SECTION_BREAK: &str = "\n\n#\n\n";

impl Surroundings {
    /// A passage on its own, as when its document cannot be read around it.
    pub fn alone(text: &str, cut_before: bool) -> Surroundings {
        Surroundings { text: text.to_string(), passage: 0..text.len(), cut_before, cut_after: true, table_header: None }
    }

    /// The chunk `chunk_id` of `document` (all chunks of its source) with its neighbours,
    /// stitched together by their spans in the document (overlaps once, gaps — where headings
    /// were — as a blank line). `text` alone when the chunk is not found or the chunks do not fit
    /// together.
    pub fn read(document: &[Chunk], chunk_id: ChunkId, text: &str) -> Surroundings {
        let Some(chunk) = document.iter().find(|c| c.id == chunk_id) else { return Surroundings::alone(text, true) };
        let last = document.iter().map(|c| c.ordinal).max().unwrap_or(chunk.ordinal);
        let mut near: Vec<&Chunk> = document
            .iter()
            .filter(|c| c.ordinal + NEIGHBOURS >= chunk.ordinal && c.ordinal <= chunk.ordinal + NEIGHBOURS)
            .collect();
        near.sort_by_key(|c| (c.span.0, c.ordinal));
        let alone = Surroundings::alone(text, chunk.ordinal > 0);
        let (Some(first), Some(final_chunk)) = (near.first(), near.last()) else { return alone };
        let (cut_before, cut_after) = (first.ordinal > 0, final_chunk.ordinal < last);
        let table_header = first.table_header.clone();
        let mut out = String::new();
        let mut out_chars = 0usize;
        let mut end_char = first.span.0;
        let mut passage: Option<Range<usize>> = None;
        for c in near {
            let len = c.text.chars().count();
            let start = if out.is_empty() {
                0
            } else if c.span.0 < end_char {
                let overlap = (end_char - c.span.0).min(len);
                let split = c.text.char_indices().nth(overlap).map_or(c.text.len(), |(i, _)| i);
                if !out.ends_with(&c.text[..split]) {
                    return alone;
                }
                out_chars - overlap
            } else {
                // A gap is where a heading was: a heading line keeps units from running across it.
                out.push_str(SECTION_BREAK);
                out_chars += SECTION_BREAK.chars().count();
                out_chars
            };
            let appended = (start + len).saturating_sub(out_chars);
            let tail_from = c.text.char_indices().nth(len - appended).map_or(c.text.len(), |(i, _)| i);
            out.push_str(&c.text[tail_from..]);
            out_chars += appended;
            end_char = end_char.max(c.span.1);
            if c.id == chunk.id {
                passage = Some(start..start + len);
            }
        }
        let Some(chars) = passage else { return alone };
        let byte = |n: usize| out.char_indices().nth(n).map_or(out.len(), |(i, _)| i);
        let passage = byte(chars.start)..byte(chars.end);
        Surroundings { passage, text: out, cut_before, cut_after, table_header }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Line {
    Blank,
    Heading,
    TableRow,
    TableRule,
    ListItem,
    Question,
    AnswerStart,
    ArticleStart,
    Prose,
}

fn classify(line: &str) -> Line {
    let t = line.trim();
    if t.is_empty() {
        return Line::Blank;
    }
    if t.starts_with('#') {
        return Line::Heading;
    }
    if t.starts_with('|') {
        let rule = t.chars().all(|c| "|-: ".contains(c)) && t.contains('-');
        return if rule { Line::TableRule } else { Line::TableRow };
    }
    if skillrag_chunk::article_label(t).is_some() {
        return Line::ArticleStart;
    }
    if is_list_item(t) {
        return Line::ListItem;
    }
    let plain = t.trim_start_matches(['*', '_']);
    if skillrag_chunk::is_question_line(t) || plain.starts_with("Question:") || plain.starts_with("问题：") {
        return Line::Question;
    }
    const ANSWER: [&str; 7] = ["A:", "A：", "Answer:", "答：", "答:", "回答：", "答案："];
    if ANSWER.iter().any(|p| plain.starts_with(p)) {
        return Line::AnswerStart;
    }
    Line::Prose
}

/// `- item`, `* item`, `• item`, `1. item`, `2、item`, `（一）item`.
pub fn is_list_item(t: &str) -> bool {
    if ["- ", "* ", "+ ", "• "].iter().any(|p| t.starts_with(p)) {
        return true;
    }
    if is_numbered_item(t) {
        return true;
    }
    if let Some(rest) = t.strip_prefix(['（', '(']) {
        let n = rest.chars().take_while(|c| "一二三四五六七八九十".contains(*c)).count();
        return n > 0 && rest.chars().nth(n).is_some_and(|c| c == '）' || c == ')');
    }
    false
}

/// `1. step`, `2、step`, `3) step`: an item of a numbered list (not `1.5 kg`).
pub fn is_numbered_item(t: &str) -> bool {
    let digits = t.chars().take_while(char::is_ascii_digit).count();
    let rest = &t[digits..];
    digits > 0 && (rest.starts_with(". ") || rest.starts_with(['、', ')', '）']))
}

/// A sentence that asks rather than tells — or holds a question the splitter did not cut off
/// (`怎么玩?QQ炫舞…`). Unlike the gate's test of a request (`question::is_question`), only a
/// question mark counts, and anywhere in the sentence: a knowledge file's statements are full of
/// question words (不论什么原因, 如何处理由双方协商), and a question left joined to its answer has its
/// mark in the middle. (Spaces and Markdown emphasis around the sentence change nothing here.)
pub fn is_question(sentence: &str) -> bool {
    skillrag_core::question::has_question_mark(sentence)
}

/// Lines of `text` with their byte ranges (without the line break) and kinds.
fn lines(text: &str) -> Vec<(Range<usize>, Line)> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        out.push((start..start + body.len(), classify(body)));
        start += line.len();
    }
    out
}

/// The units of `s.text` that overlap the passage.
pub fn units(s: &Surroundings) -> Vec<Unit> {
    let text = s.text.as_str();
    let lines = lines(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (range, kind) = (lines[i].0.clone(), lines[i].1);
        match kind {
            Line::Blank | Line::Heading | Line::TableRule => i += 1,
            Line::TableRow => {
                // Only a table the text begins inside continues the header carried beside it.
                let begins = lines[..i].iter().all(|l| l.1 == Line::Blank);
                i = table(text, &lines, i, s.table_header.as_deref().filter(|_| begins), &mut out);
            }
            Line::ArticleStart => {
                let end = run_end(&lines, i + 1, true, |k| {
                    !matches!(k, Line::ArticleStart | Line::Heading | Line::TableRow | Line::Question)
                })
                .max(i + 1);
                let range = range.start..lines[end - 1].0.end;
                let label = skillrag_chunk::article_label(&text[lines[i].0.clone()]);
                out.push(Unit { kind: UnitKind::Article, shown: text[range.clone()].to_string(), range, label });
                i = end;
            }
            Line::ListItem => {
                let end = run_end(&lines, i + 1, false, |k| k == Line::ListItem || k == Line::Prose).max(i + 1);
                let start = introduction(text, &lines, i).unwrap_or(range.start);
                let range = start..lines[end - 1].0.end;
                out.push(Unit { kind: UnitKind::List, shown: text[range.clone()].to_string(), range, label: None });
                i = end;
            }
            Line::Question => {
                // The question is not the answer; what follows it (until the next question or
                // heading) is.
                let end = run_end(&lines, i + 1, true, |k| !matches!(k, Line::Question | Line::Heading)).max(i + 1);
                let body = (i + 1..end).filter(|&j| lines[j].1 != Line::Blank).collect::<Vec<_>>();
                if let (Some(&first), Some(&last)) = (body.first(), body.last()) {
                    let range = lines[first].0.start..lines[last].0.end;
                    let shown = strip_answer_label(&text[range.clone()]).to_string();
                    out.push(Unit { kind: UnitKind::Answer, shown, range, label: None });
                }
                i = end;
            }
            Line::AnswerStart | Line::Prose => {
                let end = run_end(&lines, i + 1, false, |k| k == Line::Prose).max(i + 1);
                sentences(text, lines[i].0.start..lines[end - 1].0.end, &mut out);
                i = end;
            }
        }
    }
    let edge_start = s.cut_before.then(|| first_content(text));
    let edge_end = s.cut_after.then_some(text.trim_end().len());
    out.retain(|u| {
        let overlaps = u.range.start < s.passage.end && u.range.end > s.passage.start;
        // A fragment: the unit begins with the known text, mid-document, in the middle of prose.
        let cut_start = edge_start == Some(u.range.start) && u.kind == UnitKind::Sentences;
        let cut_end = edge_end == Some(u.range.end) && !ends_sentence(&u.shown) && u.kind != UnitKind::TableRow;
        overlaps && !cut_start && !cut_end && !u.shown.trim().is_empty()
    });
    out
}

fn first_content(text: &str) -> usize {
    text.len() - text.trim_start().len()
}

fn ends_sentence(text: &str) -> bool {
    let t = text.trim_end().trim_end_matches(['*', '_', '"', '”', '’', ')', '）', '」', '』']);
    t.ends_with(['.', '。', '!', '！', '?', '？', ';', '；', ':', '：', '…']) || t.ends_with('|')
}

/// The end (exclusive line index) of the run of lines from `from` on whose kinds `keep`
/// accepts. A blank line ends the run unless the next line is accepted — and, without
/// `across_blank`, is not prose (a list goes on after a blank line only with another item).
fn run_end(lines: &[(Range<usize>, Line)], from: usize, across_blank: bool, keep: impl Fn(Line) -> bool) -> usize {
    let mut end = from;
    let mut j = from;
    while j < lines.len() {
        match lines[j].1 {
            Line::Blank => {
                let next = lines[j + 1..].iter().map(|l| l.1).find(|k| *k != Line::Blank);
                match next {
                    Some(k) if keep(k) && (across_blank || k != Line::Prose) => {}
                    _ => break,
                }
            }
            k if keep(k) => end = j + 1,
            _ => break,
        }
        j += 1;
    }
    end
}

/// The start of the sentence that introduces the list at line `at` (`…步骤如下：`), if the line
/// before the list ends with a colon.
fn introduction(text: &str, lines: &[(Range<usize>, Line)], at: usize) -> Option<usize> {
    let last = lines[..at].iter().rposition(|(_, k)| *k != Line::Blank)?;
    if lines[last].1 != Line::Prose || !text[lines[last].0.clone()].trim_end().ends_with([':', '：']) {
        return None;
    }
    // The paragraph's last sentence, which may have been wrapped over several lines.
    let first = lines[..last].iter().rposition(|(_, k)| *k != Line::Prose).map_or(0, |i| i + 1);
    let paragraph = lines[first].0.start..lines[last].0.end;
    let (offset, _) = skillrag_chunk::sentences(&text[paragraph.clone()]).last().copied()?;
    Some(paragraph.start + offset)
}

fn strip_answer_label(text: &str) -> &str {
    let t = text.trim_start();
    for p in ["**Answer:**", "**答：**", "A:", "A：", "Answer:", "答：", "答:", "回答：", "答案："] {
        if let Some(rest) = t.strip_prefix(p) {
            return rest.trim_start();
        }
    }
    t
}

/// A table's data rows, each with the header (its own, else `carried`: the rows continue a table
/// whose header lies before the text). A blank header row (a table without a recognizable
/// header) is not shown. Returns the line after the table.
fn table(text: &str, lines: &[(Range<usize>, Line)], at: usize, carried: Option<&str>, out: &mut Vec<Unit>) -> usize {
    let end =
        (at..lines.len()).find(|&j| !matches!(lines[j].1, Line::TableRow | Line::TableRule)).unwrap_or(lines.len());
    let has_header = end > at + 1 && lines[at + 1].1 == Line::TableRule;
    let header = if has_header {
        Some(format!("{}\n{}", &text[lines[at].0.clone()], &text[lines[at + 1].0.clone()]))
    } else {
        carried.map(str::to_string)
    };
    let header = header.filter(|h| h.lines().next().is_some_and(|l| l.chars().any(|c| c != '|' && !c.is_whitespace())));
    let first_row = if has_header { at + 2 } else { at };
    for (range, kind) in &lines[first_row..end] {
        if *kind != Line::TableRow {
            continue;
        }
        let row = &text[range.clone()];
        let shown = match &header {
            Some(h) => format!("{h}\n{row}"),
            None => row.to_string(),
        };
        out.push(Unit { kind: UnitKind::TableRow, shown, range: range.clone(), label: None });
    }
    end
}

/// Windows of up to three consecutive sentences of the paragraph `range`; questions, reference
/// list lines and sentences ending in a colon (they introduce what follows, which a list unit
/// shows with them) end a window and are never in one.
fn sentences(text: &str, range: Range<usize>, out: &mut Vec<Unit>) {
    let paragraph = &text[range.clone()];
    // A piece that cannot begin a sentence continues the one before: the splitter cut after an
    // abbreviation's dot (`e.g. the`) or a mark it took for an end.
    // So does every piece that follows a cut inside brackets or quotation marks which close
    // later in the paragraph: `(Smith et al., 2019; Lee, 2020)`, `(accession no. KU…)`,
    // `“……。……”` — a sentence does not end inside them. The splitter only looks 20 characters
    // around parentheses (its cuts also size chunks, so an unclosed bracket must not hold them
    // up); an answer shows whole sentences, so here the reach is the paragraph.
    let mut pieces: Vec<(usize, &str)> = Vec::new();
    for (o, s) in skillrag_chunk::sentences(paragraph) {
        let inside = pieces.last().is_some_and(|&(start, last)| closes_later(last, &paragraph[start + last.len()..]));
        let continues = inside
            || s.starts_with(['-', '—', '）', ')', '，', ',', '、', '；', ';', '」', '』', '”'])
            || s.starts_with(|c: char| c.is_ascii_lowercase());
        match pieces.last_mut() {
            Some((start, last)) if continues => *last = &paragraph[*start..o + s.len()],
            _ => pieces.push((o, s)),
        }
    }
    let all: Vec<(Range<usize>, bool)> = pieces
        .into_iter()
        .map(|(o, s)| {
            let usable = !is_question(s)
                && !s.trim_end().ends_with([':', '：'])
                && crate::base::contract::marker_len(s.trim_start()).is_none()
                && s.chars().filter(|c| c.is_alphanumeric()).count() >= 4;
            (range.start + o..range.start + o + s.len(), usable)
        })
        .collect();
    // A short paragraph is read whole: it is one answer, however many sentences it has.
    let whole = all.iter().all(|(_, usable)| *usable) && paragraph.chars().count() <= WINDOW_CHARS;
    let most = if whole { all.len() } else { WINDOW_SENTENCES };
    for i in 0..all.len() {
        let mut chars = 0;
        for j in i..all.len().min(i + most) {
            if !all[j].1 {
                break;
            }
            chars += text[all[j].0.clone()].chars().count();
            if j > i && chars > WINDOW_CHARS {
                break;
            }
            let r = all[i].0.start..all[j].0.end;
            let shown = strip_answer_label(&text[r.clone()]).to_string();
            out.push(Unit { kind: UnitKind::Sentences, shown, range: r, label: None });
        }
    }
}

/// Brackets and quotation marks that open and close in pairs (ASCII `"` does not say which it does).
const PAIRS: [(char, char); 7] =
    [('（', '）'), ('(', ')'), ('“', '”'), ('「', '」'), ('『', '』'), ('《', '》'), ('【', '】')];

/// `text` leaves a bracket or quotation mark open that `rest` closes. One left open that nothing
/// after it closes is a stray mark of the source, not a sentence going on.
fn closes_later(text: &str, rest: &str) -> bool {
    let step = |depth: &mut i32, c: char| {
        if PAIRS.iter().any(|p| p.0 == c) {
            *depth += 1;
        } else if PAIRS.iter().any(|p| p.1 == c) {
            *depth = (*depth - 1).max(0);
        }
    };
    let mut depth = 0;
    text.chars().for_each(|c| step(&mut depth, c));
    depth > 0
        && rest.chars().any(|c| {
            step(&mut depth, c);
            depth == 0
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<Unit> {
        units(&Surroundings {
            text: text.into(),
            passage: 0..text.len(),
            cut_before: false,
            cut_after: false,
            table_header: None,
        })
    }

    fn shown(units: &[Unit], kind: UnitKind) -> Vec<String> {
        units.iter().filter(|u| u.kind == kind).map(|u| u.shown.clone()).collect()
    }

    #[test]
    fn an_article_is_one_unit_with_its_label() {
        let u = all("第十八条 劳动合同应当具备以下条款：\n（一）用人单位的名称；\n（二）劳动者的姓名。\n\n第十九条 试用期不得超过六个月。");
        let articles: Vec<_> = u.iter().filter(|u| u.kind == UnitKind::Article).collect();
        assert_eq!(articles.len(), 2);
        assert_eq!(articles[0].label.as_deref(), Some("第十八条"));
        assert!(articles[0].shown.contains("（二）劳动者的姓名。"), "{}", articles[0].shown);
        assert_eq!(articles[1].shown, "第十九条 试用期不得超过六个月。");
        // A statute in Traditional characters: the label as written.
        let u = all("第十九條 試用期不得超過六個月。\n\n第二十條 試用期工資不得低於最低檔工資。");
        let labels: Vec<_> = u.iter().filter(|u| u.kind == UnitKind::Article).map(|u| u.label.clone()).collect();
        assert_eq!(labels, [Some("第十九條".to_string()), Some("第二十條".to_string())]);
    }

    #[test]
    fn a_table_row_comes_with_its_header_and_the_header_is_no_unit() {
        let u =
            all("| LED | Meaning |\n|---|---|\n| Solid amber | No internet |\n| Blinking amber | Factory reset |\n");
        let rows = shown(&u, UnitKind::TableRow);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[1], "| LED | Meaning |\n|---|---|\n| Blinking amber | Factory reset |");
        assert_eq!(u.len(), 2, "{u:?}");
    }

    #[test]
    fn rows_that_continue_a_table_come_with_the_header_carried_beside_them() {
        let text = "| Blinking amber | Factory reset |\n| Off | No power |\n\n| Plan | Price |\n|---|---|\n| Pro | 30 |\n\n| x | y |\n";
        let header = Some("| LED | Meaning |\n|---|---|".to_string());
        let s = Surroundings {
            text: text.into(),
            passage: 0..text.len(),
            cut_before: true,
            cut_after: false,
            table_header: header,
        };
        let rows = shown(&units(&s), UnitKind::TableRow);
        assert_eq!(
            rows,
            [
                "| LED | Meaning |\n|---|---|\n| Blinking amber | Factory reset |",
                "| LED | Meaning |\n|---|---|\n| Off | No power |",
                "| Plan | Price |\n|---|---|\n| Pro | 30 |",
                "| x | y |",
            ],
            "only the table the text begins inside continues the carried header"
        );
        // A blank header row (a table without a recognizable header) is not shown.
        assert_eq!(shown(&all("|  |  |\n|---|---|\n| Name | Ada |\n"), UnitKind::TableRow), ["| Name | Ada |"]);
    }

    #[test]
    fn a_list_keeps_its_introduction() {
        let u = all(
            "Some text first. To update the firmware:\n\n1. Open the app.\n2. Tap **Update**.\n\nAfter that, wait.",
        );
        let lists = shown(&u, UnitKind::List);
        assert_eq!(lists, vec!["To update the firmware:\n\n1. Open the app.\n2. Tap **Update**."]);
        assert!(shown(&u, UnitKind::Sentences).iter().all(|s| !s.ends_with(':')), "{u:?}");
    }

    #[test]
    fn the_answer_of_a_question_not_the_question() {
        let u = all("Q: Can I use the Nimbus outdoors?\nA: No. It is for indoor use only.\n\nQ: Is there a warranty?\nA: Two years.");
        assert_eq!(shown(&u, UnitKind::Answer), vec!["No. It is for indoor use only.", "Two years."]);
        assert!(u.iter().all(|u| !u.shown.contains("outdoors?")));
    }

    #[test]
    fn questions_headings_and_reference_lines_are_no_units() {
        let u = all("# Reset\n\nHow do I reset it?\n\n[1] troubleshooting.md, \"Factory reset\"\n\nHold the pin for ten seconds.");
        let texts: Vec<&str> = u.iter().map(|u| u.shown.as_str()).collect();
        assert_eq!(texts, vec!["Hold the pin for ten seconds."]);
    }

    #[test]
    fn a_fragment_at_a_cut_edge_is_no_unit() {
        let text = "the second becomes a mesh node. Press WPS on both routers.";
        let s = Surroundings {
            text: text.into(),
            passage: 0..text.len(),
            cut_before: true,
            cut_after: false,
            table_header: None,
        };
        let u = units(&s);
        assert!(u.iter().all(|u| !u.shown.starts_with("the second")), "{u:?}");
        assert!(u.iter().any(|u| u.shown == "Press WPS on both routers."));
        let cut = Surroundings {
            text: "Hold the pin until the".into(),
            passage: 0..22,
            cut_before: false,
            cut_after: true,
            table_header: None,
        };
        assert!(units(&cut).is_empty());
    }

    #[test]
    fn only_units_that_overlap_the_passage() {
        let text = "First paragraph here.\n\nSecond paragraph here.";
        let s = Surroundings {
            text: text.into(),
            passage: 23..text.len(),
            cut_before: false,
            cut_after: false,
            table_header: None,
        };
        assert!(units(&s).iter().all(|u| u.shown.starts_with("Second")));
    }

    #[test]
    fn a_cut_inside_parentheses_is_no_sentence_start() {
        let u = all("北宋庆历间中国的毕升（？-约1051）发明的泥活字标志活字印刷的诞生。");
        assert!(u.iter().any(|u| u.shown.starts_with("北宋庆历间") && u.shown.ends_with("诞生。")), "{u:?}");
        assert!(u.iter().all(|u| !u.shown.starts_with('-')), "{u:?}");
    }

    #[test]
    fn a_sentence_does_not_end_inside_brackets_or_quotes_that_close_later() {
        let u = all("Cytokines are expressed upon injury (Gabryelska et al., 2019; Lee, 2020). They act fast.");
        assert!(u
            .iter()
            .any(|u| u.shown == "Cytokines are expressed upon injury (Gabryelska et al., 2019; Lee, 2020)."));
        assert!(u.iter().all(|u| !u.shown.ends_with("2019;")), "{u:?}");
        let u = all("博落回一名首载于《本草拾遗》：“博落回，生江南山谷。茎叶如蓖麻。”后世沿用。");
        assert!(u.iter().all(|u| !u.shown.ends_with("山谷。")), "{u:?}");
        assert!(u.iter().any(|u| u.shown.ends_with("茎叶如蓖麻。”")), "{u:?}");
        // A bracket nothing closes is the source's stray mark: sentences end as usual.
        let u = all("The value (see below. It is high. It rose.");
        assert!(u.iter().any(|u| u.shown == "It rose."), "{u:?}");
    }

    #[test]
    fn questions() {
        assert!(
            is_question("How do I reset it?")
                && is_question("怎么玩?QQ炫舞活动来袭。")
                && is_question("真的吗？是的。")
        );
        assert!(!is_question("Open http://x/a?id=3 in a browser.") && !is_question("Hold the pin."));
        assert!(!is_question("毕升（？-约1051）发明了活字。"));
    }

    #[test]
    fn list_items() {
        assert!(is_list_item("- a") && is_list_item("1. a") && is_list_item("2、a") && is_list_item("（一）用人单位"));
        assert!(!is_list_item("2024 was a year") && !is_list_item("1.5 kg"));
    }
}
