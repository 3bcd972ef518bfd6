//! Chunk edits from the page (`PATCH /v1/skills/{skill}/chunks/{chunk_id}`): a chunk's text,
//! whether it is retrieved, its own keywords and questions. The edit is written to the skill's
//! `chunk-edits.json` (keyed by the document's content hash and the chunk's ordinal, see
//! `skillrag_engine::edits`), then the skill is re-indexed: the document is chunked again with
//! its edits, so they hold across every later re-index, until the document itself changes.
//! Like every write, only with `--allow-writes`, serialized with the others.
//!
//! A document's chunking preset is chosen the same way (`PUT …/documents/{name}/preset`, kept
//! in the same file), after a preview of the chunks it would give (`GET …/chunks?preset=`).

use crate::error::ApiError;
use crate::service::{blocking, IndexJob, Service};
use axum::http::StatusCode;
use serde::Serialize;
use skillrag_core::{ChunkId, DocType};
use skillrag_engine::edits::{ChunkChange, ChunkEdit, ChunkEdits, EditTarget};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A chunk edited: which chunk, the edit as it now stands (`None`: back to the document's own
/// chunk), and the re-index that applies it.
#[derive(Debug, Serialize)]
pub struct ChunkEdited {
    pub skill: String,
    pub source: String,
    pub ordinal: u32,
    pub edit: Option<ChunkEdit>,
    pub job: IndexJob,
}

/// A document's chunking preset chosen: `preset` (`None`: back to the rules and detection),
/// the chunk edits dropped with the old chunks, and the re-index that chunks it again.
#[derive(Debug, Serialize)]
pub struct PresetChosen {
    pub skill: String,
    pub source: String,
    pub preset: Option<DocType>,
    pub dropped_edits: usize,
    pub job: IndexJob,
}

/// One chunk of a preview: what the document would be cut into.
#[derive(Debug, Serialize)]
pub struct PreviewChunk {
    pub ordinal: u32,
    pub heading: String,
    pub text: String,
    pub chars: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<(u32, u32)>,
}

/// The chunks a document would get with a preset; nothing is written.
#[derive(Debug, Serialize)]
pub struct ChunkPreview {
    pub skill: String,
    pub source: String,
    /// The preset that would cut it (a FAQ table is always `faq`).
    pub preset: DocType,
    /// The preset chosen for it now, if any.
    pub chosen: Option<DocType>,
    pub chunks: Vec<PreviewChunk>,
}

/// Most metadata fields one document takes, and the longest key and value.
pub const MAX_METADATA_FIELDS: usize = 20;
const MAX_METADATA_KEY: usize = 40;
const MAX_METADATA_VALUE: usize = 200;

/// `metadata` trimmed, or refused (422, `field: "metadata"`) with what is wrong.
pub fn checked_metadata(metadata: BTreeMap<String, String>) -> Result<BTreeMap<String, String>, ApiError> {
    let refuse = |message: String| {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message).with_detail("field", "metadata".into())
    };
    if metadata.len() > MAX_METADATA_FIELDS {
        return Err(refuse(format!("at most {MAX_METADATA_FIELDS} metadata fields")));
    }
    let mut out = BTreeMap::new();
    for (key, value) in metadata {
        let (key, value) = (key.trim().to_string(), value.trim().to_string());
        let key_ok = !key.is_empty()
            && key.chars().count() <= MAX_METADATA_KEY
            && key.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-');
        if !key_ok {
            return Err(refuse(format!(
                "`{key}` is not a metadata key (1 to {MAX_METADATA_KEY} letters, digits, `_` or `-`)"
            )));
        }
        if value.is_empty() || value.chars().count() > MAX_METADATA_VALUE || value.contains(['\n', '\r']) {
            return Err(refuse(format!("`{key}`: give a value of one line, 1 to {MAX_METADATA_VALUE} characters")));
        }
        out.insert(key, value);
    }
    Ok(out)
}

/// `auto` or a preset's name.
pub fn parse_preset(value: &str) -> Result<Option<DocType>, ApiError> {
    let value = value.trim().to_ascii_lowercase();
    if value == "auto" || value.is_empty() {
        return Ok(None);
    }
    DocType::ALL.into_iter().find(|d| d.as_str() == value).map(Some).ok_or_else(|| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("unknown preset `{value}` (auto, general, faq, legal or technical)"),
        )
        .with_detail("field", "preset".into())
    })
}

impl Service {
    /// The chunks `source` of `skill` would get with `preset` (`None`: the rules and detection).
    pub async fn chunk_preview(
        self: &Arc<Self>,
        skill: String,
        source: String,
        preset: Option<DocType>,
    ) -> Result<ChunkPreview, ApiError> {
        let live = self.live();
        blocking(move || {
            let engine = &live.assistant.engine;
            let (used, chunks) = engine.chunk_preview(&skill, &source, preset)?;
            let chosen = ChunkEdits::load(&engine.skill(&skill)?.dir).unwrap_or_default().presets.get(&source).copied();
            let chunks = chunks
                .into_iter()
                .map(|c| PreviewChunk {
                    ordinal: c.ordinal,
                    heading: c.heading_line(),
                    chars: c.text.chars().count(),
                    text: c.text,
                    pages: c.pages,
                })
                .collect();
            Ok(ChunkPreview { skill, source, preset: used, chosen, chunks })
        })
        .await
    }

    /// Chooses `preset` for `source` of `skill` and starts the re-index that chunks it again.
    pub async fn choose_preset(
        self: &Arc<Self>,
        skill: String,
        source: String,
        preset: Option<DocType>,
    ) -> Result<PresetChosen, ApiError> {
        let _writing = self.writes.lock().await;
        self.check_writable(&skill)?;
        self.note_pending(std::slice::from_ref(&skill));
        let live = self.live();
        let dropped_edits = blocking({
            let (skill, source) = (skill.clone(), source.clone());
            move || {
                let engine = &live.assistant.engine;
                let found = engine.skill(&skill)?;
                // Only a document of the knowledge listing now: no preset for a name that is none.
                let listing = engine.project.knowledge_files(found);
                let file = listing.files.iter().find(|f| f.source == source).ok_or_else(|| {
                    ApiError::not_found(format!("skill `{skill}` has no knowledge document `{source}`"))
                })?;
                if preset.is_some()
                    && skillrag_load::Format::from_path(&file.path)
                        .is_some_and(|f| matches!(f, skillrag_load::Format::Faq(_)))
                {
                    return Err(ApiError::new(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "a FAQ table is always chunked one question with its answer per chunk",
                    )
                    .with_detail("field", "preset".into()));
                }
                let mut edits = ChunkEdits::load(&found.dir).map_err(|broken| {
                    ApiError::conflict(format!("{broken}: fix or remove it before choosing a preset"))
                })?;
                let dropped = edits.choose_preset(&source, preset);
                edits.save(&found.dir).map_err(|e| ApiError::internal(format!("cannot save the chunk edits: {e}")))?;
                Ok(dropped)
            }
        })
        .await?;
        let job = self.start_index(vec![skill.clone()], false)?;
        Ok(PresetChosen { skill, source, preset, dropped_edits, job })
    }

    /// Sets the metadata of `source` of `skill` (empty: none), checked: at most
    /// [`MAX_METADATA_FIELDS`] fields, keys of letters, digits, `_` and `-`, values of one line.
    /// Nothing is re-indexed: metadata filters sources, it is no part of a chunk.
    pub async fn set_metadata(
        self: &Arc<Self>,
        skill: String,
        source: String,
        metadata: BTreeMap<String, String>,
    ) -> Result<BTreeMap<String, String>, ApiError> {
        let metadata = checked_metadata(metadata)?;
        let _writing = self.writes.lock().await;
        self.check_writable(&skill)?;
        let live = self.live();
        blocking(move || {
            let engine = &live.assistant.engine;
            let found = engine.skill(&skill)?;
            let mut edits = ChunkEdits::load(&found.dir)
                .map_err(|broken| ApiError::conflict(format!("{broken}: fix or remove it before setting metadata")))?;
            if metadata.is_empty() {
                edits.metadata.remove(&source);
            } else {
                edits.metadata.insert(source, metadata.clone());
            }
            edits.save(&found.dir).map_err(|e| ApiError::internal(format!("cannot save the metadata: {e}")))?;
            Ok(metadata)
        })
        .await
    }

    /// The sources of `skill` whose metadata holds every field of `wanted`.
    pub async fn sources_with_metadata(
        self: &Arc<Self>,
        skill: String,
        wanted: BTreeMap<String, String>,
    ) -> Result<Vec<String>, ApiError> {
        let live = self.live();
        blocking(move || {
            let dir = live.assistant.engine.skill(&skill)?.dir.clone();
            Ok(ChunkEdits::load(&dir).unwrap_or_default().sources_with(&wanted))
        })
        .await
    }

    /// Records `change` of chunk `id` of `skill` and starts the re-index that applies it.
    pub async fn edit_chunk(
        self: &Arc<Self>,
        skill: String,
        id: ChunkId,
        change: ChunkChange,
    ) -> Result<ChunkEdited, ApiError> {
        let change = change.checked().map_err(|e| {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("`{}`: {}", e.field, e.message))
                .with_detail("field", e.field.into())
        })?;
        let _writing = self.writes.lock().await;
        self.check_writable(&skill)?;
        self.note_pending(std::slice::from_ref(&skill));
        let live = self.live();
        let (source, ordinal, edit) = blocking({
            let skill = skill.clone();
            move || {
                let engine = &live.assistant.engine;
                let dir = engine.skill(&skill)?.dir.clone();
                let index = engine.require_index(&skill)?;
                let mut edits = ChunkEdits::load(&dir).map_err(|broken| {
                    ApiError::conflict(format!("{broken}: fix or remove it before editing chunks"))
                })?;
                // A chunk of the served index, else a disabled one (in no index, named by its
                // `disabled_id`).
                let (target, content_hash) = match index.chunk(id) {
                    Some(chunk) => {
                        let hash = chunk.content_hash.clone();
                        let (source, ordinal, text) = (chunk.source.clone(), chunk.ordinal, chunk.text.clone());
                        ((source, ordinal, text), hash)
                    }
                    None => {
                        let (source, ordinal, edit) = edits
                            .disabled(id)
                            .ok_or_else(|| ApiError::not_found(format!("skill `{skill}` has no chunk {id}")))?;
                        let hash = edits.documents.get(source).map(|d| d.content_hash.clone()).unwrap_or_default();
                        ((source.to_string(), ordinal, edit.original.clone()), hash)
                    }
                };
                let (source, ordinal, text) = target;
                let edit = edits.record(EditTarget { source: &source, ordinal, text: &text }, &content_hash, &change);
                edits.save(&dir).map_err(|e| ApiError::internal(format!("cannot save the chunk edits: {e}")))?;
                let still = edits.documents.get(&source).is_some_and(|d| d.chunks.contains_key(&ordinal));
                Ok((source, ordinal, still.then_some(edit)))
            }
        })
        .await?;
        let job = self.start_index(vec![skill.clone()], false)?;
        Ok(ChunkEdited { skill, source, ordinal, edit, job })
    }
}
