//! What is indexed and whether it is up to date (`skillrag skills`, `skillrag sources`).

use crate::{Engine, EngineError};
use serde::Serialize;
use skillrag_skill::{Boundary, Skill};
use std::collections::BTreeMap;

/// Whether a skill's index matches its files and settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "reason", rename_all = "snake_case")]
pub enum Freshness {
    Fresh,
    Stale(String),
    NotIndexed,
    /// The index is damaged and skipped: what is wrong and the command that repairs it.
    Damaged(String),
}

#[derive(Debug, Clone, Serialize)]
pub struct SkillStatus {
    pub skill: String,
    /// `false` for a skill turned off by its owner: listed, kept indexed, never routed to.
    pub enabled: bool,
    pub description: String,
    pub triggers: Vec<String>,
    /// Routing examples: the SKILL.md ones, plus FAQ questions when the skill opts in.
    pub examples: usize,
    pub files: usize,
    pub chunks: usize,
    /// Chunks stored without a vector: the embedding model cannot see them.
    pub vectorless: usize,
    pub generation: Option<u64>,
    pub size_bytes: Option<u64>,
    pub index: Freshness,
}

/// One indexed document of a skill.
#[derive(Debug, Clone, Serialize)]
pub struct SourceInfo {
    pub source: String,
    pub title: String,
    pub chunks: usize,
    /// Of its chunks, those stored without a vector (the embedding model cannot see them).
    pub vectorless: usize,
    pub doc_type: String,
    pub tier: String,
    pub size: u64,
    pub encoding: String,
    /// Pages read by OCR (0: the picture itself).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ocr_pages: Vec<u32>,
    /// Of those, the pages OCR was unsure of (`[index] ocr_low_confidence`), with the confidence:
    /// worth a look, or a better scan.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub low_confidence_pages: Vec<LowConfidencePage>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LowConfidencePage {
    pub page: u32,
    pub confidence: f32,
}

/// A skill as an agent about to use it reads it (`get_skill`): what its SKILL.md says, and a
/// summary of its knowledge.
#[derive(Debug, Clone, Serialize)]
pub struct SkillCard {
    pub skill: String,
    pub name: String,
    pub description: String,
    pub triggers: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub boundary: Option<Boundary>,
    /// Routing examples: the SKILL.md ones, plus FAQ questions when the skill opts in.
    pub examples: Vec<String>,
    /// The skills whose knowledge is retrieved with this one's (`metadata.uses`, the valid ones).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub uses: Vec<String>,
    pub knowledge: KnowledgeSummary,
}

/// What a skill's knowledge holds and whether its index is up to date.
#[derive(Debug, Clone, Serialize)]
pub struct KnowledgeSummary {
    pub documents: usize,
    pub chunks: usize,
    pub vectorless: usize,
    pub generation: Option<u64>,
    pub index: Freshness,
    /// Indexed documents per tier (`rules`, `examples`, `references`).
    pub tiers: BTreeMap<String, usize>,
    /// Indexed documents per document type.
    pub doc_types: BTreeMap<String, usize>,
}

impl Engine {
    /// The current index of a skill that must have one: a damaged index is refused with what is
    /// wrong and the command that repairs it, a missing one with the command that makes it. (A
    /// damaged index reads as missing to [`Engine::index_of`], so that walks over every skill
    /// skip it; a caller that needs this one skill must not tell the user to "index" it.)
    pub fn require_index(&self, skill: &str) -> Result<std::sync::Arc<dyn skillrag_store::SkillIndex>, EngineError> {
        match self.index_of(skill)? {
            Some(index) => Ok(index),
            None => Err(self.damage(skill).map_or_else(|| EngineError::NotIndexed(skill.to_string()), Into::into)),
        }
    }

    /// The card of one skill (an unknown id is an error that lists the known ones).
    pub fn skill_card(&self, id: &str) -> Result<SkillCard, EngineError> {
        let skill = self.skill(id)?;
        let status = self.skill_status(skill)?;
        let (mut tiers, mut doc_types) = (BTreeMap::new(), BTreeMap::new());
        if let Some(index) = self.index_of(id)? {
            for file in index.manifest().files.values() {
                *tiers.entry(file.tier.to_string()).or_insert(0) += 1;
                *doc_types.entry(file.doc_type.to_string()).or_insert(0) += 1;
            }
        }
        Ok(SkillCard {
            skill: skill.id.clone(),
            name: skill.name.clone(),
            description: skill.description.clone(),
            triggers: skill.triggers.clone(),
            instructions: skill.instructions.clone().filter(|s| !s.trim().is_empty()),
            boundary: skill.boundary.clone().filter(|b| !b.text.trim().is_empty()),
            examples: skill.examples.clone(),
            uses: skill.settings.uses.clone(),
            knowledge: KnowledgeSummary {
                documents: status.files,
                chunks: status.chunks,
                vectorless: status.vectorless,
                generation: status.generation,
                index: status.index,
                tiers,
                doc_types,
            },
        })
    }

    /// Every skill's status, the enabled ones first, then the disabled ones.
    pub fn status(&self) -> Result<Vec<SkillStatus>, EngineError> {
        let all = self.skills().iter().chain(&self.discovery.disabled);
        all.map(|s| self.skill_status(s)).collect()
    }

    pub fn skill_status(&self, skill: &Skill) -> Result<SkillStatus, EngineError> {
        let listing = self.project.knowledge_files(skill);
        let index = self.index_of(&skill.id)?;
        let wanted = self.wanted_meta(skill)?;
        let freshness = match &index {
            None => match self.damage(&skill.id) {
                Some(damage) => Freshness::Damaged(damage.to_string()),
                None => Freshness::NotIndexed,
            },
            Some(index) => {
                if let Some(reason) = index.meta().rebuild_reason(&wanted) {
                    Freshness::Stale(reason)
                } else {
                    let manifest = index.manifest();
                    let mut changes = Vec::new();
                    for f in &listing.files {
                        match manifest.files.get(&f.source) {
                            None => changes.push(format!("{} is new", f.source)),
                            Some(entry) => {
                                if !same_content(&f.path, entry) {
                                    changes.push(format!("{} changed", f.source));
                                }
                            }
                        }
                    }
                    let listed: std::collections::HashSet<&str> =
                        listing.files.iter().map(|f| f.source.as_str()).collect();
                    for source in manifest.files.keys() {
                        if !listed.contains(source.as_str()) {
                            changes.push(format!("{source} was deleted"));
                        }
                    }
                    if changes.is_empty() {
                        Freshness::Fresh
                    } else {
                        let more =
                            if changes.len() > 3 { format!(" (+{} more)", changes.len() - 3) } else { String::new() };
                        changes.truncate(3);
                        Freshness::Stale(format!("{}{more}", changes.join(", ")))
                    }
                }
            }
        };
        Ok(SkillStatus {
            skill: skill.id.clone(),
            enabled: self.discovery.get(&skill.id).is_some(),
            description: skill.description.clone(),
            triggers: skill.triggers.clone(),
            examples: skill.examples.len(),
            files: listing.files.len(),
            chunks: index.as_ref().map_or(0, |i| i.len()),
            vectorless: index.as_ref().map_or(0, |i| i.meta().vectorless),
            generation: index.as_ref().map(|i| i.meta().generation),
            size_bytes: self.store.size_on_disk(&skill.id),
            index: freshness,
        })
    }

    /// The text of one knowledge document, read as indexing reads it: only a file of the skill's
    /// knowledge listing (links confined to the project, pipes never opened), under the index's
    /// limits. `source` is matched against the listing, never joined onto a path.
    pub fn document_text(&self, skill: &str, source: &str) -> Result<String, EngineError> {
        self.listed_document(self.skill(skill)?, source).map(|doc| doc.text)
    }

    /// The chunks `source` gets with `preset` (`None`: the one the rules and detection choose),
    /// its edits not applied, and that preset: what a change of preset would give, before it is
    /// made. Nothing is written.
    pub fn chunk_preview(
        &self,
        skill: &str,
        source: &str,
        preset: Option<skillrag_core::DocType>,
    ) -> Result<(skillrag_core::DocType, Vec<skillrag_core::Chunk>), EngineError> {
        let skill = self.skill(skill)?;
        let doc = self.listed_document(skill, source)?;
        let limit = self.settings.index.max_chunks_per_file;
        let chunks = self
            .chunking
            .chunks(skill, &doc, &self.chunk_config(skill)?, limit, preset)
            .map_err(|e| EngineError::Unreadable { document: source.to_string(), message: e.to_string() })?;
        Ok((self.chunking.doc_type(skill, &doc, preset), chunks))
    }

    /// A document of the skill's knowledge listing now, read as indexing reads it.
    fn listed_document(&self, skill: &Skill, source: &str) -> Result<skillrag_load::Document, EngineError> {
        let listing = self.project.knowledge_files(skill);
        let unknown = || EngineError::UnknownSource { skill: skill.id.clone(), document: source.to_string() };
        let file = listing.files.iter().find(|f| f.source == source).ok_or_else(unknown)?;
        let options = self.settings.index.load;
        // A scan's text as indexing read it (from the OCR cache once indexed); Tesseract is not
        // probed for a document that cannot hold a picture.
        let ocr = if skillrag_load::Format::from_path(&file.path).is_some_and(skillrag_load::Format::may_need_ocr) {
            self.ocr_choice(Some(skill), None).0
        } else {
            skillrag_load::OcrChoice::Unavailable("not needed".into())
        };
        skillrag_load::load_document(&file.path, &file.source, &options, &ocr)
            .map_err(|e| EngineError::Unreadable { document: source.to_string(), message: e.to_string() })
    }

    /// The documents of a skill's current index, by source path.
    pub fn sources(&self, skill: &str) -> Result<Vec<SourceInfo>, EngineError> {
        self.skill(skill)?;
        let index = self.require_index(skill)?;
        let low = self.settings.index.ocr_low_confidence;
        Ok(index
            .manifest()
            .files
            .iter()
            .map(|(source, f)| SourceInfo {
                source: source.clone(),
                title: f.title.clone(),
                chunks: f.chunks,
                vectorless: f.vectorless,
                doc_type: f.doc_type.to_string(),
                tier: f.tier.to_string(),
                size: f.size,
                encoding: f.encoding.clone(),
                ocr_pages: f.ocr_pages.iter().map(|&(page, _)| page).collect(),
                low_confidence_pages: f
                    .ocr_pages
                    .iter()
                    .map(|&(page, percent)| LowConfidencePage { page, confidence: f32::from(percent) / 100.0 })
                    .filter(|p| p.confidence < low)
                    .collect(),
            })
            .collect())
    }
}

/// A picture of a skill's knowledge, as its index knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PictureInfo {
    /// The source path, as cited (`knowledge/notice.png`).
    pub source: String,
    pub width: u32,
    pub height: u32,
    /// File size in bytes.
    pub bytes: u64,
}

impl Engine {
    /// The picture `source` of `skill`'s current index; `None` when it is not an indexed picture.
    pub fn picture(&self, skill: &str, source: &str) -> Option<PictureInfo> {
        // By name first: every citation of every answer asks, and few are pictures.
        if skillrag_load::Format::from_path(std::path::Path::new(source)) != Some(skillrag_load::Format::Image) {
            return None;
        }
        let index = self.index_of(skill).ok()??;
        let entry = index.manifest().files.get(source)?;
        let (width, height) = entry.image?;
        Some(PictureInfo { source: source.to_string(), width, height, bytes: entry.size })
    }
}

/// Same size and mtime, or else the same content hash.
fn same_content(path: &std::path::Path, entry: &skillrag_store::FileEntry) -> bool {
    let Ok(meta) = std::fs::metadata(path) else { return false };
    if meta.len() != entry.size {
        return false;
    }
    skillrag_load::mtime_secs(&meta) == entry.mtime
        || std::fs::read(path).is_ok_and(|b| skillrag_load::content_hash(&b) == entry.content_hash)
}
