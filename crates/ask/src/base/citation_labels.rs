//! Citation labels (docs/design.md §5): what each cited passage holds, so that two citations of
//! one answer never read the same. A statute's chunk is a run of articles under one chapter
//! heading, and a long section is several chunks under one heading: the location and heading
//! alone then name several passages.

use super::contract::{Citation, ContextPiece};

/// Characters of a passage's opening shown when nothing else tells two citations apart.
const OPENING_CHARS: usize = 32;

/// Labels every citation by the articles its passage holds (`第十九条`, `第十八条–第二十条`,
/// `Article 5–Article 7`); a citation that still reads like another of the same answer (same
/// skill, location, heading and label) is labelled by its passage's opening words instead.
pub fn label_citations(citations: &mut [Citation], pieces: &[ContextPiece]) {
    let piece_of = |c: &Citation| pieces.iter().find(|p| p.n == c.context_n);
    for c in citations.iter_mut() {
        c.label = piece_of(c).and_then(|p| held_articles(&p.heading, &p.text));
    }
    let reads_as = |c: &Citation| (c.skill.clone(), c.location(), c.heading.clone(), c.label.clone());
    let keys: Vec<_> = citations.iter().map(reads_as).collect();
    for (i, c) in citations.iter_mut().enumerate() {
        let shared = keys.iter().enumerate().any(|(j, k)| j != i && *k == keys[i]);
        if shared {
            if let Some(opening) = piece_of(c).and_then(|p| opening(&p.text)) {
                c.label = Some(opening);
            }
        }
    }
}

/// The articles a passage holds, first to last, when its heading does not already name the one
/// it is part of (an article longer than a chunk carries its label in the heading).
fn held_articles(heading: &str, text: &str) -> Option<String> {
    let labels: Vec<String> = text.lines().filter_map(skillrag_chunk::article_label).collect();
    match labels.as_slice() {
        [] => None,
        [only] if heading.ends_with(only.as_str()) => None,
        [only] => Some(only.clone()),
        [first, .., last] => Some(format!("{first}–{last}")),
    }
}

/// The passage's first line, cut after [`OPENING_CHARS`] characters (at a space when it has
/// spaces) and marked `…` where cut.
fn opening(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    if line.chars().count() <= OPENING_CHARS {
        return Some(line.to_string());
    }
    let cut: String = line.chars().take(OPENING_CHARS).collect();
    let cut = match cut.rfind(' ') {
        Some(at) if at > cut.len() / 2 => cut[..at].to_string(),
        _ => cut,
    };
    Some(format!("{}…", cut.trim_end()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(n: usize, heading: &str, text: &str) -> ContextPiece {
        ContextPiece {
            n,
            tier: "references".into(),
            skill: "law".into(),
            source: "labor-contract-law-03.md".into(),
            heading: heading.into(),
            chunk_id: n as u64,
            text: text.into(),
            pages: None,
            summary: None,
        }
    }

    fn cite(n: usize) -> Citation {
        let p = piece(n, "", "");
        Citation { n, heading: "《劳动合同法》第二章 劳动合同的订立".into(), ..p.citation() }
    }

    #[test]
    fn statute_passages_are_labelled_by_the_articles_they_hold() {
        let chapter = "《劳动合同法》第二章 劳动合同的订立";
        let pieces = vec![
            piece(1, chapter, "第十九条 劳动合同期限三个月以上不满一年的，试用期不得超过一个月。"),
            piece(2, chapter, "第二十条 劳动者在试用期的工资……\n第二十一条 在试用期中……\n第二十二条 用人单位为劳动者提供专项培训费用……"),
        ];
        let mut citations = vec![cite(1), cite(2)];
        label_citations(&mut citations, &pieces);
        assert_eq!(citations[0].label.as_deref(), Some("第十九条"));
        assert_eq!(citations[1].label.as_deref(), Some("第二十条–第二十二条"));
        assert!(citations[0].note() != citations[1].note());
        assert!(citations[1].note().ends_with("劳动合同的订立 · 第二十条–第二十二条"), "{}", citations[1].note());
    }

    #[test]
    fn an_article_named_by_its_heading_needs_no_label() {
        let pieces =
            vec![piece(1, "第二章 › 第三十九条", "第三十九条 劳动者有下列情形之一的，用人单位可以解除劳动合同")];
        let mut citations = vec![cite(1)];
        label_citations(&mut citations, &pieces);
        assert_eq!(citations[0].label, None);
    }

    #[test]
    fn passages_under_one_heading_are_told_apart_by_their_opening_words() {
        let pieces = vec![
            piece(1, "Warranty", "The warranty lasts 2 years from the date of purchase, parts and labour."),
            piece(2, "Warranty", "A factory reset never voids the warranty."),
            piece(3, "Setup", "Plug it in."),
        ];
        let mut citations: Vec<Citation> = pieces.iter().map(ContextPiece::citation).collect();
        label_citations(&mut citations, &pieces);
        assert_eq!(citations[0].label.as_deref(), Some("The warranty lasts 2 years from…"));
        assert_eq!(citations[1].label.as_deref(), Some("A factory reset never voids the…"));
        assert_eq!(citations[2].label, None, "a citation that reads like no other keeps its heading alone");
    }
}
