//! Indexing one skill: list its files, decide between an incremental run and a rebuild, then
//! load and chunk on one thread while this one embeds and writes.

use super::load::{self, LoadContext, Loaded, Outcome, LOAD_AHEAD};
use super::output::Output;
use super::{Progress, SkillReport};
use crate::{Engine, EngineError};
use skillrag_core::Diagnostic;
use skillrag_embed::Embedder;
use skillrag_load::ocr::OcrEvent;
use skillrag_load::{Document, Format, KnowledgeFile, OcrChoice};
use skillrag_skill::Skill;
use skillrag_store::{EmbeddingCache, IndexMeta, Manifest, SkillIndex, StoreError};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::Instant;

/// OCR for a skill's files: whether any may need it, the engine (or why there is none), and
/// the events its loading threads send, to be forwarded to `progress`.
struct SkillOcr {
    may_need_ocr: bool,
    choice: OcrChoice,
    events: Option<Receiver<OcrEvent>>,
}

/// Hands a diagnostic to `progress` and keeps it for the report.
fn report_diag(progress: &dyn Progress, diagnostics: &mut Vec<Diagnostic>, d: Diagnostic) {
    progress.diagnostic(&d);
    diagnostics.push(d);
}

impl Engine {
    pub(super) fn index_skill(
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

        let files = self.list_skill_files(skill, progress, diagnostics);
        report.files = files.len();
        progress.skill_started(&skill.id, files.len());
        let ocr = self.skill_ocr(skill, &files, progress, diagnostics);

        let previous = self.open_previous(skill, &mut report, progress)?;
        let rebuild_reason = rebuild_reason(previous.as_deref(), force_rebuild, &wanted);
        if let Some(reason) = &rebuild_reason {
            progress.note(&format!("skill `{}`: rebuilding, {reason}", skill.id));
            report.rebuilt = Some(reason.clone());
        }
        let incremental = previous.as_ref().filter(|_| rebuild_reason.is_none());
        let previous_manifest = incremental.map(|p| p.manifest().clone()).unwrap_or_default();

        // Load and chunk on a second thread while this one embeds and writes, so the model never
        // waits on files; a bounded queue keeps memory flat however many files a skill has.
        let edits = match crate::edits::ChunkEdits::load(&skill.dir) {
            Ok(edits) => edits,
            Err(broken) => {
                report_diag(progress, diagnostics, broken);
                crate::edits::ChunkEdits::default()
            }
        };
        let load = LoadContext {
            edits: &edits,
            options: self.settings.index.load,
            previous: &previous_manifest,
            indexed_at: incremental.map(|p| p.meta().created_at),
            chunk: |doc: &Document| {
                let limit = self.settings.index.max_chunks_per_file;
                let chosen = edits.presets.get(&doc.source).copied();
                (chunking.chunks(skill, doc, &chunk_config, limit, chosen), chunking.doc_type(skill, doc, chosen))
            },
        };
        let mut manifest = Manifest::default();
        let mut output = Output {
            store: self.store.as_ref(),
            wanted: &wanted,
            writer: None,
            kept: Vec::new(),
            pending: Vec::new(),
            batch: self.settings.index.embed_batch,
            embedder,
            cache,
            skill: &skill.id,
            progress,
        };
        std::thread::scope(|scope| -> Result<(), EngineError> {
            let (sender, loaded) = std::sync::mpsc::sync_channel::<Loaded>(LOAD_AHEAD);
            let load = &load;
            let files = &files;
            let SkillOcr { may_need_ocr, choice, events } = ocr;
            if let Some(events) = events {
                let skill = skill.id.as_str();
                // Ends when the OCR engine (its progress holds the sender) is dropped by the
                // loading thread below, which owns it.
                scope.spawn(move || forward_ocr_events(events, skill, progress));
            }
            scope.spawn(move || load::load_files(load, files, &choice, may_need_ocr, &sender));
            let mut received = Received { report: &mut report, manifest: &mut manifest, output: &mut output };
            for item in loaded {
                received.take(item, skill, progress, diagnostics)?;
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

    /// The skill's knowledge files, the problems met listing them reported (and an empty
    /// skill warned about).
    fn list_skill_files(
        &self,
        skill: &Skill,
        progress: &dyn Progress,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Vec<KnowledgeFile> {
        let listing = self.project.knowledge_files(skill);
        for d in listing.diagnostics {
            report_diag(progress, diagnostics, d);
        }
        if listing.files.is_empty() {
            report_diag(
                progress,
                diagnostics,
                Diagnostic::warning(
                    skill.skill_file(),
                    None,
                    format!(
                        "skill `{}` has no knowledge files (looked in {}); it is indexed empty",
                        skill.id,
                        skill.knowledge_patterns().join(", ")
                    ),
                ),
            );
        }
        listing.files
    }

    /// OCR for scans and pictures (alone, or inside DOCX and HTML), probed only when the skill
    /// has a file that may hold one.
    fn skill_ocr(
        &self,
        skill: &Skill,
        files: &[KnowledgeFile],
        progress: &dyn Progress,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> SkillOcr {
        let may_need_ocr = files.iter().any(|f| Format::from_path(&f.path).is_some_and(Format::may_need_ocr));
        if !may_need_ocr {
            let choice = OcrChoice::Unavailable("the skill has no file that needs it".into());
            return SkillOcr { may_need_ocr, choice, events: None };
        }
        let (choice, problem) = self.ocr_choice(Some(skill), None);
        if let Some(d) = problem {
            report_diag(progress, diagnostics, d);
        }
        // OCR reports from the loading threads; one forwarding thread hands it to `progress`.
        let (sender, events) = std::sync::mpsc::channel();
        let choice = match choice {
            OcrChoice::Ready(ocr) => OcrChoice::Ready(ocr.with_progress(move |e| {
                let _ = sender.send(e);
            })),
            unavailable => unavailable,
        };
        SkillOcr { may_need_ocr, choice, events: Some(events) }
    }

    /// The skill's published generation; opening verifies its checksums, so a damaged one is
    /// never "up to date": it is moved aside and the skill rebuilt (`None`, as for a first run).
    fn open_previous(
        &self,
        skill: &Skill,
        report: &mut SkillReport,
        progress: &dyn Progress,
    ) -> Result<Option<Arc<dyn SkillIndex>>, EngineError> {
        Ok(match self.store.open(&skill.id) {
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
        })
    }
}

/// Why the previous generation cannot be updated in place, if it cannot (none: nothing to update).
fn rebuild_reason(previous: Option<&dyn SkillIndex>, force_rebuild: bool, wanted: &IndexMeta) -> Option<String> {
    match previous {
        None => None,
        Some(_) if force_rebuild => Some("--rebuild was given".to_string()),
        Some(p) => p.meta().rebuild_reason(wanted),
    }
}

/// Hands the OCR engine's events to `progress` until the loading thread drops the engine.
fn forward_ocr_events(events: Receiver<OcrEvent>, skill: &str, progress: &dyn Progress) {
    for event in events {
        match event {
            OcrEvent::Queued(pages) => progress.ocr_queued(skill, pages),
            OcrEvent::Done => progress.ocr_done(skill),
        }
    }
}

/// Where the files the loading thread hands over go: counted in the report, entered in the
/// new manifest, their chunks queued for embedding or carried over.
struct Received<'r, 'o> {
    report: &'r mut SkillReport,
    manifest: &'r mut Manifest,
    output: &'r mut Output<'o>,
}

impl Received<'_, '_> {
    fn take(
        &mut self,
        item: Loaded,
        skill: &Skill,
        progress: &dyn Progress,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Result<(), EngineError> {
        for d in item.warnings {
            report_diag(progress, diagnostics, d);
        }
        match item.outcome {
            Outcome::Unchanged(entry) => {
                self.report.files_unchanged += 1;
                self.report.chunks += entry.chunks;
                self.manifest.files.insert(item.source.clone(), entry);
                self.output.keep(item.source.clone())?;
            }
            Outcome::Failed { diagnostic, previous } => {
                self.report.files_failed += 1;
                report_diag(progress, diagnostics, diagnostic);
                if let Some(entry) = previous {
                    self.report.chunks += entry.chunks;
                    self.manifest.files.insert(item.source.clone(), entry);
                    self.output.keep(item.source.clone())?;
                }
            }
            Outcome::Changed { entry, chunks } => {
                self.report.files_changed += 1;
                self.report.chunks_new += chunks.len();
                self.manifest.files.insert(item.source.clone(), entry);
                self.output.queue(chunks, self.manifest, self.report)?;
            }
        }
        progress.file_done(&skill.id, &item.source);
        Ok(())
    }
}
