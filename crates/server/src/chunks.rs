//! Chunk edits from the page (`PATCH /v1/skills/{skill}/chunks/{chunk_id}`): a chunk's text,
//! whether it is retrieved, its own keywords and questions. The edit is written to the skill's
//! `chunk-edits.json` (keyed by the document's content hash and the chunk's ordinal, see
//! `skillrag_engine::edits`), then the skill is re-indexed: the document is chunked again with
//! its edits, so they hold across every later re-index, until the document itself changes.
//! Like every write, only with `--allow-writes`, serialized with the others.

use crate::error::ApiError;
use crate::service::{blocking, IndexJob, Service};
use axum::http::StatusCode;
use serde::Serialize;
use skillrag_core::ChunkId;
use skillrag_engine::edits::{ChunkChange, ChunkEdit, ChunkEdits, EditTarget};
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

impl Service {
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
