//! Labelled questions: the routes `skillrag tune` and users' feedback teach the router
//! (docs/design.md §4.2), read from JSON lines.

use crate::error::TuneError;
use serde::{Deserialize, Serialize};

/// A question with the skill it belongs to (`None`: no skill should answer it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabelledQuestion {
    pub query: String,
    pub skill: Option<String>,
    /// `false` for a question of the skill whose answer is not in its knowledge (`"type": "unanswerable"`).
    #[serde(default = "yes")]
    pub answerable: bool,
    /// Labelled by a user's feedback (`feedback.jsonl`), not by a file given to `tune`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub feedback: bool,
}

fn yes() -> bool {
    true
}

/// Reads labelled questions: JSON lines `{"query": "...", "skill": "labor-law" | null}` (other
/// fields are ignored). Rows of type `chitchat` are skipped (the gate handles them).
pub fn read_labelled(path: &std::path::Path, skills: &[String]) -> Result<Vec<LabelledQuestion>, TuneError> {
    let text = std::fs::read_to_string(path).map_err(|e| TuneError::Io(path.display().to_string(), e))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let err = |message: String| TuneError::Parse { path: path.display().to_string(), line: i + 1, message };
        let value: serde_json::Value = serde_json::from_str(line).map_err(|e| err(e.to_string()))?;
        if value.get("type").and_then(|t| t.as_str()) == Some("chitchat") {
            continue;
        }
        let query = value.get("query").and_then(|q| q.as_str()).ok_or_else(|| err("missing \"query\"".into()))?;
        let skill = match value.get("skill") {
            None | Some(serde_json::Value::Null) => None,
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(other) => return Err(err(format!("\"skill\" must be a string or null, got {other}"))),
        };
        if let Some(s) = &skill {
            if !skills.contains(s) {
                return Err(TuneError::UnknownSkill {
                    path: path.display().to_string(),
                    line: i + 1,
                    skill: s.clone(),
                });
            }
        }
        let answerable = value.get("type").and_then(|t| t.as_str()) != Some("unanswerable");
        out.push(LabelledQuestion { query: query.to_string(), skill, answerable, feedback: false });
    }
    Ok(out)
}
