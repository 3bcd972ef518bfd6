//! Unanswered questions: every `not_found` and `out_of_scope` is appended to a log in the
//! project's state folder so knowledge-base owners can see what their skills are missing
//! (`skillrag gaps`, `GET /v1/gaps`).

use crate::contract::{Answer, RefusalKind};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

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

/// The same question refused in the same skill, counted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Gap {
    pub skill: Option<String>,
    pub kind: RefusalKind,
    /// The question as first asked.
    pub query: String,
    pub count: usize,
    pub first_seen: u64,
    pub last_seen: u64,
}

/// The append-only log of unanswered questions (`<state>/gaps.jsonl`).
#[derive(Debug)]
pub struct GapLog {
    path: PathBuf,
    /// Opened on the first gap and kept open: a server logs refusals on its hot path. The lock
    /// also keeps concurrent asks from interleaving within a line.
    file: Mutex<Option<std::fs::File>>,
}

impl GapLog {
    pub fn new(state_dir: &Path) -> GapLog {
        GapLog { path: state_dir.join("gaps.jsonl"), file: Mutex::new(None) }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The record for `answer`, when it was refused as `not_found` or `out_of_scope`;
    /// `standalone` is a follow-up's question as it was searched.
    pub fn record_of(answer: &Answer, standalone: Option<&str>) -> Option<GapRecord> {
        let kind = answer.refusal.as_ref()?.kind;
        if !matches!(kind, RefusalKind::NotFound | RefusalKind::OutOfScope) {
            return None;
        }
        let skill = answer.route.skills.first().cloned();
        let time = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let (query, asked) = match standalone {
            Some(s) if s != answer.query => (s.to_string(), Some(answer.query.clone())),
            _ => (answer.query.clone(), None),
        };
        Some(GapRecord { time, skill, kind, query, asked })
    }

    /// Appends `answer` when it is a gap. Failing to log never fails the question.
    pub fn record(&self, answer: &Answer, standalone: Option<&str>) {
        let Some(record) = Self::record_of(answer, standalone) else { return };
        let Ok(line) = serde_json::to_string(&record) else { return };
        let mut file = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if file.is_none() {
            if let Some(dir) = self.path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            *file = std::fs::OpenOptions::new().create(true).append(true).open(&self.path).ok();
        }
        if let Some(f) = file.as_mut() {
            // One write per line, so a reader never sees half a record from this process.
            let _ = f.write_all(format!("{line}\n").as_bytes());
        }
    }

    /// The logged gaps, grouped by skill and question (case and punctuation ignored), most
    /// frequent first, then most recent. `skill` keeps one skill's. Unreadable lines (a crash
    /// mid-write) are skipped and counted.
    pub fn list(&self, skill: Option<&str>) -> std::io::Result<(Vec<Gap>, usize)> {
        let file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
            Err(e) => return Err(e),
        };
        let mut groups: HashMap<(Option<String>, String), Gap> = HashMap::new();
        let mut unreadable = 0;
        for line in std::io::BufReader::new(file).lines() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let Ok(r) = serde_json::from_str::<GapRecord>(&line) else {
                unreadable += 1;
                continue;
            };
            if skill.is_some_and(|s| r.skill.as_deref() != Some(s)) {
                continue;
            }
            let key = (r.skill.clone(), normalize(&r.query));
            let gap = groups.entry(key).or_insert_with(|| Gap {
                skill: r.skill.clone(),
                kind: r.kind,
                query: r.query.clone(),
                count: 0,
                first_seen: r.time,
                last_seen: r.time,
            });
            gap.count += 1;
            gap.first_seen = gap.first_seen.min(r.time);
            gap.last_seen = gap.last_seen.max(r.time);
            gap.kind = r.kind;
        }
        let mut gaps: Vec<Gap> = groups.into_values().collect();
        gaps.sort_by(|a, b| b.count.cmp(&a.count).then(b.last_seen.cmp(&a.last_seen)).then(a.query.cmp(&b.query)));
        Ok((gaps, unreadable))
    }
}

/// Lowercase letters and digits only, so "Wifi password?" and "wifi password" count as one.
fn normalize(query: &str) -> String {
    query.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Refusal;

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
        std::fs::OpenOptions::new().append(true).open(log.path()).unwrap().write_all(b"{broken\n").unwrap();

        let (gaps, unreadable) = log.list(None).unwrap();
        assert_eq!(unreadable, 1);
        assert_eq!(gaps.len(), 2, "{gaps:?}");
        assert_eq!((gaps[0].count, gaps[0].query.as_str()), (2, "Wifi password?"));
        assert_eq!(gaps[1].skill, None);
        let (router, _) = log.list(Some("router")).unwrap();
        assert_eq!(router.len(), 1);
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
    fn missing_log_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(GapLog::new(&dir.path().join("nowhere")).list(None).unwrap(), (vec![], 0));
    }
}
