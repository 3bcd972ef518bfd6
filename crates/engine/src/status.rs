//! What is indexed and whether it is up to date (`skillrag skills`, `skillrag sources`).

use crate::{Engine, EngineError};
use serde::Serialize;
use skillrag_skill::Skill;

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
}

impl Engine {
    pub fn status(&self) -> Result<Vec<SkillStatus>, EngineError> {
        self.skills().iter().map(|s| self.skill_status(s)).collect()
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

    /// The documents of a skill's current index, by source path.
    pub fn sources(&self, skill: &str) -> Result<Vec<SourceInfo>, EngineError> {
        self.skill(skill)?;
        let index = match self.index_of(skill)? {
            Some(index) => index,
            None => {
                return Err(self.damage(skill).map_or_else(|| EngineError::NotIndexed(skill.to_string()), Into::into))
            }
        };
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
            })
            .collect())
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
