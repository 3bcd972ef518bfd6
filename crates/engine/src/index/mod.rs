//! The index path: load → chunk → embed → store, per skill, incrementally.
//!
//! Unchanged files are carried over from the previous generation (neither re-chunked nor
//! re-embedded); changed files are re-chunked and their chunks embedded unless the embedding
//! cache already holds the same text for the same model; deleted files drop out. A changed
//! model, analyzer or chunking setting rebuilds the skill and says why.

use crate::{Engine, EngineError};
use skillrag_chunk::ChunkConfig;
use skillrag_core::{Chunk, Diagnostic};
use skillrag_embed::{EmbedKind, Embedder};
use skillrag_load::ocr::OcrEvent;
use skillrag_load::{load_document_with_warnings, Document, Format, KnowledgeFile, LoadError, LoadOptions, OcrChoice};
use skillrag_skill::Skill;
use skillrag_store::{EmbeddingCache, FileEntry, IndexMeta, Manifest, NewChunk, SkillIndex, StoreError};
use std::sync::Arc;
use std::time::Instant;

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
    fn skill_started(&self, _skill: &str, _files: usize) {}
    fn file_done(&self, _skill: &str, _source: &str) {}
    /// New chunks of a file are waiting for the embed and write stages (called as files are
    /// chunked, while earlier chunks are being embedded: the total grows as loading goes on).
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
        let mut repaired = Vec::new();
        if state.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
            let to = move_aside(&state)?;
            let line = format!("{} was a file, not a folder; moved it aside to {}", state.display(), to.display());
            progress.note(&line);
            repaired.push(line);
        }
        std::fs::create_dir_all(&state).map_err(|e| EngineError::Invalid(format!("{}: {e}", state.display())))?;
        let lock_path = state.join("index.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| EngineError::Invalid(format!("{}: {e}", lock_path.display())))?;
        if lock.try_lock().is_err() {
            return Err(EngineError::Busy(lock_path.display().to_string()));
        }

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
        let mut cache = match &embedder {
            Some(e) => Some(EmbeddingCache::open(&state.join("cache/embeddings"), e.model_id(), e.dim())?),
            None => None,
        };
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
                Err(e) => {
                    let message = skill_failure(&skill.id, &e);
                    let d = Diagnostic::error(skill.skill_file(), None, message.clone());
                    progress.diagnostic(&d);
                    report.diagnostics.push(d);
                    SkillReport {
                        skill: skill.id.clone(),
                        error: Some(message),
                        seconds: skill_started.elapsed().as_secs_f64(),
                        ..Default::default()
                    }
                }
            };
            progress.skill_finished(&r);
            report.skills.push(r);
        }

        if options.skills.is_empty() {
            for indexed in self.store.skills()? {
                if self.discovery.get(&indexed).is_none() {
                    self.store.remove(&indexed)?;
                    progress.note(&format!("removed the index of `{indexed}`: the skill no longer exists"));
                    report.removed.push(indexed);
                }
            }
        }
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// The chunking settings of a skill: its own metadata over the project's. SKILL.md's values
    /// were checked when it was read; an overlap inherited from the project is capped at half
    /// the skill's own chunk size, so that a skill with small chunks never fails to index.
    pub fn chunk_config(&self, skill: &Skill) -> Result<ChunkConfig, EngineError> {
        let index = &self.project.config.index;
        let size = skill.settings.chunk_size.unwrap_or(index.chunk_size);
        let config = ChunkConfig {
            size,
            overlap: skill.settings.chunk_overlap.unwrap_or_else(|| index.chunk_overlap.min(size / 2)),
        };
        config.validate().map_err(|e| EngineError::Invalid(format!("skill `{}`: {e}", skill.id)))?;
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
            meta.min_visibility = self.project.config.retrieval.min_visibility;
        }
        Ok(meta)
    }

    fn index_skill(
        &self,
        skill: &Skill,
        force_rebuild: bool,
        embedder: Option<&dyn Embedder>,
        cache: Option<&mut EmbeddingCache>,
        progress: &dyn Progress,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Result<SkillReport, EngineError> {
        let started = Instant::now();
        let mut report = SkillReport { skill: skill.id.clone(), ..Default::default() };
        let chunk_config = self.chunk_config(skill)?;
        let chunking = &self.chunking;
        let wanted = self.wanted_meta(skill)?;

        let report_diag = |d: Diagnostic, diagnostics: &mut Vec<Diagnostic>| {
            progress.diagnostic(&d);
            diagnostics.push(d);
        };

        let listing = self.project.knowledge_files(skill);
        for d in listing.diagnostics {
            report_diag(d, diagnostics);
        }
        if listing.files.is_empty() {
            report_diag(
                Diagnostic::warning(
                    skill.skill_file(),
                    None,
                    format!(
                        "skill `{}` has no knowledge files (looked in {}); it is indexed empty",
                        skill.id,
                        skill.knowledge_patterns().join(", ")
                    ),
                ),
                diagnostics,
            );
        }
        report.files = listing.files.len();
        progress.skill_started(&skill.id, listing.files.len());

        // OCR for scans and pictures (alone, or inside DOCX and HTML), probed only when the skill
        // has a file that may hold one.
        let may_need_ocr = listing.files.iter().any(|f| Format::from_path(&f.path).is_some_and(Format::may_need_ocr));
        let (ocr, ocr_events) = if may_need_ocr {
            let (choice, problem) = self.ocr_choice(Some(skill), None);
            if let Some(d) = problem {
                report_diag(d, diagnostics);
            }
            // OCR reports from the loading threads; one forwarding thread hands it to `progress`.
            let (sender, events) = std::sync::mpsc::channel();
            let choice = match choice {
                OcrChoice::Ready(ocr) => OcrChoice::Ready(ocr.with_progress(move |e| {
                    let _ = sender.send(e);
                })),
                unavailable => unavailable,
            };
            (choice, Some(events))
        } else {
            (OcrChoice::Unavailable("the skill has no file that needs it".into()), None)
        };

        // Opening verifies the generation's checksums: a damaged one is never "up to date".
        let previous: Option<Arc<dyn SkillIndex>> = match self.store.open(&skill.id) {
            Ok(p) => p,
            Err(StoreError::Corrupt { detail, .. }) => {
                // Moved aside (so it never serves again) and rebuilt from the knowledge files.
                report.repaired = self.store.repair(&skill.id)?;
                progress.note(&format!("skill `{}`: the index is damaged ({detail}); rebuilding", skill.id));
                for line in &report.repaired {
                    progress.note(line);
                }
                report.rebuilt = Some(format!("the index was damaged ({detail})"));
                None
            }
            Err(e) => {
                progress.note(&format!("skill `{}`: previous index unreadable ({e}); rebuilding", skill.id));
                None
            }
        };
        let rebuild_reason = match &previous {
            None => None,
            Some(_) if force_rebuild => Some("--rebuild was given".to_string()),
            Some(p) => p.meta().rebuild_reason(&wanted),
        };
        if let Some(reason) = &rebuild_reason {
            progress.note(&format!("skill `{}`: rebuilding, {reason}", skill.id));
            report.rebuilt = Some(reason.clone());
        }
        let incremental = previous.as_ref().filter(|_| rebuild_reason.is_none());
        let previous_manifest = incremental.map(|p| p.manifest().clone()).unwrap_or_default();

        // Load and chunk on a second thread while this one embeds and writes, so the model never
        // waits on files; a bounded queue keeps memory flat however many files a skill has.
        let load = LoadContext {
            options: self.project.config.index.load_options(),
            previous: &previous_manifest,
            indexed_at: incremental.map(|p| p.meta().created_at),
            max_chunks: self.project.config.index.max_chunks_per_file,
            chunk: |doc: &Document| (chunking.chunks(skill, doc, &chunk_config), chunking.doc_type(skill, doc)),
        };
        let files = &listing.files;
        let mut manifest = Manifest::default();
        let mut output = Output {
            store: self.store.as_ref(),
            wanted: &wanted,
            writer: None,
            kept: Vec::new(),
            pending: Vec::new(),
            batch: self.project.config.index.embed_batch.max(1),
            embedder,
            cache,
            skill: &skill.id,
            progress,
        };
        std::thread::scope(|scope| -> Result<(), EngineError> {
            let (sender, loaded) = std::sync::mpsc::sync_channel::<Loaded>(LOAD_AHEAD);
            let load = &load;
            if let Some(events) = ocr_events {
                let skill = skill.id.as_str();
                // Ends when the OCR engine (its progress holds the sender) is dropped by the
                // loading thread below, which owns it.
                scope.spawn(move || {
                    for event in events {
                        match event {
                            OcrEvent::Queued(pages) => progress.ocr_queued(skill, pages),
                            OcrEvent::Done => progress.ocr_done(skill),
                        }
                    }
                });
            }
            scope.spawn(move || {
                let ocr = &ocr;
                // A skill with files that may need OCR loads a few at a time in parallel (a folder
                // of pictures OCRs on every core), handed on in listing order; others one by one,
                // as text loads faster than it is embedded.
                let window = if may_need_ocr { load_threads() } else { 1 };
                for window in files.chunks(window) {
                    if let [file] = window {
                        if sender.send(load.file(file, ocr)).is_err() {
                            return;
                        }
                        continue;
                    }
                    let window_loaded: Vec<Loaded> = std::thread::scope(|inner| {
                        let handles: Vec<_> =
                            window.iter().map(|file| inner.spawn(move || load.file(file, ocr))).collect();
                        handles
                            .into_iter()
                            .zip(window)
                            .map(|(h, file)| h.join().unwrap_or_else(|_| load.panicked(file)))
                            .collect()
                    });
                    for item in window_loaded {
                        // The receiver stops early only when writing failed; nothing is left to do then.
                        if sender.send(item).is_err() {
                            return;
                        }
                    }
                }
            });
            for item in loaded {
                for d in item.warnings {
                    report_diag(d, diagnostics);
                }
                match item.outcome {
                    Outcome::Unchanged(entry) => {
                        report.files_unchanged += 1;
                        report.chunks += entry.chunks;
                        manifest.files.insert(item.source.clone(), entry);
                        output.keep(item.source.clone())?;
                    }
                    Outcome::Failed { diagnostic, previous } => {
                        report.files_failed += 1;
                        report_diag(diagnostic, diagnostics);
                        if let Some(entry) = previous {
                            report.chunks += entry.chunks;
                            manifest.files.insert(item.source.clone(), entry);
                            output.keep(item.source.clone())?;
                        }
                    }
                    Outcome::Changed { entry, chunks } => {
                        report.files_changed += 1;
                        report.chunks_new += chunks.len();
                        manifest.files.insert(item.source.clone(), entry);
                        output.queue(chunks, &mut manifest, &mut report)?;
                    }
                }
                progress.file_done(&skill.id, &item.source);
            }
            Ok(())
        })?;
        let listed: std::collections::HashSet<&str> = files.iter().map(|f| f.source.as_str()).collect();
        report.files_deleted = previous_manifest.files.keys().filter(|s| !listed.contains(s.as_str())).count();

        let up_to_date = incremental.is_some() && report.files_changed == 0 && report.files_deleted == 0;
        if up_to_date {
            report.chunks = incremental.map_or(0, |p| p.len());
            report.vectorless = incremental.map_or(0, |p| p.meta().vectorless);
            report.seconds = started.elapsed().as_secs_f64();
            return Ok(report);
        }
        output.flush(&mut manifest, &mut report)?;
        let writer = output.into_writer()?;
        let meta = writer.commit(manifest)?;
        report.vectorless = meta.vectorless;
        report.generation = Some(meta.generation);
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }
}

/// Files loaded and chunked ahead of the embedder (each holds its chunks until they are embedded).
const LOAD_AHEAD: usize = 8;

/// Files loaded at once: one per core.
fn load_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// What the loading thread needs: everything read-only.
struct LoadContext<'a, F> {
    options: LoadOptions,
    previous: &'a Manifest,
    indexed_at: Option<i64>,
    max_chunks: usize,
    chunk: F,
}

/// One knowledge file as the loading thread found it.
struct Loaded {
    source: String,
    /// Repairs made while reading it (bad bytes replaced, lines read in another encoding).
    warnings: Vec<Diagnostic>,
    outcome: Outcome,
}

enum Outcome {
    /// Kept from the previous generation, with this manifest entry.
    Unchanged(FileEntry),
    /// Not indexed (reported); its previous version, if any, stays.
    Failed {
        diagnostic: Diagnostic,
        previous: Option<FileEntry>,
    },
    Changed {
        entry: FileEntry,
        chunks: Vec<Chunk>,
    },
}

impl<F: Fn(&Document) -> (Vec<Chunk>, skillrag_core::DocType) + Sync> LoadContext<'_, F> {
    fn file(&self, file: &KnowledgeFile, ocr: &OcrChoice) -> Loaded {
        let old = self.previous.files.get(&file.source);
        let mut warnings = Vec::new();
        let outcome = match classify(file, old, self.indexed_at, &self.options, ocr, &mut warnings) {
            Ok(FileState::Unchanged(entry)) => Outcome::Unchanged(entry),
            Ok(FileState::Changed(doc)) => self.chunked(&doc, old),
            Err(e) => {
                let note = if old.is_some() { " (the previously indexed version stays searchable)" } else { "" };
                Outcome::Failed {
                    diagnostic: Diagnostic::error(&file.path, e.line(), format!("{e}{note}")),
                    previous: old.cloned(),
                }
            }
        };
        Loaded { source: file.source.clone(), warnings, outcome }
    }

    /// A file whose loading thread panicked (a bug, not the file's fault): reported like a
    /// file that failed to load, its previous version kept.
    fn panicked(&self, file: &KnowledgeFile) -> Loaded {
        let old = self.previous.files.get(&file.source);
        let diagnostic =
            Diagnostic::error(&file.path, None, "reading it crashed the loader; skipped (please report this file)");
        Loaded {
            source: file.source.clone(),
            warnings: Vec::new(),
            outcome: Outcome::Failed { diagnostic, previous: old.cloned() },
        }
    }

    fn chunked(&self, doc: &Document, old: Option<&FileEntry>) -> Outcome {
        let (chunks, doc_type) = (self.chunk)(doc);
        if chunks.len() > self.max_chunks {
            // Like a file that fails to load: reported, and its last indexed version kept.
            let note = if old.is_some() { " (the previously indexed version stays searchable)" } else { "" };
            let message = format!(
                "yields {} chunks, over the limit of {}; skipped (a generated or hostile file? `[index] max_chunks_per_file` raises it){note}",
                chunks.len(),
                self.max_chunks
            );
            return Outcome::Failed { diagnostic: Diagnostic::error(&doc.path, None, message), previous: old.cloned() };
        }
        let entry = FileEntry {
            content_hash: doc.content_hash.clone(),
            mtime: doc.mtime,
            size: doc.size,
            chunks: chunks.len(),
            title: doc.title.clone(),
            doc_type: chunks.first().map_or(doc_type, |c| c.doc_type),
            tier: skillrag_core::Tier::from_source_path(&doc.source),
            encoding: doc.encoding.to_string(),
            questions: doc.faq.iter().map(|p| p.question.clone()).collect(),
            vectorless: 0,
            image: doc.image.map(|i| (i.width as u32, i.height as u32)),
            ocr_pages: doc.ocr.iter().map(|o| (o.page.unwrap_or(0), (o.confidence * 100.0).round() as u8)).collect(),
        };
        Outcome::Changed { entry, chunks }
    }
}

/// The embed and write stages: new chunks are embedded in batches as they arrive and written
/// at once; the generation is begun with the first file that changes, so an index that is
/// already up to date is never rewritten.
struct Output<'a> {
    store: &'a dyn skillrag_store::Store,
    wanted: &'a IndexMeta,
    writer: Option<Box<dyn skillrag_store::IndexWriter>>,
    /// Unchanged files seen before the writer was begun.
    kept: Vec<String>,
    pending: Vec<Chunk>,
    batch: usize,
    embedder: Option<&'a dyn Embedder>,
    cache: Option<&'a mut EmbeddingCache>,
    skill: &'a str,
    progress: &'a dyn Progress,
}

impl Output<'_> {
    fn writer(&mut self) -> Result<&mut Box<dyn skillrag_store::IndexWriter>, EngineError> {
        if self.writer.is_none() {
            let mut writer = self.store.begin(self.skill, self.wanted.clone())?;
            for source in self.kept.drain(..) {
                writer.keep(&source)?;
            }
            self.writer = Some(writer);
        }
        self.writer.as_mut().ok_or_else(|| EngineError::Invalid("internal: no index writer".into()))
    }

    /// Carries `source` over from the previous generation (once the writer is begun).
    fn keep(&mut self, source: String) -> Result<(), EngineError> {
        match self.writer.as_mut() {
            Some(writer) => {
                writer.keep(&source)?;
            }
            None => self.kept.push(source),
        }
        Ok(())
    }

    fn queue(
        &mut self,
        chunks: Vec<Chunk>,
        manifest: &mut Manifest,
        report: &mut SkillReport,
    ) -> Result<(), EngineError> {
        self.progress.embed_queued(self.skill, chunks.len());
        self.pending.extend(chunks);
        while self.pending.len() >= self.batch {
            let rest = self.pending.split_off(self.batch);
            let batch = std::mem::replace(&mut self.pending, rest);
            self.write(batch, manifest, report)?;
        }
        Ok(())
    }

    fn flush(&mut self, manifest: &mut Manifest, report: &mut SkillReport) -> Result<(), EngineError> {
        let batch = std::mem::take(&mut self.pending);
        if !batch.is_empty() {
            self.write(batch, manifest, report)?;
        }
        Ok(())
    }

    fn into_writer(mut self) -> Result<Box<dyn skillrag_store::IndexWriter>, EngineError> {
        self.writer()?;
        self.writer.ok_or_else(|| EngineError::Invalid("internal: no index writer".into()))
    }

    /// Embeds one batch of new chunks (cache first) and writes it.
    fn write(
        &mut self,
        batch: Vec<Chunk>,
        manifest: &mut Manifest,
        report: &mut SkillReport,
    ) -> Result<(), EngineError> {
        let Some(embedder) = self.embedder else {
            let n = batch.len();
            report.chunks += n;
            self.writer()?
                .add(batch.into_iter().map(|chunk| NewChunk { chunk, vector: None, visibility: 0.0 }).collect())?;
            self.progress.embedded(self.skill, n);
            return Ok(());
        };
        let min_visibility = self.wanted.min_visibility;
        let texts: Vec<String> = batch.iter().map(Chunk::indexed_text).collect();
        let mut vectors: Vec<Option<(Vec<f32>, f32)>> =
            texts.iter().map(|t| self.cache.as_ref().and_then(|c| c.get(t))).collect();
        let hits = vectors.iter().filter(|v| v.is_some()).count();
        report.cache_hits += hits;
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| vectors[i].is_none()).collect();
        // What the model cannot see is never searched densely (retrieval drops a dense signal
        // below `min_visibility`): tokenizing tells, and is far cheaper than embedding. Those
        // passages are stored without a vector. (A cached passage below the threshold is
        // stored as one never embedded.)
        let unseen_share = |visibility: f32| (visibility < min_visibility).then_some(visibility);
        let mut unseen: Vec<Option<f32>> =
            vectors.iter().map(|v| v.as_ref().and_then(|&(_, visibility)| unseen_share(visibility))).collect();
        if min_visibility > 0.0 && !missing.is_empty() {
            let missing_texts: Vec<&str> = missing.iter().map(|&i| texts[i].as_str()).collect();
            for (&i, visibility) in missing.iter().zip(embedder.visibility(&missing_texts, EmbedKind::Passage)?) {
                unseen[i] = unseen_share(visibility);
            }
        }
        let missing: Vec<usize> = missing.into_iter().filter(|&i| unseen[i].is_none()).collect();
        // Cached and unseen passages cost nothing more: counted as done at once.
        self.progress.embedded(self.skill, texts.len() - missing.len());
        if !missing.is_empty() {
            let missing_texts: Vec<&str> = missing.iter().map(|&i| texts[i].as_str()).collect();
            let embedded = embedder.embed(&missing_texts, EmbedKind::Passage)?;
            for (&i, e) in missing.iter().zip(embedded) {
                if let Some(c) = self.cache.as_deref_mut() {
                    c.put(&texts[i], &e.vector, e.visibility);
                }
                vectors[i] = Some((e.vector, e.visibility));
            }
            // Flushed per batch: an interrupted run keeps what it embedded.
            if let Some(c) = self.cache.as_deref_mut() {
                c.flush()?;
            }
            report.embedded += missing.len();
            self.progress.embedded(self.skill, missing.len());
        }
        let chunks: Vec<NewChunk> = batch
            .into_iter()
            .zip(vectors.into_iter().zip(unseen))
            .map(|(chunk, stored)| match stored {
                (_, Some(visibility)) => NewChunk { chunk, vector: None, visibility },
                (Some((vector, visibility)), None) => NewChunk { chunk, vector: Some(vector), visibility },
                (None, None) => NewChunk { chunk, vector: None, visibility: 0.0 },
            })
            .collect();
        for c in chunks.iter().filter(|c| c.vector.is_none()) {
            if let Some(entry) = manifest.files.get_mut(&c.chunk.source) {
                entry.vectorless += 1;
            }
        }
        report.chunks += chunks.len();
        self.writer()?.add(chunks)?;
        Ok(())
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
    std::fs::rename(path, &target).map_err(|e| EngineError::Invalid(format!("{}: {e}", path.display())))?;
    Ok(target)
}

enum FileState {
    /// The previous manifest entry, with the new mtime of a file touched without changing.
    Unchanged(FileEntry),
    Changed(Box<Document>),
}

/// Unchanged when size and mtime match an entry written after the file was last modified (so a
/// same-second edit is not missed), or when the content hash matches; otherwise loaded.
/// `warnings` receives the repairs made while reading a changed file (bad bytes replaced, lines
/// read in another encoding).
fn classify(
    file: &KnowledgeFile,
    old: Option<&FileEntry>,
    indexed_at: Option<i64>,
    options: &LoadOptions,
    ocr: &OcrChoice,
    warnings: &mut Vec<Diagnostic>,
) -> Result<FileState, LoadError> {
    if let (Some(old), Some(indexed_at)) = (old, indexed_at) {
        if let Ok(meta) = std::fs::metadata(&file.path) {
            let mtime = skillrag_load::mtime_secs(&meta);
            if meta.len() == old.size && mtime == old.mtime && mtime < indexed_at {
                return Ok(FileState::Unchanged(old.clone()));
            }
        }
    }
    let (doc, repairs) = load_document_with_warnings(&file.path, &file.source, options, ocr)?;
    warnings.extend(repairs);
    if let (Some(old), Some(_)) = (old, indexed_at) {
        if old.content_hash == doc.content_hash {
            // Touched but identical: remember the new mtime, to skip hashing it next time.
            return Ok(FileState::Unchanged(FileEntry { mtime: doc.mtime, ..old.clone() }));
        }
    }
    Ok(FileState::Changed(Box::new(doc)))
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
