//! The extractive answer (docs/design.md §4.8, no LLM): the sentences of the context that best cover
//! the question, each followed by its `[n]`. Every word of the answer comes from a retrieved chunk.

use crate::contract::{marker_len, Citation, Context, ContextPiece};
use crate::evidence::{text_coverage, TermStats};
use crate::route::Question;

/// At most this many sentences, and about this many characters, in an answer.
const MAX_SENTENCES: usize = 3;
const MAX_CHARS: usize = 600;

/// Picks sentences from the context; returns the answer text and the citations it uses.
pub fn extract(question: &Question, stats: &TermStats, context: &Context) -> (String, Vec<Citation>) {
    // (score, piece index, byte offset, sentence)
    let mut scored: Vec<(f32, usize, usize, &str)> = Vec::new();
    for (i, piece) in context.pieces.iter().enumerate() {
        for (offset, sentence) in skillrag_chunk::sentences(&piece.text) {
            if sentence.chars().filter(|c| c.is_alphanumeric()).count() < 4 || is_reference_entry(sentence) {
                continue;
            }
            let cover = text_coverage(&question.terms, stats, sentence);
            // Earlier context pieces ranked higher; a small prior breaks ties toward them.
            let score = cover + 0.02 / (i + 1) as f32;
            scored.push((score, i, offset, sentence));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut picked: Vec<(usize, usize, &str)> = Vec::new();
    let mut chars = 0;
    let best = scored.first().map_or(0.0, |s| s.0);
    for (score, i, offset, sentence) in scored {
        // Further sentences must answer about as well as the best one.
        if picked.len() >= MAX_SENTENCES || (!picked.is_empty() && score < best * 0.6) {
            break;
        }
        let n = sentence.chars().count();
        if chars + n > MAX_CHARS && !picked.is_empty() {
            continue;
        }
        if picked.iter().any(|(_, _, s)| *s == sentence) {
            continue;
        }
        chars += n;
        picked.push((i, offset, sentence));
    }
    picked.sort_by_key(|&(i, offset, _)| (i, offset));
    let separator = if question.language == skillrag_core::Language::Chinese { "" } else { " " };
    let mut used: Vec<usize> = Vec::new();
    let text = picked
        .iter()
        .map(|&(i, _, sentence)| {
            let n = context.pieces[i].n;
            if !used.contains(&n) {
                used.push(n);
            }
            format!("{}[{n}]", unwrap_lines(&strip_markers(sentence)))
        })
        .collect::<Vec<_>>()
        .join(separator);
    let citations =
        used.into_iter().filter_map(|n| context.pieces.iter().find(|p| p.n == n)).map(ContextPiece::citation).collect();
    (text, citations)
}

/// A line of a reference list ("[1] setup.md, \"The web admin page\""): it names a source, it
/// does not answer anything.
fn is_reference_entry(sentence: &str) -> bool {
    marker_len(sentence.trim_start()).is_some()
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
    let cjk = |c: char| matches!(c as u32, 0x3000..=0x9FFF | 0xF900..=0xFAFF | 0xFF00..=0xFFEF);
    let mut out = String::with_capacity(sentence.len());
    let mut chars = sentence.trim().chars().peekable();
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
        let between_cjk = out.chars().last().is_some_and(cjk) && chars.peek().is_some_and(|&n| cjk(n));
        if !(newline && between_cjk) {
            out.push(' ');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::ContextPiece;

    #[test]
    fn wrapped_lines_are_joined() {
        assert_eq!(unwrap_lines("the admin\n  password"), "the admin password");
        assert_eq!(unwrap_lines("试用期\n不得超过"), "试用期不得超过");
        assert_eq!(unwrap_lines("第十九条  劳动合同"), "第十九条 劳动合同");
    }

    #[test]
    fn reference_list_lines_are_not_answers() {
        assert!(is_reference_entry("[1] troubleshooting.md, \"Factory reset\""));
        assert!(!is_reference_entry("Hold the reset pin [1]."));
        assert!(!is_reference_entry("[a] is not a marker"));
    }

    #[test]
    fn own_markers_are_removed_from_quoted_sentences() {
        assert_eq!(
            strip_markers("Hold reset for 10 s [1]. See [2][13] and [a] or [ 3]."),
            "Hold reset for 10 s. See and [a] or [ 3]."
        );
        assert_eq!(strip_markers("试用期不得超过六个月。[1]"), "试用期不得超过六个月。");
    }

    #[test]
    fn picks_covering_sentences_with_citations() {
        let context = Context {
            pieces: vec![
                ContextPiece {
                    n: 1,
                    tier: "references".into(),
                    skill: "labor-law".into(),
                    source: "a.md".into(),
                    heading: "第二章".into(),
                    chunk_id: 1,
                    text: "第十八条 劳动合同应当具备以下条款。第十九条 劳动合同期限三个月以上不满一年的，试用期不得超过一个月；劳动合同期限一年以上不满三年的，试用期不得超过二个月。".into(),
                    pages: None,
                    summary: None,
                },
                ContextPiece {
                    n: 2,
                    tier: "references".into(),
                    skill: "labor-law".into(),
                    source: "b.md".into(),
                    heading: String::new(),
                    chunk_id: 2,
                    text: "年休假天数根据职工累计工作时间确定。".into(),
                    pages: None,
                    summary: None,
                },
            ],
            ..Default::default()
        };
        let text = "劳动合同期限两年，试用期最长多久？";
        let q = Question::new(text, skillrag_text::analyze(text), None);
        let (answer, citations) = extract(&q, &TermStats::default(), &context);
        assert!(answer.contains("试用期不得超过二个月。[1]"), "{answer}");
        assert!(!answer.contains("年休假") && !answer.contains("第十八条"), "{answer}");
        assert_eq!(citations.len(), 1);
        assert_eq!(citations[0].source, "a.md");
    }
}
