//! The index path: load → chunk → embed → store, per skill, incrementally.
//!
//! Unchanged files are carried over from the previous generation (neither re-chunked nor
//! re-embedded); changed files are re-chunked and their chunks embedded unless the embedding
//! cache already holds the same text for the same model; deleted files drop out. A changed
//! model, analyzer or chunking setting rebuilds the skill and says why.

mod load;
mod output;
mod skill;

use crate::{Engine, EngineError};
use skillrag_chunk::ChunkConfig;
use skillrag_core::Diagnostic;
use skillrag_embed::Embedder;
use skillrag_skill::Skill;
use skillrag_store::{EmbeddingCache, IndexMeta, StoreError};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a busy index lock is tried again before `Busy` ([`lock_state_dir`]).
const LOCK_PATIENCE: Duration = Duration::from_secs(2);
const LOCK_RETRY: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Default)]
pub struct IndexOptions {
    /// Skills to index; empty means all.
    pub skills: Vec<String>,
    /// Re-chunk and re-embed everything (the embedding cache still applies).
    pub rebuild: bool,
}

/// What indexing one skill did.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SkillReport {
    pub skill: String,
    pub files: usize,
    pub files_changed: usize,
    pub files_unchanged: usize,
    pub files_deleted: usize,
    pub files_failed: usize,
    pub chunks: usize,
    pub chunks_new: usize,
    /// Chunks embedded by the model in this run (the rest came from the cache or were kept).
    pub embedded: usize,
    pub cache_hits: usize,
    /// Chunks of the skill stored without a vector: the model sees less of them than
    /// `retrieval.min_visibility`, so no dense search would ever use one.
    pub vectorless: usize,
    /// Why the skill was rebuilt from scratch, if it was.
    pub rebuilt: Option<String>,
    /// What was moved aside because it was damaged (a generation, `CURRENT`…), one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repaired: Vec<String>,
    /// The generation published, or `None` when the index was already up to date.
    pub generation: Option<u64>,
    /// Why the skill could not be indexed; its previous index, if any, keeps serving.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub seconds: f64,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct IndexReport {
    pub skills: Vec<SkillReport>,
    /// Indexes deleted because their skill no longer exists.
    pub removed: Vec<String>,
    pub diagnostics: Vec<Diagnostic>,
    /// Embedding cache records dropped because they were damaged (their texts were embedded again).
    pub cache_dropped: usize,
    /// What was moved aside because it stood in the way (`.skillrag` as a file…).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub repaired: Vec<String>,
    pub seconds: f64,
}

/// Receives progress while indexing (the CLI draws bars; tests stay silent).
pub trait Progress: Sync {
    /// A skill's knowledge files are listed: `files` is the total of its `file_done` calls,
    /// known before the first file is read (the unit a progress bar can count).
    fn skill_started(&self, _skill: &str, _files: usize) {}
    fn file_done(&self, _skill: &str, _source: &str) {}
    /// New chunks of a file are waiting for the embed and write stages (called as files are
    /// chunked, while earlier chunks are being embedded: the total grows as loading goes on,
    /// so it suits a rate, not a bar's end).
    fn embed_queued(&self, _skill: &str, _chunks: usize) {}
    /// Chunks embedded (or taken from the cache, or found invisible to the model) and written.
    fn embedded(&self, _skill: &str, _chunks: usize) {}
    /// Scanned pages or pictures are about to be read by OCR (pages found in the OCR cache are
    /// not counted); the total grows as files are met.
    fn ocr_queued(&self, _skill: &str, _pages: usize) {}
    /// One page or picture read by OCR (or failed).
    fn ocr_done(&self, _skill: &str) {}
    fn skill_finished(&self, _report: &SkillReport) {}
    fn diagnostic(&self, _diagnostic: &Diagnostic) {}
    fn note(&self, _message: &str) {}
}

pub struct SilentProgress;
impl Progress for SilentProgress {}

impl Engine {
    /// Indexes the selected skills. Skills whose folder was removed lose their index.
    pub fn index(&self, options: &IndexOptions, progress: &dyn Progress) -> Result<IndexReport, EngineError> {
        let report = self.index_skills(options, progress);
        // Whatever was published before an error too: this engine serves it from its next search.
        self.recheck_generations();
        report
    }

    fn index_skills(&self, options: &IndexOptions, progress: &dyn Progress) -> Result<IndexReport, EngineError> {
        let started = Instant::now();
        // A read replica refuses before any file is read or embedded.
        self.store.writable()?;
        let state = self.project.state_dir();
        let (_lock, repaired) = lock_state_dir(&state, progress)?;

        let mut report =
            IndexReport { diagnostics: self.discovery.diagnostics.clone(), repaired, ..Default::default() };
        for d in &report.diagnostics {
            progress.diagnostic(d);
        }
        let selected: Vec<&Skill> = if options.skills.is_empty() {
            self.skills().iter().collect()
        } else {
            options.skills.iter().map(|s| self.skill(s)).collect::<Result<_, _>>()?
        };

        let embedder = self.embedder()?;
        let mut cache = open_embedding_cache(&state, embedder.as_deref())?;
        report.cache_dropped = cache.as_ref().map_or(0, EmbeddingCache::dropped);
        if report.cache_dropped > 0 {
            progress.note(&format!(
                "embedding cache: {} damaged record(s) failed their checksum and were dropped; their texts are embedded again",
                report.cache_dropped
            ));
        }

        for skill in selected {
            let skill_started = Instant::now();
            let result = self.index_skill(
                skill,
                options.rebuild,
                embedder.as_deref(),
                cache.as_mut(),
                progress,
                &mut report.diagnostics,
            );
            let r = match result {
                Ok(r) => r,
                // What stops every skill alike (another indexer, a read-only store, the model)
                // stops the run; what one skill hit is reported and the others go on, since a
                // failed skill keeps its last good generation serving.
                Err(e @ (EngineError::Busy(_) | EngineError::Embed(_) | EngineError::Config(_))) => return Err(e),
                Err(EngineError::Store(e @ StoreError::ReadOnly(_))) => return Err(EngineError::Store(e)),
                Err(e) => failed_skill(skill, &e, skill_started, progress, &mut report.diagnostics),
            };
            progress.skill_finished(&r);
            report.skills.push(r);
        }

        if options.skills.is_empty() {
            self.remove_vanished_skills(progress, &mut report.removed)?;
        }
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// Deletes the indexes of skills that no longer exist (a disabled skill keeps its index, to
    /// answer again as soon as it is enabled).
    fn remove_vanished_skills(&self, progress: &dyn Progress, removed: &mut Vec<String>) -> Result<(), EngineError> {
        for indexed in self.store.skills()? {
            if self.discovery.get(&indexed).is_none() && self.discovery.get_disabled(&indexed).is_none() {
                self.store.remove(&indexed)?;
                progress.note(&format!("removed the index of `{indexed}`: the skill no longer exists"));
                removed.push(indexed);
            }
        }
        Ok(())
    }

    /// The chunking settings of a skill: its own metadata over the project's. SKILL.md's values
    /// were checked when it was read; an overlap inherited from the project is capped at half
    /// the skill's own chunk size, so that a skill with small chunks never fails to index.
    pub fn chunk_config(&self, skill: &Skill) -> Result<ChunkConfig, EngineError> {
        let index = &self.settings.index;
        let size = skill.settings.chunk_size.unwrap_or(index.chunk_size);
        let config = ChunkConfig {
            size,
            overlap: skill.settings.chunk_overlap.unwrap_or_else(|| index.chunk_overlap.min(size / 2)),
        };
        config.validate().map_err(|e| EngineError::Settings(format!("skill `{}`: {e}", skill.id)))?;
        Ok(config)
    }

    /// The index settings a skill should have now.
    pub(crate) fn wanted_meta(&self, skill: &Skill) -> Result<IndexMeta, EngineError> {
        let (model_id, dim) = match &self.model {
            Some(m) => (Some(m.id.clone()), m.dim),
            None => (None, 0),
        };
        let fingerprint = format!("{};{}", self.chunk_config(skill)?.fingerprint(), self.chunking.fingerprint());
        let mut meta = IndexMeta::new(&skill.id, model_id, dim, fingerprint);
        if meta.model_id.is_some() {
            meta.min_visibility = self.settings.retrieval.section.min_visibility;
        }
        Ok(meta)
    }
}

/// Renames `path` to `<path>.corrupt-<unix time>`, out of the way but kept for a look.
pub(crate) fn move_aside(path: &std::path::Path) -> Result<std::path::PathBuf, EngineError> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut target = path.with_file_name(format!("{name}.corrupt-{now}"));
    let mut n = 1;
    while target.symlink_metadata().is_ok() {
        n += 1;
        target = path.with_file_name(format!("{name}.corrupt-{now}-{n}"));
    }
    std::fs::rename(path, &target).map_err(EngineError::io(path))?;
    Ok(target)
}

/// The message for a skill that could not be indexed: disk full said plainly, once, since it
/// is what a user can fix; anything else with its cause.
fn skill_failure(skill: &str, e: &EngineError) -> String {
    match e {
        EngineError::Store(store) if store.is_disk_full() => format!(
            "no space left on device while writing skill `{skill}`; its previous index is still serving (free some space and run `skillrag index` again)"
        ),
        e => format!("skill `{skill}` was not indexed: {e}; its previous index, if any, is still serving"),
    }
}

/// Makes the state folder (moving a file that stands in its way aside) and takes the index
/// lock, held as long as the returned file is: one `skillrag index` at a time per project.
/// Also returns the repairs made, one line each.
fn lock_state_dir(state: &Path, progress: &dyn Progress) -> Result<(std::fs::File, Vec<String>), EngineError> {
    let mut repaired = Vec::new();
    if state.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
        let to = move_aside(state)?;
        let line = format!("{} was a file, not a folder; moved it aside to {}", state.display(), to.display());
        progress.note(&line);
        repaired.push(line);
    }
    std::fs::create_dir_all(state).map_err(EngineError::io(state))?;
    let lock_path = state.join("index.lock");
    // A folder (or pipe, socket…) where the lock file belongs would fail every run with only
    // "Is a directory": it is moved aside like a damaged generation, kept for a look, and said.
    if lock_path.symlink_metadata().is_ok_and(|m| !m.is_file() && !m.file_type().is_symlink()) {
        let to = move_aside(&lock_path)?;
        let line = format!(
            "{} was not a file (the index lock is a plain file); moved it aside to {}",
            lock_path.display(),
            to.display()
        );
        progress.note(&line);
        repaired.push(line);
    }
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(EngineError::io(&lock_path))?;
    // A lock just released can still be held for a moment by a child process this one forked
    // (OCR, a test's server) before its exec closed the inherited descriptor: flock belongs to
    // the open file, which the child shares until then. So a busy lock is tried again for a
    // little while before another index is taken to be running.
    let mut waited = Duration::ZERO;
    while lock.try_lock().is_err() {
        if waited >= LOCK_PATIENCE {
            return Err(EngineError::Busy(lock_path.display().to_string()));
        }
        std::thread::sleep(LOCK_RETRY);
        waited += LOCK_RETRY;
    }
    Ok((lock, repaired))
}

/// The embedding cache of the model, when there is one.
fn open_embedding_cache(state: &Path, embedder: Option<&dyn Embedder>) -> Result<Option<EmbeddingCache>, EngineError> {
    Ok(match embedder {
        Some(e) => Some(EmbeddingCache::open(&state.join("cache/embeddings"), e.model_id(), e.dim())?),
        None => None,
    })
}

/// The report of a skill that could not be indexed, its failure reported as a diagnostic.
fn failed_skill(
    skill: &Skill,
    e: &EngineError,
    started: Instant,
    progress: &dyn Progress,
    diagnostics: &mut Vec<Diagnostic>,
) -> SkillReport {
    let message = skill_failure(&skill.id, e);
    let d = Diagnostic::error(skill.skill_file(), None, message.clone());
    progress.diagnostic(&d);
    diagnostics.push(d);
    SkillReport {
        skill: skill.id.clone(),
        error: Some(message),
        seconds: started.elapsed().as_secs_f64(),
        ..Default::default()
    }
}
