//! JSON errors with HTTP status codes: `{"error": {"code", "type", "message"}}` on every route,
//! including axum's own rejections (bad JSON, body too large), so clients parse one shape.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use skillrag_ask::AskError;
use skillrag_engine::EngineError;
use skillrag_store::StoreError;

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// Seconds for `Retry-After` (429, 503).
    pub retry_after: Option<u64>,
    /// What the client can act on beside the message (lint's `diagnostics` of a refused
    /// `SKILL.md`), each key added to the `error` object.
    pub details: Option<serde_json::Map<String, serde_json::Value>>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError { status, message: message.into(), retry_after: None, details: None }
    }
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
    pub fn not_found(message: impl Into<String>) -> ApiError {
        Self::new(StatusCode::NOT_FOUND, message)
    }
    pub fn conflict(message: impl Into<String>) -> ApiError {
        Self::new(StatusCode::CONFLICT, message)
    }
    pub fn unauthorized(message: impl Into<String>) -> ApiError {
        Self::new(StatusCode::UNAUTHORIZED, message)
    }
    pub fn forbidden(message: impl Into<String>) -> ApiError {
        Self::new(StatusCode::FORBIDDEN, message)
    }
    pub fn internal(message: impl Into<String>) -> ApiError {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
    pub fn unavailable(message: impl Into<String>, retry_after: u64) -> ApiError {
        ApiError { retry_after: Some(retry_after), ..Self::new(StatusCode::SERVICE_UNAVAILABLE, message) }
    }
    pub fn rate_limited(retry_after: u64) -> ApiError {
        ApiError {
            retry_after: Some(retry_after),
            ..Self::new(StatusCode::TOO_MANY_REQUESTS, "too many requests from this client; slow down")
        }
    }

    /// The error's `type`, stable for clients to match on.
    pub fn kind(&self) -> &'static str {
        match self.status {
            StatusCode::BAD_REQUEST => "bad_request",
            StatusCode::UNAUTHORIZED => "unauthorized",
            StatusCode::FORBIDDEN => "forbidden",
            StatusCode::REQUEST_TIMEOUT => "request_timeout",
            StatusCode::NOT_FOUND => "not_found",
            StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
            StatusCode::CONFLICT => "conflict",
            StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
            StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
            StatusCode::UNPROCESSABLE_ENTITY => "unprocessable",
            StatusCode::TOO_MANY_REQUESTS => "rate_limited",
            StatusCode::SERVICE_UNAVAILABLE => "unavailable",
            _ => "internal",
        }
    }

    /// The error with `key` set to `value` in its body.
    pub fn with_detail(mut self, key: &str, value: serde_json::Value) -> ApiError {
        self.details.get_or_insert_with(Default::default).insert(key.to_string(), value);
        self
    }

    /// `{"error": {"code", "type", "message"}}` (and its details), also sent as an SSE event when
    /// a stream fails.
    pub fn body(&self) -> serde_json::Value {
        let mut error = serde_json::json!({"code": self.status.as_u16(), "type": self.kind(), "message": self.message});
        if let (Some(details), Some(object)) = (&self.details, error.as_object_mut()) {
            for (key, value) in details {
                object.entry(key.clone()).or_insert_with(|| value.clone());
            }
        }
        serde_json::json!({ "error": error })
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> ApiError {
        let status = match &e {
            EngineError::UnknownSkill { .. } => StatusCode::NOT_FOUND,
            EngineError::NotIndexed(_) | EngineError::UnknownSource { .. } => StatusCode::NOT_FOUND,
            EngineError::Busy(_) | EngineError::DisabledSkill(_) => StatusCode::CONFLICT,
            EngineError::Settings(_) => StatusCode::BAD_REQUEST,
            // A model server that does not answer may come back; a client may retry.
            EngineError::ModelUnavailable(_) => return ApiError::unavailable(e.to_string(), 5),
            EngineError::Store(StoreError::ReadOnly(_) | StoreError::Locked(_)) => StatusCode::CONFLICT,
            EngineError::Store(StoreError::Unavailable(_)) => return ApiError::unavailable(e.to_string(), 5),
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.to_string())
    }
}

impl From<AskError> for ApiError {
    fn from(e: AskError) -> ApiError {
        match e {
            AskError::Engine(e) => e.into(),
            AskError::Empty | AskError::Budget { .. } => ApiError::bad_request(e.to_string()),
            AskError::Tune(e) => ApiError::internal(e.to_string()),
            AskError::Llm(e) => ApiError::internal(e.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        if let Some(seconds) = self.retry_after {
            if let Ok(v) = HeaderValue::from_str(&seconds.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, v);
            }
        }
        response
    }
}

/// A JSON body whose failures are [`ApiError`]s: 415 not declared `application/json` (a
/// cross-site form or `text/plain` POST is not an API call), 400 bad JSON, 413 too large, 422
/// wrong fields.
pub struct Json<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Json<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        require_json(req.headers())?;
        parse_json(&body_of(req, state).await?).map(Json)
    }
}

/// A JSON body that may be left out: an empty (or blank) body is `T::default()`; one that is
/// there must be declared JSON, as for [`Json`].
pub struct OptionalJson<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned + Default> FromRequest<S> for OptionalJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let headers = req.headers().clone();
        let body = body_of(req, state).await?;
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJson(T::default()));
        }
        require_json(&headers)?;
        parse_json(&body).map(OptionalJson)
    }
}

async fn body_of<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state).await.map_err(|rejection| {
        let status = rejection.status();
        let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "the request body is larger than the server accepts".to_string()
        } else {
            rejection.body_text()
        };
        ApiError::new(status, message)
    })
}

/// 400 for malformed JSON, 422 for JSON of the wrong shape.
pub fn parse_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    serde_json::from_slice(body).map_err(|e| {
        let status = if e.is_data() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::BAD_REQUEST };
        ApiError::new(status, format!("invalid request body: {e}"))
    })
}

/// Whether the request declares a JSON body (`application/json`, parameters such as `charset`
/// allowed). A cross-site page cannot send this type without a CORS preflight.
pub fn declares_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// 415 unless the body is declared as JSON.
pub fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    if declares_json(headers) {
        return Ok(());
    }
    let given = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("none");
    Err(ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        format!("send the body as JSON with `Content-Type: application/json` (got `{given}`)"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_application_json_declares_json() {
        let with = |v: &'static str| {
            let mut h = HeaderMap::new();
            h.insert(CONTENT_TYPE, HeaderValue::from_static(v));
            h
        };
        assert!(declares_json(&with("application/json")));
        assert!(declares_json(&with("Application/JSON; charset=utf-8")));
        for v in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "application/jsonx"] {
            assert!(!declares_json(&with(v)), "{v}");
        }
        assert!(!declares_json(&HeaderMap::new()));
        assert_eq!(require_json(&with("text/plain")).unwrap_err().status.as_u16(), 415);
    }
}
