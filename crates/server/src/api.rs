//! The native JSON API (`/v1/ask`, `/v1/context`, `/v1/search`, `/v1/route`, `/v1/skills…`, `/v1/index`,
//! `/v1/gaps`, `/healthz`, `/metrics`) and the cited pictures' bytes. Handlers only translate HTTP
//! to [`Service`] calls.

use crate::error::{ApiError, Json, OptionalJson};
use crate::paths;
use crate::service::Thread;
use crate::stream::{Progress, Streaming};
use crate::Shared;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use skillrag_ask::{AskOptions, ContextOptions};
use skillrag_core::Mode;
use std::convert::Infallible;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AskRequest {
    pub query: String,
    #[serde(default)]
    pub skill: Option<String>,
    #[serde(default)]
    pub id: Option<String>,
    /// Server-Sent Events: `text` per checked sentence of an LLM answer, then `answer`.
    #[serde(default)]
    pub stream: bool,
    /// A conversation the server keeps (`POST /v1/conversations`): the question is its next
    /// turn (a follow-up keeps its topic) and is saved in it.
    #[serde(default)]
    pub conversation_id: Option<String>,
}

pub async fn ask(State(shared): State<Shared>, Json(req): Json<AskRequest>) -> Result<Response, ApiError> {
    if let Some(s) = &req.skill {
        paths::skill_id(s)?;
    }
    let options = AskOptions { skill: req.skill, id: req.id, ..Default::default() };
    let thread = match req.conversation_id {
        Some(id) => Thread::Saved(id),
        None => Thread::Stateless(Vec::new()),
    };
    if req.stream {
        return ask_streamed(shared, req.query, options, thread).await;
    }
    let (answer, cached) = shared.service.ask(req.query, options, thread).await?;
    let mut response = axum::Json(&*answer).into_response();
    response.headers_mut().insert("x-skillrag-cache", HeaderValue::from_static(if cached { "hit" } else { "miss" }));
    Ok(response)
}

/// `event: text` (`{"text": …}`) for each sentence as the LLM's answer passes the citation check,
/// then `event: answer` with the whole answer (docs/design.md §6), or `event: error`.
async fn ask_streamed(
    shared: Shared,
    query: String,
    options: AskOptions,
    thread: Thread,
) -> Result<Response, ApiError> {
    let streaming = Streaming::start(shared.service.clone(), query, options, thread).await?;
    let events = futures_util::stream::unfold(Some(streaming), |state| async move {
        let mut streaming = state?;
        let (event, next) = match streaming.next().await {
            Some(Progress::Text(text)) => {
                (Event::default().event("text").data(json!({"text": text}).to_string()), Some(streaming))
            }
            Some(Progress::Done(answer)) => (Event::default().event("answer").data(json!(&*answer).to_string()), None),
            Some(Progress::Failed(e)) => (Event::default().event("error").data(e.body().to_string()), None),
            None => (
                Event::default().event("error").data(ApiError::internal("the answer was lost").body().to_string()),
                None,
            ),
        };
        Some((Ok::<_, Infallible>(event), next))
    });
    Ok(Sse::new(events).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SearchRequest {
    pub query: String,
    #[serde(default)]
    pub skills: Vec<String>,
    #[serde(default)]
    pub k: Option<usize>,
    #[serde(default)]
    pub mode: Option<String>,
    /// Only sources matching this glob (relative to the skill folder).
    #[serde(default)]
    pub source: Option<String>,
    /// Only these document types (general, faq, legal, technical).
    #[serde(default)]
    pub doc_types: Vec<String>,
    /// Only sources under this folder of the skill, e.g. `knowledge/rules`.
    #[serde(default)]
    pub dir: Option<String>,
    /// RRF weights of the BM25 and dense lists instead of the configured ones.
    #[serde(default)]
    pub bm25_weight: Option<f32>,
    #[serde(default)]
    pub dense_weight: Option<f32>,
    /// Drop hits whose relevance is below this (see [`crate::service::relevance`]).
    #[serde(default)]
    pub min_score: Option<f32>,
    /// Only documents whose metadata holds every one of these fields (one skill only).
    #[serde(default)]
    pub metadata: std::collections::BTreeMap<String, String>,
}

pub async fn search(State(shared): State<Shared>, Json(req): Json<SearchRequest>) -> Result<Response, ApiError> {
    for s in &req.skills {
        paths::skill_id(s)?;
    }
    let invalid = |message: String| ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message);
    if req.k.is_some_and(|k| !(1..=100).contains(&k)) {
        return Err(invalid("`k` must be between 1 and 100".into()));
    }
    let mode = match req.mode.as_deref() {
        None => Mode::Hybrid,
        Some(m) => Mode::parse(m).ok_or_else(|| invalid(format!("unknown mode `{m}` (hybrid, bm25 or dense)")))?,
    };
    let mut filter = skillrag_core::Filter::none();
    if let Some(glob) = req.source.as_deref().filter(|g| !g.trim().is_empty()) {
        filter = filter.with_source_glob(glob).map_err(|e| invalid(e.to_string()))?;
    }
    for t in &req.doc_types {
        let parsed = skillrag_core::DocType::parse(t)
            .ok_or_else(|| invalid(format!("unknown doc type `{t}` (general, faq, legal or technical)")))?;
        filter.doc_types.push(parsed);
    }
    filter.directory = req.dir.filter(|d| !d.trim().is_empty()).map(|d| d.trim().trim_end_matches('/').to_string());
    if !req.metadata.is_empty() {
        // Metadata belongs to one skill's documents: sources of two skills may share a path.
        let [skill] = req.skills.as_slice() else {
            return Err(invalid("a `metadata` filter needs exactly one skill in `skills`".into()));
        };
        let wanted = crate::chunks::checked_metadata(req.metadata)?;
        filter = filter.only_sources(shared.service.sources_with_metadata(skill.clone(), wanted).await?);
    }
    let weights = match (req.bm25_weight, req.dense_weight) {
        (None, None) => None,
        (b, d) => {
            let (b, d) = (b.unwrap_or(1.0), d.unwrap_or(1.0));
            if !(b.is_finite() && d.is_finite() && b >= 0.0 && d >= 0.0 && b + d > 0.0) {
                return Err(invalid("`bm25_weight` and `dense_weight` must be ≥ 0, not both 0".into()));
            }
            Some((b, d))
        }
    };
    if req.min_score.is_some_and(|m| !m.is_finite()) {
        return Err(invalid("`min_score` must be a number".into()));
    }
    let query = crate::service::SearchQuery { query: req.query, skills: req.skills, k: req.k, mode, filter, weights };
    let (result, filtered) = shared.service.search(query, req.min_score).await?;
    let mut body = serde_json::to_value(&result).map_err(|e| ApiError::internal(e.to_string()))?;
    if req.min_score.is_some() {
        body["filtered"] = json!(filtered);
    }
    Ok(axum::Json(body).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteRequest {
    pub query: String,
}

pub async fn route(State(shared): State<Shared>, Json(req): Json<RouteRequest>) -> Result<Response, ApiError> {
    Ok(axum::Json(shared.service.route(req.query).await?).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextRequest {
    pub task: String,
    #[serde(default)]
    pub skill: Option<String>,
    /// In the budget's unit (the local LLM's tokens, else characters).
    #[serde(default)]
    pub budget: Option<usize>,
}

/// The compiled context of a task: the routed skill's instructions and boundary and its tiered
/// context, or the refusal `ask` would give.
pub async fn context(State(shared): State<Shared>, Json(req): Json<ContextRequest>) -> Result<Response, ApiError> {
    if let Some(s) = &req.skill {
        paths::skill_id(s)?;
    }
    let options = ContextOptions { skill: req.skill, budget: req.budget };
    Ok(axum::Json(shared.service.context(req.task, options).await?).into_response())
}

pub async fn skill(State(shared): State<Shared>, Path(skill): Path<String>) -> Result<Response, ApiError> {
    paths::skill_id(&skill)?;
    Ok(axum::Json(shared.service.skill_card(skill).await?).into_response())
}

pub async fn skills(State(shared): State<Shared>) -> Result<Response, ApiError> {
    let writable = shared.options.allow_writes;
    Ok(axum::Json(json!({"skills": shared.service.skills().await?, "writable": writable})).into_response())
}

pub async fn sources(State(shared): State<Shared>, Path(skill): Path<String>) -> Result<Response, ApiError> {
    paths::skill_id(&skill)?;
    let sources = shared.service.sources(skill.clone()).await?;
    Ok(axum::Json(json!({"skill": skill, "sources": sources})).into_response())
}

pub async fn source(
    State(shared): State<Shared>,
    Path((skill, source)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    paths::skill_id(&skill)?;
    paths::source_path(&source)?;
    let chunks = shared.service.source_chunks(skill.clone(), source.clone()).await?;
    Ok(axum::Json(json!({"skill": skill, "source": source, "chunks": chunks})).into_response())
}

/// A picture opened on its own may show itself and nothing else: no script, no other
/// resource, sandboxed (its bytes are the skill author's, not vetted for a browser).
const PICTURE_CSP: &str = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox";

/// The bytes of an indexed picture (a cited one: `citations[].image.path`), typed by its format.
pub async fn picture(
    State(shared): State<Shared>,
    Path((skill, source)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    paths::skill_id(&skill)?;
    paths::source_path(&source)?;
    let picture = shared.service.picture(skill, source).await?;
    let headers = [
        (header::CONTENT_TYPE, HeaderValue::from_static(picture.content_type)),
        (header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
        (header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(PICTURE_CSP)),
        (header::CACHE_CONTROL, HeaderValue::from_static("private, no-cache")),
        (header::CONTENT_DISPOSITION, inline_named(&picture.name)),
    ];
    Ok((headers, picture.bytes).into_response())
}

/// `inline; filename*=UTF-8''…`: the file's name, percent-encoded (RFC 6266), for saving it.
fn inline_named(name: &str) -> HeaderValue {
    let encoded: String = name
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect();
    HeaderValue::from_str(&format!("inline; filename*=UTF-8''{encoded}"))
        .unwrap_or_else(|_| HeaderValue::from_static("inline"))
}

/// The documents of a skill with their parse status (`GET /v1/skills/{skill}/documents`).
pub async fn documents(State(shared): State<Shared>, Path(skill): Path<String>) -> Result<Response, ApiError> {
    paths::skill_id(&skill)?;
    let list = shared.service.documents(skill, shared.options.allow_writes, shared.options.max_upload as u64).await?;
    Ok(axum::Json(list).into_response())
}

/// The chunks of one document; `name` is one path segment (`knowledge%2Ffaq.md`), or the bare
/// file name when only one document has it (`faq.md`).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ChunksQuery {
    /// A preview: the chunks the document would get with this preset (`auto` or a name).
    #[serde(default)]
    pub preset: Option<String>,
}

/// A document's indexed chunks; with `?preset=`, a preview of the chunks it would get with that
/// preset instead (nothing written).
pub async fn document_chunks(
    State(shared): State<Shared>,
    Path((skill, name)): Path<(String, String)>,
    query: Result<Query<ChunksQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    paths::skill_id(&skill)?;
    paths::source_path(&name)?;
    let Query(q) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    if let Some(preset) = q.preset {
        let preset = crate::chunks::parse_preset(&preset)?;
        let source = shared.service.document_source(skill.clone(), name).await?;
        return Ok(axum::Json(shared.service.chunk_preview(skill, source, preset).await?).into_response());
    }
    let (document, chunks) = shared.service.document_chunks(skill.clone(), name).await?;
    Ok(axum::Json(json!({"skill": skill, "document": document, "chunks": chunks})).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetadataRequest {
    pub metadata: std::collections::BTreeMap<String, String>,
}

/// Sets a document's metadata (`{}`: none); nothing is re-indexed.
pub async fn put_document_metadata(
    State(shared): State<Shared>,
    Path((skill, name)): Path<(String, String)>,
    Json(req): Json<MetadataRequest>,
) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    paths::skill_id(&skill)?;
    paths::source_path(&name)?;
    let source = shared.service.document_source(skill.clone(), name).await?;
    let metadata = shared.service.set_metadata(skill.clone(), source.clone(), req.metadata).await?;
    Ok(axum::Json(json!({"skill": skill, "source": source, "metadata": metadata})).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PresetRequest {
    pub preset: String,
}

/// Chooses a document's chunking preset (`auto`: back to the rules and detection), then
/// re-indexes the skill; the document's chunk edits are dropped with its old chunks.
pub async fn put_document_preset(
    State(shared): State<Shared>,
    Path((skill, name)): Path<(String, String)>,
    Json(req): Json<PresetRequest>,
) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    paths::skill_id(&skill)?;
    paths::source_path(&name)?;
    let preset = crate::chunks::parse_preset(&req.preset)?;
    let source = shared.service.document_source(skill.clone(), name).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(shared.service.choose_preset(skill, source, preset).await?)).into_response())
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct UploadQuery {
    #[serde(default)]
    pub replace: bool,
    /// The tier the files join: `references` (the default), `rules` or `examples` — a
    /// `rules/` or `examples/` folder inside the knowledge folder.
    #[serde(default)]
    pub tier: Option<String>,
}

/// Uploads (multipart `file` parts) into the skill's knowledge folder, then re-indexes it.
/// Everything that can be checked is checked before the body is read (writes allowed, the
/// skill, no re-index running), and each part's name before its bytes; the bytes go to disk.
pub async fn upload_documents(
    State(shared): State<Shared>,
    Path(skill): Path<String>,
    query: Result<Query<UploadQuery>, QueryRejection>,
    multipart: Result<axum::extract::Multipart, axum::extract::multipart::MultipartRejection>,
) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    paths::skill_id(&skill)?;
    let Query(q) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    let multipart = multipart.map_err(|e| {
        ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("send multipart/form-data with `file` parts: {}", e.body_text()),
        )
    })?;
    let tier = upload_tier(q.tier.as_deref())?;
    let target = shared.service.upload_target(skill, q.replace, tier).await?;
    let timeout = shared.options.body_timeout;
    let Ok(files) = tokio::time::timeout(timeout, read_uploads(&target, multipart)).await else {
        let mut r = ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!("the upload did not arrive within {} s", timeout.as_secs()),
        )
        .into_response();
        // The rest of the body may still be on its way: do not read it as the next request.
        r.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        return Ok(r);
    };
    let (documents, job) = shared.service.upload(target, files?).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(json!({"documents": documents, "job": job}))).into_response())
}

/// Each `file` part, its name checked before its bytes are read, staged on disk; at most
/// [`MAX_FILES`](crate::documents::MAX_FILES) of them.
async fn read_uploads(
    target: &crate::documents::UploadTarget,
    mut multipart: axum::extract::Multipart,
) -> Result<Vec<crate::documents::Staged>, ApiError> {
    let mut files = Vec::new();
    let mut seen = std::collections::HashSet::new();
    while let Some(mut field) = multipart.next_field().await.map_err(multipart_error)? {
        if field.name() != Some("file") {
            return Err(ApiError::bad_request(format!(
                "unexpected form field `{}`: send the documents as `file` parts",
                field.name().unwrap_or("")
            )));
        }
        if files.len() == crate::documents::MAX_FILES {
            return Err(ApiError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("more than {} files in one upload: send them in several", crate::documents::MAX_FILES),
            ));
        }
        let name = target.check_name(field.file_name().unwrap_or(""), &mut seen)?;
        let mut staged = target.stage(name).await?;
        while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
            staged.write(&chunk).await?;
        }
        files.push(staged.finish().await?);
    }
    Ok(files)
}

fn multipart_error(e: axum::extract::multipart::MultipartError) -> ApiError {
    let status = e.status();
    let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
        "the upload is larger than the server accepts (`--max-upload-mb`)".to_string()
    } else {
        format!("could not read the upload: {}", e.body_text())
    };
    ApiError::new(status, message)
}

/// Deletes one document of the skill's knowledge folder (named by its path, or its bare file
/// name when unambiguous), then re-indexes it.
pub async fn delete_document(
    State(shared): State<Shared>,
    Path((skill, name)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    paths::skill_id(&skill)?;
    paths::source_path(&name)?;
    let (deleted, job) = shared.service.delete_document(skill, name).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(json!({"deleted": deleted, "job": job}))).into_response())
}

/// The form of a new skill: its `SKILL.md` in parts (docs/http-api.md).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewSkillRequest {
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub triggers: Vec<String>,
    #[serde(default)]
    pub boundary: String,
    #[serde(default)]
    pub examples: Vec<String>,
    #[serde(default)]
    pub instructions: String,
}

/// Creates a skill from its parts, then indexes it: 201 with lint's remaining warnings.
pub async fn create_skill(
    State(shared): State<Shared>,
    Json(req): Json<NewSkillRequest>,
) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    let draft = skillrag_skill::SkillDraft {
        name: req.name,
        description: req.description,
        triggers: req.triggers,
        boundary: req.boundary,
        examples: req.examples,
        instructions: req.instructions,
    };
    let written = shared.service.create_skill(draft).await?;
    Ok((StatusCode::CREATED, axum::Json(written)).into_response())
}

/// A skill's `SKILL.md` as written.
pub async fn skill_md(State(shared): State<Shared>, Path(skill): Path<String>) -> Result<Response, ApiError> {
    paths::skill_id(&skill)?;
    let text = shared.service.skill_file(skill).await?;
    Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("text/markdown; charset=utf-8"))], text).into_response())
}

/// Replaces a skill's `SKILL.md` (the body, as text) unless lint finds an error in it (422, with
/// `diagnostics`); then re-indexes the skill.
pub async fn put_skill_md(
    State(shared): State<Shared>,
    Path(skill): Path<String>,
    body: Result<String, axum::extract::rejection::StringRejection>,
) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    paths::skill_id(&skill)?;
    let text = body.map_err(|e| ApiError::bad_request(format!("send SKILL.md as UTF-8 text: {}", e.body_text())))?;
    if text.trim().is_empty() {
        return Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "SKILL.md is empty; nothing was written"));
    }
    Ok(axum::Json(shared.service.write_skill_file(skill, text).await?).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkillPatch {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// Changes a skill: `{"name"}` renames it (its folder and its `SKILL.md` name), then indexes it
/// under the new name; `{"enabled": false}` turns it off, `{"enabled": true}` on again.
pub async fn patch_skill(
    State(shared): State<Shared>,
    Path(skill): Path<String>,
    Json(req): Json<SkillPatch>,
) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    paths::skill_id(&skill)?;
    match (req.name, req.enabled) {
        (Some(name), None) => {
            Ok(axum::Json(shared.service.rename_skill(skill, name.trim().to_string()).await?).into_response())
        }
        (None, Some(enabled)) => {
            Ok(axum::Json(shared.service.set_skill_enabled(skill, enabled).await?).into_response())
        }
        _ => Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "send one of `name` (a rename) or `enabled` (true or false)",
        )),
    }
}

/// Deletes a skill: its folder goes to the project's trash, its index is dropped.
pub async fn delete_skill(State(shared): State<Shared>, Path(skill): Path<String>) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    paths::skill_id(&skill)?;
    Ok(axum::Json(shared.service.delete_skill(skill).await?).into_response())
}

/// A change of one chunk; each field optional, at least one given.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChunkPatch {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub enabled: Option<bool>,
    #[serde(default)]
    pub keywords: Option<Vec<String>>,
    #[serde(default)]
    pub questions: Option<Vec<String>>,
}

/// Edits one chunk (its text, whether it is retrieved, its keywords and questions), then
/// re-indexes the skill: 202 with the edit and the job.
pub async fn patch_chunk(
    State(shared): State<Shared>,
    Path((skill, chunk)): Path<(String, String)>,
    Json(req): Json<ChunkPatch>,
) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    paths::skill_id(&skill)?;
    let id: u64 = chunk
        .parse()
        .map_err(|_| ApiError::bad_request(format!("`{chunk}` is not a chunk id (the `chunk_id` of a search hit)")))?;
    let change = skillrag_engine::edits::ChunkChange {
        text: req.text,
        enabled: req.enabled,
        keywords: req.keywords,
        questions: req.questions,
    };
    let edited = shared.service.edit_chunk(skill, id, change).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(edited)).into_response())
}

/// A gap's or a draft's id as `GET /v1/gaps` and a draft give it (`g-…`, `d-…`): it names a
/// file of the project's state, so nothing else is taken.
fn record_id(raw: &str, prefix: &str) -> Result<(), ApiError> {
    let ok = raw.len() <= 64
        && raw.strip_prefix(prefix).is_some_and(|rest| !rest.is_empty() && rest.chars().all(|c| c.is_ascii_hexdigit()));
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!("`{raw}` is not an id of the form {prefix}…")))
    }
}

/// A draft of new knowledge from the gap `id`: 201 with the draft.
pub async fn draft_gap(State(shared): State<Shared>, Path(id): Path<String>) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    gap_or_liked_id(&id)?;
    Ok((StatusCode::CREATED, axum::Json(json!({"draft": shared.service.draft(id).await?}))).into_response())
}

/// A gap's id (`g-…`) or a liked answer's (`l-…`): both are drafted and resolved alike.
fn gap_or_liked_id(id: &str) -> Result<(), ApiError> {
    record_id(id, "g-")
        .or_else(|_| record_id(id, "l-"))
        .map_err(|_| ApiError::bad_request(format!("`{id}` is not the id of a gap (g-…) or of a liked answer (l-…)")))
}

/// Marks the gap (or liked answer) `id` resolved.
pub async fn resolve_gap(State(shared): State<Shared>, Path(id): Path<String>) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    gap_or_liked_id(&id)?;
    shared.service.resolve_gap(id.clone()).await?;
    Ok(axum::Json(json!({"resolved": id})).into_response())
}

/// Writes the draft `id` into its skill (the body may change its skill, question and answer).
pub async fn approve_draft(
    State(shared): State<Shared>,
    Path(id): Path<String>,
    OptionalJson(approval): OptionalJson<crate::drafts::Approval>,
) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    record_id(&id, "d-")?;
    Ok(axum::Json(shared.service.approve_draft(id, approval).await?).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeleteDocumentsRequest {
    pub names: Vec<String>,
}

/// Deletes several documents of the skill (`{"names": [...]}`), then re-indexes it once.
pub async fn delete_documents(
    State(shared): State<Shared>,
    Path(skill): Path<String>,
    Json(req): Json<DeleteDocumentsRequest>,
) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    paths::skill_id(&skill)?;
    for name in &req.names {
        paths::source_path(name)?;
    }
    let (deleted, job) = shared.service.delete_documents(skill, req.names).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(json!({"deleted": deleted, "job": job}))).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImportRequest {
    pub url: String,
    /// The file name to save it as; default from the URL and its type.
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub replace: bool,
    #[serde(default)]
    pub tier: Option<String>,
}

/// The tier an upload or import asks for (`references` when none).
fn upload_tier(asked: Option<&str>) -> Result<skillrag_core::Tier, ApiError> {
    match asked {
        None => Ok(skillrag_core::Tier::References),
        Some(t) => skillrag_core::Tier::parse(t).ok_or_else(|| {
            ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                format!("`tier={t}`: upload into `references` (the default), `rules` or `examples`"),
            )
        }),
    }
}

/// Imports one page from a URL into the skill's knowledge, then re-indexes it (as an upload).
pub async fn import_document(
    State(shared): State<Shared>,
    Path(skill): Path<String>,
    Json(req): Json<ImportRequest>,
) -> Result<Response, ApiError> {
    require_writes(&shared)?;
    paths::skill_id(&skill)?;
    let tier = upload_tier(req.tier.as_deref())?;
    let scheme = req.url.trim().split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("http" | "https")) {
        return Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("`{}` is not an http(s) URL", req.url)));
    }
    let (documents, job) = shared.service.import_url(skill, req.url, req.name, req.replace, tier).await?;
    Ok((StatusCode::ACCEPTED, axum::Json(json!({"documents": documents, "job": job}))).into_response())
}

fn require_writes(shared: &Shared) -> Result<(), ApiError> {
    if shared.options.allow_writes {
        Ok(())
    } else {
        Err(ApiError::forbidden(
            "this server does not change knowledge files: start it with `skillrag serve --allow-writes` \
             (with SKILLRAG_API_TOKEN set when it listens beyond loopback)",
        ))
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct IndexRequest {
    #[serde(default)]
    pub skills: Vec<String>,
    #[serde(default)]
    pub rebuild: bool,
}

/// The body is optional: an empty POST re-indexes every skill; a body must be declared JSON.
pub async fn start_index(
    State(shared): State<Shared>,
    OptionalJson(req): OptionalJson<IndexRequest>,
) -> Result<Response, ApiError> {
    for s in &req.skills {
        paths::skill_id(s)?;
    }
    // Not while a document write is between its checks and its re-index (see `documents.rs`).
    let _writing = shared.service.writes.lock().await;
    let job = shared.service.start_index(req.skills, req.rebuild)?;
    Ok((StatusCode::ACCEPTED, axum::Json(json!({"job": job}))).into_response())
}

pub async fn index_job(State(shared): State<Shared>) -> Response {
    axum::Json(json!({"job": shared.service.index_job()})).into_response()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GapsQuery {
    #[serde(default)]
    pub skill: Option<String>,
    #[serde(default)]
    pub limit: Option<usize>,
}

pub async fn gaps(
    State(shared): State<Shared>,
    query: Result<Query<GapsQuery>, QueryRejection>,
) -> Result<Response, ApiError> {
    let Query(q) = query.map_err(|e| ApiError::bad_request(e.body_text()))?;
    if let Some(s) = &q.skill {
        paths::skill_id(s)?;
    }
    let limit = q.limit.unwrap_or(100);
    let gaps = shared.service.gaps(q.skill.clone(), limit).await?;
    let liked = shared.service.liked(q.skill, limit).await?;
    Ok(axum::Json(json!({"gaps": gaps, "liked": liked})).into_response())
}

pub async fn healthz(State(shared): State<Shared>) -> Response {
    let live = shared.service.live();
    let served = live.assistant.engine.served_generations();
    let indexed = served.values().filter(|g| g.is_some()).count();
    axum::Json(json!({"status": "ok", "skills": served.len(), "indexed": indexed})).into_response()
}

pub async fn metrics(State(shared): State<Shared>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")],
        shared.service.metrics.render(),
    )
        .into_response()
}

pub async fn not_found() -> ApiError {
    ApiError::not_found("no such endpoint; see docs/http-api.md")
}

pub async fn method_not_allowed() -> ApiError {
    ApiError::new(StatusCode::METHOD_NOT_ALLOWED, "this endpoint does not take that method; see docs/http-api.md")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::picture_type;

    #[test]
    fn pictures_are_typed_by_extension_and_named_safely() {
        assert_eq!(picture_type("knowledge/notice.PNG"), Some("image/png"));
        assert_eq!(picture_type("knowledge/a.b/scan.jpeg"), Some("image/jpeg"));
        assert_eq!(picture_type("knowledge/scan.JPG"), Some("image/jpeg"));
        assert_eq!(picture_type("knowledge/scan.webp"), Some("image/webp"));
        assert_eq!(picture_type("knowledge/scan.tif"), Some("image/tiff"));
        assert_eq!(picture_type("knowledge/scan.tiff"), Some("image/tiff"));
        for other in ["knowledge/notice.md", "knowledge/png", "knowledge/x.svg", "knowledge/x.gif"] {
            assert_eq!(picture_type(other), None, "{other}");
        }
        assert_eq!(inline_named("notice-zh.png"), "inline; filename*=UTF-8''notice-zh.png");
        assert_eq!(inline_named("通知 1\".png"), "inline; filename*=UTF-8''%E9%80%9A%E7%9F%A5%201%22.png");
    }
}
