//! The LLM-assisted steps of the ask path (docs/design.md §4.3–4.6), each optional (`[llm]`) and
//! cached in `<state>/cache/llm-assist.jsonl`:
//!
//! - `rewrite`: a follow-up ("那用异步的方式呢？") becomes a standalone question; and when
//!   retrieval stays weak, the model writes a search query in the knowledge base's own words
//!   (the agent loop's last retry, whose evidence the model then judges);
//! - `multi_query`: other wordings of the question, searched too and fused by RRF;
//! - `hyde`: a hypothetical passage answering the question, searched like a query;
//! - `route`: the model's pick among the candidate skills, a third routing signal;
//! - `clarify`: the clarifying question of an `ambiguous` refusal.
//!
//! Model output is parsed defensively — labels, quotes and bullets stripped, lengths capped,
//! JSON searched for inside prose — and anything unusable is ignored: the pipeline then goes on
//! exactly as without the step. Nothing here can fail a question.

use skillrag_core::Language;
use skillrag_generate::{ChatRequest, Generator, Message};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Longest rewrite or query kept, in characters.
const MAX_REWRITE_CHARS: usize = 200;
/// Longest hypothetical passage kept, in characters.
const MAX_PASSAGE_CHARS: usize = 600;

pub struct Assist {
    generator: Arc<dyn Generator>,
    /// (model, kind, prompt) hash → the model's raw reply; also appended to `file` so reruns
    /// (eval) reuse it.
    cache: Mutex<HashMap<String, String>>,
    file: Option<PathBuf>,
}

impl Assist {
    /// Steps whose cache lives in `file` (JSON lines), loaded when it exists.
    pub fn new(generator: Arc<dyn Generator>, file: Option<PathBuf>) -> Assist {
        let mut cache = HashMap::new();
        if let Some(text) = file.as_ref().and_then(|f| std::fs::read_to_string(f).ok()) {
            for line in text.lines() {
                // A torn last line (an interrupted run) is skipped, not fatal.
                if let Ok((key, value)) = serde_json::from_str::<(String, String)>(line) {
                    cache.insert(key, value);
                }
            }
        }
        Assist { generator, cache: Mutex::new(cache), file }
    }

    /// The follow-up `question` as a standalone question, given the earlier questions.
    pub fn standalone(&self, earlier: &[String], question: &str, language: Language) -> Option<String> {
        let history = earlier.iter().rev().take(3).rev().map(|q| format!("- {q}")).collect::<Vec<_>>().join("\n");
        let (system, user) = if language == Language::Chinese {
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
        let reply = self.ask("standalone", system, &user, 80)?;
        clean_line(&reply).filter(|r| r.trim() != question.trim())
    }

    /// A search query for the knowledge of skill `description` that may find what `question`
    /// asks, in other words than the question's.
    pub fn search_query(&self, description: &str, question: &str, language: Language) -> Option<String> {
        let (system, user) = if language == Language::Chinese {
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
        let reply = self.ask("search", system, &user, 80)?;
        clean_line(&reply).filter(|r| r.trim() != question.trim())
    }

    /// Up to `n` other wordings of `question` for searching skill `description` (multi-query).
    pub fn wordings(&self, description: &str, question: &str, n: usize, language: Language) -> Vec<String> {
        let (system, user) = if language == Language::Chinese {
            (
                format!(
                    "为知识库检索写出 {n} 条不同的检索语句，表达同一个问题：换用资料里可能出现的术语、同义词和说法。\
                     不要回答问题。每行一条，只输出检索语句。"
                ),
                format!("知识库：{description}\n问题：{question}"),
            )
        } else {
            (
                format!(
                    "Write {n} different search queries for the knowledge base that ask the same question \
                     in other words: the terms, synonyms and phrasings its documents may use. Do not answer \
                     it. One query per line, nothing else."
                ),
                format!("Knowledge base: {description}\nQuestion: {question}"),
            )
        };
        let Some(reply) = self.ask("wordings", &system, &user, 40 * n.max(1) + 20) else { return Vec::new() };
        let mut out: Vec<String> = Vec::new();
        for line in reply.lines() {
            if let Some(q) = clean_line(line) {
                // Numbering ("1. ", "2)") is a list format, not part of the query.
                let q = strip_numbering(&q).to_string();
                if q.chars().count() >= 2 && q != question.trim() && !out.contains(&q) {
                    out.push(q);
                }
            }
            if out.len() >= n {
                break;
            }
        }
        out
    }

    /// A short passage such as the knowledge base of skill `description` might contain, answering
    /// `question` (HyDE): searched like a query, it lands near passages written that way. Its
    /// facts may be wrong; it is never shown or cited.
    pub fn hypothetical_passage(&self, description: &str, question: &str, language: Language) -> Option<String> {
        let (system, user) = if language == Language::Chinese {
            (
                "写一段可能出现在知识库资料里的文字（两三句），正面回答下面的问题，使用资料里常见的正式术语。\
                 只输出这段文字。",
                format!("知识库：{description}\n问题：{question}"),
            )
        } else {
            (
                "Write a short passage (two or three sentences) that the knowledge base's documents might \
                 contain, answering the question directly in the formal terms they would use. Output \
                 only the passage.",
                format!("Knowledge base: {description}\nQuestion: {question}"),
            )
        };
        let reply = self.ask("hyde", system, &user, 120)?;
        let passage = reply.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ");
        let passage: String = passage.chars().take(MAX_PASSAGE_CHARS).collect();
        (passage.chars().count() >= 8 && !passage.contains(crate::base::prompt::NOT_FOUND_SENTINEL)).then_some(passage)
    }

    /// The skills the model picks for `question` among `candidates` (id, description): a third
    /// routing signal. `Some(vec![])` when it says none fits; `None` when its reply is unusable.
    /// Small models tend to pick whatever is listed first, so the model is asked with the list
    /// in both orders and only a vote it gives both times counts.
    pub fn route_vote(
        &self,
        question: &str,
        candidates: &[(String, String)],
        language: Language,
    ) -> Option<Vec<String>> {
        let mut vote = self.route_vote_once(question, candidates, language)?;
        let reversed: Vec<(String, String)> = candidates.iter().rev().cloned().collect();
        let mut again = self.route_vote_once(question, &reversed, language)?;
        vote.sort();
        again.sort();
        (vote == again).then_some(vote)
    }

    fn route_vote_once(
        &self,
        question: &str,
        candidates: &[(String, String)],
        language: Language,
    ) -> Option<Vec<String>> {
        let list = candidates.iter().map(|(id, d)| format!("- {id}: {d}")).collect::<Vec<_>>().join("\n");
        let (system, user) = if language == Language::Chinese {
            (
                "你是问题分发器。根据技能说明，判断哪个技能能回答用户的问题。只输出 JSON，例如 \
                 {\"skills\": [\"技能名\"]}；问题同时涉及两个技能时列出两个；没有合适的技能时输出 {\"skills\": []}。",
                format!("技能：\n{list}\n问题：{question}"),
            )
        } else {
            (
                "You route questions. From the skill descriptions, decide which skill can answer the \
                 user's question. Output only JSON such as {\"skills\": [\"skill-name\"]}; list two when \
                 the question has parts for two skills; output {\"skills\": []} when none fits.",
                format!("Skills:\n{list}\nQuestion: {question}"),
            )
        };
        let reply = self.ask("route", system, &user, 60)?;
        let known: Vec<&str> = candidates.iter().map(|(id, _)| id.as_str()).collect();
        parse_skill_vote(&reply, &known)
    }

    /// A clarifying question asking which of two skills (id, description) the user means.
    pub fn clarify(
        &self,
        question: &str,
        a: &(String, String),
        b: &(String, String),
        language: Language,
    ) -> Option<String> {
        let (system, user) = if language == Language::Chinese {
            (
                "用户的问题可能属于两个不同的技能。用一句话礼貌地反问用户想问的是哪一方面，点明两个技能。\
                 不要回答问题本身。只输出这句问话。",
                format!("问题：{question}\n技能一：{}（{}）\n技能二：{}（{}）", a.0, a.1, b.0, b.1),
            )
        } else {
            (
                "The user's question could belong to two different skills. Ask, in one polite sentence, \
                 which of the two they mean, naming both. Do not answer the question. Output only that \
                 question.",
                format!("Question: {question}\nSkill 1: {} ({})\nSkill 2: {} ({})", a.0, a.1, b.0, b.1),
            )
        };
        let reply = self.ask("clarify", system, &user, 80)?;
        let line = clean_line(&reply)?;
        // It must be a question; a model that answered instead is not used.
        line.trim_end().ends_with(['?', '？']).then_some(line)
    }

    /// The model's reply to one prompt, from the cache when this model answered it before.
    /// `None` when the call fails (not cached: the next question may find the server back).
    fn ask(&self, kind: &str, system: &str, user: &str, max_tokens: usize) -> Option<String> {
        let key = blake3::hash(format!("{}\n{kind}\n{system}\n{user}", self.generator.describe()).as_bytes())
            .to_hex()
            .to_string();
        if let Some(hit) = self.cache.lock().ok()?.get(&key) {
            return Some(hit.clone());
        }
        let request = ChatRequest {
            messages: vec![Message::system(system), Message::user(user)],
            max_tokens,
            temperature: 0.0,
            stop: vec!["\n\n\n".into()],
        };
        let text = self.generator.generate(&request, &mut |_| {}).ok()?.text.trim().to_string();
        self.remember(key, text.clone());
        Some(text)
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

/// The usable part of a one-line reply: first non-empty line, without a label, quotes or bullet.
fn clean_line(text: &str) -> Option<String> {
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
    ((2..=MAX_REWRITE_CHARS).contains(&chars) && line != crate::base::prompt::NOT_FOUND_SENTINEL)
        .then(|| line.to_string())
}

/// `text` without a leading list number ("1. ", "2）", "3、").
fn strip_numbering(text: &str) -> &str {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return text;
    }
    let rest = &text[digits..];
    match rest.strip_prefix(['.', ')', '、', '）', ':', '：']) {
        Some(r) => r.trim_start(),
        None => text,
    }
}

/// The skills named in a routing reply: the first JSON object with a `skills` (or `skill`)
/// field found in it, keeping only known skill ids. Prose around the JSON, code fences and a
/// single string instead of a list are tolerated; anything else is `None`.
fn parse_skill_vote(reply: &str, known: &[&str]) -> Option<Vec<String>> {
    let value = first_json_object(reply)?;
    let field = value.get("skills").or_else(|| value.get("skill"))?;
    let names: Vec<&str> = match field {
        serde_json::Value::Array(items) => items.iter().filter_map(serde_json::Value::as_str).collect(),
        serde_json::Value::String(s) => vec![s.as_str()],
        serde_json::Value::Null => Vec::new(),
        _ => return None,
    };
    let mut picked: Vec<String> = Vec::new();
    for name in names {
        let name = name.trim();
        // A name the router does not know is a hallucination, not a vote.
        if let Some(id) = known.iter().find(|k| k.eq_ignore_ascii_case(name)) {
            if !picked.iter().any(|p| p == id) {
                picked.push(id.to_string());
            }
        } else if !name.is_empty() {
            return None;
        }
    }
    Some(picked)
}

/// The first `{…}` in `text` that parses as a JSON object.
fn first_json_object(text: &str) -> Option<serde_json::Value> {
    for (start, _) in text.match_indices('{') {
        let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<serde_json::Value>();
        if let Some(Ok(value @ serde_json::Value::Object(_))) = stream.next() {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_labels_quotes_and_rejects_junk() {
        assert_eq!(
            clean_line("Rewritten question: \"How long is probation?\"\nextra").as_deref(),
            Some("How long is probation?")
        );
        assert_eq!(clean_line("\n\n- 检索语句：「试用期 期限」").as_deref(), Some("试用期 期限"));
        assert_eq!(clean_line("   "), None);
        assert_eq!(clean_line(&"x".repeat(500)), None);
        assert_eq!(clean_line("NOT_FOUND"), None);
        assert_eq!(strip_numbering("2. 试用期最长多久"), "试用期最长多久");
        assert_eq!(strip_numbering("2024年的规定"), "2024年的规定");
    }

    #[test]
    fn route_votes_are_parsed_robustly() {
        let known = ["labor-law", "tea"];
        let vote = |s: &str| parse_skill_vote(s, &known);
        assert_eq!(vote(r#"{"skills": ["labor-law"]}"#), Some(vec!["labor-law".to_string()]));
        assert_eq!(
            vote("Sure! ```json\n{\"skills\": [\"Tea\", \"labor-law\", \"tea\"]}\n```"),
            Some(vec!["tea".to_string(), "labor-law".to_string()])
        );
        assert_eq!(vote(r#"{"skill": "tea"}"#), Some(vec!["tea".to_string()]));
        assert_eq!(vote(r#"{"skills": []}"#), Some(vec![]));
        assert_eq!(vote(r#"{"skills": null}"#), Some(vec![]));
        // Unknown names, wrong types, truncated or missing JSON: no vote.
        assert_eq!(vote(r#"{"skills": ["cooking"]}"#), None);
        assert_eq!(vote(r#"{"skills": 3}"#), None);
        assert_eq!(vote(r#"{"skills": ["tea""#), None);
        assert_eq!(vote("labor-law"), None);
        assert_eq!(vote(""), None);
        assert_eq!(vote(r#"{"answer": "tea"}"#), None);
    }
}
