//! Statute answers that name the gold article (issue 18): for a statute, an answer that does not
//! say which article (第十九条, Article 19) it quotes is not usable.

use crate::BenchRow;
use skillrag_ask::Answer;

/// Chinese numerals (and digits) of an article number: 第十九条, 第一百零二条, 第19条.
const ARTICLE_NUMERALS: &str = "零〇一二三四五六七八九十百千两0123456789";
/// Numerals of an inserted article's suffix: 第十条之一.
const SUFFIX_NUMERALS: &str = "一二三四五六七八九十";

/// An article label, the whole string: `第[零〇一…千两0-9]+条(之[一…十]+)?` (条 or 條) or `Article \d+`.
pub(crate) fn is_article_label(s: &str) -> bool {
    if let Some(n) = s.strip_prefix("Article ") {
        return !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    }
    let s = skillrag_core::simplified(s);
    let Some((number, tail)) = s.strip_prefix('第').and_then(|rest| rest.split_once('条')) else { return false };
    let suffix_ok = match tail.strip_prefix('之') {
        Some(suffix) => !suffix.is_empty() && suffix.chars().all(|c| SUFFIX_NUMERALS.contains(c)),
        None => tail.is_empty(),
    };
    !number.is_empty() && number.chars().all(|c| ARTICLE_NUMERALS.contains(c)) && suffix_ok
}

/// `text` names the article `label`: `第十条` not as part of `第十条之一`, `Article 1` not as part
/// of `Article 12`.
pub(crate) fn names_article(text: &str, label: &str) -> bool {
    text.match_indices(label).any(|(at, _)| {
        let next = text[at + label.len()..].chars().next();
        if label.starts_with("Article ") {
            !next.is_some_and(|c| c.is_ascii_digit())
        } else {
            label.contains('之') || next != Some('之')
        }
    })
}

/// A source path without a leading `./`.
fn plain(source: &str) -> &str {
    source.strip_prefix("./").unwrap_or(source)
}

/// For a fact row whose gold answers are article labels and whose gold source was retrieved
/// (among the hits): whether the answer names one of the labels (a refusal names none). `None`
/// for other rows.
pub(crate) fn names_gold_article(row: &BenchRow, answer: &Answer) -> Option<bool> {
    let labels: Vec<&str> = row.answers.iter().map(|a| a.trim()).collect();
    if row.kind != "fact" || labels.is_empty() || !labels.iter().all(|l| is_article_label(l)) {
        return None;
    }
    let retrieved = row.gold_sources.iter().any(|g| answer.hits.iter().any(|h| plain(&h.source) == plain(g)));
    if !retrieved {
        return None;
    }
    Some(answer.refusal.is_none() && labels.iter().any(|l| names_article(&answer.answer, l)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn article_labels_are_recognized_whole() {
        for label in ["第十九条", "第一百零二条", "第19条", "第十条之一", "Article 19", "第两千条", "第十九條"]
        {
            assert!(is_article_label(label), "{label}");
        }
        for other in
            ["第十九条第二款", "十九条", "第条", "第十条之", "Article", "Article 5a", "试用期不得超过六个月", "第X条"]
        {
            assert!(!is_article_label(other), "{other}");
        }
    }

    #[test]
    fn an_article_is_named_only_as_itself() {
        assert!(names_article("依照第十条 规定", "第十条"));
        assert!(names_article("第十条之一 ……", "第十条之一"));
        assert!(!names_article("第十条之一 ……", "第十条"));
        assert!(!names_article("第二十条 ……", "第十条"));
        assert!(names_article("Under Article 1, the seller", "Article 1"));
        assert!(!names_article("Under Article 12, the seller", "Article 1"));
    }

    #[test]
    fn only_statute_rows_whose_gold_source_was_retrieved_count() {
        let row = |answers: &[&str]| BenchRow {
            id: "1".into(),
            query: "q".into(),
            skill: Some("law".into()),
            answers: answers.iter().map(|s| s.to_string()).collect(),
            gold_sources: vec!["./knowledge/a.md".into()],
            kind: "fact".into(),
            bench: None,
        };
        let mut answer = Answer::new(None, "q".into());
        answer.answer = "第十九条 试用期不得超过六个月。[1]".into();
        assert_eq!(names_gold_article(&row(&["第十九条"]), &answer), None, "gold source not retrieved");
        let hit = skillrag_core::Hit {
            skill: "law".into(),
            source: "knowledge/a.md".into(),
            heading: String::new(),
            ordinal: 0,
            text: String::new(),
            scores: Default::default(),
            ranks: Default::default(),
            chunk_id: 0,
            title: String::new(),
            span: (0, 1),
            doc_type: Default::default(),
            tier: Default::default(),
            pages: None,
            summary: None,
        };
        answer.hits = vec![hit];
        assert_eq!(names_gold_article(&row(&["第十九条"]), &answer), Some(true));
        assert_eq!(names_gold_article(&row(&["第二十条"]), &answer), Some(false));
        assert_eq!(names_gold_article(&row(&["六个月"]), &answer), None, "not an article label");
        answer.refusal =
            Some(skillrag_ask::Refusal { kind: skillrag_ask::RefusalKind::NotFound, message: String::new() });
        assert_eq!(names_gold_article(&row(&["第十九条"]), &answer), Some(false), "a refusal names nothing");
    }
}
