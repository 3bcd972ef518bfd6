//! Plan (docs/design.md §4.3): what this turn searches for, given the conversation before it.
//!
//! A follow-up ("那试用期呢？") becomes a standalone question when an LLM rewrites; without one it
//! borrows the previous question's key terms.

use crate::base::conversation::{Conversation, FollowUp};
use crate::llm::Assist;
use skillrag_core::Language;

/// The plan stage's hand-off to routing.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The question as asked.
    pub question: String,
    pub language: Language,
    /// What retrieval searches: the question, its standalone rewrite, or the question with the
    /// previous turn's key terms.
    pub retrieval_text: String,
    /// The previous turn's topic, when this question reads like a follow-up.
    pub follow_up: Option<FollowUp>,
    /// `retrieval_text` is the LLM's standalone rewrite of a follow-up.
    pub rewritten: bool,
}

/// Plans one turn; `rewriter` is the LLM that rewrites follow-ups, when it may.
pub fn plan(question: &str, conversation: Option<&Conversation>, rewriter: Option<&Assist>) -> Plan {
    let language = Language::detect(question);
    let follow_up = conversation.and_then(|c| c.follow_up(question));
    let standalone = match (&follow_up, rewriter, conversation) {
        (Some(_), Some(r), Some(c)) => r.standalone(&c.questions(), question, language),
        _ => None,
    };
    let rewritten = standalone.is_some();
    let retrieval_text = match (&follow_up, standalone) {
        (_, Some(rewritten)) => rewritten,
        (Some(f), None) => format!("{} {}", f.key_terms.join(" "), question),
        (None, None) => question.to_string(),
    };
    Plan { question: question.to_string(), language, retrieval_text, follow_up, rewritten }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::contract::{Decision, Route};

    fn conversation() -> Conversation {
        let route = Route { skills: vec!["labor-law".into()], decision: Decision::Single, ..Route::none() };
        let mut c = Conversation::new();
        c.record("劳动合同期限三年，试用期最长可以约定多久？", &route);
        c
    }

    #[test]
    fn a_new_question_is_searched_as_asked() {
        let p = plan("绿茶用多少度的水泡？", None, None);
        assert_eq!(p.retrieval_text, "绿茶用多少度的水泡？");
        assert_eq!((p.follow_up, p.language), (None, Language::Chinese));
        let c = conversation();
        let p = plan("职工累计工作满十年的，年休假是几天？", Some(&c), None);
        assert!(p.follow_up.is_none(), "a full question is a new topic");
        assert_eq!(p.retrieval_text, p.question);
    }

    #[test]
    fn a_follow_up_borrows_the_previous_key_terms() {
        let c = conversation();
        let p = plan("那两年呢？", Some(&c), None);
        assert_eq!(p.follow_up.as_ref().map(|f| f.skills.clone()), Some(vec!["labor-law".to_string()]));
        let key_terms = p.follow_up.as_ref().map(|f| f.key_terms.join(" ")).unwrap_or_default();
        assert!(!key_terms.is_empty());
        assert_eq!(p.retrieval_text, format!("{key_terms} 那两年呢？"));
    }
}
