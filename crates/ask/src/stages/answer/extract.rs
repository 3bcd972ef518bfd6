//! The extractive answer (docs/design.md §4.3, no LLM): a readable excerpt of the best evidence.
//! The passage that answers is picked — usually the best hit — and the unit inside it that
//! answers is handed over whole ([`units`](super::units): an article with its label, a list with
//! its introduction, an FAQ answer, a table row under its header, or a few sentences). A second
//! passage is added only when it covers what the first lacks. For statutes, the other retrieved
//! articles are named after it. Citations are numbered from `[1]` in the order the answer uses
//! them. Every word of the excerpt comes from the knowledge; rules (instructions for the writer)
//! are never quoted, nor are questions, headings or table headers.

use super::expect::{expected, values};
use super::read::Extracted;
use super::units::{is_list_item, units, Surroundings, Unit, UnitKind};
use super::{Part, Side};
use crate::base::contract::{marker_len, Citation, Context};
use crate::base::evidence::TermStats;
use crate::base::messages;
use crate::base::question::Question;
use crate::reader::MAX_PASSAGE_CHARS;
use skillrag_core::{is_bmp_east_asian_or_fullwidth_form, Hit, Language};
use std::collections::{HashMap, HashSet};

/// A shown unit is cut after the last sentence that ends within this many characters.
const MAX_UNIT_CHARS: usize = 700;
/// Other articles are named when they answer at least this share as well as the quoted one.
const RELATED_SHARE: f32 = 0.3;
/// At most this many other articles are named after a statute answer.
const MAX_RELATED: usize = 5;
/// BM25's saturation and length normalization, scoring units against the question.
const K1: f32 = 1.2;
const B: f32 = 0.5;
/// The retrieval rank's weight: the best hit is usually the passage that answers, but a unit of
/// a lower hit that answers clearly better wins.
const RANK_PRIOR: f32 = 0.12;
/// The share of a topic word's text score a unit keeps (the title holds it for all of them).
const TOPIC_TEXT_SHARE: f32 = 0.5;
/// A title or heading longer than this is a sentence, not the name of a topic.
const MAX_TOPIC_CHARS: usize = 30;
/// How much a question word counts when the passage's title or heading holds it rather than the
/// unit's own text (BM25's saturation of a word the unit holds once: 1 / (1 + K1) ≈ 0.45).
const TOPIC_WEIGHT: f32 = 0.45;
/// Bonus for a unit holding a value of the type the question asks for ([`expected`]).
const TYPE_BONUS: f32 = 0.2;

/// A unit of one context piece with its term counts, its length in terms and its piece's topic.
type Counted<'a> = (usize, Unit, HashMap<String, usize>, usize, &'a HashSet<String>);

/// A unit of one context piece, scored against the question.
struct Scored {
    piece: usize,
    unit: Unit,
    relevance: f32,
    total: f32,
    covered: HashSet<String>,
}

/// The extractive answer from the context, with its citations numbered in the order of use;
/// `None` when nothing in the context can be quoted as an answer. `surroundings[i]` is the
/// document text around `context.pieces[i]`; `hits` give the retrieval order.
pub fn extract(
    question: &Question,
    stats: &TermStats,
    context: &Context,
    surroundings: &[Surroundings],
    hits: &[Hit],
) -> Option<(String, Vec<Citation>)> {
    candidates(question, stats, context, surroundings, hits, 1, false).into_iter().next()
}

/// Up to `max` extractive answers, best first, each built around another unit: the one
/// [`extract`] gives, then the answers the next-best units would give. The reader chooses among
/// them (answer selection over candidates the product quotes verbatim, so nothing is invented).
/// `verified`: a reader verifies each candidate, so the `rules` tier may be quoted too — a policy
/// states facts ("a warranty of 2 years") beside its instructions, and the reader tells them apart;
/// unverified, rules are never quoted.
pub fn candidates(
    question: &Question,
    stats: &TermStats,
    context: &Context,
    surroundings: &[Surroundings],
    hits: &[Hit],
    max: usize,
    verified: bool,
) -> Vec<(String, Vec<Citation>)> {
    let weights: Vec<(String, f32)> =
        crate::base::evidence::unique(&question.terms).into_iter().map(|t| (t.clone(), stats.idf(&t))).collect();
    let scored = score_units(question, &weights, context, surroundings, hits, verified);
    // Reversed before a stable sort: among equal units the last comes first, as `max_by` chose.
    let mut order: Vec<&Scored> = scored.iter().rev().collect();
    order.sort_by(|a, b| b.total.total_cmp(&a.total).then(a.piece.cmp(&b.piece)));
    let mut out: Vec<(String, Vec<Citation>)> = Vec::new();
    for primary in order {
        if out.len() >= max {
            break;
        }
        if primary.relevance <= 0.0 && !weights.is_empty() {
            break;
        }
        let answer = around(primary, &scored, &weights, question, context);
        // Two units of one passage can show the same text (a unit within an article).
        if !out.iter().any(|(text, _)| *text == answer.0) {
            out.push(answer);
        }
    }
    out
}

/// The first `max` retrieved passages as answers of their own, in retrieval order: each passage's
/// units shown whole, cited, up to about what the reader reads of it. These are the passages a
/// Corrective-RAG evaluator judges; they answer when the unit that holds the fact is not one of the
/// extractive candidates (the neighbouring article of the same chunk was scored higher).
pub fn passages(context: &Context, surroundings: &[Surroundings], hits: &[Hit], max: usize) -> Vec<Extracted> {
    let mut out = Vec::new();
    for hit in hits {
        if out.len() >= max {
            break;
        }
        let Some(i) = context.pieces.iter().position(|p| p.chunk_id == hit.chunk_id) else { continue };
        let Some(around) = surroundings.get(i) else { continue };
        let mut parts: Vec<String> = Vec::new();
        let (mut chars, mut end) = (0, 0);
        // `units` gives the units that overlap the passage, whole, in text order; runs of
        // sentences overlap each other, so a unit that begins inside the last one shown is passed.
        for unit in units(around) {
            if chars >= MAX_PASSAGE_CHARS {
                break;
            }
            if unit.range.start < end {
                continue;
            }
            end = unit.range.end;
            let text = with_marker(&shown(&unit), unit.kind, 1);
            chars += text.chars().count();
            parts.push(text);
        }
        if !parts.is_empty() {
            out.push((parts.join("\n\n"), vec![Citation { n: 1, ..context.pieces[i].citation() }]));
        }
    }
    out
}

/// The extractive answer built around `primary`: it, a complement from another passage when it
/// leaves much of the question out, and, after a statute article, the related articles.
fn around(
    primary: &Scored,
    scored: &[Scored],
    weights: &[(String, f32)],
    question: &Question,
    context: &Context,
) -> (String, Vec<Citation>) {
    let mut chosen: Vec<&Scored> = vec![primary];
    if let Some(second) = complement(scored, primary, weights) {
        chosen.push(second);
    }
    let related =
        if primary.unit.kind == UnitKind::Article { related_articles(scored, &chosen, context) } else { vec![] };

    let mut numbers = Numbering::default();
    let mut parts: Vec<String> = chosen
        .iter()
        .map(|s| {
            let n = numbers.of(s.piece);
            with_marker(&shown(&s.unit), s.unit.kind, n)
        })
        .collect();
    if !related.is_empty() {
        // Articles of one passage share its citation: 第十八条、第十九条[2].
        let mut groups: Vec<(usize, Vec<String>)> = Vec::new();
        for s in &related {
            let n = numbers.of(s.piece);
            let label = s.unit.label.clone().unwrap_or_default();
            match groups.iter_mut().find(|(m, _)| *m == n) {
                Some((_, labels)) => labels.push(label),
                None => groups.push((n, vec![label])),
            }
        }
        groups.sort_by_key(|g| g.0);
        let separator = if question.language == Language::Chinese { "、" } else { ", " };
        let named: Vec<String> = groups.iter().map(|(n, labels)| format!("{}[{n}]", labels.join(separator))).collect();
        parts.push(match question.language {
            Language::Chinese => format!("相关条文：{}", named.join("；")),
            _ => format!("See also: {}", named.join("; ")),
        });
    }
    let citations = numbers
        .order
        .iter()
        .enumerate()
        .map(|(i, &piece)| Citation { n: i + 1, ..context.pieces[piece].citation() })
        .collect();
    (parts.join("\n\n"), citations)
}

/// The extractive answer of a multi-intent question: each part from its own skill's passages,
/// or a sentence saying which part was not found; citations numbered across the parts. `None`
/// when no part is answered.
pub fn extract_parts(
    parts: &[Part<'_>],
    context: &Context,
    surroundings: &[Surroundings],
    hits: &[Hit],
    language: Language,
) -> Option<(String, Vec<Citation>)> {
    let mut texts = Vec::new();
    let mut citations: Vec<Citation> = Vec::new();
    for part in parts {
        let own: Vec<usize> = (0..context.pieces.len()).filter(|&i| context.pieces[i].skill == part.skill).collect();
        let group = Group { question: part.question, stats: part.stats, pieces: &own };
        let quoted = group.quote(context, surroundings, hits, &mut citations);
        texts.push(quoted.unwrap_or_else(|| messages::part_not_found(language, part.skill, part.text)));
    }
    (!citations.is_empty()).then(|| (texts.join("\n\n"), citations))
}

/// A compare question's extractive answer: a table with one row per side, each quoted from the
/// side's own pieces; a side with nothing to quote says so in its row. `None` when no side has,
/// or when every side quotes the same passage (the whole question's excerpt answers then).
pub fn extract_sides(
    sides: &[Side<'_>],
    context: &Context,
    surroundings: &[Surroundings],
    hits: &[Hit],
    language: Language,
) -> Option<(String, Vec<Citation>)> {
    let mut rows = Vec::new();
    let mut citations: Vec<Citation> = Vec::new();
    let mut openings: Vec<String> = Vec::new();
    for side in sides {
        let group = Group { question: side.question, stats: side.stats, pieces: side.pieces };
        let cell = match group.quote(context, surroundings, hits, &mut citations) {
            Some(text) => {
                openings.push(text.split('[').next().unwrap_or_default().trim().to_string());
                text
            }
            None => messages::side_not_found(language),
        };
        rows.push(format!("| {} | {} |", table_cell(side.name), table_cell(&cell)));
    }
    // Every side quoting the same passage: that passage compares them itself ("SARS-CoV uses ACE2,
    // while MERS-CoV uses DPP4"); the ordinary excerpt shows it once.
    let same_passage = openings.len() == sides.len() && openings.windows(2).all(|w| w[0] == w[1]);
    if citations.is_empty() || same_passage {
        return None;
    }
    Some((format!("{}\n{}", messages::compare_table_header(language), rows.join("\n")), citations))
}

/// A Markdown table cell: one line, its pipes escaped.
fn table_cell(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

/// A part of a question answered from its own pieces of the context: a multi-intent question's
/// part (its skill's pieces) or a compare question's side.
struct Group<'a> {
    question: &'a Question,
    stats: &'a TermStats,
    /// Indexes into the context's pieces.
    pieces: &'a [usize],
}

impl Group<'_> {
    /// The group's excerpt from its pieces alone (their context numbers kept, so citations point
    /// into the whole context), its markers numbered after the `citations` so far, which it
    /// extends. `None` when its pieces hold nothing to quote.
    fn quote(
        &self,
        context: &Context,
        surroundings: &[Surroundings],
        hits: &[Hit],
        citations: &mut Vec<Citation>,
    ) -> Option<String> {
        let pieces = self.pieces.iter().filter_map(|&i| context.pieces.get(i).cloned()).collect();
        let around: Vec<Surroundings> = self.pieces.iter().filter_map(|&i| surroundings.get(i).cloned()).collect();
        let sub = Context { pieces, ..Default::default() };
        let (text, cited) = extract(self.question, self.stats, &sub, &around, hits)?;
        let offset = citations.len();
        citations.extend(cited.into_iter().map(|c| Citation { n: c.n + offset, ..c }));
        Some(shift_markers(&text, offset))
    }
}

/// `text` with each citation marker `[n]` raised by `offset`.
fn shift_markers(text: &str, offset: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let at = &rest[open..];
        match marker_len(at).and_then(|len| Some((len, at[1..len - 1].parse::<usize>().ok()?))) {
            Some((len, n)) => {
                out.push_str(&format!("[{}]", n + offset));
                rest = &at[len..];
            }
            None => {
                out.push('[');
                rest = &at[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// Citation numbers by first use.
#[derive(Default)]
struct Numbering {
    order: Vec<usize>,
}

impl Numbering {
    fn of(&mut self, piece: usize) -> usize {
        match self.order.iter().position(|&p| p == piece) {
            Some(i) => i + 1,
            None => {
                self.order.push(piece);
                self.order.len()
            }
        }
    }
}

/// Every unit of the pieces that may answer, scored: saturated BM25 over the question's terms
/// (IDF across all skills, normalized to [0, 1)), a bonus for the expected answer type, and a
/// prior for the piece's retrieval rank. Rules are quoted only when `rules` (a reader verifies the
/// answer); examples only when no reference has a unit that shares a word with the question.
fn score_units(
    question: &Question,
    weights: &[(String, f32)],
    context: &Context,
    surroundings: &[Surroundings],
    hits: &[Hit],
    rules: bool,
) -> Vec<Scored> {
    let rank_of: HashMap<u64, usize> = hits.iter().enumerate().map(|(i, h)| (h.chunk_id, i + 1)).collect();
    let expected = expected(&question.text);
    let total_weight: f32 = weights.iter().map(|w| w.1).sum::<f32>().max(f32::EPSILON);
    let mut all: Vec<Counted<'_>> = Vec::new();
    // What each passage is about: its document's title and its section heading (an FAQ's
    // question, an article's entity). The question's words found there hold for all of its
    // units; a unit is judged on the rest — the sentence that answers, not the one that repeats
    // the name.
    let topics: Vec<HashSet<String>> = context
        .pieces
        .iter()
        .map(|p| {
            let title = rank_of.get(&p.chunk_id).map_or("", |&r| hits[r - 1].title.as_str());
            let section = p.heading.rsplit('>').next().unwrap_or_default();
            // A label names a topic; a "title" that is a sentence (a web page's first sentence)
            // is text, judged as such.
            [title, section]
                .into_iter()
                .filter(|t| {
                    t.chars().count() <= MAX_TOPIC_CHARS && !t.trim_end().ends_with(['。', '.', '！', '!', '？', '?'])
                })
                .flat_map(skillrag_text::analyze)
                .collect()
        })
        .collect();
    for (i, piece) in context.pieces.iter().enumerate() {
        if piece.tier == "rules" && !rules {
            continue;
        }
        let Some(around) = surroundings.get(i) else { continue };
        for unit in units(around) {
            let terms = skillrag_text::analyze(&unit.shown);
            let len = terms.len();
            let mut tf: HashMap<String, usize> = HashMap::new();
            for t in terms {
                *tf.entry(t).or_default() += 1;
            }
            all.push((i, unit, tf, len, &topics[i]));
        }
    }
    let avg = (all.iter().map(|u| u.3).sum::<usize>() as f32 / all.len().max(1) as f32).max(1.0);
    let mut scored: Vec<Scored> = all
        .into_iter()
        .map(|(piece, unit, tf, len, topic)| {
            let norm = K1 * (1.0 - B + B * len as f32 / avg);
            let mut text_score = 0.0;
            let mut on_topic = 0.0;
            let mut covered = HashSet::new();
            for (t, w) in weights {
                let in_text = tf.get(t).map_or(0.0, |&n| w * n as f32 / (n as f32 + norm));
                if topic.contains(t) {
                    // Held by the title for every unit; a unit that uses it still says more.
                    on_topic += w;
                    text_score += TOPIC_TEXT_SHARE * in_text;
                    covered.insert(t.clone());
                } else if in_text > 0.0 {
                    text_score += in_text;
                    covered.insert(t.clone());
                }
            }
            let relevance = (text_score + TOPIC_WEIGHT * on_topic) / total_weight;
            // Saturating in the number of values, like a term's frequency: one 20天 says less
            // than 5天/10天/15天 to "how many days".
            let typed = expected.map_or(0, |e| values(&unit.shown, e));
            let type_bonus = TYPE_BONUS * (1.0 - 0.5f32.powi(typed.min(16) as i32));
            let rank =
                context.pieces.get(piece).and_then(|p| rank_of.get(&p.chunk_id)).copied().unwrap_or(hits.len() + 1);
            let total = relevance + type_bonus + RANK_PRIOR / rank as f32;
            Scored { piece, unit, relevance, total, covered }
        })
        .collect();
    let is_example = |s: &Scored| context.pieces[s.piece].tier == "examples";
    if scored.iter().any(|s| !is_example(s) && s.relevance > 0.0) {
        scored.retain(|s| !is_example(s));
    }
    scored
}

/// A unit of another passage that covers most of what the first one lacks, when it lacks much.
fn complement<'a>(scored: &'a [Scored], primary: &Scored, weights: &[(String, f32)]) -> Option<&'a Scored> {
    let total: f32 = weights.iter().map(|w| w.1).sum();
    let missing: Vec<&(String, f32)> = weights.iter().filter(|(t, _)| !primary.covered.contains(t)).collect();
    let missing_weight: f32 = missing.iter().map(|w| w.1).sum();
    if total <= 0.0 || missing_weight < 0.3 * total {
        return None;
    }
    let gain = |s: &Scored| missing.iter().filter(|(t, _)| s.covered.contains(t)).map(|w| w.1).sum::<f32>();
    scored
        .iter()
        .filter(|s| s.piece != primary.piece && s.relevance >= 0.5 * primary.relevance)
        .filter(|s| gain(s) >= 0.5 * missing_weight)
        .max_by(|a, b| gain(a).total_cmp(&gain(b)).then(a.total.total_cmp(&b.total)))
}

/// The other articles of the retrieved passages that share a word with the question, best
/// first: the provisions a reader should look at next, named so they can be looked up.
fn related_articles<'a>(scored: &'a [Scored], chosen: &[&Scored], context: &Context) -> Vec<&'a Scored> {
    let floor = RELATED_SHARE * chosen.first().map_or(0.0, |s| s.relevance);
    let source = |s: &Scored| context.pieces[s.piece].source.as_str();
    let mut named: HashSet<(&str, &str)> =
        chosen.iter().filter_map(|s| Some((source(s), s.unit.label.as_deref()?))).collect();
    let mut articles: Vec<&Scored> = scored
        .iter()
        .filter(|s| s.unit.kind == UnitKind::Article && s.relevance > floor.max(0.0) && s.unit.label.is_some())
        .collect();
    articles.sort_by(|a, b| b.total.total_cmp(&a.total).then(a.piece.cmp(&b.piece)));
    articles.retain(|s| s.unit.label.as_deref().is_some_and(|l| named.insert((source(s), l))));
    articles.truncate(MAX_RELATED);
    articles
}

/// A unit as the answer shows it: its own citation markers removed, hard-wrapped prose joined,
/// the lines of lists and tables kept, cut after a sentence end when it is very long.
fn shown(unit: &Unit) -> String {
    let text = strip_markers(&unit.shown);
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        let starts_block = t.is_empty() || t.starts_with(['|', '#', '>']) || is_list_item(t);
        match lines.last_mut() {
            Some(last) if !starts_block && !last.is_empty() && !last.starts_with('|') => {
                let joined = format!("{last}\n{t}");
                *last = unwrap_lines(&joined);
            }
            _ => lines.push(if t.is_empty() { String::new() } else { unwrap_lines(t) }),
        }
    }
    let text = lines.join("\n");
    cut_at_sentence(text.trim(), MAX_UNIT_CHARS)
}

/// `text` cut after its last sentence end within `max` characters (whole when shorter, or when
/// no sentence ends in time).
fn cut_at_sentence(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let limit = text.char_indices().nth(max).map_or(text.len(), |(i, _)| i);
    let end = skillrag_chunk::sentences(&text[..limit])
        .into_iter()
        .rev()
        .map(|(o, s)| o + s.len())
        .find(|&e| text[..e].trim_end().ends_with(['。', '.', '！', '!', '；', ';', '?', '？']));
    match end {
        Some(e) => text[..e].trim_end().to_string(),
        None => text.to_string(),
    }
}

/// The excerpt with its citation: after the text, or inside a table row's last cell so the
/// row stays a table row.
fn with_marker(text: &str, kind: UnitKind, n: usize) -> String {
    if kind == UnitKind::TableRow {
        if let Some(cut) = text.trim_end().strip_suffix('|') {
            return format!("{} [{n}] |", cut.trim_end());
        }
    }
    format!("{}[{n}]", text.trim_end())
}

/// The sentence without citation markers of its own (`[1]`, `[12]`): a knowledge file that
/// quotes a cited answer must not lend the answer markers that point at none of its citations.
fn strip_markers(sentence: &str) -> String {
    let mut out = String::with_capacity(sentence.len());
    let mut rest = sentence;
    while let Some(open) = rest.find('[') {
        match marker_len(&rest[open..]) {
            Some(len) => {
                out.push_str(rest[..open].trim_end_matches(' '));
                rest = &rest[open + len..];
            }
            None => {
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out.trim().to_string()
}

/// The sentence on one line: hard-wrapped knowledge text ("the admin\npassword") reads as
/// prose again. Each run of whitespace becomes one space, except that a line break between two
/// CJK characters is dropped.
fn unwrap_lines(sentence: &str) -> String {
    // Only layout whitespace: a no-break space (35\u{202f}000) is part of what it separates.
    let layout = |c: &char| matches!(c, ' ' | '\t' | '\n' | '\r');
    let mut out = String::with_capacity(sentence.len());
    let mut chars = sentence.trim().chars().peekable();
    while let Some(c) = chars.next() {
        if !layout(&c) {
            out.push(c);
            continue;
        }
        let mut newline = c == '\n';
        while let Some(&w) = chars.peek().filter(|w| layout(w)) {
            newline |= w == '\n';
            chars.next();
        }
        let between_cjk = out.chars().last().is_some_and(is_bmp_east_asian_or_fullwidth_form)
            && chars.peek().is_some_and(|&n| is_bmp_east_asian_or_fullwidth_form(n));
        if !(newline && between_cjk) {
            out.push(' ');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::contract::ContextPiece;

    #[test]
    fn wrapped_lines_are_joined() {
        assert_eq!(unwrap_lines("the admin\n  password"), "the admin password");
        assert_eq!(unwrap_lines("试用期\n不得超过"), "试用期不得超过");
        assert_eq!(unwrap_lines("第十九条  劳动合同"), "第十九条 劳动合同");
        assert_eq!(unwrap_lines("35\u{202f}000 to\n60\u{202f}000"), "35\u{202f}000 to 60\u{202f}000");
    }

    #[test]
    fn own_markers_are_removed_from_quoted_sentences() {
        assert_eq!(
            strip_markers("Hold reset for 10 s [1]. See [2][13] and [a] or [ 3]."),
            "Hold reset for 10 s. See and [a] or [ 3]."
        );
        assert_eq!(strip_markers("试用期不得超过六个月。[1]"), "试用期不得超过六个月。");
    }

    fn piece(n: usize, tier: &str, source: &str, heading: &str, text: &str) -> ContextPiece {
        ContextPiece {
            n,
            tier: tier.into(),
            skill: "s".into(),
            source: source.into(),
            heading: heading.into(),
            chunk_id: n as u64,
            text: text.into(),
            pages: None,
            summary: None,
        }
    }

    fn hit(chunk_id: u64) -> Hit {
        Hit {
            skill: "s".into(),
            source: String::new(),
            heading: String::new(),
            ordinal: 0,
            text: String::new(),
            scores: Default::default(),
            ranks: Default::default(),
            chunk_id,
            title: String::new(),
            span: (0, 0),
            doc_type: Default::default(),
            tier: Default::default(),
            pages: None,
            summary: None,
        }
    }

    /// The answer to `question` from `pieces` (hits in the order of `ranks`, chunk ids = `n`).
    fn answer(question: &str, pieces: Vec<ContextPiece>, ranks: &[u64]) -> Option<(String, Vec<Citation>)> {
        let surroundings: Vec<Surroundings> = pieces.iter().map(|p| Surroundings::alone(&p.text, false)).collect();
        let context = Context { pieces, ..Default::default() };
        let hits: Vec<Hit> = ranks.iter().map(|&id| hit(id)).collect();
        let q = Question::new(question, skillrag_text::analyze(question), None);
        extract(&q, &TermStats::default(), &context, &surroundings, &hits)
    }

    const ARTICLES: &str = "第十七条 劳动合同除前款规定的必备条款外，用人单位与劳动者可以约定试用期、培训、保守秘密等其他事项。\n\n第十九条 劳动合同期限三个月以上不满一年的，试用期不得超过一个月；三年以上固定期限和无固定期限的劳动合同，试用期不得超过六个月。\n\n同一用人单位与同一劳动者只能约定一次试用期。";

    #[test]
    fn the_article_that_answers_whole_with_its_label() {
        let (text, citations) =
            answer("试用期最长可以约定多久？", vec![piece(1, "references", "a.md", "第二章", ARTICLES)], &[1]).unwrap();
        assert!(text.starts_with("第十九条 劳动合同期限三个月以上"), "{text}");
        assert!(text.contains("试用期不得超过六个月。") && text.contains("只能约定一次试用期。[1]"), "{text}");
        assert!(!text.contains("第十七条 "), "{text}");
        assert_eq!((citations.len(), citations[0].n, citations[0].context_n), (1, 1, 1));
    }

    #[test]
    fn passages_come_whole_in_retrieval_order_each_with_its_own_citation() {
        let pieces = vec![
            piece(1, "references", "a.md", "第二章", ARTICLES),
            piece(2, "references", "b.md", "年休假", "第三条 职工累计工作已满1年不满10年的，年休假5天。"),
        ];
        let surroundings: Vec<Surroundings> = pieces.iter().map(|p| Surroundings::alone(&p.text, false)).collect();
        let context = Context { pieces, ..Default::default() };
        // Hit 9 is not in the context: it is passed over, and `max` counts passages given.
        let hits: Vec<Hit> = [2, 9, 1].iter().map(|&id| hit(id)).collect();
        let given = passages(&context, &surroundings, &hits, 2);
        assert_eq!(given.len(), 2);
        assert_eq!(given[0].0, "第三条 职工累计工作已满1年不满10年的，年休假5天。[1]");
        assert_eq!((given[0].1.len(), given[0].1[0].n, given[0].1[0].context_n), (1, 1, 2));
        // Every unit of the passage, each cited: 第十七条, 第十九条 with its paragraph.
        assert!(
            given[1].0.starts_with("第十七条 劳动合同除前款规定") && given[1].0.contains("其他事项。[1]\n\n第十九条")
        );
        assert!(given[1].0.ends_with("只能约定一次试用期。[1]"), "{}", given[1].0);
        assert_eq!(given[1].1[0].source, "a.md");
        // A paragraph's runs of sentences overlap: each sentence is shown once.
        let prose = "The router has four ports. Each port is gigabit. The fan is silent. It has no battery.";
        let one = vec![piece(1, "references", "p.md", "Ports", prose)];
        let around = vec![Surroundings::alone(prose, false)];
        let shown = passages(&Context { pieces: one, ..Default::default() }, &around, &[hit(1)], 1);
        assert_eq!(shown[0].0.matches("Each port is gigabit").count(), 1, "{}", shown[0].0);
        assert!(shown[0].0.contains("It has no battery."), "{}", shown[0].0);
        assert_eq!(passages(&context, &surroundings, &hits, 1).len(), 1);
        assert!(passages(&context, &surroundings, &hits, 0).is_empty());
    }

    #[test]
    fn rules_are_never_quoted_and_citations_start_at_one() {
        let pieces = vec![
            piece(1, "rules", "rules/citation.md", "回答与引用规则", "每个结论都必须写明依据的法规名称和条号，例如年休假条例第三条。"),
            piece(2, "references", "leave.md", "年休假", "第三条 职工累计工作已满1年不满10年的，年休假5天；已满10年不满20年的，年休假10天；已满20年的，年休假15天。"),
        ];
        let (text, citations) = answer("年休假有几天？", pieces, &[2, 1]).unwrap();
        assert!(text.starts_with("第三条 职工累计工作已满1年不满10年的，年休假5天"), "{text}");
        assert!(!text.contains("每个结论"), "{text}");
        assert_eq!(citations.len(), 1);
        assert_eq!((citations[0].n, citations[0].context_n, citations[0].source.as_str()), (1, 2, "leave.md"));
        assert!(text.ends_with("[1]"), "{text}");
    }

    #[test]
    fn a_table_row_under_its_header() {
        let table = "| LED | Meaning |\n|---|---|\n| Solid amber | Router is on but has no internet connection |\n| Blinking amber | Factory reset in progress |";
        let (text, _) = answer(
            "What does a blinking amber LED mean?",
            vec![piece(1, "references", "t.md", "LED colours", table)],
            &[1],
        )
        .unwrap();
        assert_eq!(text, "| LED | Meaning |\n|---|---|\n| Blinking amber | Factory reset in progress [1] |");
    }

    #[test]
    fn an_faq_answers_with_its_answer_and_a_question_is_never_an_answer() {
        let faq = "Q: Can I use the Nimbus outdoors?\nA: No. The Nimbus is for indoor use only.";
        let (text, _) =
            answer("Can I use the Nimbus outdoors?", vec![piece(1, "references", "faq.md", "FAQ", faq)], &[1]).unwrap();
        assert_eq!(text, "No. The Nimbus is for indoor use only.[1]");
        let only_questions = "How do I reset it?\n\nWhat does amber mean?";
        let none = answer("How do I reset it?", vec![piece(1, "references", "q.md", "", only_questions)], &[1]);
        assert!(none.is_none(), "{none:?}");
        let only_headings =
            answer("reset", vec![piece(1, "references", "h.md", "", "# Reset\n\n## Factory reset")], &[1]);
        assert!(only_headings.is_none());
    }

    #[test]
    fn the_passage_of_the_better_hit_and_a_second_only_when_it_adds() {
        let pieces = vec![
            piece(1, "references", "policy.md", "Warranty", "Firmware updates never void the warranty."),
            piece(
                2,
                "references",
                "fw.md",
                "Firmware update",
                "To update the firmware:\n\n1. Open **System > Firmware**.\n2. Click **Check for updates**.",
            ),
        ];
        let (text, citations) = answer("How do I update the firmware?", pieces, &[2, 1]).unwrap();
        assert!(text.starts_with("To update the firmware:\n\n1. Open **System > Firmware**."), "{text}");
        assert!(!text.contains("warranty"), "{text}");
        assert_eq!(citations.iter().map(|c| c.source.as_str()).collect::<Vec<_>>(), ["fw.md"]);
    }

    #[test]
    fn the_value_the_question_asks_for_wins() {
        let tea = "绿茶不发酵，芽叶细嫩，最怕高温。\n\n- **水温**：80–85°C。水烧开后敞开壶盖晾两三分钟即可。\n- **投茶量**：玻璃杯约 3 克茶配 150 毫升水。";
        let glass = "绿茶一般不需要洗茶，也不要长时间加盖闷泡，否则茶汤发黄、发苦。";
        let pieces =
            vec![piece(1, "references", "g.md", "玻璃杯泡法", glass), piece(2, "references", "g.md", "绿茶", tea)];
        let (text, _) = answer("绿茶用多少度的水泡？", pieces, &[1, 2]).unwrap();
        assert!(text.contains("80–85°C"), "{text}");
    }

    #[test]
    fn markers_are_shifted_for_the_next_part() {
        assert_eq!(shift_markers("a[1] b[2] [x] [", 2), "a[3] b[4] [x] [");
    }

    #[test]
    fn other_retrieved_articles_are_named() {
        let pieces = vec![
            piece(1, "references", "a.md", "", "第十九条 三年以上固定期限的劳动合同，试用期不得超过六个月。"),
            piece(2, "references", "b.md", "", "第二十条 劳动者在试用期的工资不得低于本单位相同岗位最低档工资。"),
        ];
        let (text, citations) = answer("试用期最长多久？", pieces, &[1, 2]).unwrap();
        assert!(text.ends_with("相关条文：第二十条[2]"), "{text}");
        let two = vec![piece(1, "references", "a.md", "", "第十九条 试用期不得超过六个月。\n\n第二十条 试用期的工资不得低于最低档工资。\n\n第二十一条 在试用期中，用人单位不得解除劳动合同。")];
        let (text, _) = answer("试用期最长多久？", two, &[1]).unwrap();
        assert!(text.ends_with("相关条文：第二十条、第二十一条[1]"), "{text}");
        assert_eq!(citations.len(), 2);
    }
}
