//! Unanswered questions: every `not_found` and `out_of_scope` is appended to a log in the
//! project's state folder so knowledge-base owners can see what their skills are missing
//! (`skillrag gaps`, `GET /v1/gaps`). Answers users rated 👎 join them
//! ([`GapLog::list_with_feedback`]), each with its cause: the knowledge lacks it, retrieval
//! answered badly, or the question went to the wrong skill. Answers users rated 👍 are listed
//! beside them ([`GapLog::liked`]): each may become a knowledge entry keyed by the question as
//! users asked it.

use crate::base::contract::{Answer, RefusalKind};
use crate::logs::feedback::{FeedbackRecord, Rating};
use crate::logs::jsonl::{AppendLog, Skipped};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// One logged refusal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapRecord {
    pub time: u64,
    /// The skill the question was routed to; `None` for `out_of_scope`, which fits no skill.
    pub skill: Option<String>,
    pub kind: RefusalKind,
    /// The question as the knowledge was searched for it: for a follow-up, its standalone form
    /// (or the previous turn's key terms with it), since "and what about WPS?" alone tells an
    /// owner nothing about what is missing.
    pub query: String,
    /// A follow-up's own wording, when `query` is its standalone form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub asked: Option<String>,
}

/// Why a question went unanswered, as far as can be told.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GapCause {
    /// Refused: the skills' knowledge does not hold it (add a document).
    Content,
    /// Answered, and the user rated the answer down: the knowledge may hold it, but retrieval
    /// or the answer missed it (look at the hits; add examples or rewrite the document).
    Retrieval,
    /// Rated down, naming another skill or saying no skill covers it (or refused when a skill
    /// should have answered): the router's mistake (`skillrag tune` learns from it).
    Routing,
}

/// The same question with the same cause in the same skill, counted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gap {
    /// Fixed by its skill, cause and question (as grouped): what a draft or a resolve names.
    pub id: String,
    pub skill: Option<String>,
    pub cause: GapCause,
    /// The refusal, for a refused question.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<RefusalKind>,
    /// The question as first asked.
    pub query: String,
    pub count: usize,
    pub first_seen: u64,
    pub last_seen: u64,
    /// Users' comments on the rated answers, most recent first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<String>,
}

/// A gap the owner marked resolved (`<state>/gaps-resolved.jsonl`): it is listed again only when
/// the question is asked again after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resolved {
    pub id: String,
    pub time: u64,
}

/// The append-only log of unanswered questions (`<state>/gaps.jsonl`), and of the gaps resolved.
#[derive(Debug)]
pub struct GapLog {
    log: AppendLog,
    resolved: AppendLog,
}

impl GapLog {
    pub fn new(state_dir: &Path) -> GapLog {
        GapLog {
            log: AppendLog::new(state_dir.join("gaps.jsonl")),
            resolved: AppendLog::new(state_dir.join("gaps-resolved.jsonl")),
        }
    }

    /// Marks the gap `id` resolved now: it leaves the list until its question is asked again.
    pub fn resolve(&self, id: &str) -> std::io::Result<()> {
        self.resolved.append(&Resolved { id: id.to_string(), time: crate::base::ids::now_secs() })
    }

    pub fn path(&self) -> &Path {
        self.log.path()
    }

    /// The record for `answer`, when it was refused as `not_found` or `out_of_scope`;
    /// `standalone` is a follow-up's question as it was searched.
    pub fn record_of(answer: &Answer, standalone: Option<&str>) -> Option<GapRecord> {
        let kind = answer.refusal.as_ref()?.kind;
        if !matches!(kind, RefusalKind::NotFound | RefusalKind::OutOfScope) {
            return None;
        }
        let skill = answer.route.skills.first().cloned();
        let (query, asked) = match standalone {
            Some(s) if s != answer.query => (s.to_string(), Some(answer.query.clone())),
            _ => (answer.query.clone(), None),
        };
        Some(GapRecord { time: crate::base::ids::now_secs(), skill, kind, query, asked })
    }

    /// Appends `answer` when it is a gap. Failing to log never fails the question.
    pub fn record(&self, answer: &Answer, standalone: Option<&str>) {
        if let Some(record) = Self::record_of(answer, standalone) {
            let _ = self.log.append(&record);
        }
    }

    /// The logged gaps, grouped by skill and question (case and punctuation ignored), most
    /// frequent first, then most recent. `skill` keeps one skill's. Unreadable lines (a crash
    /// mid-write, bytes that are not UTF-8) are skipped and named.
    pub fn list(&self, skill: Option<&str>) -> std::io::Result<(Vec<Gap>, Skipped)> {
        self.list_with_feedback(skill, &[])
    }

    /// [`GapLog::list`] with the answers rated 👎 in `feedback` added, by cause.
    pub fn list_with_feedback(
        &self,
        skill: Option<&str>,
        feedback: &[FeedbackRecord],
    ) -> std::io::Result<(Vec<Gap>, Skipped)> {
        let (records, unreadable) = self.log.read::<GapRecord>()?;
        let refused =
            records.into_iter().map(|r| (r.skill, GapCause::Content, Some(r.kind), r.query, r.time, None::<String>));
        let rated = feedback.iter().filter(|f| f.rating == Rating::Down).map(|f| {
            let cause = match (&f.skill, f.refusal) {
                (Some(named), _) if !f.routed.contains(named) => GapCause::Routing,
                (None, _) if f.no_skill => GapCause::Routing,
                (None, Some(RefusalKind::OutOfScope)) => GapCause::Routing,
                _ => GapCause::Retrieval,
            };
            let skill = f.skill.clone().or_else(|| f.routed.first().cloned());
            (skill, cause, f.refusal, f.query.clone(), f.time, f.comment.clone())
        });
        let mut groups: HashMap<(Option<String>, GapCause, String), Gap> = HashMap::new();
        for (gap_skill, cause, kind, query, time, comment) in refused.chain(rated) {
            if skill.is_some_and(|s| gap_skill.as_deref() != Some(s)) {
                continue;
            }
            let key = (gap_skill.clone(), cause, normalize(&query));
            let id = gap_id(&key);
            let gap = groups.entry(key).or_insert_with(|| Gap {
                id,
                skill: gap_skill,
                cause,
                kind,
                query,
                count: 0,
                first_seen: time,
                last_seen: time,
                comments: Vec::new(),
            });
            gap.count += 1;
            gap.first_seen = gap.first_seen.min(time);
            if time >= gap.last_seen {
                gap.last_seen = time;
                gap.kind = kind;
            }
            gap.comments.extend(comment);
        }
        // A resolved gap stays out of the list until its question comes back.
        let resolved = self.resolved_at();
        // A refusal the user then rated down naming the skill (or no skill) is the router's
        // mistake, listed once, under routing, not also as missing knowledge.
        let misrouted: std::collections::HashSet<String> =
            groups.values().filter(|g| g.cause == GapCause::Routing).map(|g| normalize(&g.query)).collect();
        let mut gaps: Vec<Gap> = groups
            .into_values()
            .filter(|g| resolved.get(&g.id).is_none_or(|&at| g.last_seen > at))
            .filter(|g| !(g.cause == GapCause::Content && misrouted.contains(&normalize(&g.query))))
            .collect();
        for gap in &mut gaps {
            gap.comments.reverse();
        }
        gaps.sort_by(|a, b| b.count.cmp(&a.count).then(b.last_seen.cmp(&a.last_seen)).then(a.query.cmp(&b.query)));
        Ok((gaps, unreadable))
    }
}

/// An answer users rated 👍, grouped by skill and question: a candidate knowledge entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LikedAnswer {
    /// Fixed by its skill and question (`l-…`): what a draft or a resolve names.
    pub id: String,
    pub skill: String,
    /// The question as first rated.
    pub query: String,
    /// The latest answer rated 👍, as the user read it.
    pub answer: String,
    /// The documents of the passages that answer was built from.
    pub sources: Vec<String>,
    pub count: usize,
    pub last_seen: u64,
}

impl GapLog {
    /// The answers rated 👍 in `feedback` that an entry could keep: answered (not refused) from
    /// one skill, with the answer's text known; most often rated first. `skill` keeps one
    /// skill's. One that was drafted into knowledge (resolved) comes back only when rated again.
    pub fn liked(&self, skill: Option<&str>, feedback: &[FeedbackRecord]) -> Vec<LikedAnswer> {
        let mut groups: HashMap<(String, String), LikedAnswer> = HashMap::new();
        for f in feedback.iter().filter(|f| f.rating == Rating::Up && f.refusal.is_none()) {
            let ([routed], Some(answer)) = (f.routed.as_slice(), f.answer.as_deref().filter(|a| !a.trim().is_empty()))
            else {
                continue;
            };
            if skill.is_some_and(|s| s != routed) {
                continue;
            }
            let key = (routed.clone(), normalize(&f.query));
            let id = format!("l-{}", &blake3::hash(format!("{}\n{}", key.0, key.1).as_bytes()).to_hex()[..12]);
            let liked = groups.entry(key).or_insert_with(|| LikedAnswer {
                id,
                skill: routed.clone(),
                query: f.query.clone(),
                answer: String::new(),
                sources: Vec::new(),
                count: 0,
                last_seen: 0,
            });
            liked.count += 1;
            if f.time >= liked.last_seen {
                liked.last_seen = f.time;
                liked.answer = answer.to_string();
                liked.sources = Vec::new();
                for hit in &f.hits {
                    if !liked.sources.contains(&hit.source) {
                        liked.sources.push(hit.source.clone());
                    }
                }
            }
        }
        let resolved = self.resolved_at();
        let mut liked: Vec<LikedAnswer> =
            groups.into_values().filter(|l| resolved.get(&l.id).is_none_or(|&at| l.last_seen > at)).collect();
        liked.sort_by(|a, b| b.count.cmp(&a.count).then(b.last_seen.cmp(&a.last_seen)).then(a.query.cmp(&b.query)));
        liked
    }

    /// When each resolved id was resolved (its latest time). An unreadable line of this log is
    /// skipped: it only hides an entry, it never loses one.
    fn resolved_at(&self) -> HashMap<String, u64> {
        let mut at: HashMap<String, u64> = HashMap::new();
        for r in self.resolved.read::<Resolved>().map(|(r, _)| r).unwrap_or_default() {
            let time = at.entry(r.id).or_insert(r.time);
            *time = (*time).max(r.time);
        }
        at
    }
}

/// The id of the gap grouped under `key`.
fn gap_id((skill, cause, question): &(Option<String>, GapCause, String)) -> String {
    let cause = serde_json::to_string(cause).unwrap_or_default();
    let text = format!("{}\n{cause}\n{question}", skill.as_deref().unwrap_or(""));
    format!("g-{}", &blake3::hash(text.as_bytes()).to_hex()[..12])
}

/// Lowercase letters and digits only, so "Wifi password?" and "wifi password" count as one.
fn normalize(query: &str) -> String {
    query.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::contract::Refusal;

    fn refused(query: &str, skill: Option<&str>, kind: RefusalKind) -> Answer {
        let mut a = Answer::new(None, query.to_string());
        a.route.skills = skill.map(|s| vec![s.to_string()]).unwrap_or_default();
        a.refusal = Some(Refusal { kind, message: String::new() });
        a
    }

    #[test]
    fn groups_repeated_questions_most_frequent_first() {
        let dir = tempfile::tempdir().unwrap();
        let log = GapLog::new(dir.path());
        log.record(&refused("Wifi password?", Some("router"), RefusalKind::NotFound), None);
        log.record(&refused("wifi password", Some("router"), RefusalKind::NotFound), None);
        log.record(&refused("明天天气", None, RefusalKind::OutOfScope), None);
        log.record(&refused("boundary", Some("router"), RefusalKind::Boundary), None);
        log.record(&Answer::new(None, "answered".into()), None);
        use std::io::Write;
        std::fs::OpenOptions::new().append(true).open(log.path()).unwrap().write_all(b"{broken\n").unwrap();

        let (gaps, unreadable) = log.list(None).unwrap();
        assert_eq!(unreadable.lines().collect::<Vec<_>>(), vec![4]);
        assert_eq!(gaps.len(), 2, "{gaps:?}");
        assert_eq!((gaps[0].count, gaps[0].query.as_str()), (2, "Wifi password?"));
        assert_eq!(gaps[1].skill, None);
        assert!(gaps.iter().all(|g| g.cause == GapCause::Content));
        let (router, _) = log.list(Some("router")).unwrap();
        assert_eq!(router.len(), 1);
    }

    #[test]
    fn rated_down_answers_join_the_gaps_by_cause() {
        use crate::logs::feedback::{FeedbackRecord, Judgement};
        let dir = tempfile::tempdir().unwrap();
        let log = GapLog::new(dir.path());
        log.record(&refused("押金多少", Some("router"), RefusalKind::NotFound), None);
        let mut answered = Answer::new(None, "How do I reset it?".into());
        answered.route.skills = vec!["router".into()];
        let down = |skill: Option<&str>, comment: Option<&str>| {
            let judgement = Judgement {
                skill: skill.map(str::to_string),
                comment: comment.map(str::to_string),
                ..Default::default()
            };
            FeedbackRecord::new(judgement, Rating::Down, Some(&answered))
        };
        let up = FeedbackRecord::new(Judgement::default(), Rating::Up, Some(&answered));
        let feedback = vec![down(None, Some("wrong steps")), down(None, None), down(Some("tea"), None), up];
        let (gaps, _) = log.list_with_feedback(None, &feedback).unwrap();
        let summary: Vec<(GapCause, Option<&str>, usize)> =
            gaps.iter().map(|g| (g.cause, g.skill.as_deref(), g.count)).collect();
        assert_eq!(
            summary,
            vec![
                (GapCause::Retrieval, Some("router"), 2),
                (GapCause::Routing, Some("tea"), 1),
                (GapCause::Content, Some("router"), 1)
            ]
        );
        assert_eq!(gaps.len(), 3);
        assert_eq!(gaps[0].comments, vec!["wrong steps"]);
        let json = serde_json::to_value(&gaps[0]).unwrap();
        assert_eq!(json["cause"], "retrieval");
        assert!(json.get("kind").is_none(), "an answered question has no refusal kind");
    }

    #[test]
    fn liked_answers_are_listed_by_question_until_resolved() {
        use crate::logs::feedback::{FeedbackRecord, Judgement};
        let dir = tempfile::tempdir().unwrap();
        let log = GapLog::new(dir.path());
        let answer = |query: &str, text: &str, skills: &[&str], refused: bool| {
            let mut a = Answer::new(None, query.into());
            a.route.skills = skills.iter().map(|s| s.to_string()).collect();
            a.answer = text.into();
            a.refusal = refused.then(|| Refusal { kind: RefusalKind::NotFound, message: text.into() });
            a
        };
        let up = |a: &Answer| FeedbackRecord::new(Judgement::default(), Rating::Up, Some(a));
        let mut first = up(&answer("how do i reset it", "Hold the pin [1].", &["router"], false));
        first.time -= 10;
        let mut later = up(&answer("How do I reset it?", "Hold the pin 10 s [1].", &["router"], false));
        later.time -= 5;
        let feedback = vec![
            first,
            later,
            up(&answer("押金多少", "没有找到", &["router"], true)),
            up(&answer("Reset and brew?", "Both [1][2].", &["router", "tea"], false)),
            FeedbackRecord::new(Judgement::default(), Rating::Up, None),
            FeedbackRecord::new(Judgement::default(), Rating::Down, Some(&answer("Q", "A", &["router"], false))),
        ];
        let liked = log.liked(None, &feedback);
        assert_eq!(liked.len(), 1, "refusals, several skills, unknown answers and 👎 are not kept: {liked:?}");
        assert_eq!((liked[0].count, liked[0].answer.as_str()), (2, "Hold the pin 10 s [1]."), "the latest answer");
        assert!(liked[0].id.starts_with("l-"));
        assert!(log.liked(Some("tea"), &feedback).is_empty());
        log.resolve(&liked[0].id).unwrap();
        assert!(log.liked(None, &feedback).is_empty(), "drafted into knowledge, it leaves the list");
        let mut again = up(&answer("How do I reset it?", "Hold the pin [1].", &["router"], false));
        again.time += 3600;
        assert_eq!(log.liked(None, &[again]).len(), 1, "rated again later, it comes back");
    }

    #[test]
    fn a_follow_up_is_logged_as_it_was_searched() {
        let answer = refused("and what about WPS?", Some("office"), RefusalKind::NotFound);
        let r = GapLog::record_of(&answer, Some("WPS 表格 和 and what about WPS?")).unwrap();
        assert_eq!(r.query, "WPS 表格 和 and what about WPS?");
        assert_eq!(r.asked.as_deref(), Some("and what about WPS?"));
        let plain = GapLog::record_of(&answer, None).unwrap();
        assert_eq!((plain.query.as_str(), plain.asked.as_deref()), ("and what about WPS?", None));
        assert!(!serde_json::to_string(&plain).unwrap().contains("asked"), "older readers see the same record");
    }

    #[test]
    fn a_refusal_rated_down_naming_a_skill_is_listed_once_under_routing() {
        use crate::logs::feedback::{FeedbackRecord, Judgement};
        let dir = tempfile::tempdir().unwrap();
        let log = GapLog::new(dir.path());
        let refusal = refused("白茶怎么存放？", None, RefusalKind::OutOfScope);
        log.record(&refusal, None);
        log.record(&refused("押金多少", Some("router"), RefusalKind::NotFound), None);
        let judgement = Judgement { skill: Some("tea".into()), ..Default::default() };
        let feedback = vec![FeedbackRecord::new(judgement, Rating::Down, Some(&refusal))];
        let (gaps, _) = log.list_with_feedback(None, &feedback).unwrap();
        let listed: Vec<(GapCause, &str)> = gaps.iter().map(|g| (g.cause, g.query.as_str())).collect();
        assert_eq!(listed.len(), 2, "{listed:?}");
        assert!(
            listed.contains(&(GapCause::Routing, "白茶怎么存放？"))
                && listed.contains(&(GapCause::Content, "押金多少"))
        );
    }

    #[test]
    fn a_resolved_gap_leaves_the_list_until_it_is_asked_again() {
        let dir = tempfile::tempdir().unwrap();
        let log = GapLog::new(dir.path());
        log.record(&refused("Wifi password?", Some("router"), RefusalKind::NotFound), None);
        log.record(&refused("押金多少", Some("router"), RefusalKind::NotFound), None);
        let (gaps, _) = log.list(None).unwrap();
        let wifi = gaps.iter().find(|g| g.query == "Wifi password?").unwrap().id.clone();
        assert!(wifi.starts_with("g-") && gaps.iter().all(|g| g.id != wifi || g.query == "Wifi password?"));
        log.resolve(&wifi).unwrap();
        let (gaps, _) = log.list(None).unwrap();
        assert_eq!(gaps.iter().map(|g| g.query.as_str()).collect::<Vec<_>>(), ["押金多少"]);
        // Asked again later: listed again, with the same id.
        let mut again: GapRecord =
            GapLog::record_of(&refused("wifi password", Some("router"), RefusalKind::NotFound), None).unwrap();
        again.time += 10;
        log.log.append(&again).unwrap();
        let (gaps, _) = log.list(None).unwrap();
        assert!(gaps.iter().any(|g| g.id == wifi), "{gaps:?}");
    }

    #[test]
    fn missing_log_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(GapLog::new(&dir.path().join("nowhere")).list(None).unwrap(), (vec![], Skipped::default()));
    }
}
