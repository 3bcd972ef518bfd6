//! Metadata filters on retrieval: source glob, doc type, directory. All three are properties
//! of a source file, so a filter resolves to a set of allowed sources.

use crate::Manifest;
use globset::{Glob, GlobMatcher};
use skillrag_core::DocType;
use std::collections::HashSet;

#[derive(Debug, Clone, Default)]
pub struct Filter {
    source_glob: Option<GlobMatcher>,
    glob_text: Option<String>,
    pub doc_types: Vec<DocType>,
    /// Source path prefix, e.g. `knowledge/contracts`.
    pub directory: Option<String>,
    /// Sources left out (to measure what the rest of a knowledge base knows).
    pub excluded: Vec<String>,
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

    pub fn is_empty(&self) -> bool {
        self.source_glob.is_none() && self.doc_types.is_empty() && self.directory.is_none() && self.excluded.is_empty()
    }

    pub fn source_glob(&self) -> Option<&str> {
        self.glob_text.as_deref()
    }

    pub fn allows(&self, source: &str, doc_type: DocType) -> bool {
        if self.excluded.iter().any(|e| e == source) {
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

    /// The sources of `manifest` this filter lets through; `None` when it lets everything through.
    pub fn allowed_sources(&self, manifest: &Manifest) -> Option<HashSet<String>> {
        if self.is_empty() {
            return None;
        }
        Some(manifest.files.iter().filter(|(s, f)| self.allows(s, f.doc_type)).map(|(s, _)| s.clone()).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
