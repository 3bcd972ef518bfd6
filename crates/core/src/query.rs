//! What a retrieval is asked: the question prepared for it ([`Query`]), which lists take part
//! ([`Mode`]), which sources may answer ([`Filter`]), and what one list returns ([`Scored`]).
//! Stores answer them and the engine fuses their lists; both read these types from here.

use crate::{ChunkId, DocType};
use globset::{Glob, GlobMatcher};
use std::collections::HashSet;

/// A question prepared for retrieval: analyzed terms and, when a model is configured, its vector.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub terms: Vec<String>,
    /// The question's embedding; `None` without a model, or when it was not worth computing.
    pub vector: Option<Vec<f32>>,
    /// Share of the question the embedding model can see (`None` without a model).
    pub visibility: Option<f32>,
}

/// Which lists take part (the benchmark compares all three).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Hybrid,
    Lexical,
    Dense,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Mode> {
        match s {
            "hybrid" => Some(Mode::Hybrid),
            "bm25" | "lexical" => Some(Mode::Lexical),
            "dense" => Some(Mode::Dense),
            _ => None,
        }
    }
}

/// A chunk id with a score from one retrieval list, best first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    pub id: ChunkId,
    pub score: f32,
}

/// Metadata filters on retrieval: source glob, doc type, directory. All three are properties
/// of a source file, so a filter resolves to a set of allowed sources.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    source_glob: Option<GlobMatcher>,
    glob_text: Option<String>,
    pub doc_types: Vec<DocType>,
    /// Source path prefix, e.g. `knowledge/contracts`.
    pub directory: Option<String>,
    /// Sources left out (to measure what the rest of a knowledge base knows).
    pub excluded: Vec<String>,
    /// Only these sources (the documents whose metadata matched), when set.
    pub only: Option<HashSet<String>>,
}

#[derive(Debug, thiserror::Error)]
#[error("invalid source glob `{glob}`: {message}")]
pub struct FilterError {
    glob: String,
    message: String,
}

impl Filter {
    pub fn none() -> Filter {
        Filter::default()
    }

    pub fn with_source_glob(mut self, glob: &str) -> Result<Filter, FilterError> {
        let matcher = Glob::new(glob)
            .map_err(|e| FilterError { glob: glob.to_string(), message: e.to_string() })?
            .compile_matcher();
        self.source_glob = Some(matcher);
        self.glob_text = Some(glob.to_string());
        Ok(self)
    }

    pub fn with_doc_types(mut self, doc_types: Vec<DocType>) -> Filter {
        self.doc_types = doc_types;
        self
    }

    pub fn with_directory(mut self, directory: &str) -> Filter {
        let d = directory.trim_start_matches("./").trim_end_matches('/');
        self.directory = (!d.is_empty()).then(|| d.to_string());
        self
    }

    pub fn excluding(mut self, source: &str) -> Filter {
        self.excluded.push(source.to_string());
        self
    }

    /// Only `sources` pass (on top of the other conditions).
    pub fn only_sources(mut self, sources: impl IntoIterator<Item = String>) -> Filter {
        self.only = Some(sources.into_iter().collect());
        self
    }

    pub fn is_empty(&self) -> bool {
        self.source_glob.is_none()
            && self.doc_types.is_empty()
            && self.directory.is_none()
            && self.excluded.is_empty()
            && self.only.is_none()
    }

    pub fn source_glob(&self) -> Option<&str> {
        self.glob_text.as_deref()
    }

    pub fn allows(&self, source: &str, doc_type: DocType) -> bool {
        if self.excluded.iter().any(|e| e == source) || self.only.as_ref().is_some_and(|only| !only.contains(source)) {
            return false;
        }
        if let Some(g) = &self.source_glob {
            if !g.is_match(source) {
                return false;
            }
        }
        if !self.doc_types.is_empty() && !self.doc_types.contains(&doc_type) {
            return false;
        }
        if let Some(dir) = &self.directory {
            let inside = source.strip_prefix(dir.as_str()).is_some_and(|rest| rest.starts_with('/'));
            if !inside {
                return false;
            }
        }
        true
    }

    /// The sources of `files` (an index's source files with their doc types) this filter lets
    /// through; `None` when it lets everything through.
    pub fn allowed_sources<'a>(&self, files: impl IntoIterator<Item = (&'a str, DocType)>) -> Option<HashSet<String>> {
        if self.is_empty() {
            return None;
        }
        Some(files.into_iter().filter(|(s, d)| self.allows(s, *d)).map(|(s, _)| s.to_string()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_named_sources_pass() {
        let filter = Filter::none().only_sources(["knowledge/a.md".to_string()]);
        assert!(!filter.is_empty());
        assert!(filter.allows("knowledge/a.md", DocType::General));
        assert!(!filter.allows("knowledge/b.md", DocType::General));
        assert!(!Filter::none().only_sources([]).allows("knowledge/a.md", DocType::General), "none match: none pass");
    }

    #[test]
    fn filters_by_glob_type_and_directory() {
        let f = Filter::none().with_source_glob("knowledge/*-law-*.md").unwrap();
        assert!(f.allows("knowledge/labor-law-01.md", DocType::General));
        assert!(!f.allows("knowledge/faq.md", DocType::General));
        let f = Filter::none().with_doc_types(vec![DocType::Faq]);
        assert!(f.allows("a.md", DocType::Faq) && !f.allows("a.md", DocType::Legal));
        let f = Filter::none().with_directory("knowledge/rules/");
        assert!(f.allows("knowledge/rules/a.md", DocType::General));
        assert!(!f.allows("knowledge/rulesx/a.md", DocType::General));
        assert!(Filter::none().with_source_glob("[").is_err());
        let f = Filter::none().excluding("a.md");
        assert!(!f.allows("a.md", DocType::General) && f.allows("b.md", DocType::General));
    }
}
