//! The word lists of the ask path, kept as data (`base/lexicon/{zh,en}.toml`) so that the rules
//! that use them read as rules. Each file is compiled in with `include_str!` and parsed once, on
//! first use. The files say what each list holds; the fields here only name them.

use serde::Deserialize;
use std::sync::LazyLock;

/// The lists of one language's file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lexicon {
    pub gate: Gate,
}

/// The gate's lists (`[gate]`). Both languages name a list the same where it plays the same part
/// in a rule; a list only one language needs is empty in the other's file (each file's test
/// counts its own lists, so a list left out is noticed).
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Gate {
    pub request: Vec<String>,
    pub operations: Vec<String>,
    pub text_references: Vec<String>,
    pub seeks_knowledge: Vec<String>,
    pub text_form: Vec<String>,
    pub languages: Vec<String>,
    pub say: Vec<String>,
    pub social: Vec<String>,
    pub social_openers: Vec<String>,
    pub conversation: Vec<String>,
    pub about_assistant: Vec<String>,
    pub creative_verbs: Vec<String>,
    pub creative_forms: Vec<String>,
    // Chinese only.
    pub fillers: Vec<char>,
    pub wish_endings: Vec<String>,
    pub moods: Vec<String>,
    pub about_addressee: Vec<String>,
    pub assistant_life: Vec<String>,
    pub intensifiers: Vec<String>,
    pub counts: Vec<char>,
    // English only.
    pub not_imperative: Vec<String>,
    pub imperative_objects: Vec<String>,
    pub trailing_fillers: Vec<String>,
    pub wish_openers: Vec<String>,
    pub creative_skipped: Vec<String>,
    pub indefinite: Vec<String>,
}

static ZH: LazyLock<Lexicon> = LazyLock::new(|| parse("zh.toml", include_str!("lexicon/zh.toml")));
static EN: LazyLock<Lexicon> = LazyLock::new(|| parse("en.toml", include_str!("lexicon/en.toml")));

/// The Chinese lists.
pub fn zh() -> &'static Lexicon {
    &ZH
}

/// The English lists.
pub fn en() -> &'static Lexicon {
    &EN
}

fn parse<T: for<'de> Deserialize<'de>>(name: &str, text: &str) -> T {
    // The files are compiled in; a mistake in one fails every test that classifies a question.
    toml::from_str(text).unwrap_or_else(|e| panic!("lexicon {name}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    /// Every list of both files, by name: no list may be empty, hold a blank or padded entry, or
    /// name an entry twice.
    #[test]
    fn lists_are_non_empty_trimmed_and_without_duplicates() {
        let text: [(&str, &str); 2] =
            [("zh", include_str!("lexicon/zh.toml")), ("en", include_str!("lexicon/en.toml"))];
        let mut lists = 0;
        for (file, text) in text {
            let table: toml::Table = toml::from_str(text).unwrap_or_else(|e| panic!("{file}: {e}"));
            for (section, lists_of_section) in &table {
                let Some(lists_of_section) = lists_of_section.as_table() else { panic!("{file}: {section}") };
                for (name, list) in lists_of_section {
                    let place = format!("{file}.toml [{section}] {name}");
                    let Some(list) = list.as_array() else { panic!("{place}: not a list") };
                    assert!(!list.is_empty(), "{place}: empty");
                    let mut seen = HashSet::new();
                    for entry in list {
                        let Some(entry) = entry.as_str() else { panic!("{place}: {entry} is not a string") };
                        assert!(!entry.trim().is_empty() && entry.trim() == entry, "{place}: {entry:?}");
                        assert_eq!(entry, entry.to_lowercase(), "{place}: entries are matched in lower case");
                        assert!(seen.insert(entry), "{place}: {entry:?} twice");
                    }
                    lists += 1;
                }
            }
        }
        assert_eq!(lists, 39, "every list is checked");
        // And the typed reading accepts both files (one character per `fillers`/`counts` entry).
        assert!(!zh().gate.fillers.is_empty() && !en().gate.request.is_empty());
    }
}
