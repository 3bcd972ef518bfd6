//! `skillrag serve`: the HTTP API of docs/design.md §6, an OpenAI-compatible chat endpoint with
//! citations, MCP (streamable HTTP here, stdio via [`mcp::serve_stdio`]) and the web page, all
//! over one [`Service`] that owns the live assistant.

#![warn(clippy::too_many_lines)]

mod api;
mod chunks;
mod config;
mod conversations;
mod documents;
mod drafts;
mod error;
mod guard;
mod import;
mod listen;
pub mod mcp;
mod metrics;
mod openai;
mod origin;
mod paths;
mod queue;
pub mod service;
mod skills;
mod stream;
mod token;
mod web;

pub use config::ServeConfig;
pub use error::ApiError;
pub use service::{Limits, Service};
pub use token::WeakToken;

// For `fuzz/` (issue 24) only: the JSON request bodies and the function that parses them.
#[doc(hidden)]
pub use api::{AskRequest, IndexRequest, RouteRequest, SearchRequest};
#[doc(hidden)]
pub use error::parse_json;
#[doc(hidden)]
pub use openai::ChatRequest;

use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, Method};
use axum::routing::{delete, get, post};
use axum::Router;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// How `serve` listens and what it lets through.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub addr: SocketAddr,
    /// Bearer token every request (but `/healthz` and the page's files) must carry.
    pub token: Option<String>,
    /// Largest request body accepted, in bytes.
    pub max_body: usize,
    /// Requests per minute per client address; 0 = unlimited.
    pub rate_limit: u32,
    /// Browser origins allowed to call the API cross-origin; empty = CORS off.
    pub cors_origins: Vec<String>,
    /// Host names requests may address besides loopback and the bound address.
    pub allowed_hosts: Vec<String>,
    /// Deadline for a request head (the first on a connection and each next one).
    pub header_timeout: Duration,
    /// Deadline for a whole request body.
    pub body_timeout: Duration,
    /// Connections one client address may hold open at once; 0 = no cap.
    pub connections_per_client: usize,
    /// How often to look for index generations published by another process.
    pub reload_every: Duration,
    /// Uploading and deleting knowledge documents through the API (`--allow-writes`).
    pub allow_writes: bool,
    /// Largest document upload request, in bytes.
    pub max_upload: usize,
}

impl ServeOptions {
    /// Defaults for everything but the address (as `[serve]` has them).
    pub fn new(addr: SocketAddr) -> ServeOptions {
        ServeOptions {
            addr,
            token: None,
            max_body: 256 * 1024,
            rate_limit: 0,
            cors_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            connections_per_client: 128,
            reload_every: Duration::from_secs(2),
            allow_writes: false,
            max_upload: 64 * 1024 * 1024,
        }
    }

    /// Binding beyond loopback without a token would expose the knowledge base to the network;
    /// a guessable token would too.
    pub fn check(&self) -> Result<(), String> {
        if !self.addr.ip().is_loopback() && self.token.is_none() {
            return Err(format!(
                "refusing to listen on {} without a token: set SKILLRAG_API_TOKEN (clients then send \
                 `Authorization: Bearer <token>`), or bind to 127.0.0.1",
                self.addr
            ));
        }
        if let Some(t) = &self.token {
            token::check(t).map_err(|weak| {
                format!(
                    "SKILLRAG_API_TOKEN is too weak: {weak}. Use at least {} random printable characters \
                     without whitespace, e.g. `export SKILLRAG_API_TOKEN=$(openssl rand -hex 32)`",
                    token::MIN_LEN
                )
            })?;
        }
        if self.header_timeout.is_zero() || self.body_timeout.is_zero() {
            return Err("[serve] header_timeout_secs and body_timeout_secs must be at least 1".into());
        }
        Ok(())
    }
}

/// What every handler can reach.
#[derive(Clone)]
pub struct Shared {
    pub service: Arc<Service>,
    pub options: Arc<ServeOptions>,
    rate_limit: Option<Arc<guard::RateLimit>>,
    hosts: Arc<origin::HostPolicy>,
}

pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The whole HTTP surface. `mcp_shutdown` ends open MCP sessions on shutdown.
pub fn router(shared: Shared, mcp_shutdown: CancellationToken) -> Router {
    let mcp = mcp::http_service(shared.service.clone(), mcp_shutdown);
    let mut app = Router::new()
        .merge(web::routes())
        .route("/healthz", get(api::healthz))
        .route("/metrics", get(api::metrics))
        .route("/v1/ask", post(api::ask))
        .route("/v1/search", post(api::search))
        .route("/v1/route", post(api::route))
        .route("/v1/context", post(api::context))
        .route("/v1/skills", get(api::skills).post(api::create_skill))
        .route("/v1/skills/{skill}", get(api::skill).patch(api::patch_skill).delete(api::delete_skill))
        .route("/v1/skills/{skill}/skill-md", get(api::skill_md).put(api::put_skill_md))
        .route("/v1/skills/{skill}/chunks/{chunk}", axum::routing::patch(api::patch_chunk))
        .route("/v1/skills/{skill}/sources", get(api::sources))
        .route("/v1/skills/{skill}/sources/{*source}", get(api::source))
        .route("/v1/skills/{skill}/pictures/{*source}", get(api::picture))
        .route(
            "/v1/skills/{skill}/documents",
            get(api::documents)
                .post(api::upload_documents)
                .delete(api::delete_documents)
                .layer(DefaultBodyLimit::max(shared.options.max_upload)),
        )
        .route("/v1/skills/{skill}/documents/{name}", delete(api::delete_document))
        .route("/v1/skills/{skill}/import", post(api::import_document))
        .route("/v1/skills/{skill}/documents/{name}/chunks", get(api::document_chunks))
        .route("/v1/skills/{skill}/documents/{name}/preset", axum::routing::put(api::put_document_preset))
        .route("/v1/skills/{skill}/documents/{name}/metadata", axum::routing::put(api::put_document_metadata))
        .route("/v1/conversations", get(conversations::list).post(conversations::create))
        .route(
            "/v1/conversations/{id}",
            get(conversations::get).patch(conversations::rename).delete(conversations::delete),
        )
        .route("/v1/feedback", post(conversations::feedback))
        .route("/v1/index", post(api::start_index).get(api::index_job))
        .route("/v1/gaps", get(api::gaps))
        .route("/v1/gaps/{id}/draft", post(api::draft_gap))
        .route("/v1/gaps/{id}/resolve", post(api::resolve_gap))
        .route("/v1/drafts/{id}/approve", post(api::approve_draft))
        .route("/v1/models", get(openai::models))
        .route("/v1/models/{*id}", get(openai::model))
        .route("/v1/chat/completions", post(openai::chat_completions))
        .nest_service("/mcp", mcp)
        .fallback(api::not_found)
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(DefaultBodyLimit::max(shared.options.max_body))
        // Innermost first. The body is read only once the request is authenticated; the rate
        // limit also counts requests that fail authentication, so guessing tokens is throttled.
        .layer(axum::middleware::from_fn_with_state(shared.clone(), guard::read_body))
        .layer(axum::middleware::from_fn_with_state(shared.clone(), guard::require_token))
        .layer(axum::middleware::from_fn_with_state(shared.clone(), guard::rate_limit))
        .layer(axum::middleware::from_fn_with_state(shared.clone(), origin::check_origin));
    if !shared.options.cors_origins.is_empty() {
        let origins: Vec<HeaderValue> =
            shared.options.cors_origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()).collect();
        app = app.layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::list(origins))
                .allow_methods([Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE])
                .allow_headers([axum::http::header::AUTHORIZATION, axum::http::header::CONTENT_TYPE]),
        );
    }
    // Outermost: the Host check covers CORS preflights too, and metrics see every response.
    app = app
        .layer(axum::middleware::from_fn_with_state(shared.clone(), origin::check_host))
        .layer(axum::middleware::from_fn_with_state(shared.clone(), guard::record_metrics));
    app.with_state(shared)
}

/// Serves until `shutdown` resolves, then stops accepting, lets requests in flight finish and
/// closes MCP sessions. `ready` receives the bound address (port 0 picks a free one).
pub async fn serve(
    service: Arc<Service>,
    options: ServeOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    options.check().map_err(std::io::Error::other)?;
    let listener = tokio::net::TcpListener::bind(options.addr).await?;
    let bound = listener.local_addr()?;
    let rate_limit = guard::RateLimit::per_minute(options.rate_limit).map(Arc::new);
    let hosts = Arc::new(origin::HostPolicy::new(bound, &options.allowed_hosts, options.token.is_some()));
    let shared =
        Shared { service: service.clone(), options: Arc::new(options.clone()), rate_limit: rate_limit.clone(), hosts };
    let mcp_shutdown = CancellationToken::new();
    let app = router(shared, mcp_shutdown.clone());

    let watcher = tokio::spawn(service.clone().watch_generations(options.reload_every));
    // Uploads or deletes accepted by a run that stopped before indexing them are indexed now.
    service.resume_pending_index();
    let janitor = tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(60));
        loop {
            tick.tick().await;
            if let Some(limit) = &rate_limit {
                limit.forget_idle();
            }
        }
    });
    ready(bound);
    let limits =
        listen::ConnectionLimits { header_timeout: options.header_timeout, per_client: options.connections_per_client };
    let result = listen::serve(listener, app, limits, async move {
        shutdown.await;
        mcp_shutdown.cancel();
    })
    .await;
    watcher.abort();
    janitor.abort();
    result
}
