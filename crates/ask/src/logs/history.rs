//! Saved conversations (`<state>/conversations/<id>.json`): what the web page lists, resumes,
//! renames and deletes, and `skillrag chat --resume ID` continues. One small JSON file per
//! conversation, rewritten atomically (temporary file + rename) on every turn: a crash leaves
//! the previous version, never half of one, and listing needs no database. Why not SQLite: a
//! conversation is read and written whole, by one writer at a time, and a few hundred turns at
//! most; files keep the state folder inspectable and add no native dependency.

use crate::base::contract::Answer;
use crate::base::ids::{self, is_id};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One question and its answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub time: u64,
    pub question: String,
    pub answer: Answer,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedConversation {
    pub id: String,
    pub title: String,
    pub created: u64,
    pub updated: u64,
    #[serde(default)]
    pub turns: Vec<Turn>,
}

impl SavedConversation {
    /// The earlier questions, oldest first (what a follow-up is read against).
    pub fn questions(&self) -> Vec<String> {
        self.turns.iter().map(|t| t.question.clone()).collect()
    }

    pub fn summary(&self) -> ConversationSummary {
        ConversationSummary {
            id: self.id.clone(),
            title: self.title.clone(),
            created: self.created,
            updated: self.updated,
            turns: self.turns.len(),
        }
    }
}

/// A conversation as listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub created: u64,
    pub updated: u64,
    pub turns: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("no conversation `{0}` (`skillrag chat` lists them with /history; GET /v1/conversations)")]
    NotFound(String),
    #[error("conversation `{0}` is full ({MAX_TURNS} turns); start a new one")]
    Full(String),
    #[error("conversation `{id}` cannot be read: {message}")]
    Damaged { id: String, message: String },
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
}

/// Turns kept in one conversation: a follow-up only looks a few turns back, and the file is
/// rewritten on every turn.
pub const MAX_TURNS: usize = 500;
/// Longest title, in characters.
const MAX_TITLE: usize = 120;

/// The conversations of a project.
#[derive(Debug)]
pub struct ConversationStore {
    dir: PathBuf,
    /// Serializes read-modify-write of a conversation within this process.
    lock: Mutex<()>,
}

impl ConversationStore {
    pub fn new(state_dir: &Path) -> ConversationStore {
        ConversationStore { dir: state_dir.join("conversations"), lock: Mutex::new(()) }
    }

    /// Starts an empty conversation (saved at once, so it is listed).
    pub fn create(&self, title: Option<&str>) -> Result<SavedConversation, HistoryError> {
        let now = ids::now_secs();
        let conversation = SavedConversation {
            id: ids::new_id('c'),
            title: title.map(shorten).unwrap_or_default(),
            created: now,
            updated: now,
            turns: Vec::new(),
        };
        let _guard = self.guard();
        self.write(&conversation)?;
        Ok(conversation)
    }

    pub fn get(&self, id: &str) -> Result<SavedConversation, HistoryError> {
        let path = self.path_of(id)?;
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(HistoryError::NotFound(id.into())),
            Err(e) => return Err(HistoryError::Io(path.display().to_string(), e)),
        };
        serde_json::from_str(&text).map_err(|e| HistoryError::Damaged { id: id.into(), message: e.to_string() })
    }

    /// Every readable conversation, most recently updated first (damaged files are skipped).
    pub fn list(&self) -> Result<Vec<ConversationSummary>, HistoryError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(HistoryError::Io(self.dir.display().to_string(), e)),
        };
        let mut out: Vec<ConversationSummary> = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").map(str::to_string))
            .filter(|id| is_id(id, 'c'))
            .filter_map(|id| self.get(&id).ok())
            .map(|c| c.summary())
            .collect();
        out.sort_by(|a, b| b.updated.cmp(&a.updated).then(b.id.cmp(&a.id)));
        Ok(out)
    }

    /// Appends a turn; the first question titles an untitled conversation.
    pub fn append(&self, id: &str, question: &str, answer: &Answer) -> Result<SavedConversation, HistoryError> {
        let _guard = self.guard();
        let mut conversation = self.get(id)?;
        if conversation.turns.len() >= MAX_TURNS {
            return Err(HistoryError::Full(id.into()));
        }
        let now = ids::now_secs();
        if conversation.title.is_empty() {
            conversation.title = shorten(question);
        }
        conversation.turns.push(Turn { time: now, question: question.to_string(), answer: answer.clone() });
        conversation.updated = now;
        self.write(&conversation)?;
        Ok(conversation)
    }

    pub fn rename(&self, id: &str, title: &str) -> Result<SavedConversation, HistoryError> {
        let _guard = self.guard();
        let mut conversation = self.get(id)?;
        conversation.title = shorten(title);
        conversation.updated = ids::now_secs();
        self.write(&conversation)?;
        Ok(conversation)
    }

    pub fn delete(&self, id: &str) -> Result<(), HistoryError> {
        let path = self.path_of(id)?;
        let _guard = self.guard();
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(HistoryError::NotFound(id.into())),
            Err(e) => Err(HistoryError::Io(path.display().to_string(), e)),
        }
    }

    /// The answer of one turn, by its `answer_id` (for feedback on an answer the server no
    /// longer holds in memory).
    pub fn find_answer(&self, id: &str, answer_id: &str) -> Option<Answer> {
        self.get(id).ok()?.turns.into_iter().rev().map(|t| t.answer).find(|a| a.answer_id == answer_id)
    }

    fn guard(&self) -> std::sync::MutexGuard<'_, ()> {
        self.lock.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The file of `id`; only ids this store makes are accepted, so no id reaches another path.
    fn path_of(&self, id: &str) -> Result<PathBuf, HistoryError> {
        if !is_id(id, 'c') {
            return Err(HistoryError::NotFound(id.chars().take(40).collect()));
        }
        Ok(self.dir.join(format!("{id}.json")))
    }

    fn write(&self, conversation: &SavedConversation) -> Result<(), HistoryError> {
        let path = self.path_of(&conversation.id)?;
        let io = |e: std::io::Error| HistoryError::Io(path.display().to_string(), e);
        std::fs::create_dir_all(&self.dir).map_err(io)?;
        let text = serde_json::to_vec(conversation).map_err(|e| io(std::io::Error::other(e)))?;
        let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    }
}

/// A title of at most [`MAX_TITLE`] characters on one line.
fn shorten(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(MAX_TITLE) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_append_list_rename_delete() {
        let dir = tempfile::tempdir().unwrap();
        let store = ConversationStore::new(dir.path());
        assert!(store.list().unwrap().is_empty());
        let c = store.create(None).unwrap();
        let answer = Answer::new(None, "试用期多久？".into());
        let saved = store.append(&c.id, "试用期多久？", &answer).unwrap();
        assert_eq!(saved.title, "试用期多久？", "the first question titles it");
        store.append(&c.id, "那工资呢？", &Answer::new(None, "那工资呢？".into())).unwrap();
        let other = store.create(Some("  second\n one ")).unwrap();
        assert_eq!(other.title, "second one");

        let listed = store.list().unwrap();
        assert_eq!(listed.len(), 2);
        let first = listed.iter().find(|s| s.id == c.id).unwrap();
        assert_eq!(first.turns, 2);
        assert_eq!(store.get(&c.id).unwrap().questions(), vec!["试用期多久？", "那工资呢？"]);
        assert_eq!(store.find_answer(&c.id, &answer.answer_id).map(|a| a.query), Some("试用期多久？".into()));

        assert_eq!(store.rename(&c.id, &"长".repeat(300)).unwrap().title.chars().count(), MAX_TITLE + 1);
        store.delete(&c.id).unwrap();
        assert!(matches!(store.get(&c.id), Err(HistoryError::NotFound(_))));
        assert!(matches!(store.delete(&c.id), Err(HistoryError::NotFound(_))));
        assert_eq!(store.list().unwrap().len(), 1);
    }

    #[test]
    fn ids_cannot_reach_other_files_and_damage_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let store = ConversationStore::new(dir.path());
        std::fs::write(dir.path().join("secret.json"), "{}").unwrap();
        for id in ["../secret", "c-../../secret", "", "c-0123456789abcdef/../x"] {
            assert!(matches!(store.get(id), Err(HistoryError::NotFound(_))), "{id}");
        }
        let c = store.create(None).unwrap();
        std::fs::write(dir.path().join(format!("conversations/{}.json", c.id)), "{broken").unwrap();
        assert!(matches!(store.get(&c.id), Err(HistoryError::Damaged { .. })));
        assert!(store.list().unwrap().is_empty(), "a damaged file is skipped when listing");
    }
}
