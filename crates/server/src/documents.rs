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
use std::path::{Path, PathBuf};
use std::sync::Arc;

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

/// A file sent to `POST /v1/skills/{skill}/documents`.
pub struct Upload {
    pub file_name: String,
    pub bytes: Vec<u8>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Uploaded {
    pub name: String,
    pub size: u64,
}

/// Longest uploaded file name, in bytes.
const MAX_NAME: usize = 200;

/// The name an uploaded file is saved under: its last path component (browsers may send
/// `C:\fakepath\x.pdf`), refused when hidden, empty, too long, with control characters, or of
/// a type indexing does not read.
pub fn upload_name(raw: &str) -> Result<String, ApiError> {
    let name = raw.rsplit(['/', '\\']).next().unwrap_or(raw).trim();
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
        encoding: entry.map(|e| e.encoding.clone()),
        pages,
        chunks: entry.map_or(0, |e| e.chunks),
        indexed_at: entry.and(indexed_at),
        status,
        errors,
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
        encoding: Some(entry.encoding.clone()),
        pages: None,
        chunks: entry.chunks,
        indexed_at,
        status: "deleted",
        errors: Vec::new(),
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
            documents.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(DocumentList { skill, writable, max_upload_bytes, extensions: Format::EXTENSIONS.to_vec(), documents })
        })
        .await
    }

    /// Saves uploaded files into the skill's knowledge folder and starts a re-index of the skill.
    /// Nothing is written when any file is refused, or when a re-index is already running.
    pub async fn upload(
        self: &Arc<Self>,
        skill: String,
        files: Vec<Upload>,
        replace: bool,
    ) -> Result<(Vec<Uploaded>, IndexJob), ApiError> {
        if files.is_empty() {
            return Err(ApiError::bad_request("no file: send multipart/form-data with one or more `file` parts"));
        }
        self.check_writable(&skill)?;
        let live = self.live();
        // From the skill's patterns, in memory: no file is touched yet.
        let folder = upload_folder(&live.assistant.engine, &skill)?;
        let limit = live.assistant.engine.settings().index.load.max_file_bytes;
        let mut checked = Vec::new();
        for file in files {
            let name = upload_name(&file.file_name)?;
            if file.bytes.len() as u64 > limit {
                return Err(ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("`{name}` is larger than the {} MB file limit of indexing", limit / (1024 * 1024)),
                ));
            }
            content_matches(&name, &file.bytes)?;
            if checked.iter().any(|(n, _): &(String, Vec<u8>)| n == &name) {
                return Err(ApiError::bad_request(format!("`{name}` is sent twice")));
            }
            checked.push((name, file.bytes));
        }
        let saved = blocking({
            let skill = skill.clone();
            move || save_uploads(&live.assistant.engine, &skill, &folder, checked, replace)
        })
        .await?;
        let names: Vec<&str> = saved.iter().map(|u| u.name.as_str()).collect();
        let job = self.reindex_after_change(skill, &format!("`{}` saved", names.join("`, `")))?;
        Ok((saved, job))
    }

    /// Deletes one document of the skill's knowledge (named as the documents list names it) and
    /// starts a re-index of the skill.
    pub async fn delete_document(self: &Arc<Self>, skill: String, name: String) -> Result<IndexJob, ApiError> {
        self.check_writable(&skill)?;
        let live = self.live();
        blocking({
            let (skill, name) = (skill.clone(), name.clone());
            move || {
                let engine = &live.assistant.engine;
                let found = engine.skill(&skill)?;
                let listing = engine.project.knowledge_files(found);
                // Matched against the listing, never joined onto a path.
                let file = listing.files.iter().find(|f| f.source == name).ok_or_else(|| {
                    ApiError::not_found(format!("skill `{skill}` has no document `{name}` in its knowledge folder"))
                })?;
                if !file.path.starts_with(&found.dir) {
                    return Err(ApiError::forbidden(format!(
                        "`{name}` is a shared document outside the skill's folder; delete it where it lives"
                    )));
                }
                let meta = std::fs::symlink_metadata(&file.path)
                    .map_err(|e| ApiError::internal(format!("cannot delete `{name}`: {e}")))?;
                if !meta.is_file() {
                    return Err(ApiError::forbidden(format!(
                        "`{name}` is a link, not a file of the skill; not deleted"
                    )));
                }
                std::fs::remove_file(&file.path).map_err(|e| ApiError::internal(format!("cannot delete `{name}`: {e}")))
            }
        })
        .await?;
        self.reindex_after_change(skill, &format!("`{name}` deleted"))
    }

    /// Starts the re-index a change needs. Another one may have started since the change was
    /// checked: then the change is on disk but may not be in that index, and the error says so.
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
    fn check_writable(&self, skill: &str) -> Result<(), ApiError> {
        let live = self.live();
        live.assistant.engine.skill(skill)?;
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

/// The folder uploads go to: `knowledge/` when the skill reads it (the default), else the first
/// plain folder among its knowledge patterns.
fn upload_folder(engine: &skillrag_engine::Engine, skill: &str) -> Result<String, ApiError> {
    let found = engine.skill(skill)?;
    let patterns = found.knowledge_patterns();
    let plain = |p: &&String| {
        !p.is_empty()
            && !p.contains(['*', '?', '[', '{', '\\'])
            && !p.starts_with('/')
            && p.split('/').all(|c| !c.is_empty() && c != "." && c != "..")
    };
    let folder = if patterns.iter().any(|p| p == "knowledge") {
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

/// Writes each file next to its target under a hidden temporary name, then renames it into
/// place, and checks the skill's listing picks it up; on any failure the files of this upload
/// are removed again (replaced files cannot be restored, so replacing is checked first).
fn save_uploads(
    engine: &skillrag_engine::Engine,
    skill: &str,
    folder: &str,
    files: Vec<(String, Vec<u8>)>,
    replace: bool,
) -> Result<Vec<Uploaded>, ApiError> {
    let found = engine.skill(skill)?;
    let dir = found.dir.join(folder);
    let io = |what: &str, e: std::io::Error| ApiError::internal(format!("cannot {what}: {e}"));
    std::fs::create_dir_all(&dir).map_err(|e| io("create the knowledge folder", e))?;
    // The folder must be the skill's own, not a link out of it.
    let canonical_dir = dir.canonicalize().map_err(|e| io("read the knowledge folder", e))?;
    let canonical_skill = found.dir.canonicalize().map_err(|e| io("read the skill folder", e))?;
    if !canonical_dir.starts_with(&canonical_skill) {
        return Err(ApiError::forbidden(format!(
            "`{folder}` of skill `{skill}` points outside the skill; not written"
        )));
    }
    let targets: Vec<(PathBuf, String)> =
        files.iter().map(|(name, _)| (dir.join(name), format!("{folder}/{name}"))).collect();
    for (path, source) in &targets {
        match std::fs::symlink_metadata(path) {
            Ok(m) if !m.is_file() => {
                return Err(ApiError::conflict(format!("`{source}` exists and is not a plain file; not replaced")))
            }
            Ok(_) if !replace => {
                return Err(ApiError::conflict(format!(
                    "`{source}` already exists; send `?replace=true` to replace it"
                )))
            }
            _ => {}
        }
    }
    let mut written: Vec<PathBuf> = Vec::new();
    let undo = |written: &[PathBuf]| {
        for p in written {
            let _ = std::fs::remove_file(p);
        }
    };
    for ((name, bytes), (path, source)) in files.iter().zip(&targets) {
        let tmp = dir.join(format!(".{name}.upload-{}.tmp", std::process::id()));
        let result = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            undo(&written);
            return Err(io(&format!("save `{source}`"), e));
        }
        written.push(path.clone());
    }
    let listing = engine.project.knowledge_files(found);
    if let Some((_, source)) = targets.iter().find(|(_, s)| !listing.files.iter().any(|f| &f.source == s)) {
        undo(&written);
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("`{source}` would not be indexed: the skill's knowledge patterns or ignore files leave it out"),
        ));
    }
    Ok(files.iter().zip(&targets).map(|((_, b), (_, s))| Uploaded { name: s.clone(), size: b.len() as u64 }).collect())
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
