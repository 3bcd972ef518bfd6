//! LLM-assisted query rewriting (DESIGN.md §4.3), optional (`[llm] rewrite`) and cached:
//!
//! - a follow-up ("那用异步的方式呢？") becomes a standalone question from the conversation;
//! - when retrieval stays weak, the model writes a search query in the knowledge base's own
//!   words, and the model then judges the evidence it finds (the agent loop's last retry).
//!
//! Model output is parsed defensively: the first non-empty line, labels and quotes stripped,
//! length-capped; anything unusable is ignored (the pipeline continues without a rewrite).

use skillrag_generate::{ChatRequest, Generator, Message};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Longest rewrite kept, in characters.
const MAX_REWRITE_CHARS: usize = 200;

pub struct Rewriter {
    generator: Arc<dyn Generator>,
    /// (kind, input) hash → rewrite; also appended to `file` so reruns (eval) reuse it.
    cache: Mutex<HashMap<String, String>>,
    file: Option<PathBuf>,
}

impl Rewriter {
    /// A rewriter whose cache lives in `file` (JSON lines), loaded when it exists.
    pub fn new(generator: Arc<dyn Generator>, file: Option<PathBuf>) -> Rewriter {
        let mut cache = HashMap::new();
        if let Some(text) = file.as_ref().and_then(|f| std::fs::read_to_string(f).ok()) {
            for line in text.lines() {
                // A torn last line (an interrupted run) is skipped, not fatal.
                if let Ok((key, value)) = serde_json::from_str::<(String, String)>(line) {
                    cache.insert(key, value);
                }
            }
        }
        Rewriter { generator, cache: Mutex::new(cache), file }
    }

    /// The follow-up `question` as a standalone question, given the earlier questions.
    pub fn standalone(&self, earlier: &[String], question: &str, chinese: bool) -> Option<String> {
        let history = earlier.iter().rev().take(3).rev().map(|q| format!("- {q}")).collect::<Vec<_>>().join("\n");
        let (system, user) = if chinese {
            (
                "把用户的追问改写成一个完整、独立的问题，补全省略的主语和对象。只输出改写后的问题。",
                format!("之前的问题：\n{history}\n追问：{question}"),
            )
        } else {
            (
                "Rewrite the user's follow-up as one complete, standalone question, filling in what \
                 it leaves out from the earlier questions. Output only the rewritten question.",
                format!("Earlier questions:\n{history}\nFollow-up: {question}"),
            )
        };
        self.ask("standalone", system, &user, question)
    }

    /// A search query for the knowledge of skill `description` that may find what `question`
    /// asks, in other words than the question's.
    pub fn search_query(&self, description: &str, question: &str, chinese: bool) -> Option<String> {
        let (system, user) = if chinese {
            (
                "为知识库检索改写问题：写出一条检索语句，用资料里可能出现的正式术语和同义词，\
                 不要回答问题。只输出检索语句。",
                format!("知识库：{description}\n问题：{question}"),
            )
        } else {
            (
                "Rewrite the question as a search query for the knowledge base: the formal terms and \
                 synonyms its documents likely use. Do not answer it. Output only the query.",
                format!("Knowledge base: {description}\nQuestion: {question}"),
            )
        };
        self.ask("search", system, &user, question)
    }

    fn ask(&self, kind: &str, system: &str, user: &str, original: &str) -> Option<String> {
        let key =
            blake3::hash(format!("{}\n{kind}\n{user}", self.generator.describe()).as_bytes()).to_hex().to_string();
        if let Some(hit) = self.cache.lock().ok()?.get(&key) {
            return (!hit.is_empty()).then(|| hit.clone());
        }
        let request = ChatRequest {
            messages: vec![Message::system(system), Message::user(user)],
            max_tokens: 80,
            temperature: 0.0,
            stop: vec!["\n\n".into()],
        };
        // A failed call is not cached: the next question may find the server back.
        let text = self.generator.generate(&request, &mut |_| {}).ok()?.text;
        let rewrite = clean(&text).filter(|r| r.trim() != original.trim()).unwrap_or_default();
        self.remember(key, rewrite.clone());
        (!rewrite.is_empty()).then_some(rewrite)
    }

    fn remember(&self, key: String, value: String) {
        if let Some(file) = &self.file {
            if let Some(dir) = file.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(file) {
                let _ = writeln!(f, "{}", serde_json::json!([key, value]));
            }
        }
        if let Ok(mut cache) = self.cache.lock() {
            cache.insert(key, value);
        }
    }
}

/// The usable part of a model's rewrite: first non-empty line, without a label, quotes or bullet.
fn clean(text: &str) -> Option<String> {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    let mut line = line.trim_start_matches(['-', '*', '•', ' ']);
    for label in [
        "改写后的问题：",
        "改写：",
        "检索语句：",
        "问题：",
        "Rewritten question:",
        "Query:",
        "Search query:",
        "Question:",
    ] {
        if let Some(rest) = line.strip_prefix(label) {
            line = rest.trim();
        }
    }
    let line = line.trim_matches(['"', '“', '”', '「', '」', '`', '\'', ' ']);
    let chars = line.chars().count();
    ((2..=MAX_REWRITE_CHARS).contains(&chars) && line != super::generate::NOT_FOUND_SENTINEL).then(|| line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_labels_quotes_and_rejects_junk() {
        assert_eq!(
            clean("Rewritten question: \"How long is probation?\"\nextra").as_deref(),
            Some("How long is probation?")
        );
        assert_eq!(clean("\n\n- 检索语句：「试用期 期限」").as_deref(), Some("试用期 期限"));
        assert_eq!(clean("   "), None);
        assert_eq!(clean(&"x".repeat(500)), None);
        assert_eq!(clean("NOT_FOUND"), None);
    }
}
