//! A skill's documents as the web page manages them (`/v1/skills/{skill}/documents…`): the list
//! with each file's parse status, its chunks, upload and delete. Uploads and deletes are off
//! unless the server was started with `--allow-writes`; both only touch the skill's knowledge
//! folder, are checked like any other input (name, type, size, path) and start the same
//! incremental, atomic re-index as `POST /v1/index` (the last good index serves meanwhile).

use crate::error::ApiError;
use crate::service::{blocking, IndexJob, Service};
use axum::http::StatusCode;
use serde::Serialize;
use skillrag_load::Format;
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use unicode_normalization::UnicodeNormalization;

/// One document of a skill: on disk, in the index, or both.
#[derive(Debug, Clone, Serialize)]
pub struct DocumentInfo {
    /// The source path, relative to the skill folder (`knowledge/faq.md`).
    pub name: String,
    pub title: String,
    /// How it is read (`Markdown`, `PDF`, `DOCX`, `HTML`, `text`, `FAQ table`, `image`).
    pub format: String,
    pub doc_type: Option<String>,
    pub size: u64,
    pub encoding: Option<String>,
    /// Pages of a PDF, as its chunks cite them.
    pub pages: Option<u32>,
    pub chunks: usize,
    /// When the index that holds it was published (Unix seconds).
    pub indexed_at: Option<i64>,
    /// `indexed`, `changed` (edited since), `pending` (not indexed yet), `failed` (the last
    /// re-index could not read it: see `errors`) or `deleted` (indexed, no longer on disk).
    pub status: &'static str,
    pub errors: Vec<String>,
    /// The owner's metadata of the document (a search filter).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub metadata: std::collections::BTreeMap<String, String>,
    /// The chunking preset chosen for it, if any (`doc_type` is the one that cut it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<skillrag_core::DocType>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DocumentList {
    pub skill: String,
    /// Whether uploads and deletes are allowed.
    pub writable: bool,
    pub max_upload_bytes: u64,
    /// File extensions indexing reads.
    pub extensions: Vec<&'static str>,
    pub documents: Vec<DocumentInfo>,
}

/// Most files one upload may carry: each is checked, written and then re-indexed, so a request
/// of many thousand tiny parts would hold the server (and its re-index) for minutes.
pub const MAX_FILES: usize = 100;

/// Where an upload goes, found and checked before a byte of its body is read.
pub struct UploadTarget {
    skill: String,
    /// The knowledge folder inside the skill, as sources name it (`knowledge`).
    folder: String,
    /// That folder on disk, canonical: the skill's own, not a link out of it.
    dir: PathBuf,
    /// The names in it now, in NFC, so a name that exists is refused before its bytes arrive.
    existing: HashSet<String>,
    /// `[index] max_file_mb`, in bytes.
    limit: u64,
    replace: bool,
}

/// One uploaded file, written as it arrives to a temporary file next to its target (an
/// unpredictable name, created exclusively: a link planted there is never followed), so a
/// big upload is never held in memory.
pub struct Staged {
    name: String,
    file: Option<tempfile::NamedTempFile>,
    size: u64,
    limit: u64,
    /// Its first bytes, to check they match its name.
    head: Vec<u8>,
    /// Bytes not written yet (written in blocks, off the async executor).
    pending: Vec<u8>,
}

/// What of a file [`content_matches`] looks at.
const HEAD: usize = 8192;
/// Bytes gathered before one write to disk.
const BLOCK: usize = 1 << 20;

impl Staged {
    /// Appends the next bytes of the file; refused once it passes the file limit.
    pub async fn write(&mut self, chunk: &[u8]) -> Result<(), ApiError> {
        self.size += chunk.len() as u64;
        if self.size > self.limit {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("`{}` is larger than the {} MB file limit of indexing", self.name, self.limit / (1024 * 1024)),
            ));
        }
        let wanted = HEAD.saturating_sub(self.head.len()).min(chunk.len());
        self.head.extend_from_slice(&chunk[..wanted]);
        self.pending.extend_from_slice(chunk);
        if self.pending.len() >= BLOCK {
            self.flush().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<(), ApiError> {
        let (Some(mut file), bytes) = (self.file.take(), std::mem::take(&mut self.pending)) else {
            return Err(ApiError::internal("an earlier write of this upload failed"));
        };
        let name = self.name.clone();
        let file = blocking(move || {
            file.write_all(&bytes).map_err(|e| ApiError::internal(format!("cannot save `{name}`: {e}")))?;
            Ok(file)
        })
        .await?;
        self.file = Some(file);
        Ok(())
    }

    /// The whole file is written: checks its bytes match its name.
    pub async fn finish(mut self) -> Result<Staged, ApiError> {
        self.flush().await?;
        content_matches(&self.name, &self.head)?;
        Ok(self)
    }
}

impl UploadTarget {
    /// `[index] max_file_mb`, in bytes: the most one file may hold.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The name a part is saved under ([`upload_name`]), refused when the request sent it
    /// already or, without `?replace=true`, when the folder holds it.
    pub fn check_name(&self, raw: &str, seen: &mut HashSet<String>) -> Result<String, ApiError> {
        let name = upload_name(raw)?;
        if !seen.insert(name.clone()) {
            return Err(ApiError::bad_request(format!("`{name}` is sent twice")));
        }
        if !self.replace && self.existing.contains(&name) {
            return Err(exists(&format!("{}/{name}", self.folder)));
        }
        Ok(name)
    }

    /// A temporary file in the target folder for the part named `name`.
    pub async fn stage(&self, name: String) -> Result<Staged, ApiError> {
        let dir = self.dir.clone();
        let file = blocking(move || {
            tempfile::Builder::new()
                .prefix(".upload-")
                .suffix(".tmp")
                .tempfile_in(&dir)
                .map_err(|e| ApiError::internal(format!("cannot write into the knowledge folder: {e}")))
        })
        .await?;
        Ok(Staged { name, file: Some(file), size: 0, limit: self.limit, head: Vec::new(), pending: Vec::new() })
    }
}

fn exists(source: &str) -> ApiError {
    ApiError::conflict(format!("`{source}` already exists; send `?replace=true` to replace it"))
}

#[derive(Debug, Clone, Serialize)]
pub struct Uploaded {
    pub name: String,
    pub size: u64,
}

/// Longest uploaded file name, in bytes.
const MAX_NAME: usize = 200;

/// Characters that draw nothing or reorder what follows: bidi embeddings, overrides and
/// isolates, zero-width spaces and joiners, the byte-order mark, soft hyphens, fillers and tags.
/// A name holding one displays as another (`x\u{202e}dm.txt` shows as `xtxt.md`). Hand-listed:
/// the format characters (Unicode category Cf) and invisible fillers of the BMP and the tag
/// block; no crate the workspace uses exposes the category.
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{034f}' | '\u{061c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
        | '\u{180b}'..='\u{180f}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{206f}'
        | '\u{3164}' | '\u{feff}' | '\u{ffa0}' | '\u{fff0}'..='\u{fffb}' | '\u{e0000}'..='\u{e0fff}')
}

/// The name an uploaded file is saved under: its last path component (browsers may send
/// `C:\fakepath\x.pdf`) in NFC (so an NFD spelling names the same document), refused when
/// hidden, empty, too long, with control or invisible characters, or of a type indexing does
/// not read.
pub fn upload_name(raw: &str) -> Result<String, ApiError> {
    let name: String = raw.rsplit(['/', '\\']).next().unwrap_or(raw).trim().nfc().collect();
    let name = name.as_str();
    let bad = |why: String| Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("file name `{raw}`: {why}")));
    if name.is_empty() || name == "." || name == ".." {
        return bad("empty".into());
    }
    if name.starts_with('.') {
        return bad("hidden files (a leading `.`) are not indexed".into());
    }
    if name.len() > MAX_NAME {
        return bad(format!("longer than {MAX_NAME} bytes"));
    }
    if name.chars().any(|c| c.is_control() || matches!(c, ':' | '*' | '?' | '"' | '<' | '>' | '|')) {
        return bad("control characters and `: * ? \" < > |` are not accepted".into());
    }
    if let Some(c) = name.chars().find(|c| invisible(*c)) {
        return bad(format!(
            "holds U+{:04X}: bidi controls, zero-width characters and byte-order marks make a name display as \
             another, and are not accepted",
            c as u32
        ));
    }
    // An upload names its type: a file without an extension is refused, though indexing reads one
    // already in a folder as text.
    let read = name.contains('.') && Format::from_path(Path::new(name)).is_some();
    if read {
        Ok(name.to_string())
    } else {
        Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("`{name}`: not a type indexing reads (accepted: {})", Format::EXTENSIONS.join(", ")),
        ))
    }
}

/// The document `name` names among a skill's `sources`: its path inside the skill
/// (`knowledge/faq.md`), or the bare file name a client uploaded (`faq.md`) when only one
/// document has it. Compared in NFC, as uploads are named.
pub fn resolve_document<'a>(
    skill: &str,
    name: &str,
    sources: impl IntoIterator<Item = &'a str>,
) -> Result<String, ApiError> {
    let wanted: String = name.nfc().collect();
    let mut bare = Vec::new();
    for source in sources {
        let spelled: String = source.nfc().collect();
        if spelled == wanted {
            return Ok(source.to_string());
        }
        if !wanted.contains('/') && spelled.rsplit('/').next() == Some(wanted.as_str()) {
            bare.push(source);
        }
    }
    match bare.as_slice() {
        [one] => Ok((*one).to_string()),
        [] => Err(ApiError::not_found(format!("skill `{skill}` has no document `{name}`"))),
        many => Err(ApiError::conflict(format!(
            "`{name}` names {} documents of skill `{skill}`: `{}`; name one by its path",
            many.len(),
            many.join("`, `")
        ))),
    }
}

/// Whether `bytes` look like what the name says: binary formats by their magic bytes, text
/// formats by having no NUL in their first 8 KiB (the loader then checks them as for `index`).
fn content_matches(name: &str, bytes: &[u8]) -> Result<(), ApiError> {
    let format = Format::from_path(Path::new(name));
    let starts = |magic: &[u8]| bytes.starts_with(magic);
    let ok = match format {
        Some(Format::Pdf) => starts(b"%PDF-"),
        Some(Format::Docx) => starts(b"PK\x03\x04"),
        Some(Format::Image) => {
            starts(b"\x89PNG\r\n\x1a\n")
                || starts(b"\xff\xd8\xff")
                || (starts(b"RIFF") && bytes.get(8..12) == Some(b"WEBP"))
                || starts(b"II*\0")
                || starts(b"MM\0*")
        }
        _ => !bytes[..bytes.len().min(8192)].contains(&0),
    };
    if ok {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("`{name}`: its content is not {}", format.map_or("text", Format::name)),
        ))
    }
}

/// A document found on disk, with what the served index holds of it (`entry`) and the last
/// re-index's messages about it (`failed`: one of them an error).
fn listed_document(
    file: &skillrag_load::KnowledgeFile,
    entry: Option<&skillrag_store::FileEntry>,
    index: Option<&dyn skillrag_store::SkillIndex>,
    indexed_at: Option<i64>,
    errors: Vec<String>,
    failed: bool,
) -> DocumentInfo {
    let format = Format::from_path(&file.path);
    let meta = std::fs::metadata(&file.path).ok();
    let status = match (entry, &meta) {
        (Some(e), Some(m)) if e.size == m.len() && e.mtime == mtime_of(m) => "indexed",
        // Touched or replaced by the same bytes: indexing finds it unchanged too.
        (Some(e), Some(m)) if e.size == m.len() && same_content(&file.path, &e.content_hash) => "indexed",
        (Some(_), _) => "changed",
        (None, _) if failed => "failed",
        (None, _) => "pending",
    };
    let pages = match (format, index) {
        (Some(Format::Pdf), Some(index)) if entry.is_some() => {
            index.chunks_of(&file.source).iter().filter_map(|c| c.pages.map(|p| p.1)).max()
        }
        _ => None,
    };
    DocumentInfo {
        name: file.source.clone(),
        title: entry.map(|e| e.title.clone()).unwrap_or_default(),
        format: format.map_or("unknown", Format::name).to_string(),
        doc_type: entry.map(|e| e.doc_type.to_string()),
        size: meta.as_ref().map_or(entry.map_or(0, |e| e.size), |m| m.len()),
        // A binary format has no character encoding to show (the index records its format name).
        encoding: entry.map(|e| e.encoding.clone()).filter(|_| format.is_some_and(Format::is_text)),
        pages,
        chunks: entry.map_or(0, |e| e.chunks),
        // The file's own time; an index written before files kept theirs gives its own.
        indexed_at: entry.and_then(|e| e.indexed_at.or(indexed_at)),
        status,
        errors,
        metadata: Default::default(),
        preset: None,
    }
}

/// A document the served index holds but the disk no longer has.
fn deleted_document(source: &str, entry: &skillrag_store::FileEntry, indexed_at: Option<i64>) -> DocumentInfo {
    DocumentInfo {
        name: source.to_string(),
        title: entry.title.clone(),
        format: Format::from_path(Path::new(source)).map_or("unknown", Format::name).to_string(),
        doc_type: Some(entry.doc_type.to_string()),
        size: entry.size,
        encoding: Some(entry.encoding.clone())
            .filter(|_| Format::from_path(Path::new(source)).is_some_and(Format::is_text)),
        pages: None,
        chunks: entry.chunks,
        indexed_at: entry.indexed_at.or(indexed_at),
        status: "deleted",
        errors: Vec::new(),
        metadata: Default::default(),
        preset: None,
    }
}

impl Service {
    /// Every document of `skill`: the files its knowledge patterns list on disk, with what the
    /// served index holds of each and what the last re-index said about it.
    /// `writable` and `max_upload_bytes` are the server's (`--allow-writes`, `--max-upload-mb`).
    pub async fn documents(
        self: &Arc<Self>,
        skill: String,
        writable: bool,
        max_upload_bytes: u64,
    ) -> Result<DocumentList, ApiError> {
        let live = self.live();
        let job = self.index_job();
        blocking(move || {
            let engine = &live.assistant.engine;
            let found = engine.skill(&skill)?;
            let listing = engine.project.knowledge_files(found);
            let index = engine.index_of(&skill)?;
            let manifest = index.as_ref().map(|i| i.manifest().files.clone()).unwrap_or_default();
            let indexed_at = index.as_ref().map(|i| i.meta().created_at);
            // The last re-index's problems, by file (it ran over this skill).
            let diagnostics: Vec<&skillrag_core::Diagnostic> = job
                .as_ref()
                .filter(|j| j.skills.is_empty() || j.skills.contains(&skill))
                .and_then(|j| j.report.as_ref())
                .map(|r| r.diagnostics.iter().collect())
                .unwrap_or_default();
            // The job's paths are relative to the project root (see `Service::start_index`).
            let errors_of = |path: &Path| -> (Vec<String>, bool) {
                let mine: Vec<_> = diagnostics.iter().filter(|d| engine.project.root.join(&d.path) == path).collect();
                let failed = mine.iter().any(|d| d.is_error());
                (mine.iter().map(|d| d.to_string()).collect(), failed)
            };
            let mut documents = Vec::new();
            for file in &listing.files {
                let (errors, failed) = errors_of(&file.path);
                let entry = manifest.get(&file.source);
                documents.push(listed_document(file, entry, index.as_deref(), indexed_at, errors, failed));
            }
            for (source, entry) in &manifest {
                if !listing.files.iter().any(|f| &f.source == source) {
                    documents.push(deleted_document(source, entry, indexed_at));
                }
            }
            // A broken edits file shows none here: indexing names it.
            let edits = skillrag_engine::edits::ChunkEdits::load(&found.dir).unwrap_or_default();
            for d in &mut documents {
                d.metadata = edits.metadata.get(&d.name).cloned().unwrap_or_default();
                d.preset = edits.presets.get(&d.name).copied();
            }
            documents.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(DocumentList { skill, writable, max_upload_bytes, extensions: Format::EXTENSIONS.to_vec(), documents })
        })
        .await
    }

    /// Where an upload into `skill` goes, checked before its body is read: the skill exists, the
    /// store takes writes, no re-index is running, and the skill has a folder of its own to write into.
    pub async fn upload_target(
        self: &Arc<Self>,
        skill: String,
        replace: bool,
        tier: skillrag_core::Tier,
    ) -> Result<UploadTarget, ApiError> {
        self.check_writable(&skill)?;
        let live = self.live();
        blocking(move || {
            let engine = &live.assistant.engine;
            let base = upload_folder(engine, &skill)?;
            // A tier is a folder inside the knowledge folder (`knowledge/rules/`), as indexing reads it.
            let folder = match tier {
                skillrag_core::Tier::References => base,
                other => format!("{base}/{other}"),
            };
            let dir = knowledge_dir(engine, &skill, &folder)?;
            let existing = names_in(&dir)?.into_keys().collect();
            let limit = engine.settings().index.load.max_file_bytes;
            Ok(UploadTarget { skill, folder, dir, existing, limit, replace })
        })
        .await
    }

    /// Moves staged uploads into the skill's knowledge folder and starts a re-index of the skill.
    /// Writes are serialized: nothing is written when any file is refused, or when a re-index is
    /// running (another write's included), so every answer says what happened on disk.
    pub async fn upload(
        self: &Arc<Self>,
        target: UploadTarget,
        files: Vec<Staged>,
    ) -> Result<(Vec<Uploaded>, IndexJob), ApiError> {
        if files.is_empty() {
            return Err(ApiError::bad_request("no file: send multipart/form-data with one or more `file` parts"));
        }
        let _writing = self.writes.lock().await;
        self.check_writable(&target.skill)?;
        // Written down before the files land, so a crash between saving and re-indexing leaves
        // the re-index for the next start (issue 46, item 18).
        self.note_pending(std::slice::from_ref(&target.skill));
        let live = self.live();
        let skill = target.skill.clone();
        let saved = blocking(move || save_uploads(&live.assistant.engine, target, files)).await?;
        let names: Vec<&str> = saved.iter().map(|u| u.name.as_str()).collect();
        let job = self.reindex_after_change(skill, &format!("`{}` saved", names.join("`, `")))?;
        Ok((saved, job))
    }

    /// Deletes one document of the skill's knowledge (named as the documents list names it, or
    /// by its bare file name when that is unambiguous) and starts a re-index of the skill. The
    /// document's name is returned.
    pub async fn delete_document(
        self: &Arc<Self>,
        skill: String,
        name: String,
    ) -> Result<(String, IndexJob), ApiError> {
        let (mut deleted, job) = self.delete_documents(skill, vec![name]).await?;
        Ok((deleted.remove(0), job))
    }

    /// Deletes several documents of the skill's knowledge (each named as for
    /// [`Service::delete_document`]) and starts one re-index. Every name is resolved before any
    /// file is removed: one that is not found deletes nothing.
    pub async fn delete_documents(
        self: &Arc<Self>,
        skill: String,
        names: Vec<String>,
    ) -> Result<(Vec<String>, IndexJob), ApiError> {
        if names.is_empty() {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "`names` is empty: name the documents to delete",
            ));
        }
        if names.len() > MAX_FILES {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("more than {MAX_FILES} documents in one request: delete them in several"),
            ));
        }
        let _writing = self.writes.lock().await;
        self.check_writable(&skill)?;
        self.note_pending(std::slice::from_ref(&skill));
        let live = self.live();
        let sources = blocking({
            let skill = skill.clone();
            move || {
                let engine = &live.assistant.engine;
                let found = engine.skill(&skill)?;
                let listing = engine.project.knowledge_files(found);
                let mut targets: Vec<(String, PathBuf)> = Vec::new();
                for name in &names {
                    // Matched against the listing, never joined onto a path.
                    let source = resolve_document(&skill, name, listing.files.iter().map(|f| f.source.as_str()))?;
                    let file = listing
                        .files
                        .iter()
                        .find(|f| f.source == source)
                        .ok_or_else(|| ApiError::not_found(format!("skill `{skill}` has no document `{name}`")))?;
                    if !targets.iter().any(|(s, _)| s == &source) {
                        targets.push((source, file.path.clone()));
                    }
                }
                for (source, path) in &targets {
                    remove_inside(&found.dir, path, source)?;
                }
                Ok(targets.into_iter().map(|(s, _)| s).collect::<Vec<String>>())
            }
        })
        .await?;
        let job = self.reindex_after_change(skill, &format!("`{}` deleted", sources.join("`, `")))?;
        Ok((sources, job))
    }

    /// The chunks of one indexed document, named by its path or, when unambiguous, its bare
    /// file name; with the document's name.
    pub async fn document_chunks(
        self: &Arc<Self>,
        skill: String,
        name: String,
    ) -> Result<(String, Vec<crate::service::SourceChunk>), ApiError> {
        let source = self.document_source(skill.clone(), name).await?;
        let chunks = self.source_chunks(skill, source.clone()).await?;
        Ok((source, chunks))
    }

    /// The indexed document `name` names (a bare file name when it names one document only).
    pub async fn document_source(self: &Arc<Self>, skill: String, name: String) -> Result<String, ApiError> {
        let live = self.live();
        blocking(move || {
            let engine = &live.assistant.engine;
            engine.skill(&skill)?;
            let index = engine
                .index_of(&skill)?
                .ok_or_else(|| ApiError::not_found(format!("skill `{skill}` has no index yet")))?;
            resolve_document(&skill, &name, index.manifest().files.keys().map(String::as_str))
        })
        .await
    }

    /// Starts the re-index a change needs. Writes are serialized with each other and with
    /// `POST /v1/index`, so another re-index can only have started here from outside the API
    /// (the server's own start-up); the error then says the change is on disk.
    fn reindex_after_change(self: &Arc<Self>, skill: String, change: &str) -> Result<IndexJob, ApiError> {
        self.start_index(vec![skill], false).map_err(|e| match e.status {
            StatusCode::CONFLICT => ApiError::conflict(format!(
                "{change}, but a re-index that started meanwhile may not include it: re-index when it ends \
                 (POST /v1/index)"
            )),
            _ => e,
        })
    }

    /// Writes are possible: the store takes them, the skill exists and no re-index is running
    /// (files changed under a running re-index would be half seen).
    pub(crate) fn check_writable(&self, skill: &str) -> Result<(), ApiError> {
        self.live().assistant.engine.skill(skill)?;
        self.check_can_write()
    }

    /// The store takes writes and no re-index is running.
    pub(crate) fn check_can_write(&self) -> Result<(), ApiError> {
        let live = self.live();
        live.assistant.engine.store().writable().map_err(skillrag_engine::EngineError::from)?;
        if self.index_job().is_some_and(|j| j.state == "running") {
            return Err(ApiError::conflict("a re-index is running; try again when it is done (GET /v1/index)"));
        }
        Ok(())
    }
}

fn same_content(path: &Path, indexed_hash: &str) -> bool {
    std::fs::read(path).is_ok_and(|bytes| skillrag_load::content_hash(&bytes) == indexed_hash)
}

fn mtime_of(meta: &std::fs::Metadata) -> i64 {
    meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_secs() as i64)
}

/// Removes the file at `path` (the listing's, for `source`) when it is a plain file of the skill
/// in `skill_dir`, reached without a link: every folder on its way is resolved as the loader's
/// confinement resolves links, here with the skill as the only place links may lead, and must be
/// itself. A folder link into another skill reads as this skill's knowledge, but its files are
/// that skill's to delete.
fn remove_inside(skill_dir: &Path, path: &Path, source: &str) -> Result<(), ApiError> {
    let outside = || {
        ApiError::forbidden(format!(
            "`{source}` is a shared document outside the skill's folder; delete it where it lives"
        ))
    };
    let relative = path.strip_prefix(skill_dir).map_err(|_| outside())?;
    let (Some(file_name), Some(folders)) = (relative.file_name(), relative.parent()) else {
        return Err(outside());
    };
    let through_link = || {
        ApiError::forbidden(format!(
            "`{source}` is reached through a folder link, not a file of the skill's own; not deleted (delete it \
             where the link leads)"
        ))
    };
    let root =
        skill_dir.canonicalize().map_err(|e| ApiError::internal(format!("cannot read the skill folder: {e}")))?;
    let confinement = skillrag_load::Confinement::for_skill_in(skill_dir, skill_dir, &[]);
    let folder = confinement.check(&skill_dir.join(folders)).map_err(|_| through_link())?;
    if folder != root.join(folders) {
        return Err(through_link());
    }
    let target = folder.join(file_name);
    let meta =
        std::fs::symlink_metadata(&target).map_err(|e| ApiError::internal(format!("cannot delete `{source}`: {e}")))?;
    if !meta.is_file() {
        return Err(ApiError::forbidden(format!("`{source}` is a link, not a file of the skill; not deleted")));
    }
    std::fs::remove_file(&target).map_err(|e| ApiError::internal(format!("cannot delete `{source}`: {e}")))
}

/// The folder uploads go to: `knowledge/` when the skill reads it (the default), else the first
/// plain folder among its knowledge patterns. A pattern naming a file (`notes.md`), or a path
/// that is a file, is no folder: uploading there would make a folder of that name.
pub(crate) fn upload_folder(engine: &skillrag_engine::Engine, skill: &str) -> Result<String, ApiError> {
    let found = engine.skill(skill)?;
    let patterns = found.knowledge_patterns();
    let folder_like = |p: &str| {
        let path = found.dir.join(p);
        match std::fs::metadata(&path) {
            Ok(meta) => meta.is_dir(),
            // Missing: a folder to create unless it names a file of a type indexing reads.
            Err(_) => {
                !(p.rsplit('/').next().is_some_and(|last| last.contains('.')) && Format::from_path(&path).is_some())
            }
        }
    };
    let plain = |p: &&String| {
        !p.is_empty()
            && !p.contains(['*', '?', '[', '{', '\\'])
            && !p.starts_with('/')
            && p.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
            && folder_like(p)
    };
    let folder = if patterns.iter().any(|p| p == "knowledge") && folder_like("knowledge") {
        Some("knowledge".to_string())
    } else {
        patterns.iter().find(plain).cloned()
    };
    folder.ok_or_else(|| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "skill `{skill}` reads its knowledge from patterns ({}) with no plain folder to upload into",
                patterns.join(", ")
            ),
        )
    })
}

/// The skill's `folder` on disk, created when missing, canonical; refused when it is a link out
/// of the skill.
pub(crate) fn knowledge_dir(engine: &skillrag_engine::Engine, skill: &str, folder: &str) -> Result<PathBuf, ApiError> {
    let found = engine.skill(skill)?;
    let dir = found.dir.join(folder);
    let io = |what: &str, e: std::io::Error| ApiError::internal(format!("cannot {what}: {e}"));
    std::fs::create_dir_all(&dir).map_err(|e| io("create the knowledge folder", e))?;
    let canonical_dir = dir.canonicalize().map_err(|e| io("read the knowledge folder", e))?;
    let canonical_skill = found.dir.canonicalize().map_err(|e| io("read the skill folder", e))?;
    if !canonical_dir.starts_with(&canonical_skill) {
        return Err(ApiError::forbidden(format!(
            "`{folder}` of skill `{skill}` points outside the skill; not written"
        )));
    }
    Ok(canonical_dir)
}

/// The entries of `dir` by their name in NFC (a name may be on disk in NFD, or in both forms).
fn names_in(dir: &Path) -> Result<HashMap<String, Vec<std::ffi::OsString>>, ApiError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| ApiError::internal(format!("cannot read the knowledge folder: {e}")))?;
    let mut names: HashMap<String, Vec<std::ffi::OsString>> = HashMap::new();
    for entry in entries.flatten() {
        let raw = entry.file_name();
        if let Some(name) = raw.to_str() {
            names.entry(name.nfc().collect()).or_default().push(raw.clone());
        }
    }
    Ok(names)
}

/// Moves each staged file into place (refused if its name exists now, unless replacing; an
/// NFD twin of a replaced name is removed), and checks the skill's listing picks it up; on any
/// failure the files of this upload are removed again (replaced files cannot be restored, so
/// replacing is checked first).
fn save_uploads(
    engine: &skillrag_engine::Engine,
    target: UploadTarget,
    files: Vec<Staged>,
) -> Result<Vec<Uploaded>, ApiError> {
    let UploadTarget { skill, folder, dir, replace, .. } = target;
    let found = engine.skill(&skill)?;
    let on_disk = names_in(&dir)?;
    for file in &files {
        let source = format!("{folder}/{}", file.name);
        for raw in on_disk.get(&file.name).into_iter().flatten() {
            match std::fs::symlink_metadata(dir.join(raw)) {
                Ok(m) if !m.is_file() => {
                    return Err(ApiError::conflict(format!("`{source}` exists and is not a plain file; not replaced")))
                }
                Ok(_) if !replace => return Err(exists(&source)),
                _ => {}
            }
        }
    }
    let mut written: Vec<PathBuf> = Vec::new();
    let undo = |written: &[PathBuf]| {
        for p in written {
            let _ = std::fs::remove_file(p);
        }
    };
    let mut saved = Vec::new();
    for mut file in files {
        let source = format!("{folder}/{}", file.name);
        let path = dir.join(&file.name);
        let Some(staged) = file.file.take() else { continue };
        let moved = if replace { staged.persist(&path) } else { staged.persist_noclobber(&path) };
        if let Err(e) = moved {
            undo(&written);
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                return Err(exists(&source));
            }
            return Err(ApiError::internal(format!("cannot save `{source}`: {}", e.error)));
        }
        for twin in on_disk
            .get(&file.name)
            .into_iter()
            .flatten()
            .filter(|raw| raw.as_os_str() != path.file_name().unwrap_or_default())
        {
            let _ = std::fs::remove_file(dir.join(twin));
        }
        written.push(path);
        saved.push(Uploaded { name: source, size: file.size });
    }
    let listing = engine.project.knowledge_files(found);
    if let Some(missing) = saved.iter().find(|u| !listing.files.iter().any(|f| f.source == u.name)) {
        undo(&written);
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!(
                "`{}` would not be indexed: the skill's knowledge patterns or ignore files leave it out",
                missing.name
            ),
        ));
    }
    Ok(saved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upload_names_are_checked() {
        assert_eq!(upload_name("C:\\fakepath\\合同.pdf").unwrap(), "合同.pdf");
        assert_eq!(upload_name("dir/../notes.md").unwrap(), "notes.md");
        assert_eq!(upload_name("Scan.PNG").unwrap(), "Scan.PNG");
        for bad in ["", "..", ".env", "x/.hidden.md", "a\u{7}.md", "a:b.md", &format!("{}.md", "x".repeat(300))] {
            assert_eq!(upload_name(bad).unwrap_err().status, StatusCode::UNPROCESSABLE_ENTITY, "{bad:?}");
        }
        for bad in ["run.exe", "archive.zip", "noextension", "x.svg"] {
            assert_eq!(upload_name(bad).unwrap_err().status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{bad}");
        }
    }

    #[test]
    fn names_that_display_as_another_are_refused_and_twins_are_one() {
        for bad in ["pwn11\u{202e}dm.txt", "a\u{200b}b.md", "\u{feff}bom.md", "x\u{2066}y.md", "tag\u{e0041}.md"] {
            assert_eq!(upload_name(bad).unwrap_err().status, StatusCode::UNPROCESSABLE_ENTITY, "{bad:?}");
        }
        assert_eq!(upload_name("cafe\u{301}.md").unwrap(), "caf\u{e9}.md");
        assert_eq!(upload_name("❤\u{fe0f}.md").unwrap(), "❤\u{fe0f}.md", "an emoji's variation selector is kept");
    }

    #[test]
    fn documents_are_named_by_path_or_unambiguous_bare_name() {
        let sources = ["knowledge/faq.md", "knowledge/a/twin.md", "knowledge/b/twin.md", "knowledge/caf\u{e9}.md"];
        assert_eq!(resolve_document("s", "knowledge/faq.md", sources).unwrap(), "knowledge/faq.md");
        assert_eq!(resolve_document("s", "faq.md", sources).unwrap(), "knowledge/faq.md");
        assert_eq!(resolve_document("s", "cafe\u{301}.md", sources).unwrap(), "knowledge/caf\u{e9}.md");
        let twins = resolve_document("s", "twin.md", sources).unwrap_err();
        assert_eq!(twins.status, StatusCode::CONFLICT);
        assert!(twins.message.contains("`knowledge/a/twin.md`, `knowledge/b/twin.md`"), "{}", twins.message);
        assert_eq!(resolve_document("s", "a/twin.md", sources).unwrap_err().status, StatusCode::NOT_FOUND);
        assert_eq!(resolve_document("s", "none.md", sources).unwrap_err().status, StatusCode::NOT_FOUND);
    }

    #[test]
    fn content_must_match_the_name() {
        assert!(content_matches("a.pdf", b"%PDF-1.7\n...").is_ok());
        assert!(content_matches("a.pdf", b"<html>").is_err());
        assert!(content_matches("a.docx", b"PK\x03\x04rest").is_ok());
        assert!(content_matches("a.docx", b"%PDF-").is_err());
        assert!(content_matches("a.png", b"\x89PNG\r\n\x1a\nrest").is_ok());
        assert!(content_matches("a.png", b"GIF89a").is_err());
        assert!(content_matches("a.md", "# 标题\n正文".as_bytes()).is_ok());
        assert!(content_matches("a.md", b"MZ\x90\0\x03").is_err(), "a binary is not text");
    }
}
