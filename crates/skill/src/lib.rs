//! Skills: a folder with a `SKILL.md` and its own knowledge base (docs/design.md §2).
//!
//! `SKILL.md` is read in three forms — spec-valid Agent Skills frontmatter (our extras
//! under `metadata`), lenient extra top-level keys (`triggers:` list, `boundary:` string),
//! and headings only with no frontmatter. Body sections are recognised by the meaning of
//! their heading in Chinese or English, never by their number.

mod compose;
mod dependencies;
mod discover;
mod frontmatter;
mod lint;
mod parse;
mod sections;

pub use compose::{
    check_skill_name, check_skill_text, compose, skill_title, with_example, with_name, DraftError, SkillDraft,
};
pub use discover::{discover, is_disabled, set_disabled, Discovery, DISABLED_MARKER};
pub use lint::{advice, advice_for_text, placeholders, skill_md_template, PLACEHOLDERS};
pub use parse::{parse_skill, parse_skill_text, read_skill_file, ParsedSkill};
pub use sections::{split_list, SectionKind};

use skillrag_core::DocType;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The file every skill folder must hold.
pub const SKILL_FILE: &str = "SKILL.md";

/// Knowledge locations used when `metadata.knowledge` does not name any.
pub const DEFAULT_KNOWLEDGE: [&str; 2] = ["references", "knowledge"];

/// Which of the accepted `SKILL.md` forms a skill was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillForm {
    /// Frontmatter with only the Agent Skills top-level keys.
    AgentSkills,
    /// Frontmatter with extra top-level keys such as `triggers:` or `boundary:`.
    Lenient,
    /// No frontmatter: numbered or plain headings such as `## 2. 触发规则`.
    HeadingsOnly,
}

/// Where a skill's knowledge ends: what it supports and what it explicitly does not.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Boundary {
    pub text: String,
    pub supports: Vec<String>,
    pub not_supported: Vec<String>,
}

/// A loaded skill. `id` is the folder name and the key for everything else.
#[derive(Debug, Clone)]
pub struct Skill {
    pub id: String,
    pub dir: PathBuf,
    pub name: String,
    pub description: String,
    pub triggers: Vec<String>,
    pub examples: Vec<String>,
    pub boundary: Option<Boundary>,
    pub instructions: Option<String>,
    pub title: Option<String>,
    pub license: Option<String>,
    pub compatibility: Option<String>,
    pub allowed_tools: Option<String>,
    /// `metadata` as written (string → string), lenient top-level extras folded in.
    pub metadata: BTreeMap<String, String>,
    pub form: SkillForm,
    pub settings: SkillSettings,
}

/// Per-skill overrides of the project defaults, read from `metadata`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillSettings {
    /// Knowledge paths or globs relative to the skill folder.
    pub knowledge: Vec<String>,
    pub chunk_size: Option<usize>,
    pub chunk_overlap: Option<usize>,
    pub top_k: Option<usize>,
    pub doc_type: Option<DocType>,
    /// Use the questions of the skill's FAQ files as routing examples.
    pub faq_examples: Option<bool>,
    /// Skills whose knowledge is retrieved too when this one is routed to (`metadata.uses`).
    /// After [`discover`], only the valid ones: unknown names, the skill itself and cycles are
    /// reported and dropped.
    pub uses: Vec<String>,
    /// The line of `uses` in `SKILL.md`, for its diagnostics.
    pub uses_line: usize,
}

impl Skill {
    /// The knowledge locations to scan: `metadata.knowledge`, else `references/` and `knowledge/`.
    pub fn knowledge_patterns(&self) -> Vec<String> {
        if self.settings.knowledge.is_empty() {
            DEFAULT_KNOWLEDGE.iter().map(|s| s.to_string()).collect()
        } else {
            self.settings.knowledge.clone()
        }
    }

    pub fn skill_file(&self) -> PathBuf {
        self.dir.join(SKILL_FILE)
    }
}
