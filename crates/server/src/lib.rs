//! `skillrag serve`: the HTTP API of docs/design.md §6, an OpenAI-compatible chat endpoint with
//! citations, MCP (streamable HTTP here, stdio via [`mcp::serve_stdio`]) and the web page, all
//! over one [`Service`] that owns the live assistant.

mod api;
mod error;
mod guard;
pub mod mcp;
mod metrics;
mod openai;
mod paths;
mod queue;
pub mod service;
mod stream;
mod web;

pub use error::ApiError;
pub use service::{Limits, Service};

use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, Method};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
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
    /// How often to look for index generations published by another process.
    pub reload_every: Duration,
}

impl ServeOptions {
    /// Binding beyond loopback without a token would expose the knowledge base to the network.
    pub fn check(&self) -> Result<(), String> {
        if !self.addr.ip().is_loopback() && self.token.is_none() {
            return Err(format!(
                "refusing to listen on {} without a token: set SKILLRAG_API_TOKEN (clients then send \
                 `Authorization: Bearer <token>`), or bind to 127.0.0.1",
                self.addr
            ));
        }
        if self.token.as_deref().is_some_and(|t| t.len() < 16) {
            return Err("SKILLRAG_API_TOKEN is shorter than 16 characters; use a long random token".into());
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
}

pub(crate) fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// The whole HTTP surface. `mcp_shutdown` ends open MCP sessions on shutdown.
pub fn router(shared: Shared, mcp_shutdown: CancellationToken) -> Router {
    let mcp_service = shared.service.clone();
    let mut mcp_config = StreamableHttpServerConfig::default().with_cancellation_token(mcp_shutdown);
    if !shared.options.addr.ip().is_loopback() {
        // Exposed on purpose, behind the bearer token: accept whatever Host the operator's
        // clients use (the loopback-only default guards against DNS rebinding).
        mcp_config = mcp_config.disable_allowed_hosts();
    }
    let mcp = StreamableHttpService::new(
        move || Ok(mcp::SkillragMcp::new(mcp_service.clone())),
        LocalSessionManager::default().into(),
        mcp_config,
    );
    let mut app = Router::new()
        .route("/", get(web::index))
        .route("/assets/app.js", get(web::app_js))
        .route("/assets/markdown-it.min.js", get(web::markdown_it_js))
        .route("/assets/app.css", get(web::app_css))
        .route("/healthz", get(api::healthz))
        .route("/metrics", get(api::metrics))
        .route("/v1/ask", post(api::ask))
        .route("/v1/search", post(api::search))
        .route("/v1/route", post(api::route))
        .route("/v1/skills", get(api::skills))
        .route("/v1/skills/{skill}/sources", get(api::sources))
        .route("/v1/skills/{skill}/sources/{*source}", get(api::source))
        .route("/v1/index", post(api::start_index).get(api::index_job))
        .route("/v1/gaps", get(api::gaps))
        .route("/v1/models", get(openai::models))
        .route("/v1/chat/completions", post(openai::chat_completions))
        .nest_service("/mcp", mcp)
        .fallback(api::not_found)
        .method_not_allowed_fallback(api::method_not_allowed)
        .layer(DefaultBodyLimit::max(shared.options.max_body))
        // Outermost last: metrics see every response; the rate limit also counts requests that
        // fail authentication, so guessing tokens is throttled too.
        .layer(axum::middleware::from_fn_with_state(shared.clone(), guard::require_token))
        .layer(axum::middleware::from_fn_with_state(shared.clone(), guard::rate_limit))
        .layer(axum::middleware::from_fn_with_state(shared.clone(), guard::record_metrics));
    if !shared.options.cors_origins.is_empty() {
        let origins: Vec<HeaderValue> =
            shared.options.cors_origins.iter().filter_map(|o| HeaderValue::from_str(o).ok()).collect();
        app = app.layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::list(origins))
                .allow_methods([Method::GET, Method::POST])
                .allow_headers([axum::http::header::AUTHORIZATION, axum::http::header::CONTENT_TYPE]),
        );
    }
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
    let shared =
        Shared { service: service.clone(), options: Arc::new(options.clone()), rate_limit: rate_limit.clone() };
    let mcp_shutdown = CancellationToken::new();
    let app = router(shared, mcp_shutdown.clone());

    let watcher = tokio::spawn(service.clone().watch_generations(options.reload_every));
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
    // Small JSON answers and stream chunks go out at once instead of waiting on delayed ACKs.
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let result = axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(async move {
            shutdown.await;
            mcp_shutdown.cancel();
        })
        .await;
    watcher.abort();
    janitor.abort();
    result
}
