use serde::{Deserialize, Serialize};
use std::fmt;

/// A chunk's identifier inside one skill's knowledge base. Stable across incremental
/// re-indexes for chunks of unchanged files, never reused within a skill.
pub type ChunkId = u64;

/// What kind of document a chunk came from; selects chunking presets and is a search filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum DocType {
    #[default]
    General,
    Faq,
    Legal,
    Technical,
}

impl DocType {
    pub const ALL: [DocType; 4] = [DocType::General, DocType::Faq, DocType::Legal, DocType::Technical];

    pub fn as_str(self) -> &'static str {
        match self {
            DocType::General => "general",
            DocType::Faq => "faq",
            DocType::Legal => "legal",
            DocType::Technical => "technical",
        }
    }

    pub fn parse(s: &str) -> Option<DocType> {
        DocType::ALL.into_iter().find(|d| d.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

impl fmt::Display for DocType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Priority of a chunk when the context is compiled: rules must be followed, examples
/// show the expected shape, references are plain knowledge (docs/design.md §4.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    Rules,
    Examples,
    #[default]
    References,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Rules => "rules",
            Tier::Examples => "examples",
            Tier::References => "references",
        }
    }

    pub fn parse(s: &str) -> Option<Tier> {
        match s.trim().to_ascii_lowercase().as_str() {
            "rules" | "rule" => Some(Tier::Rules),
            "examples" | "example" => Some(Tier::Examples),
            "references" | "reference" | "knowledge" => Some(Tier::References),
            _ => None,
        }
    }

    /// The tier a knowledge file gets from the folders on its path (`rules/`, `examples/`).
    pub fn from_source_path(source: &str) -> Tier {
        let mut tier = Tier::References;
        for part in source.split('/').rev().skip(1) {
            match part {
                "rules" => return Tier::Rules,
                "examples" => tier = Tier::Examples,
                _ => {}
            }
        }
        tier
    }
}

/// How a source is cited: `manual.pdf p. 12`, `manual.pdf pp. 12–13`, or just the source when
/// the document has no pages.
pub fn cited_location(source: &str, pages: Option<(u32, u32)>) -> String {
    match pages {
        Some((first, last)) if first == last => format!("{source} p. {first}"),
        Some((first, last)) => format!("{source} pp. {first}–{last}"),
        None => source.to_string(),
    }
}

/// How a passage is named to a reader: `skill/location`, or the project path alone for a
/// document of a shared folder (`/shared/style-guide/tone.md`), which belongs to no one skill.
pub fn cited_path(skill: &str, location: &str) -> String {
    if location.starts_with('/') {
        location.to_string()
    } else {
        format!("{skill}/{location}")
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A retrievable piece of a document, with everything needed to cite it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    pub id: ChunkId,
    pub skill: String,
    /// Path of the document relative to the skill folder, `/`-separated.
    pub source: String,
    /// The document's title (first `#` heading, else the file stem).
    pub title: String,
    /// Markdown heading path from the outermost heading down.
    pub heading: Vec<String>,
    /// Position of this chunk inside its document, from 0.
    pub ordinal: u32,
    /// Character (not byte) span of the chunk in the normalized document text.
    pub span: (usize, usize),
    pub doc_type: DocType,
    pub tier: Tier,
    /// Modification time of the document, seconds since the Unix epoch.
    pub mtime: i64,
    /// Content hash of the document's raw bytes (blake3, hex).
    pub content_hash: String,
    pub text: String,
    /// First and last page the chunk lies on, for paged documents (PDF).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages: Option<(u32, u32)>,
    /// What the whole document is about (an LLM summary, or its title and outline), carried by
    /// every chunk of a long document so that a chunk out of its context still says where it
    /// belongs. Indexed with the chunk and shown in the context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The OCR engine's confidence (0 to 1) in the text, when it was read from a scan or a
    /// picture: the lowest of the pages the chunk lies on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ocr_confidence: Option<f32>,
    /// Keywords and questions the knowledge owner gave this chunk (a chunk edit): indexed with
    /// it, so a question in other words than the text's finds it, and never quoted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keywords: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub questions: Vec<String>,
    /// The header line and delimiter row of the Markdown table the chunk continues, when the
    /// table began in an earlier chunk (`skillrag_chunk::Piece::table_header`): indexed with the
    /// chunk, so its rows are found by their column names, and never part of `text` or `span`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_header: Option<String>,
}

impl Chunk {
    /// The heading path as one line, `A > B > C`.
    pub fn heading_line(&self) -> String {
        self.heading.join(" > ")
    }

    /// The text that is indexed (lexically and densely): the title and heading path travel
    /// with the chunk, so that a chunk saying "it was built in 1889" still matches "Eiffel Tower".
    pub fn indexed_text(&self) -> String {
        let mut out = String::with_capacity(self.text.len() + 64);
        let heading_has_title = self.heading.first().is_some_and(|h| h.contains(self.title.as_str()));
        if let Some(summary) = &self.summary {
            // The summary starts with the title.
            out.push_str(summary);
            out.push('\n');
        } else if !self.title.is_empty() && !heading_has_title {
            out.push_str(&self.title);
            out.push('\n');
        }
        if !self.heading.is_empty() {
            out.push_str(&self.heading_line());
            out.push('\n');
        }
        if let Some(header) = &self.table_header {
            out.push_str(header);
            out.push('\n');
        }
        out.push_str(&self.text);
        for extra in self.keywords.iter().chain(&self.questions) {
            out.push('\n');
            out.push_str(extra);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn citations_name_pages() {
        assert_eq!(cited_location("manual.pdf", Some((12, 12))), "manual.pdf p. 12");
        assert_eq!(cited_location("manual.pdf", Some((12, 13))), "manual.pdf pp. 12–13");
        assert_eq!(cited_location("a.md", None), "a.md");
    }

    #[test]
    fn tier_comes_from_folders() {
        assert_eq!(Tier::from_source_path("references/a.md"), Tier::References);
        assert_eq!(Tier::from_source_path("knowledge/rules/a.md"), Tier::Rules);
        assert_eq!(Tier::from_source_path("knowledge/examples/x/a.md"), Tier::Examples);
        assert_eq!(Tier::from_source_path("rules.md"), Tier::References);
    }

    #[test]
    fn indexed_text_carries_title_once() {
        let mut c = Chunk {
            id: 0,
            skill: "s".into(),
            source: "a.md".into(),
            title: "埃菲尔铁塔".into(),
            heading: vec!["埃菲尔铁塔".into(), "历史".into()],
            ordinal: 0,
            span: (0, 8),
            doc_type: DocType::General,
            tier: Tier::References,
            mtime: 0,
            content_hash: String::new(),
            text: "它于1889年建成".into(),
            pages: None,
            summary: None,
            ocr_confidence: None,
            keywords: Vec::new(),
            questions: Vec::new(),
            table_header: None,
        };
        assert_eq!(c.indexed_text(), "埃菲尔铁塔 > 历史\n它于1889年建成");
        c.heading.clear();
        assert_eq!(c.indexed_text(), "埃菲尔铁塔\n它于1889年建成");
        c.text = "| 1889 | 300 m |".into();
        c.table_header = Some("| 建成 | 高度 |\n|---|---|".into());
        assert_eq!(
            c.indexed_text(),
            "埃菲尔铁塔\n| 建成 | 高度 |\n|---|---|\n| 1889 | 300 m |",
            "a row knows its columns"
        );
    }
}
