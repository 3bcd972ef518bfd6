//! Copying a project's indexes from one store to another (embedded ⇄ PostgreSQL): every
//! skill's published generation, chunk for chunk with its vector and id, so nothing is
//! re-chunked or re-embedded and the copy answers exactly like the original.

use crate::{Engine, EngineError, Progress};
use serde::Serialize;
use skillrag_store::Store;

/// What one skill's copy holds.
#[derive(Debug, Clone, Serialize)]
pub struct MigratedSkill {
    pub skill: String,
    pub sources: usize,
    pub chunks: usize,
    /// The generation published in the target store.
    pub generation: u64,
}

impl Engine {
    /// Copies the published generation of `skills` (all indexed skills when empty) from this
    /// engine's store into `target`. Each skill is published in the target atomically; a
    /// failure leaves that skill's previous generation in the target untouched.
    pub fn migrate_to(
        &self,
        target: &dyn Store,
        skills: &[String],
        progress: &dyn Progress,
    ) -> Result<Vec<MigratedSkill>, EngineError> {
        target.writable()?;
        let indexed = self.store.skills()?;
        for s in skills {
            if !indexed.contains(s) {
                return Err(EngineError::NotIndexed(s.clone()));
            }
        }
        let selected: Vec<&String> = indexed.iter().filter(|s| skills.is_empty() || skills.contains(s)).collect();
        let mut out = Vec::new();
        for skill in selected {
            let Some(index) = self.store.open(skill)? else { continue };
            let manifest = index.manifest().clone();
            progress.skill_started(skill, manifest.files.len());
            let mut writer = target.begin(skill, index.meta().clone())?;
            let mut chunks = 0;
            for source in manifest.files.keys() {
                let exported = index.export(source)?;
                chunks += exported.len();
                writer.import(exported)?;
                progress.file_done(skill, source);
            }
            let meta = writer.commit(manifest.clone())?;
            out.push(MigratedSkill {
                skill: skill.clone(),
                sources: manifest.files.len(),
                chunks,
                generation: meta.generation,
            });
        }
        Ok(out)
    }
}
