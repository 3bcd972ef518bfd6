//! Users' judgements of answers (👍/👎, "wrong skill → this one", a comment), appended to
//! `<state>/feedback.jsonl` with the question, route, hits and answer they judge. Two readers:
//! `skillrag tune` takes confirmed routes and corrected misroutes as labelled questions
//! ([`routing_labels`]), and the gaps view tells knowledge owners whether retrieval or the
//! knowledge itself fell short ([`crate::logs::gaps::GapCause`]).

use crate::base::contract::{Answer, Decision, RefusalKind};
use crate::base::ids;
use crate::base::labelled::LabelledQuestion;
use crate::logs::jsonl::{AppendLog, Skipped};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rating {
    Up,
    Down,
}

impl Rating {
    pub fn parse(text: &str) -> Option<Rating> {
        match text {
            "up" => Some(Rating::Up),
            "down" => Some(Rating::Down),
            _ => None,
        }
    }
}

/// A passage the judged answer was built from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JudgedHit {
    pub skill: String,
    pub source: String,
    pub chunk_id: u64,
}

/// One judgement, with what was judged (when the answer is known).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackRecord {
    pub id: String,
    pub time: u64,
    pub query: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer_id: Option<String>,
    pub rating: Rating,
    /// The skill that should have answered, as the user named it (a misroute's correction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skill: Option<String>,
    /// The user said no skill covers the question (it should have been refused as out of scope).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_skill: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The skills the question was routed to, and how.
    #[serde(default)]
    pub routed: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// The route was the caller's (`--skill`, a skill's model), not the router's choice.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forced: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<RefusalKind>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hits: Vec<JudgedHit>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
}

/// What a user says about an answer.
#[derive(Debug, Clone, Default)]
pub struct Judgement {
    pub query: String,
    pub answer_id: Option<String>,
    pub skill: Option<String>,
    /// No skill covers the question.
    pub no_skill: bool,
    pub comment: Option<String>,
}

/// Longest comment kept, in characters.
const MAX_COMMENT: usize = 2000;

impl FeedbackRecord {
    /// The record of `judgement` about `answer` (when the answer is still known).
    pub fn new(judgement: Judgement, rating: Rating, answer: Option<&Answer>) -> FeedbackRecord {
        let comment =
            judgement.comment.map(|c| c.trim().chars().take(MAX_COMMENT).collect::<String>()).filter(|c| !c.is_empty());
        let mut record = FeedbackRecord {
            id: ids::new_id('f'),
            time: ids::now_secs(),
            query: judgement.query.trim().to_string(),
            answer_id: judgement.answer_id,
            rating,
            // A named skill and "no skill" contradict each other; the named skill wins.
            no_skill: judgement.no_skill && judgement.skill.is_none(),
            skill: judgement.skill,
            comment,
            routed: Vec::new(),
            decision: None,
            forced: false,
            refusal: None,
            hits: Vec::new(),
            answer: None,
        };
        if let Some(a) = answer {
            if record.query.is_empty() {
                record.query = a.query.clone();
            }
            record.routed = a.route.skills.clone();
            record.decision = Some(a.route.decision);
            record.forced = a.route.forced;
            record.refusal = a.refusal.as_ref().map(|r| r.kind);
            record.hits = a
                .hits
                .iter()
                .map(|h| JudgedHit { skill: h.skill.clone(), source: h.source.clone(), chunk_id: h.chunk_id })
                .collect();
            record.answer = Some(a.answer.clone());
        }
        record
    }

    /// What this judgement says about where the question belongs, if anything: a named skill
    /// (a corrected misroute) or none (no skill covers it); a 👍 on the router's own single route
    /// (confirmed), or on its refusal (`out_of_scope`: no skill; `not_found`: the skill, but not
    /// in its knowledge). A 👎 that names nothing says the answer was bad, not where it goes.
    fn routing_label(&self) -> Option<LabelledQuestion> {
        let label = |skill: Option<String>, answerable: bool| {
            Some(LabelledQuestion { query: self.query.clone(), skill, answerable, feedback: true })
        };
        if let Some(skill) = &self.skill {
            return label(Some(skill.clone()), true);
        }
        if self.no_skill {
            return label(None, false);
        }
        if self.rating != Rating::Up || self.forced {
            return None;
        }
        match (self.refusal, self.decision, self.routed.as_slice()) {
            (None, Some(Decision::Single), [skill]) => label(Some(skill.clone()), true),
            (Some(RefusalKind::OutOfScope), _, _) => label(None, false),
            (Some(RefusalKind::NotFound), Some(Decision::Single), [skill]) => label(Some(skill.clone()), false),
            _ => None,
        }
    }
}

/// Confirmed routes and corrected misroutes as labelled questions for `tune`, one per question
/// (the latest judgement wins), for the skills that still exist.
pub fn routing_labels(records: &[FeedbackRecord], skills: &[String]) -> Vec<LabelledQuestion> {
    let mut latest: HashMap<&str, LabelledQuestion> = HashMap::new();
    let mut order = Vec::new();
    for r in records {
        if r.query.is_empty() {
            continue;
        }
        let Some(label) = r.routing_label() else { continue };
        if label.skill.as_ref().is_some_and(|s| !skills.contains(s)) {
            continue;
        }
        if latest.insert(r.query.as_str(), label).is_none() {
            order.push(r.query.as_str());
        }
    }
    order.into_iter().filter_map(|q| latest.remove(q)).collect()
}

/// The feedback log (`<state>/feedback.jsonl`).
#[derive(Debug)]
pub struct FeedbackLog {
    log: AppendLog,
}

impl FeedbackLog {
    pub fn new(state_dir: &Path) -> FeedbackLog {
        FeedbackLog { log: AppendLog::new(state_dir.join("feedback.jsonl")) }
    }

    pub fn path(&self) -> &Path {
        self.log.path()
    }

    pub fn record(&self, record: &FeedbackRecord) -> std::io::Result<()> {
        self.log.append(record)
    }

    /// Every readable judgement, oldest first, and the lines skipped as unreadable.
    pub fn list(&self) -> std::io::Result<(Vec<FeedbackRecord>, Skipped)> {
        self.log.read()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::contract::Refusal;

    fn answered(query: &str, skill: &str) -> Answer {
        let mut a = Answer::new(None, query.to_string());
        a.route.skills = vec![skill.to_string()];
        a.route.decision = Decision::Single;
        a.answer = "六个月。[1]".into();
        a
    }

    fn judged(answer: &Answer, rating: Rating, skill: Option<&str>) -> FeedbackRecord {
        let judgement = Judgement {
            query: answer.query.clone(),
            answer_id: Some(answer.answer_id.clone()),
            skill: skill.map(str::to_string),
            ..Default::default()
        };
        FeedbackRecord::new(judgement, rating, Some(answer))
    }

    #[test]
    fn confirmed_routes_and_corrections_become_labels() {
        let skills = vec!["labor-law".to_string(), "contract-law".to_string()];
        let a = answered("试用期多久？", "labor-law");
        let b = answered("房租押金不退怎么办？", "labor-law");
        let c = answered("明天天气怎么样", "labor-law");
        let mut out = Answer::new(None, "花呗怎么还".into());
        out.refusal = Some(Refusal { kind: RefusalKind::OutOfScope, message: String::new() });
        let mut forced = answered("加班费怎么算", "contract-law");
        forced.route.forced = true;
        let records = vec![
            judged(&a, Rating::Up, None),
            judged(&b, Rating::Down, Some("contract-law")),
            judged(&c, Rating::Down, None),
            judged(&out, Rating::Up, None),
            judged(&forced, Rating::Up, None),
            judged(&answered("旧技能的问题", "gone"), Rating::Down, Some("gone")),
            FeedbackRecord::new(
                Judgement { query: "花呗怎么开通".into(), no_skill: true, ..Default::default() },
                Rating::Down,
                Some(&answered("花呗怎么开通", "labor-law")),
            ),
        ];
        let labels = routing_labels(&records, &skills);
        let got: Vec<(&str, Option<&str>)> = labels.iter().map(|l| (l.query.as_str(), l.skill.as_deref())).collect();
        assert_eq!(
            got,
            vec![
                ("试用期多久？", Some("labor-law")),
                ("房租押金不退怎么办？", Some("contract-law")),
                ("花呗怎么还", None),
                ("花呗怎么开通", None)
            ]
        );
    }

    #[test]
    fn the_latest_judgement_of_a_question_wins() {
        let skills = vec!["labor-law".to_string(), "contract-law".to_string()];
        let a = answered("押金", "labor-law");
        let records = vec![judged(&a, Rating::Up, None), judged(&a, Rating::Down, Some("contract-law"))];
        let labels = routing_labels(&records, &skills);
        assert_eq!(labels.len(), 1);
        assert_eq!(labels[0].skill.as_deref(), Some("contract-law"));
    }

    #[test]
    fn records_keep_what_was_judged_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let log = FeedbackLog::new(dir.path());
        let a = answered("试用期多久？", "labor-law");
        let judgement = Judgement { comment: Some(format!("  {}  ", "长".repeat(3000))), ..Default::default() };
        let record = FeedbackRecord::new(judgement, Rating::Down, Some(&a));
        assert_eq!(record.query, "试用期多久？", "the answer's question when none was sent");
        assert_eq!(record.comment.as_ref().map(|c| c.chars().count()), Some(MAX_COMMENT));
        log.record(&record).unwrap();
        let (read, unreadable) = log.list().unwrap();
        assert_eq!(read, vec![record]);
        assert!(unreadable.is_empty());
    }
}
