//! The native JSON API (`/v1/ask`, `/v1/context`, `/v1/search`, `/v1/route`, `/v1/skills…`, `/v1/index`,
//! `/v1/gaps`, `/healthz`, `/metrics`) and the cited pictures' bytes. Handlers only translate HTTP
//! to [`Service`] calls.

use crate::error::{ApiError, Json};
use crate::paths;
use crate::stream::{Progress, Streaming};
use crate::Shared;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use skillrag_ask::{AskOptions, ContextOptions};
use skillrag_store::hybrid::Mode;
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
}

pub async fn ask(State(shared): State<Shared>, Json(req): Json<AskRequest>) -> Result<Response, ApiError> {
    if let Some(s) = &req.skill {
        paths::skill_id(s)?;
    }
    let options = AskOptions { skill: req.skill, id: req.id };
    if req.stream {
        return ask_streamed(shared, req.query, options).await;
    }
    let (answer, cached) = shared.service.ask(req.query, options, Vec::new()).await?;
    let mut response = axum::Json(&*answer).into_response();
    response.headers_mut().insert("x-skillrag-cache", HeaderValue::from_static(if cached { "hit" } else { "miss" }));
    Ok(response)
}

/// `event: text` (`{"text": …}`) for each sentence as the LLM's answer passes the citation check,
/// then `event: answer` with the whole answer (docs/design.md §6), or `event: error`.
async fn ask_streamed(shared: Shared, query: String, options: AskOptions) -> Result<Response, ApiError> {
    let streaming = Streaming::start(shared.service.clone(), query, options, Vec::new()).await?;
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
}

pub async fn search(State(shared): State<Shared>, Json(req): Json<SearchRequest>) -> Result<Response, ApiError> {
    for s in &req.skills {
        paths::skill_id(s)?;
    }
    if req.k.is_some_and(|k| !(1..=100).contains(&k)) {
        return Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "`k` must be between 1 and 100"));
    }
    let mode = match req.mode.as_deref() {
        None => Mode::Hybrid,
        Some(m) => Mode::parse(m).ok_or_else(|| {
            ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, format!("unknown mode `{m}` (hybrid, bm25 or dense)"))
        })?,
    };
    let result = shared.service.search(req.query, req.skills, req.k, mode).await?;
    Ok(axum::Json(result).into_response())
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
    Ok(axum::Json(json!({"skills": shared.service.skills().await?})).into_response())
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
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Result<Response, ApiError> {
    let req: IndexRequest = if body.iter().all(u8::is_ascii_whitespace) {
        IndexRequest::default()
    } else {
        crate::origin::require_json(&headers)?;
        crate::error::parse_json(&body)?
    };
    for s in &req.skills {
        paths::skill_id(s)?;
    }
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
    let gaps = shared.service.gaps(q.skill, q.limit.unwrap_or(100)).await?;
    Ok(axum::Json(json!({"gaps": gaps})).into_response())
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
