//! Boundary refusals: the question falls under what the skill's SKILL.md says it does not support.

use crate::evidence::{coverage, TermStats};
use crate::route::Question;
use skillrag_skill::Boundary;

/// The unsupported item of `boundary` that the question is about, if any: an item (or one of its
/// `、`/`,`-separated parts) whose informative words the question contains (≥ 75%, IDF-weighted).
pub fn unsupported_topic(question: &Question, boundary: &Boundary, stats: &TermStats) -> Option<String> {
    for item in &boundary.not_supported {
        let parts =
            item.split(['、', ',', '，', '/', '与', '和', '及', '或', '等']).map(str::trim).filter(|p| !p.is_empty());
        for part in parts {
            let terms = skillrag_text::analyze(part);
            if terms.is_empty() {
                continue;
            }
            if coverage(&terms, stats, |t| question.term_set.contains(t)) >= 0.75 {
                return Some(item.clone());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question(text: &str) -> Question {
        Question::new(text, skillrag_text::analyze(text), None)
    }

    #[test]
    fn finds_the_unsupported_item() {
        let b = Boundary {
            text: String::new(),
            supports: vec![],
            not_supported: vec!["刑事、知识产权、婚姻家庭等其他法律领域".into(), "personal medical advice".into()],
        };
        let stats = TermStats::default();
        assert_eq!(
            unsupported_topic(&question("离婚时婚姻家庭财产怎么分？"), &b, &stats).as_deref(),
            Some("刑事、知识产权、婚姻家庭等其他法律领域")
        );
        assert!(unsupported_topic(&question("Can you give me personal medical advice?"), &b, &stats).is_some());
        assert!(unsupported_topic(&question("试用期最长多久？"), &b, &stats).is_none());
    }
}
