//! Conversation memory for `skillrag chat`: a follow-up such as "那试用期呢？" keeps the previous
//! question's skill and key terms.

use crate::answer::{Answer, Decision};

/// What a follow-up borrows from the previous turn.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowUp {
    pub skills: Vec<String>,
    pub key_terms: Vec<String>,
}

#[derive(Debug, Clone)]
struct Turn {
    question: String,
    skills: Vec<String>,
    key_terms: Vec<String>,
}

/// The turns of one chat session.
#[derive(Debug, Clone, Default)]
pub struct Conversation {
    turns: Vec<Turn>,
    /// LLM tokens (prompt + answer) spent in this conversation, for its budget.
    llm_tokens: usize,
}

const FOLLOW_UP_OPENERS_ZH: &[&str] = &["那", "那么", "如果", "还有", "另外", "再问", "那要是", "要是", "换成", "同样"];
const FOLLOW_UP_OPENERS_EN: &[&str] =
    &["what about", "how about", "and ", "what if", "and if", "then ", "also ", "same for", "in that case"];

impl Conversation {
    pub fn new() -> Conversation {
        Conversation::default()
    }

    /// Remembers an answered turn (refused or gated turns leave the topic as it was).
    pub fn record(&mut self, question: &str, answer: &Answer) {
        if let Some(g) = &answer.generation {
            self.llm_tokens += g.prompt_tokens + g.completion_tokens;
        }
        let routed = matches!(answer.route.decision, Decision::Single | Decision::Multi);
        if routed && answer.refusal.is_none() {
            let key_terms = skillrag_text::keywords(question, 4);
            self.turns.push(Turn { question: question.to_string(), skills: answer.route.skills.clone(), key_terms });
        }
    }

    /// LLM tokens spent so far.
    pub fn llm_tokens(&self) -> usize {
        self.llm_tokens
    }

    /// The answered questions so far, oldest first.
    pub fn questions(&self) -> Vec<String> {
        self.turns.iter().map(|t| t.question.clone()).collect()
    }

    pub fn is_empty(&self) -> bool {
        self.turns.is_empty()
    }

    /// The previous topic, when `question` reads like a follow-up: short, or opening with
    /// "那…", "如果…", "what about…", or ending in "呢".
    pub fn follow_up(&self, question: &str) -> Option<FollowUp> {
        let last = self.turns.last()?;
        let q = question.trim().to_lowercase();
        let body: String = q.chars().filter(|c| c.is_alphanumeric()).collect();
        let short = if skillrag_core::Language::detect(&q) == skillrag_core::Language::Chinese {
            body.chars().count() <= 8
        } else {
            q.split_whitespace().count() <= 4
        };
        let opener = FOLLOW_UP_OPENERS_ZH.iter().any(|o| q.starts_with(o))
            || FOLLOW_UP_OPENERS_EN.iter().any(|o| q.starts_with(o));
        let trailing = q.trim_end_matches(['？', '?', '。', ' ']).ends_with('呢');
        (short || opener || trailing)
            .then(|| FollowUp { skills: last.skills.clone(), key_terms: last.key_terms.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(skill: &str) -> Answer {
        let mut answer = Answer::new(None, String::new());
        answer.route.skills = vec![skill.into()];
        answer.route.confidence = 0.9;
        answer.route.decision = Decision::Single;
        answer.retrieved = true;
        answer.attempts = 1;
        answer
    }

    #[test]
    fn follow_ups_keep_skill_and_terms() {
        let mut c = Conversation::new();
        assert!(c.follow_up("那试用期呢？").is_none(), "no previous turn");
        c.record("用人单位解除劳动合同要支付经济补偿吗？", &answered("labor-law"));
        let f = c.follow_up("那试用期呢？").expect("follow-up");
        assert_eq!(f.skills, vec!["labor-law"]);
        assert!(!f.key_terms.is_empty());
        assert!(c.follow_up("What about MERS?").is_some());
        assert!(c.follow_up("职工累计工作满十年的，年休假是几天？").is_none());
        assert_eq!(c.questions(), vec!["用人单位解除劳动合同要支付经济补偿吗？"]);
    }

    #[test]
    fn counts_llm_tokens_of_every_turn() {
        let mut c = Conversation::new();
        let mut answer = answered("labor-law");
        answer.generation =
            Some(crate::GenerationInfo { prompt_tokens: 900, completion_tokens: 60, ..Default::default() });
        c.record("试用期多长？", &answer);
        answer.refusal = Some(crate::Refusal { kind: crate::RefusalKind::NotFound, message: String::new() });
        c.record("那加班呢？", &answer);
        assert_eq!(c.llm_tokens(), 1920, "refused turns spent tokens too");
    }
}
