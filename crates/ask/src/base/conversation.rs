//! Conversation memory for `chat` (CLI and HTTP): a follow-up such as "那试用期呢？" keeps the
//! previous question's skill and key terms.
//!
//! A turn's topic is what the route stage chose for it. Whether the knowledge then had the
//! answer does not change the topic (a follow-up to a `not_found` question is still about that
//! skill), so a conversation rebuilt from its questions alone, as the HTTP server does, has
//! the same topics as one that was answered turn by turn.

use crate::base::contract::{Decision, Route};
use crate::base::messages;
use skillrag_core::Language;

/// What a follow-up may borrow: the previous turn's topic, and each skill's latest terms.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FollowUp {
    /// The previous turn's skills (the topic).
    pub skills: Vec<String>,
    /// The previous turn's key terms.
    pub key_terms: Vec<String>,
    /// The key terms of the latest turn routed to each single skill, latest first: a follow-up
    /// routed to a skill borrows that skill's terms only, never another skill's.
    pub by_skill: Vec<(String, Vec<String>)>,
    /// It uses a pronoun that points back ("how long does *it* take?"): it cannot stand alone.
    pub refers_back: bool,
}

impl FollowUp {
    /// The terms a follow-up routed to `skills` may borrow: the topic's when it stays on the
    /// topic, else the latest terms of the one skill it moved to; none across skills.
    pub fn terms_for(&self, skills: &[String]) -> Option<&[String]> {
        if skills == self.skills.as_slice() {
            return Some(&self.key_terms);
        }
        let [skill] = skills else { return None };
        self.by_skill.iter().find(|(s, _)| s == skill).map(|(_, terms)| terms.as_slice())
    }
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

    /// Remembers a routed turn's topic (gated, out-of-scope and ambiguous turns leave the topic
    /// as it was).
    pub(crate) fn record(&mut self, question: &str, route: &Route) {
        // A gated request's route is `none` too.
        if matches!(route.decision, Decision::Single | Decision::Multi) {
            let key_terms = skillrag_text::keywords(question, 4);
            self.turns.push(Turn { question: question.to_string(), skills: route.skills.clone(), key_terms });
        }
    }

    /// Counts LLM tokens (prompt + answer) spent by a turn, refused or not.
    pub(crate) fn spend(&mut self, tokens: usize) {
        self.llm_tokens += tokens;
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
        let short = if Language::detect(&q) == Language::Chinese {
            body.chars().count() <= 8
        } else {
            q.split_whitespace().count() <= 4
        };
        let opener = FOLLOW_UP_OPENERS_ZH.iter().any(|o| q.starts_with(o))
            || FOLLOW_UP_OPENERS_EN.iter().any(|o| q.starts_with(o));
        let trailing = q.trim_end_matches(['？', '?', '。', ' ']).ends_with('呢');
        let refers_back = refers_back(&q);
        (short || opener || trailing || refers_back).then(|| FollowUp {
            skills: last.skills.clone(),
            key_terms: last.key_terms.clone(),
            by_skill: self.terms_by_skill(),
            refers_back,
        })
    }

    /// The key terms of the latest turn routed to each single skill, latest first.
    fn terms_by_skill(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for turn in self.turns.iter().rev() {
            if let [skill] = turn.skills.as_slice() {
                if !out.iter().any(|(s, _)| s == skill) {
                    out.push((skill.clone(), turn.key_terms.clone()));
                }
            }
        }
        out
    }
}

/// Pronouns that point at something the question does not name (anaphora): "how long does
/// *it* take?", "它多少钱？". A short question that uses one depends on the turn before.
const ANAPHORA_EN: &[&str] = &["it", "its", "that", "this", "they", "them", "those", "these"];
const ANAPHORA_ZH: &[&str] = &["它", "这个", "那个", "这样", "那样", "这种", "那种"];

/// A short question with a pronoun that refers back (lowercase `q`).
fn refers_back(q: &str) -> bool {
    if Language::detect(q) == Language::Chinese {
        return q.chars().filter(|c| c.is_alphanumeric()).count() <= 16 && ANAPHORA_ZH.iter().any(|p| q.contains(p));
    }
    let words: Vec<&str> = q.split(|c: char| !c.is_alphanumeric() && c != '\'').filter(|w| !w.is_empty()).collect();
    words.len() <= 8 && words.iter().any(|w| ANAPHORA_EN.contains(w))
}

/// Whether this turn may use the LLM, and the notice when it may not.
#[derive(Debug, Clone, PartialEq)]
pub struct Allowance {
    pub llm: bool,
    pub warning: Option<String>,
}

/// The conversation's LLM budget (`[llm] conversation_tokens`, 0 = none), enforced in code rather
/// than left to the model: once it is spent, no LLM step runs in the conversation. `has_llm`
/// says whether one is configured at all.
pub fn allowance(conversation: Option<&Conversation>, budget: usize, has_llm: bool, language: Language) -> Allowance {
    let llm = !(budget > 0 && conversation.is_some_and(|c| c.llm_tokens() >= budget));
    let warning = (!llm && has_llm).then(|| messages::llm_budget_spent(language, budget));
    Allowance { llm, warning }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routed(skill: &str, decision: Decision) -> Route {
        Route { skills: vec![skill.into()], decision, ..Route::none() }
    }

    #[test]
    fn follow_ups_keep_skill_and_terms() {
        let mut c = Conversation::new();
        assert!(c.follow_up("那试用期呢？").is_none(), "no previous turn");
        c.record("用人单位解除劳动合同要支付经济补偿吗？", &routed("labor-law", Decision::Single));
        let f = c.follow_up("那试用期呢？").expect("follow-up");
        assert_eq!(f.skills, vec!["labor-law"]);
        assert!(!f.key_terms.is_empty());
        assert!(c.follow_up("What about MERS?").is_some());
        assert!(c.follow_up("职工累计工作满十年的，年休假是几天？").is_none());
        assert!(c.follow_up("how long does it take?").is_some(), "a pronoun that refers back");
        assert!(c.follow_up("它一般要多少钱？").is_some());
        assert!(c.follow_up("What are the most common symptoms of the new coronavirus?").is_none());
        assert_eq!(c.questions(), vec!["用人单位解除劳动合同要支付经济补偿吗？"]);
    }

    #[test]
    fn only_routed_turns_set_the_topic() {
        let mut c = Conversation::new();
        c.record("你好", &crate::stages::gate::gated_route(crate::base::contract::GateKind::Chitchat));
        c.record("明天股市会涨吗？", &routed("labor-law", Decision::None));
        c.record("这个算哪个？", &routed("labor-law", Decision::Ambiguous));
        assert!(c.is_empty());
        c.record("绿茶用多少度的水泡？", &routed("tea", Decision::Single));
        assert_eq!(c.follow_up("那红茶呢？").map(|f| f.skills), Some(vec!["tea".to_string()]));
    }

    #[test]
    fn a_follow_up_borrows_only_the_terms_of_the_skill_it_goes_to() {
        let mut c = Conversation::new();
        c.record("How do I update the firmware?", &routed("router", Decision::Single));
        c.record("绿茶用多少度的水泡？", &routed("tea", Decision::Single));
        let f = c.follow_up("and how long does it take?").expect("follow-up");
        assert!(f.refers_back);
        assert_eq!(f.terms_for(&["tea".to_string()]), Some(&f.key_terms[..]), "the topic's own terms");
        let router = f.terms_for(&["router".to_string()]).expect("router's latest terms").join(" ");
        assert!(router.contains("firmware") && !router.contains("绿茶"), "{router}");
        assert_eq!(f.terms_for(&["labor".to_string()]), None, "never another skill's");
        assert!(!c.follow_up("那红茶呢？").expect("follow-up").refers_back);
    }

    #[test]
    fn counts_llm_tokens_of_every_turn() {
        let mut c = Conversation::new();
        c.spend(960);
        c.spend(960);
        assert_eq!(c.llm_tokens(), 1920);
    }

    #[test]
    fn a_spent_budget_turns_the_llm_off() {
        let mut c = Conversation::new();
        c.record("试用期多长？", &routed("labor-law", Decision::Single));
        c.spend(500);
        let spent = allowance(Some(&c), 400, true, Language::Other);
        assert!(!spent.llm && spent.warning.is_some_and(|w| w.contains("400")));
        assert_eq!(allowance(Some(&c), 400, false, Language::Other).warning, None, "no LLM, no notice");
        assert!(allowance(Some(&c), 600, true, Language::Other).llm);
        assert!(allowance(Some(&c), 0, true, Language::Other).llm, "0 = no limit");
        assert!(allowance(None, 400, true, Language::Other).llm, "a single question has no budget");
    }
}
