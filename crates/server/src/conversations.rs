//! Saved conversations (`/v1/conversations…`) and feedback on answers (`POST /v1/feedback`):
//! handlers only translate HTTP to the [`Service`](crate::Service)'s conversation store and
//! feedback log.

use crate::error::{ApiError, Json, OptionalJson};
use crate::service::{blocking as run, history_error};
use crate::Shared;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use skillrag_ask::{Judgement, Rating};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct CreateRequest {
    #[serde(default)]
    pub title: Option<String>,
}

/// Starts a conversation; its id goes with each question (`POST /v1/ask` `conversation_id`).
/// The body is optional.
pub async fn create(
    State(shared): State<Shared>,
    OptionalJson(req): OptionalJson<CreateRequest>,
) -> Result<Response, ApiError> {
    let service = shared.service.clone();
    let conversation = run(move || service.conversations.create(req.title.as_deref()).map_err(history_error)).await?;
    Ok((StatusCode::CREATED, axum::Json(json!({"conversation": conversation}))).into_response())
}

pub async fn list(State(shared): State<Shared>) -> Result<Response, ApiError> {
    let service = shared.service.clone();
    let conversations = run(move || service.conversations.list().map_err(history_error)).await?;
    Ok(axum::Json(json!({"conversations": conversations})).into_response())
}

pub async fn get(State(shared): State<Shared>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let service = shared.service.clone();
    let conversation = run(move || service.conversations.get(&id).map_err(history_error)).await?;
    Ok(axum::Json(json!({"conversation": conversation})).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RenameRequest {
    pub title: String,
}

pub async fn rename(
    State(shared): State<Shared>,
    Path(id): Path<String>,
    Json(req): Json<RenameRequest>,
) -> Result<Response, ApiError> {
    if req.title.trim().is_empty() {
        return Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "`title` is empty"));
    }
    let service = shared.service.clone();
    let conversation = run(move || service.conversations.rename(&id, &req.title).map_err(history_error)).await?;
    Ok(axum::Json(json!({"conversation": conversation.summary()})).into_response())
}

pub async fn delete(State(shared): State<Shared>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let service = shared.service.clone();
    run(move || service.conversations.delete(&id).map_err(history_error)).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedbackRequest {
    #[serde(default)]
    pub query: String,
    #[serde(default)]
    pub answer_id: Option<String>,
    pub rating: String,
    /// The skill that should have answered (a misroute).
    #[serde(default)]
    pub skill: Option<String>,
    /// No skill covers the question (it should have been refused as out of scope).
    #[serde(default)]
    pub no_skill: bool,
    #[serde(default)]
    pub comment: Option<String>,
    /// The conversation the answer was given in, to find it there when the server no longer
    /// holds it in memory.
    #[serde(default)]
    pub conversation_id: Option<String>,
}

/// Longest `answer_id` taken: the server's own are far shorter.
const MAX_ANSWER_ID: usize = 200;

pub async fn feedback(State(shared): State<Shared>, Json(req): Json<FeedbackRequest>) -> Result<Response, ApiError> {
    let rating = Rating::parse(&req.rating).ok_or_else(|| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("`rating` must be \"up\" or \"down\", not `{}`", req.rating),
        )
    })?;
    if let Some(s) = &req.skill {
        crate::paths::skill_id(s)?;
    }
    if req.query.chars().count() > 4000 {
        return Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "`query` is longer than 4000 characters"));
    }
    // Both are stored with the judgement: bounded like `query`.
    if req.answer_id.as_ref().is_some_and(|id| id.chars().count() > MAX_ANSWER_ID) {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("`answer_id` is longer than {MAX_ANSWER_ID} characters"),
        ));
    }
    if req.comment.as_ref().is_some_and(|c| c.chars().count() > 4000) {
        return Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "`comment` is longer than 4000 characters"));
    }
    if req.no_skill && req.skill.is_some() {
        return Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "`skill` and `no_skill` contradict each other"));
    }
    let judgement = Judgement {
        query: req.query,
        answer_id: req.answer_id,
        skill: req.skill,
        no_skill: req.no_skill,
        comment: req.comment,
    };
    let record = shared.service.feedback(judgement, rating, req.conversation_id).await?;
    Ok((StatusCode::CREATED, axum::Json(json!({"feedback": record}))).into_response())
}
