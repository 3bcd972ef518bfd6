//! The one place that builds the backends a project configures: the store (`store`), the
//! embedding model (`[embed]`, local folder or API), the reranker (`[rerank]`, local
//! cross-encoder or API) and the LLM (`[llm]`, API or local GGUF). API keys come from the
//! environment only, never from a file.

use crate::config::{Config, ReaderModel};
use crate::{EngineError, ModelIdentity, Project};
use skillrag_embed::{
    installed_onnxruntime, onnx_model_id, BertEmbedder, EmbedError, Embedder, HttpConfig, ModelDir, OnnxEmbedder,
    OnnxFiles, OpenAiEmbedConfig, OpenAiEmbedder,
};
use skillrag_generate::gguf::{GgufGenerator, GgufOptions};
use skillrag_generate::openai::{OpenAiConfig, OpenAiGenerator};
use skillrag_generate::{GenerateError, Generator};
use skillrag_rerank::{CrossEncoder, HttpRerankConfig, HttpReranker, RerankApi, RerankError, Reranker};
use skillrag_store::{is_postgres_url, EmbeddedStore, PostgresStore, Store};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The embeddings API key's environment variable.
pub const EMBED_API_KEY_VAR: &str = "SKILLRAG_EMBED_API_KEY";
/// The rerank API key's environment variable.
pub const RERANK_API_KEY_VAR: &str = "SKILLRAG_RERANK_API_KEY";
/// The LLM API key's environment variable.
pub const LLM_API_KEY_VAR: &str = "SKILLRAG_LLM_API_KEY";
pub const READER_API_KEY_VAR: &str = "SKILLRAG_READER_API_KEY";

fn api_key(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|k| !k.trim().is_empty())
}

/// Opens the store that `spec` (the `store` setting) names: `embedded` (the project's
/// `.skillrag/index`) or a `postgres://` URL.
pub fn open_store(spec: &str, project: &Project) -> Result<Arc<dyn Store>, EngineError> {
    match spec.trim() {
        "embedded" | "" => Ok(Arc::new(EmbeddedStore::new(project.state_dir().join("index")))),
        url if is_postgres_url(url) => Ok(Arc::new(PostgresStore::connect(url)?)),
        other => Err(EngineError::Settings(format!(
            "store `{other}` is not supported: use `embedded` or a PostgreSQL URL (postgres://user@host:5432/db)"
        ))),
    }
}

/// The configured embedding model, identified without loading its weights.
pub(crate) struct IdentifiedModel {
    pub identity: ModelIdentity,
    /// The client a remote model's dimension was asked with, ready to use.
    pub probed: Option<Arc<dyn Embedder>>,
}

/// Identifies the configured embedding model; `None` when the project is lexical-only.
pub(crate) fn identify_embedder(project: &Project) -> Result<Option<IdentifiedModel>, EngineError> {
    if let Some(remote) = remote_embed_config(&project.config) {
        return identify_remote(project, remote).map(Some);
    }
    let Some(path) = project.config.embed_model_path(&project.root) else { return Ok(None) };
    let c = &project.config.embed;
    let dir = ModelDir::open(&path, c.query_prefix.as_deref(), c.passage_prefix.as_deref())?;
    let dim = dir
        .dim()
        .ok_or_else(|| EngineError::ModelUnavailable(format!("{}: config.json has no hidden_size", path.display())))?;
    let id = match local_backend(&project.config, &project.root, &path)? {
        LocalBackend::Candle => dir.model_id()?,
        LocalBackend::Onnx(files) => onnx_model_id(&dir, &files.graph)?,
    };
    Ok(Some(IdentifiedModel { identity: ModelIdentity { id, dim, path }, probed: None }))
}

/// Loads the embedding model `model` identifies (see [`identify_embedder`]).
pub(crate) fn open_embedder(project: &Project, model: &ModelIdentity) -> Result<Arc<dyn Embedder>, EmbedError> {
    if let Some(remote) = remote_embed_config(&project.config) {
        return Ok(Arc::new(OpenAiEmbedder::new(remote, Some(model.dim))?));
    }
    let c = &project.config.embed;
    let (query, passage) = (c.query_prefix.as_deref(), c.passage_prefix.as_deref());
    // Resolved once already when the model was identified; an error here is that same one.
    let backend =
        local_backend(&project.config, &project.root, &model.path).map_err(|e| EmbedError::Backend(e.to_string()))?;
    Ok(match backend {
        LocalBackend::Candle => Arc::new(BertEmbedder::open(&model.path, query, passage)?),
        LocalBackend::Onnx(files) => Arc::new(OnnxEmbedder::open(&model.path, &files, query, passage)?),
    })
}

/// What runs a local model's forward pass (`[embed] backend`).
enum LocalBackend {
    Candle,
    Onnx(OnnxFiles),
}

/// Resolves `[embed] backend`: `auto` takes ONNX Runtime when its library and the model's
/// graph are both on disk (same vectors, faster: bench/results/index-dev.md), candle otherwise.
fn local_backend(config: &Config, root: &Path, model: &Path) -> Result<LocalBackend, EngineError> {
    let c = &config.embed;
    let graph = model.join(c.onnx_graph.trim()); // an absolute path replaces the folder
    let runtime = if !c.onnx_runtime.trim().is_empty() {
        root.join(c.onnx_runtime.trim())
    } else if let Some(path) = std::env::var_os("ORT_DYLIB_PATH").filter(|p| !p.is_empty()) {
        PathBuf::from(path)
    } else {
        installed_onnxruntime().unwrap_or_else(|| PathBuf::from("libonnxruntime.so"))
    };
    let onnx = || LocalBackend::Onnx(OnnxFiles { graph: graph.clone(), runtime: runtime.clone() });
    match c.backend.trim() {
        "candle" => Ok(LocalBackend::Candle),
        "onnx" => Ok(onnx()),
        "auto" | "" if graph.is_file() && runtime.is_file() => Ok(onnx()),
        "auto" | "" => Ok(LocalBackend::Candle),
        other => Err(EngineError::Settings(format!(
            "[embed] backend = `{other}` is not supported: use auto, candle or onnx (SKILLRAG_EMBED_BACKEND)"
        ))),
    }
}

/// The embeddings API client settings, when `[embed] base_url` is set.
fn remote_embed_config(config: &Config) -> Option<OpenAiEmbedConfig> {
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
fn identify_remote(project: &Project, config: OpenAiEmbedConfig) -> Result<IdentifiedModel, EngineError> {
    if config.model.is_empty() || config.model.eq_ignore_ascii_case("none") {
        return Err(EngineError::Settings(format!(
            "[embed] base_url = {} needs [embed] model (SKILLRAG_EMBED_MODEL): the model name the API serves",
            config.base_url
        )));
    }
    let id = config.model_id();
    let configured = project.config.embed.dim;
    let known = if configured > 0 { Some(configured) } else { remembered_dim(project, &id) };
    if let Some(dim) = known {
        return Ok(IdentifiedModel { identity: ModelIdentity { id, dim, path: PathBuf::new() }, probed: None });
    }
    let embedder = OpenAiEmbedder::new(config, None).map_err(|e| {
        EngineError::ModelUnavailable(format!(
            "embedding model: {e} (the vector size is asked of the server once and remembered; set [embed] dim / \
             SKILLRAG_EMBED_DIM to open without asking)"
        ))
    })?;
    let dim = embedder.dim();
    remember_dim(project, &id, dim);
    Ok(IdentifiedModel { identity: ModelIdentity { id, dim, path: PathBuf::new() }, probed: Some(Arc::new(embedder)) })
}

/// Checks the `[rerank]` settings without loading anything (bad settings are errors at open;
/// a model folder that does not load is reported when the reranker is first used).
pub(crate) fn check_rerank(config: &Config, root: &Path) -> Result<(), EngineError> {
    let r = &config.rerank;
    if !r.base_url.trim().is_empty() {
        if RerankApi::parse(&r.api).is_none() {
            return Err(EngineError::Settings(format!(
                "[rerank] api = `{}` is not supported: use `tei` or `jina` (SKILLRAG_RERANK_API)",
                r.api
            )));
        }
        skillrag_http::check_url(&r.base_url, "[rerank]").map_err(|e| EngineError::Settings(e.to_string()))?;
    } else if let Some(path) = config.rerank_model_path(root) {
        CrossEncoder::FOLDER.check_config(&path).map_err(|e| EngineError::Settings(e.to_string()))?;
    }
    if (!r.base_url.trim().is_empty() || config.rerank_model_path(root).is_some()) && r.candidates == 0 {
        return Err(EngineError::Settings("[rerank] candidates must be at least 1".into()));
    }
    Ok(())
}

/// Opens the configured reranker; `None` when none is configured.
pub(crate) fn open_reranker(config: &Config, root: &Path) -> Result<Option<Arc<dyn Reranker>>, RerankError> {
    let r = &config.rerank;
    if !r.base_url.trim().is_empty() {
        let api = RerankApi::parse(&r.api)
            .ok_or_else(|| RerankError::Config(format!("[rerank] api = `{}` is not supported", r.api)))?;
        let mut c = HttpRerankConfig::new(&r.base_url, api);
        c.model = r.model.trim().to_string();
        c.http = HttpConfig {
            timeout: Duration::from_secs(r.timeout_secs.max(1)),
            retries: r.retries,
            api_key: api_key(RERANK_API_KEY_VAR),
            ..HttpConfig::default()
        };
        return Ok(Some(Arc::new(HttpReranker::new(c)?)));
    }
    match config.rerank_model_path(root) {
        None => Ok(None),
        Some(path) => Ok(Some(Arc::new(CrossEncoder::open(&path)?))),
    }
}

/// Opens the configured LLM (`[llm]`): an OpenAI-compatible API when `base_url` is set, else a
/// local GGUF file when `gguf` is set, else none (extractive answers).
pub fn open_generator(project: &Project) -> Result<Option<Arc<dyn Generator>>, GenerateError> {
    let config = &project.config.llm;
    let base_url = config.base_url.trim();
    if !base_url.is_empty() {
        let mut c = OpenAiConfig::new(base_url, config.model.trim());
        c.api_key = api_key(LLM_API_KEY_VAR);
        c.timeout = Duration::from_secs(config.timeout_secs.max(1));
        c.retries = config.retries;
        return Ok(Some(Arc::new(OpenAiGenerator::new(c)?)));
    }
    let Some(path) = project.config.llm_gguf_path(&project.root) else { return Ok(None) };
    let options = GgufOptions {
        // The faster requantized copy lives with the project's other caches.
        cache_dir: Some(project.state_dir().join("cache/llm")),
        seed: 0,
    };
    Ok(Some(Arc::new(GgufGenerator::open(&path, options)?)))
}

/// Opens the configured reader model (`[reader] model`): an OpenAI-compatible API root, or a GGUF
/// file run in-process; `None` when none is configured.
pub fn open_reader_model(project: &Project) -> Result<Option<Arc<dyn Generator>>, GenerateError> {
    let config = &project.config.reader;
    match project.config.reader_model(&project.root) {
        None => Ok(None),
        Some(ReaderModel::Api(url)) => {
            // llama.cpp's server has one model and takes any name.
            let mut c = OpenAiConfig::new(&url, "reader");
            c.api_key = api_key(READER_API_KEY_VAR);
            c.timeout = Duration::from_secs(config.timeout_secs.max(1));
            c.retries = 1;
            Ok(Some(Arc::new(OpenAiGenerator::new(c)?)))
        }
        Some(ReaderModel::Gguf(path)) => {
            let options = GgufOptions { cache_dir: Some(project.state_dir().join("cache/llm")), seed: 0 };
            Ok(Some(Arc::new(GgufGenerator::open(&path, options)?)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backend(config: &Config, model: &Path) -> Result<&'static str, EngineError> {
        Ok(match local_backend(config, model, model)? {
            LocalBackend::Candle => "candle",
            LocalBackend::Onnx(_) => "onnx",
        })
    }

    #[test]
    fn auto_takes_onnx_runtime_only_when_library_and_graph_are_there() {
        let tmp = tempfile::tempdir().unwrap();
        let runtime = tmp.path().join("libonnxruntime.so");
        let mut config = Config::default();
        config.embed.onnx_runtime = runtime.display().to_string();
        assert_eq!(backend(&config, tmp.path()).unwrap(), "candle", "neither is there");
        std::fs::write(&runtime, b"").unwrap();
        assert_eq!(backend(&config, tmp.path()).unwrap(), "candle", "no graph");
        std::fs::create_dir_all(tmp.path().join("onnx")).unwrap();
        std::fs::write(tmp.path().join("onnx/model.onnx"), b"").unwrap();
        assert_eq!(backend(&config, tmp.path()).unwrap(), "onnx");
        config.embed.backend = "candle".into();
        assert_eq!(backend(&config, tmp.path()).unwrap(), "candle", "asked for");
        std::fs::remove_file(&runtime).unwrap();
        config.embed.backend = "onnx".into();
        assert_eq!(backend(&config, tmp.path()).unwrap(), "onnx", "asked for: opening it says what is missing");
        config.embed.backend = "tensorflow".into();
        let e = backend(&config, tmp.path()).unwrap_err().to_string();
        assert!(e.contains("`tensorflow` is not supported: use auto, candle or onnx"), "{e}");
    }
}
