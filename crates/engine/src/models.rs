//! The optional remote embedding model and the reranker, as configured: building their
//! clients from `[embed]` / `[rerank]`, and finding a remote model's dimension.

use crate::config::Config;
use crate::{EngineError, ModelIdentity, Project};
use skillrag_embed::{Embedder, HttpConfig, OpenAiEmbedConfig, OpenAiEmbedder};
use skillrag_rerank::{CrossEncoder, HttpRerankConfig, HttpReranker, RerankApi, Reranker};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The embeddings API key's environment variable (never read from a file).
pub const EMBED_API_KEY_VAR: &str = "SKILLRAG_EMBED_API_KEY";
/// The rerank API key's environment variable (never read from a file).
pub const RERANK_API_KEY_VAR: &str = "SKILLRAG_RERANK_API_KEY";

fn api_key(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|k| !k.trim().is_empty())
}

/// The embeddings API client settings, when `[embed] base_url` is set.
pub(crate) fn remote_embed_config(config: &Config) -> Option<OpenAiEmbedConfig> {
    let e = &config.embed;
    if e.base_url.trim().is_empty() {
        return None;
    }
    let mut c = OpenAiEmbedConfig::new(&e.base_url, &e.model);
    c.batch = e.batch.max(1);
    c.query_prefix = e.query_prefix.clone().unwrap_or_default();
    c.passage_prefix = e.passage_prefix.clone().unwrap_or_default();
    c.query_input_type = e.query_input_type.clone().unwrap_or_default();
    c.passage_input_type = e.passage_input_type.clone().unwrap_or_default();
    c.http = HttpConfig {
        timeout: Duration::from_secs(e.timeout_secs.max(1)),
        retries: e.retries,
        api_key: api_key(EMBED_API_KEY_VAR),
        ..HttpConfig::default()
    };
    Some(c)
}

/// Where the dimensions asked of embedding servers are remembered, by model id.
fn dims_file(project: &Project) -> PathBuf {
    project.state_dir().join("cache/embed-dims.json")
}

fn remembered_dim(project: &Project, id: &str) -> Option<usize> {
    let text = std::fs::read_to_string(dims_file(project)).ok()?;
    let dims: BTreeMap<String, usize> = serde_json::from_str(&text).ok()?;
    dims.get(id).copied().filter(|&d| d > 0)
}

fn remember_dim(project: &Project, id: &str, dim: usize) {
    let path = dims_file(project);
    let mut dims: BTreeMap<String, usize> =
        std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
    dims.insert(id.to_string(), dim);
    // Best effort: without it, the next start asks the server again.
    if let (Some(dir), Ok(text)) = (path.parent(), serde_json::to_string_pretty(&dims)) {
        let _ = std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, text));
    }
}

/// The identity of the remote embedding model: its id is known from the settings; its dimension
/// from `[embed] dim`, else from an earlier answer of the same server and model, else from one
/// probe request now (whose client is returned, ready to use).
pub(crate) fn identify_remote(
    project: &Project,
    config: OpenAiEmbedConfig,
) -> Result<(ModelIdentity, Option<Arc<dyn Embedder>>), EngineError> {
    if config.model.is_empty() || config.model.eq_ignore_ascii_case("none") {
        return Err(EngineError::Invalid(format!(
            "[embed] base_url = {} needs [embed] model (SKILLRAG_EMBED_MODEL): the model name the API serves",
            config.base_url
        )));
    }
    let id = config.model_id();
    let configured = project.config.embed.dim;
    let known = if configured > 0 { Some(configured) } else { remembered_dim(project, &id) };
    if let Some(dim) = known {
        return Ok((ModelIdentity { id, dim, path: PathBuf::new() }, None));
    }
    let embedder = OpenAiEmbedder::new(config, None).map_err(|e| {
        EngineError::Invalid(format!(
            "embedding model: {e} (the vector size is asked of the server once and remembered; set [embed] dim / \
             SKILLRAG_EMBED_DIM to open without asking)"
        ))
    })?;
    let dim = embedder.dim();
    remember_dim(project, &id, dim);
    Ok((ModelIdentity { id, dim, path: PathBuf::new() }, Some(Arc::new(embedder))))
}

/// Checks the `[rerank]` settings without loading anything (bad settings are errors at open).
pub(crate) fn check_rerank(config: &Config, root: &Path) -> Result<(), EngineError> {
    let r = &config.rerank;
    if !r.url.trim().is_empty() {
        if RerankApi::parse(&r.api).is_none() {
            return Err(EngineError::Invalid(format!(
                "[rerank] api = `{}` is not supported: use `tei` or `jina` (SKILLRAG_RERANK_API)",
                r.api
            )));
        }
        skillrag_http::check_url(&r.url, "[rerank]").map_err(|e| EngineError::Invalid(e.to_string()))?;
    } else if let Some(path) = config.rerank_model_path(root) {
        if !path.join("config.json").is_file() {
            return Err(EngineError::Invalid(format!(
                "reranker model folder {}: no config.json (set [rerank] model / SKILLRAG_RERANK_MODEL to a cross-encoder folder)",
                path.display()
            )));
        }
    }
    if (!r.url.trim().is_empty() || config.rerank_model_path(root).is_some()) && r.candidates == 0 {
        return Err(EngineError::Invalid("[rerank] candidates must be at least 1".into()));
    }
    Ok(())
}

/// Opens the configured reranker; `None` when none is configured.
pub(crate) fn open_reranker(config: &Config, root: &Path) -> Result<Option<Arc<dyn Reranker>>, String> {
    let r = &config.rerank;
    if !r.url.trim().is_empty() {
        let api = RerankApi::parse(&r.api).ok_or_else(|| format!("[rerank] api = `{}` is not supported", r.api))?;
        let mut c = HttpRerankConfig::new(&r.url, api);
        c.model = r.model.trim().to_string();
        c.http = HttpConfig {
            timeout: Duration::from_secs(r.timeout_secs.max(1)),
            retries: r.retries,
            api_key: api_key(RERANK_API_KEY_VAR),
            ..HttpConfig::default()
        };
        return HttpReranker::new(c).map(|r| Some(Arc::new(r) as Arc<dyn Reranker>)).map_err(|e| e.to_string());
    }
    match config.rerank_model_path(root) {
        None => Ok(None),
        Some(path) => {
            CrossEncoder::open(&path).map(|r| Some(Arc::new(r) as Arc<dyn Reranker>)).map_err(|e| e.to_string())
        }
    }
}
