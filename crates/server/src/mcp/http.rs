//! MCP over streamable HTTP (`/mcp`): rmcp's transport, with a cap on live sessions and every
//! error answered as JSON-RPC.
//!
//! rmcp answers a body that is not a request with HTTP 415 and plain text, a request whose
//! params do not fit its method with "method not found", session faults (no session id, an
//! unknown one) with plain text, and `DELETE` with 202, which the official Python SDK reports as
//! a failed termination. This layer reads the body first, as stdio does (`jsonrpc::classify`),
//! turns rmcp's plain-text errors into JSON-RPC error objects with the request's id, and answers
//! `DELETE` with 204. Sessions live in rmcp's in-memory manager, capped at [`MAX_SESSIONS`]:
//! each holds a worker task and its buffers, so without a cap a loop of `initialize` calls grows
//! the server without bound until sessions expire after 5 idle minutes.

use super::jsonrpc::{classify, readable_id, Incoming};
use super::SkillragMcp;
use crate::service::Service;
use axum::body::{to_bytes, Body};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::Router;
use futures_util::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ErrorCode, ErrorData, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::{EventStore, ServerSseMessage, SessionId, SessionManager};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// The most MCP sessions alive at once. An agent host holds one per client it runs, so this is
/// far above real use; a new session beyond it ends the one idle longest.
pub const MAX_SESSIONS: usize = 256;

/// The session header of the streamable HTTP transport.
const SESSION_HEADER: &str = "mcp-session-id";

/// JSON-RPC's "server error" range, as the MCP SDKs use it: the session is not known (-32001),
/// and any other fault of the HTTP request (-32000).
const SESSION_NOT_FOUND: ErrorCode = ErrorCode(-32001);
const BAD_HTTP_REQUEST: ErrorCode = ErrorCode(-32000);

/// `/mcp`: MCP over streamable HTTP, its sessions ended when `shutdown` is cancelled.
pub fn http_service(service: Arc<Service>, shutdown: CancellationToken) -> Router {
    let sessions = Arc::new(CappedSessions::new(MAX_SESSIONS));
    // Hosts are checked for every route at once (origin::check_host), from one allow-list.
    let config = StreamableHttpServerConfig::default().with_cancellation_token(shutdown).disable_allowed_hosts();
    let mcp = StreamableHttpService::new(move || Ok(SkillragMcp::new(service.clone())), sessions.clone(), config);
    Router::new().fallback_service(mcp).layer(axum::middleware::from_fn_with_state(sessions, jsonrpc_errors))
}

/// A JSON-RPC message as an HTTP response.
fn json_rpc(status: StatusCode, message: &ServerJsonRpcMessage) -> Response {
    let body = serde_json::to_vec(message).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response()
}

fn error(status: StatusCode, code: ErrorCode, message: String, id: Option<RequestId>) -> Response {
    json_rpc(status, &ServerJsonRpcMessage::error(ErrorData::new(code, message, None), id))
}

fn is_json(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// Reads a POST's body before rmcp does and answers one it would misread; on the way back,
/// turns rmcp's plain-text errors into JSON-RPC and a session's termination into 204.
async fn jsonrpc_errors(State(sessions): State<Arc<CappedSessions>>, req: Request, next: Next) -> Response {
    let method = req.method().clone();
    let session = req.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(SessionId::from);
    let mut id = None;
    let req = if method == Method::POST {
        let (parts, body) = req.into_parts();
        // The guard has read the body already, under the server's size limit.
        let Ok(bytes) = to_bytes(body, usize::MAX).await else {
            return error(StatusCode::BAD_REQUEST, BAD_HTTP_REQUEST, "could not read the request body".into(), None);
        };
        // A body of another type is rmcp's to refuse (415), below.
        if is_json(&parts.headers) {
            if bytes.iter().all(u8::is_ascii_whitespace) {
                let message = "the body is empty: send one JSON-RPC message".to_string();
                return error(StatusCode::BAD_REQUEST, ErrorCode::PARSE_ERROR, message, None);
            }
            match classify(&bytes) {
                // A request that names its id but not its params right is answered like any
                // error of that request, so the client shows the reason; a body that is no
                // request at all is refused as HTTP 400, as the transport says.
                Incoming::Reject(answer) => {
                    let status = if is_invalid_params(&answer) { StatusCode::OK } else { StatusCode::BAD_REQUEST };
                    return json_rpc(status, &answer);
                }
                Incoming::Message(message) => id = request_id(&message),
                Incoming::Ignore => {}
            }
        }
        if id.is_none() {
            id = readable_id(&bytes);
        }
        // rmcp reads no byte-order mark; classify allows one.
        let bytes = bytes.strip_prefix("\u{feff}".as_bytes()).map_or(bytes.clone(), |rest| bytes.slice_ref(rest));
        Request::from_parts(parts, Body::from(bytes))
    } else {
        req
    };
    if method == Method::DELETE {
        if let Some(session) = &session {
            if !sessions.is_live(session) {
                return error(StatusCode::NOT_FOUND, SESSION_NOT_FOUND, format!("no session `{session}`"), None);
            }
        }
    }
    let response = next.run(req).await;
    if method == Method::DELETE && response.status() == StatusCode::ACCEPTED {
        // The Streamable HTTP clients expect 200 or 204 for a terminated session.
        return StatusCode::NO_CONTENT.into_response();
    }
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(response.headers()) {
        return response;
    }
    // rmcp's error texts are one short line.
    let text = match to_bytes(response.into_body(), 64 * 1024).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_string(),
        Err(_) => String::new(),
    };
    let text = if text.is_empty() { status.canonical_reason().unwrap_or("error").to_string() } else { text };
    let code = match status {
        StatusCode::NOT_FOUND => SESSION_NOT_FOUND,
        s if s.is_server_error() => ErrorCode::INTERNAL_ERROR,
        _ => BAD_HTTP_REQUEST,
    };
    error(status, code, text, id)
}

fn is_invalid_params(answer: &ServerJsonRpcMessage) -> bool {
    matches!(answer, ServerJsonRpcMessage::Error(e) if e.error.code == ErrorCode::INVALID_PARAMS)
}

fn request_id(message: &ClientJsonRpcMessage) -> Option<RequestId> {
    match message {
        ClientJsonRpcMessage::Request(r) => Some(r.id.clone()),
        _ => None,
    }
}

/// When a session was last used, and how many of its requests are being answered.
struct Use {
    last: Instant,
    in_flight: Arc<AtomicUsize>,
}

/// rmcp's in-memory session manager, holding at most `cap` sessions: a new one ends the
/// session idle longest (none of its requests in flight). When every session is busy the cap
/// is passed for a while: each busy session holds a connection, which the server bounds.
pub struct CappedSessions {
    inner: LocalSessionManager,
    cap: usize,
    live: Mutex<HashMap<SessionId, Use>>,
    /// One session created at a time, so concurrent `initialize` calls cannot all pass the cap.
    creating: tokio::sync::Mutex<()>,
}

impl CappedSessions {
    pub fn new(cap: usize) -> CappedSessions {
        CappedSessions {
            inner: LocalSessionManager::default(),
            cap,
            live: Mutex::new(HashMap::new()),
            creating: tokio::sync::Mutex::new(()),
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Use>> {
        self.live.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn is_live(&self, id: &SessionId) -> bool {
        self.live().contains_key(id)
    }

    /// Marks a session used now; returns its in-flight counter.
    fn touch(&self, id: &SessionId) -> Option<Arc<AtomicUsize>> {
        let mut live = self.live();
        let entry = live.get_mut(id)?;
        entry.last = Instant::now();
        Some(entry.in_flight.clone())
    }

    /// The session idle longest, when the cap is reached.
    fn to_evict(&self) -> Option<SessionId> {
        let live = self.live();
        if live.len() < self.cap {
            return None;
        }
        live.iter()
            .filter(|(_, u)| u.in_flight.load(Ordering::Relaxed) == 0)
            .min_by_key(|(_, u)| u.last)
            .map(|(id, _)| id.clone())
    }
}

/// Counts a request in flight until its response stream is dropped.
struct InFlight(Arc<AtomicUsize>);

impl InFlight {
    fn new(counter: Arc<AtomicUsize>) -> InFlight {
        counter.fetch_add(1, Ordering::Relaxed);
        InFlight(counter)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn counted<S: Stream<Item = ServerSseMessage>>(
    stream: S,
    counter: Option<Arc<AtomicUsize>>,
) -> impl Stream<Item = ServerSseMessage> {
    let guard = counter.map(InFlight::new);
    stream.map(move |m| {
        let _held = &guard;
        m
    })
}

impl SessionManager for CappedSessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _one_at_a_time = self.creating.lock().await;
        if let Some(oldest) = self.to_evict() {
            self.live().remove(&oldest);
            self.inner.close_session(&oldest).await?;
        }
        let (id, transport) = self.inner.create_session().await?;
        self.live().insert(id.clone(), Use { last: Instant::now(), in_flight: Arc::default() });
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let _in_flight = self.touch(id).map(InFlight::new);
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.is_live(id) && self.inner.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.live().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let counter = self.touch(id);
        Ok(counted(self.inner.create_stream(id, message).await?, counter))
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.touch(id);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        // The standalone stream stays open for the session's life: it is not a request in flight.
        self.touch(id);
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id);
        self.inner.resume(id, last_event_id).await
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}
