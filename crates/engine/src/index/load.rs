//! The loading thread: each knowledge file classified as unchanged (carried over), changed
//! (loaded and chunked) or failed, handed on in listing order.

use crate::edits::ChunkEdits;
use skillrag_core::{Chunk, Diagnostic};
use skillrag_load::{load_document_with_warnings, Document, KnowledgeFile, LoadError, LoadOptions, OcrChoice};
use skillrag_store::{FileEntry, Manifest};
use std::sync::mpsc::SyncSender;

/// A document's chunks, or the limit it went over.
pub(super) type Chunked = Result<Vec<Chunk>, skillrag_chunk::TooManyPieces>;

/// Files loaded and chunked ahead of the embedder (each holds its chunks until they are embedded).
pub(super) const LOAD_AHEAD: usize = 8;

/// Files loaded at once: one per core.
fn load_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// What the loading thread needs: everything read-only.
pub(super) struct LoadContext<'a, F> {
    pub(super) options: LoadOptions,
    pub(super) previous: &'a Manifest,
    pub(super) indexed_at: Option<i64>,
    /// Chunks a document, refusing it past `[index] max_chunks_per_file`.
    pub(super) chunk: F,
    /// The skill's chunk edits, applied to every document chunked.
    pub(super) edits: &'a ChunkEdits,
}

/// One knowledge file as the loading thread found it.
pub(super) struct Loaded {
    pub(super) source: String,
    /// Repairs made while reading it (bad bytes replaced, lines read in another encoding).
    pub(super) warnings: Vec<Diagnostic>,
    pub(super) outcome: Outcome,
}

pub(super) enum Outcome {
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

impl<F: Fn(&Document) -> (Chunked, skillrag_core::DocType) + Sync> LoadContext<'_, F> {
    fn file(&self, file: &KnowledgeFile, ocr: &OcrChoice) -> Loaded {
        let old = self.previous.files.get(&file.source);
        let mut warnings = Vec::new();
        // Edits changed since the file was indexed: chunked again, though its bytes are the same.
        let edits = self.edits.fingerprint(&file.source);
        let reread = old.is_some_and(|o| o.edits != edits);
        let indexed_at = self.indexed_at.filter(|_| !reread);
        let outcome = match classify(file, old, indexed_at, &self.options, ocr, &mut warnings) {
            Ok(FileState::Unchanged(entry)) => Outcome::Unchanged(entry),
            Ok(FileState::Changed(doc)) => self.chunked(&doc, old, edits, &mut warnings),
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

    fn chunked(
        &self,
        doc: &Document,
        old: Option<&FileEntry>,
        edits: Option<String>,
        warnings: &mut Vec<Diagnostic>,
    ) -> Outcome {
        let (chunks, doc_type) = (self.chunk)(doc);
        let chunks = match chunks {
            Ok(chunks) => {
                let (edited, stale) = self.edits.apply(&doc.path, &doc.source, &doc.content_hash, chunks);
                warnings.extend(stale);
                edited
            }
            Err(over) => {
                // Like a file that fails to load: reported, and its last indexed version kept.
                let note = if old.is_some() { " (the previously indexed version stays searchable)" } else { "" };
                let message = format!(
                    "yields too many chunks, over the limit of {}; skipped (a generated or hostile file? `[index] max_chunks_per_file` raises it){note}",
                    over.limit
                );
                return Outcome::Failed {
                    diagnostic: Diagnostic::error(&doc.path, None, message),
                    previous: old.cloned(),
                };
            }
        };
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
            edits,
            indexed_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .ok()
                .and_then(|d| i64::try_from(d.as_secs()).ok()),
        };
        Outcome::Changed { entry, chunks }
    }
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

/// Sends every file, loaded, down `sender`. A skill with files that may need OCR loads a few at
/// a time in parallel (a folder of pictures OCRs on every core), handed on in listing order;
/// others one by one, as text loads faster than it is embedded.
pub(super) fn load_files<F: Fn(&Document) -> (Chunked, skillrag_core::DocType) + Sync>(
    load: &LoadContext<'_, F>,
    files: &[KnowledgeFile],
    ocr: &OcrChoice,
    may_need_ocr: bool,
    sender: &SyncSender<Loaded>,
) {
    let window = if may_need_ocr { load_threads() } else { 1 };
    for window in files.chunks(window) {
        if let [file] = window {
            if sender.send(load.file(file, ocr)).is_err() {
                return;
            }
            continue;
        }
        let window_loaded: Vec<Loaded> = std::thread::scope(|inner| {
            let handles: Vec<_> = window.iter().map(|file| inner.spawn(move || load.file(file, ocr))).collect();
            handles.into_iter().zip(window).map(|(h, file)| h.join().unwrap_or_else(|_| load.panicked(file))).collect()
        });
        for item in window_loaded {
            // The receiver stops early only when writing failed; nothing is left to do then.
            if sender.send(item).is_err() {
                return;
            }
        }
    }
}
