//! A question as every stage sees it: its text analysed once (terms, script, language).

use crate::error::AskError;
use skillrag_core::Language;
use std::collections::HashSet;

/// A question as the dispatcher sees it.
#[derive(Debug, Clone)]
pub struct Question {
    pub text: String,
    /// Lowercased, in Simplified characters ([`skillrag_text::folded_lower`]).
    pub lower: String,
    pub terms: Vec<String>,
    pub term_set: HashSet<String>,
    pub language: Language,
    /// Written in Traditional Chinese ([`skillrag_core::is_traditional`]).
    pub traditional: bool,
    /// Its embedding, when the model can see it.
    pub vector: Option<Vec<f32>>,
}

impl Question {
    pub fn new(text: &str, terms: Vec<String>, vector: Option<Vec<f32>>) -> Question {
        Question {
            text: text.to_string(),
            lower: skillrag_text::folded_lower(text),
            term_set: terms.iter().cloned().collect(),
            terms,
            language: Language::detect(text),
            traditional: skillrag_core::is_traditional(text),
            vector,
        }
    }
}

/// Per-question options.
#[derive(Debug, Clone, Default)]
pub struct AskOptions {
    /// Answer from this skill only (no routing).
    pub skill: Option<String>,
    /// Echoed back in the answer (batch mode).
    pub id: Option<String>,
    /// Not a user's question (the owner's tools ask too, to draft an entry): kept out of the
    /// gaps log and the trace.
    pub unrecorded: bool,
}

/// Questions longer than this are cut before analysis.
const MAX_QUESTION_CHARS: usize = 2000;

/// Trims the question; rejects an empty one; cuts a huge one at a character boundary.
pub fn normalize_question(text: &str) -> Result<String, AskError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(AskError::Empty);
    }
    Ok(trimmed.chars().take(MAX_QUESTION_CHARS).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_are_trimmed_and_capped() {
        assert!(matches!(normalize_question("  \n "), Err(AskError::Empty)));
        assert_eq!(normalize_question("  试用期？ ").unwrap(), "试用期？");
        assert_eq!(normalize_question(&"字".repeat(3000)).unwrap().chars().count(), MAX_QUESTION_CHARS);
    }
}
