//! Request guards, outermost first: metrics, per-client rate limit, bearer-token auth, and the
//! deadline on reading a request body. (Host and Origin checks are in [`crate::origin`].)

use crate::error::ApiError;
use crate::Shared;
use axum::body::Body;
use axum::extract::{ConnectInfo, MatchedPath, Request, State};
use axum::http::header::AUTHORIZATION;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::time::Instant;

/// Paths reachable without the token: liveness, and the web page's static files (the page
/// asks for the token itself).
fn is_public(path: &str) -> bool {
    path == "/healthz" || path == "/" || path.starts_with("/assets/")
}

pub async fn record_metrics(State(shared): State<Shared>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = req.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str()).to_string();
    let method = req.method().to_string();
    let response = next.run(req).await;
    shared.service.metrics.request(&route, &method, response.status().as_u16(), started.elapsed().as_secs_f64());
    response
}

pub async fn require_token(State(shared): State<Shared>, req: Request, next: Next) -> Response {
    let Some(expected) = &shared.options.token else { return next.run(req).await };
    if is_public(req.uri().path()) {
        return next.run(req).await;
    }
    let given = req
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if constant_time_eq(given.as_bytes(), expected.as_bytes()) {
        next.run(req).await
    } else {
        let mut r = ApiError::unauthorized("missing or wrong bearer token (Authorization: Bearer $SKILLRAG_API_TOKEN)")
            .into_response();
        r.headers_mut().insert("www-authenticate", axum::http::HeaderValue::from_static("Bearer"));
        r
    }
}

/// Compares without an early exit, so response timing does not reveal how much of a guessed
/// token was right.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = a.len() ^ b.len();
    for (i, x) in a.iter().enumerate() {
        diff |= usize::from(x ^ b.get(i).copied().unwrap_or(0));
    }
    diff == 0
}

/// Requests per minute per client address.
pub struct RateLimit {
    limiter: DefaultKeyedRateLimiter<IpAddr>,
}

impl RateLimit {
    pub fn per_minute(n: u32) -> Option<RateLimit> {
        let n = NonZeroU32::new(n)?;
        Some(RateLimit { limiter: RateLimiter::keyed(Quota::per_minute(n)) })
    }

    /// Forgets clients that have been quiet long enough to be back at a full allowance.
    pub fn forget_idle(&self) {
        self.limiter.retain_recent();
    }
}

pub async fn rate_limit(State(shared): State<Shared>, req: Request, next: Next) -> Response {
    let Some(limit) = &shared.rate_limit else { return next.run(req).await };
    if is_public(req.uri().path()) {
        return next.run(req).await;
    }
    let Some(ConnectInfo(addr)) = req.extensions().get::<ConnectInfo<SocketAddr>>().copied() else {
        return next.run(req).await;
    };
    match limit.limiter.check_key(&addr.ip()) {
        Ok(()) => next.run(req).await,
        Err(not_until) => {
            let wait = not_until.wait_time_from(DefaultClock::default().now());
            ApiError::rate_limited(wait.as_secs().max(1)).into_response()
        }
    }
}

/// Reads the whole body before any handler runs, within `[serve] body_timeout_secs` in total
/// and `max_body` in size, so a client trickling bytes cannot hold a worker or a connection
/// slot for long (408), and every route, `/mcp` included, has the same size limit (413) but
/// document uploads (when writes are allowed), which stream to disk within their own size
/// limit (`max_upload`) and the same time, both enforced by their handler.
/// Bodies here are small JSON documents.
/// `POST /v1/skills/{skill}/documents`.
fn is_upload(method: &axum::http::Method, path: &str) -> bool {
    let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    method == axum::http::Method::POST && matches!(parts.as_slice(), ["", "v1", "skills", _, "documents"])
}

pub async fn read_body(State(shared): State<Shared>, req: Request, next: Next) -> Response {
    let (parts, body) = req.into_parts();
    // An upload streams to disk after its checks (a re-index running, a name that exists), so it
    // is not held here: the route's `DefaultBodyLimit` bounds its size and the handler its time.
    if shared.options.allow_writes && is_upload(&parts.method, parts.uri.path()) {
        return next.run(Request::from_parts(parts, body)).await;
    }
    let limit = shared.options.max_body;
    let limited = Limited::new(body, limit);
    let bytes = match tokio::time::timeout(shared.options.body_timeout, limited.collect()).await {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            return ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, "the request body is larger than the server accepts")
                .into_response();
        }
        Ok(Err(e)) => return ApiError::bad_request(format!("could not read the request body: {e}")).into_response(),
        Err(_) => {
            let mut r = ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                format!("the request body did not arrive within {} s", shared.options.body_timeout.as_secs()),
            )
            .into_response();
            // The rest of a late body may still be on its way: do not read it as the next request.
            r.headers_mut().insert(axum::http::header::CONNECTION, axum::http::HeaderValue::from_static("close"));
            return r;
        }
    };
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}
