//! Project configuration: `skillrag.toml`, then `.env`, then `SKILLRAG_*` environment
//! variables, then command-line flags — each overriding the one before.
//!
//! Environment variables name a field as `SKILLRAG_<SECTION>_<KEY>` (`SKILLRAG_INDEX_CHUNK_SIZE`)
//! or, for top-level keys, `SKILLRAG_<KEY>` (`SKILLRAG_SKILLS`); a few short aliases exist for
//! the essentials a harness sets (`SKILLRAG_EMBED_MODEL`, `SKILLRAG_CHUNK_SIZE`…). Secrets such as
//! the LLM API key are read from the environment only, never from the file.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const CONFIG_FILE: &str = "skillrag.toml";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Folders holding skill folders, relative to the project.
    pub skills: Vec<String>,
    /// Where retrieval data lives: `embedded` (the default, under `index.dir`), or a PostgreSQL
    /// URL (`postgres://…`, with pgvector) shared by replicas.
    pub store: String,
    pub index: IndexConfig,
    pub embed: EmbedConfig,
    pub retrieval: RetrievalConfig,
    pub rerank: RerankConfig,
    pub ask: AskConfig,
    pub llm: LlmConfig,
    pub serve: ServeConfig,
}

/// The LLM that writes answers from the compiled context (docs/design.md §4.8). Neither `base_url`
/// nor `gguf` set → extractive answers, no LLM. The API key comes from the environment only
/// (`SKILLRAG_LLM_API_KEY`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// An OpenAI-compatible API root (`https://api.deepseek.com/v1`, `http://127.0.0.1:11434/v1`).
    pub base_url: String,
    /// The model name sent to that API.
    pub model: String,
    /// A local GGUF model file run in-process (used when `base_url` is empty).
    pub gguf: String,
    /// Most tokens in one answer.
    pub max_tokens: usize,
    /// Context budget in the model's tokens, when its tokenizer is known (a local GGUF model);
    /// `[ask] context_chars` otherwise. On a CPU, reading the prompt is most of the wait.
    pub context_tokens: usize,
    pub temperature: f32,
    /// Seconds to wait for the answer to start, and for each next piece of it.
    pub timeout_secs: u64,
    /// Further attempts after a connection failure, a timeout, 429 or 5xx.
    pub retries: u32,
    /// Let the model judge the evidence: when it says the context does not answer the question,
    /// the answer is a `not_found` refusal.
    pub judge: bool,
    /// Let the model rewrite queries: follow-ups into standalone questions, and — as the last
    /// retry when retrieval stays weak — the question into the knowledge base's own terms, the
    /// model then judging what that finds. Every LLM-assisted step is cached in
    /// `<state>/cache/llm-assist.jsonl`.
    pub rewrite: bool,
    /// Other wordings of the question the model writes, searched too and fused by RRF
    /// (multi-query retrieval); 0 = off.
    pub multi_query: usize,
    /// Also search with a hypothetical passage the model writes to answer the question (HyDE),
    /// fused by RRF. The passage is never shown or cited.
    pub hyde: bool,
    /// Ask the model which skill fits when the dispatcher finds two about equally likely; its
    /// pick (one of the two) settles the route, anything else leaves the `ambiguous` refusal.
    pub route: bool,
    /// Let the model word the clarifying question of an `ambiguous` refusal.
    pub clarify: bool,
    /// After the lexical check, ask the model whether each answer sentence is supported by the
    /// passage it cites; sentences it rejects are left out. The answer is then shown whole, not
    /// streamed sentence by sentence.
    pub self_check: bool,
    /// Reply to small talk and text operations (polish, translate…) with the model, without
    /// retrieval; otherwise a fixed reply.
    pub chitchat: bool,
    /// LLM tokens one conversation (`chat`) may spend; beyond, answers are extractive. 0 = no limit.
    pub conversation_tokens: usize,
    /// Share of an answer sentence's terms its cited passage must contain; sentences below are
    /// dropped (and the extractive answer given when none remain).
    pub min_support: f32,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            base_url: String::new(),
            model: String::new(),
            gguf: String::new(),
            max_tokens: 256,
            context_tokens: 1200,
            temperature: 0.0,
            timeout_secs: 60,
            retries: 2,
            judge: true,
            rewrite: false,
            multi_query: 0,
            hyde: false,
            route: false,
            clarify: true,
            self_check: false,
            chitchat: true,
            conversation_tokens: 50_000,
            min_support: 0.5,
        }
    }
}

/// `skillrag serve` (flags override).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServeConfig {
    /// Address to listen on; anything but loopback requires `SKILLRAG_API_TOKEN`.
    pub addr: String,
    /// Largest request body, in KiB.
    pub max_body_kb: usize,
    /// Requests per minute per client address; 0 = unlimited.
    pub rate_limit: u32,
    /// Browser origins allowed to call the API (CORS); empty = off.
    pub cors_origins: Vec<String>,
    /// Host names clients may address besides localhost, 127.0.0.1, [::1] and the bound
    /// address (others get 403, against DNS rebinding); bound to 0.0.0.0 with a token and none
    /// listed, any.
    pub allowed_hosts: Vec<String>,
    /// Seconds a client has to send a request's headers.
    pub header_timeout_secs: u64,
    /// Seconds a client has to send a whole request body.
    pub body_timeout_secs: u64,
    /// Connections one client address may hold open at once; 0 = no cap.
    pub connections_per_client: usize,
    /// Questions and searches worked on at once; 0 = one per CPU core.
    pub workers: usize,
    /// Requests that may wait for a worker before the server answers 503.
    pub queue: usize,
    /// Answers kept for repeated questions (dropped on re-index); 0 = no cache.
    pub cache_entries: usize,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            addr: "127.0.0.1:8080".into(),
            max_body_kb: 256,
            rate_limit: 0,
            cors_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            header_timeout_secs: 10,
            body_timeout_secs: 30,
            connections_per_client: 128,
            workers: 0,
            queue: 256,
            cache_entries: 1024,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// State folder (indexes, caches), relative to the project.
    pub dir: String,
    pub chunk_size: usize,
    pub chunk_overlap: usize,
    /// Files larger than this are reported and skipped.
    pub max_file_mb: u64,
    /// Limits on what one file may cost to read, so that a hostile or generated file (a zip or
    /// PDF bomb, a runaway export) is refused with its reason instead of exhausting memory:
    /// inflated size of a DOCX part or of a PDF's page content, one PDF page's content, pages
    /// of a PDF, text of a file, chunks of a file.
    pub max_inflated_mb: u64,
    pub max_page_content_mb: u64,
    pub max_pdf_pages: usize,
    pub max_text_mb: usize,
    pub max_chunks_per_file: usize,
    /// Folders outside the project that symlinks in a skill's knowledge may point into (a
    /// document share linked into `knowledge/`), relative to the project or absolute. Any
    /// other link that leaves the project is skipped with a warning.
    pub allowed_roots: Vec<String>,
    /// Texts per embedding call while indexing.
    pub embed_batch: usize,
    /// Chunking preset of documents that no rule and no skill `doc_type` names: `auto` (statute
    /// text → legal, Q/A files → faq, otherwise general), `general`, `faq`, `legal`, `technical`.
    pub preset: String,
    /// Presets by file pattern, `"GLOB = PRESET"`, the glob relative to the skills folder
    /// (`labor-law/**`, `*/knowledge/faq/*`); the first match wins over the skill's `doc_type`.
    pub presets: Vec<String>,
    /// Documents longer than this many characters carry a summary (title and outline) on each
    /// chunk; 0 turns summaries off.
    pub summary_min_chars: usize,
    /// Longest summary, in characters.
    pub summary_chars: usize,
    /// Use the questions of FAQ files (CSV/TSV/JSON/JSONL) as routing examples of their skill
    /// (a skill sets its own with `faq_examples` in SKILL.md metadata).
    pub faq_examples: bool,
    /// Read scanned PDF pages and pictures with OCR (Tesseract, found at run time; without it
    /// they are reported and skipped).
    pub ocr: bool,
    /// Tesseract languages, `chi_sim+eng`; empty: from each skill's SKILL.md (Simplified or
    /// Traditional Chinese with English, or English).
    pub ocr_languages: String,
    /// Resolution scanned pages are rendered at for OCR.
    pub ocr_dpi: u32,
    /// Largest picture or rendered page OCR reads, in megapixels (a larger one is a
    /// decompression bomb until raised).
    pub max_ocr_megapixels: u32,
    /// OCR confidence (0 to 1) under which `sources` lists a page as worth checking.
    pub ocr_low_confidence: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedConfig {
    /// A local model folder (Hugging Face layout), or `none` for lexical-only retrieval; with
    /// `base_url`, the model name sent to the API.
    pub model: String,
    /// Overrides the model's own query prompt (e.g. bge's `为这个句子生成表示以用于检索相关文章：`).
    pub query_prefix: Option<String>,
    pub passage_prefix: Option<String>,
    /// With `base_url`: the `input_type` field sent with questions and with passages, for APIs
    /// that embed the two differently on their side (multilingual-e5 servers, Voyage, NVIDIA
    /// NIM: "query" / "passage" or "document"). Unset = the field is not sent (OpenAI rejects it).
    pub query_input_type: Option<String>,
    pub passage_input_type: Option<String>,
    /// An OpenAI-compatible embeddings API root (`https://api.openai.com/v1`,
    /// `http://127.0.0.1:11434/v1`); `/embeddings` is appended. Empty = a local model. The API
    /// key comes from the environment only (`SKILLRAG_EMBED_API_KEY`).
    pub base_url: String,
    /// The API's vector dimension; 0 = ask the server once (then remembered in
    /// `<state>/cache/embed-dims.json`).
    pub dim: usize,
    /// Texts per API request (DashScope accepts at most 10).
    pub batch: usize,
    /// Seconds to wait for an API answer.
    pub timeout_secs: u64,
    /// Further API attempts after a connection failure, a timeout, 429 or 5xx.
    pub retries: u32,
    /// What runs a local model's forward pass: `candle` (in the binary, needs nothing),
    /// `onnx` (ONNX Runtime, `scripts/setup-onnx`), or `auto` (the default): ONNX Runtime when
    /// the library and the model's graph are installed (it is faster, with the same vectors),
    /// candle otherwise.
    pub backend: String,
    /// The ONNX graph, relative to the model folder (or absolute): `onnx/model.onnx` (f32) or
    /// `onnx/model_qint8.onnx` (int8 weights; faster, vectors within cosine 0.99).
    pub onnx_graph: String,
    /// The ONNX Runtime library (`libonnxruntime.so`); empty = `ORT_DYLIB_PATH`, else the one
    /// `scripts/setup-onnx` installs.
    pub onnx_runtime: String,
}

/// The optional rerank stage after fusion (docs/design.md §4.5): a local cross-encoder folder
/// (`model`) or a rerank endpoint (`url`). Neither set → no reranking, no cost. The API key of
/// an endpoint comes from the environment only (`SKILLRAG_RERANK_API_KEY`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RerankConfig {
    /// A local cross-encoder folder (Hugging Face layout: BERT or XLM-RoBERTa with a
    /// classification head); with `url`, the model name sent to a Jina-style API.
    pub model: String,
    /// A rerank endpoint's base URL, as for `[llm]` and `[embed]`: the server root plus its
    /// version prefix if it has one; `/rerank` is appended (TEI `http://127.0.0.1:8083` →
    /// `/rerank`, Jina `https://api.jina.ai/v1` → `/v1/rerank`). `url` is the old name.
    #[serde(alias = "url")]
    pub base_url: String,
    /// The endpoint's shape: `tei` (`{query, texts}` → `[{index, score}]`) or `jina`
    /// (`{model, query, documents}` → `{results: [{index, relevance_score}]}`: Jina, Cohere,
    /// llama.cpp `--reranking`, vLLM).
    pub api: String,
    /// Fused hits scored by the reranker (the rest keep their fused order behind them).
    pub candidates: usize,
    /// Seconds to wait for the endpoint; beyond, the fused order is kept (with a notice).
    pub timeout_secs: u64,
    /// Further endpoint attempts after a connection failure, a timeout, 429 or 5xx.
    pub retries: u32,
}

impl Default for RerankConfig {
    fn default() -> Self {
        RerankConfig {
            model: String::new(),
            base_url: String::new(),
            api: "tei".into(),
            candidates: 20,
            timeout_secs: 10,
            retries: 1,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetrievalConfig {
    pub top_k: usize,
    /// Chunks taken from each of BM25 and dense before fusion; 0 means `top_k`.
    pub candidates: usize,
    pub rrf_k: f32,
    pub bm25_weight: f32,
    pub dense_weight: f32,
    /// The dense signal is dropped when the model sees less than this share of the question
    /// or of a skill's passages (unknown tokens).
    pub min_visibility: f32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AskConfig {
    /// Hits returned with an answer (and used for hit@k in `eval`).
    pub hits: usize,
    /// Chunks that go into the context (a skill's `top_k` overrides).
    pub context_k: usize,
    /// Context budget in characters (without an LLM tokenizer).
    pub context_chars: usize,
    /// At most this many chunks of one source in the context.
    pub per_source: usize,
    /// Retrieval attempts in total: the question, then at most two reformulations.
    pub max_attempts: usize,
    /// Append one JSON line per question to this file (relative to the project); empty = off.
    pub trace: String,
    /// Log `not_found` and `out_of_scope` questions to `<state>/gaps.jsonl` (`skillrag gaps`).
    pub gaps: bool,
    /// How much worse refusing an answerable question is than answering an unanswerable one;
    /// weighs the two errors when the evidence threshold is fitted.
    pub refusal_cost: f32,
}

impl Default for AskConfig {
    fn default() -> Self {
        AskConfig {
            hits: 10,
            context_k: 5,
            context_chars: 4000,
            per_source: 2,
            max_attempts: 3,
            trace: String::new(),
            gaps: true,
            refusal_cost: 4.0,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            skills: vec!["skills".into()],
            store: "embedded".into(),
            index: IndexConfig::default(),
            embed: EmbedConfig::default(),
            retrieval: RetrievalConfig::default(),
            rerank: RerankConfig::default(),
            ask: AskConfig::default(),
            llm: LlmConfig::default(),
            serve: ServeConfig::default(),
        }
    }
}

impl IndexConfig {
    /// How knowledge files are read under these limits.
    pub fn load_options(&self) -> skillrag_load::LoadOptions {
        let mb = |n: u64| n.saturating_mul(1024 * 1024);
        skillrag_load::LoadOptions {
            max_file_bytes: mb(self.max_file_mb),
            extract: skillrag_load::formats::ExtractLimits {
                max_inflated_bytes: mb(self.max_inflated_mb),
                max_page_content_bytes: mb(self.max_page_content_mb),
                max_pages: self.max_pdf_pages,
                max_text_bytes: self.max_text_mb.saturating_mul(1024 * 1024),
                ..Default::default()
            },
        }
    }

    /// OCR limits and resolution (the rest at their defaults).
    pub fn ocr_settings(&self) -> skillrag_load::ocr::OcrSettings {
        skillrag_load::ocr::OcrSettings {
            dpi: self.ocr_dpi.clamp(72, 1200),
            max_megapixels: self.max_ocr_megapixels.max(1),
            ..Default::default()
        }
    }
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig {
            dir: ".skillrag".into(),
            chunk_size: 500,
            chunk_overlap: 80,
            max_file_mb: 32,
            max_inflated_mb: 64,
            max_page_content_mb: 16,
            max_pdf_pages: 5_000,
            max_text_mb: 32,
            max_chunks_per_file: 20_000,
            allowed_roots: Vec::new(),
            embed_batch: 32,
            preset: "auto".into(),
            presets: Vec::new(),
            summary_min_chars: 4000,
            summary_chars: 200,
            faq_examples: false,
            ocr: true,
            ocr_languages: String::new(),
            ocr_dpi: 300,
            max_ocr_megapixels: 64,
            ocr_low_confidence: 0.6,
        }
    }
}

impl Default for EmbedConfig {
    fn default() -> Self {
        EmbedConfig {
            model: "none".into(),
            query_prefix: None,
            passage_prefix: None,
            query_input_type: None,
            passage_input_type: None,
            base_url: String::new(),
            dim: 0,
            batch: 32,
            timeout_secs: 30,
            retries: 2,
            backend: "auto".into(),
            onnx_graph: skillrag_embed::ONNX_GRAPH.into(),
            onnx_runtime: String::new(),
        }
    }
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        let p = crate::fusion::Params::default();
        RetrievalConfig {
            top_k: p.k,
            candidates: p.candidates,
            rrf_k: p.rrf_k,
            bm25_weight: p.bm25_weight,
            dense_weight: p.dense_weight,
            min_visibility: p.min_visibility,
        }
    }
}

/// Short environment names for the essentials (docs/design.md §6).
const ALIASES: [(&str, &str); 4] = [
    ("SKILLRAG_CHUNK_SIZE", "SKILLRAG_INDEX_CHUNK_SIZE"),
    ("SKILLRAG_CHUNK_OVERLAP", "SKILLRAG_INDEX_CHUNK_OVERLAP"),
    ("SKILLRAG_TOP_K", "SKILLRAG_RETRIEVAL_TOP_K"),
    // `[rerank] url` became `base_url`, the name `[llm]` and `[embed]` use.
    ("SKILLRAG_RERANK_URL", "SKILLRAG_RERANK_BASE_URL"),
];

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("{name}={value}: {message}")]
    Env { name: String, value: String, message: String },
}

/// The loaded configuration and where its values came from.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    /// Whether `skillrag.toml` exists.
    pub has_file: bool,
    /// `SKILLRAG_*` variables that name no setting (typos), to warn about.
    pub unknown_env: Vec<String>,
}

/// Loads `dir/skillrag.toml`, `dir/.env` and the process environment, in that order of priority
/// (lowest first). `env` is the process environment (passed in so tests do not touch globals).
pub fn load(dir: &Path, env: &BTreeMap<String, String>) -> Result<Loaded, ConfigError> {
    let path = dir.join(CONFIG_FILE);
    let (mut value, has_file) = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let v: toml::Table = toml::from_str(&text)
                .map_err(|e| ConfigError::File { path: path.display().to_string(), message: e.to_string() })?;
            (v, true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (toml::Table::new(), false),
        Err(e) => return Err(ConfigError::File { path: path.display().to_string(), message: e.to_string() }),
    };
    // Check the file alone first, so its errors name the file.
    toml::Value::Table(value.clone())
        .try_into::<Config>()
        .map_err(|e| ConfigError::File { path: path.display().to_string(), message: e.to_string() })?;

    let mut vars: BTreeMap<String, String> = BTreeMap::new();
    let dotenv = dir.join(".env");
    if dotenv.is_file() {
        let iter = dotenvy::from_path_iter(&dotenv)
            .map_err(|e| ConfigError::File { path: dotenv.display().to_string(), message: e.to_string() })?;
        for item in iter {
            let (k, v) =
                item.map_err(|e| ConfigError::File { path: dotenv.display().to_string(), message: e.to_string() })?;
            vars.insert(k, v);
        }
    }
    vars.extend(env.iter().map(|(k, v)| (k.clone(), v.clone())));

    let known = known_keys();
    let mut unknown_env = Vec::new();
    for (name, raw) in &vars {
        let Some(rest) = name.strip_prefix("SKILLRAG_") else { continue };
        let canonical = ALIASES.iter().find(|(alias, _)| alias == name).map_or(name.as_str(), |(_, c)| *c);
        let rest = canonical.strip_prefix("SKILLRAG_").unwrap_or(rest).to_ascii_lowercase();
        let Some((section, key)) = locate(&known, &rest) else {
            // SKILLRAG_TEST_* belong to the test suite.
            if !NOT_SETTINGS.contains(&name.as_str()) && !name.starts_with("SKILLRAG_TEST_") {
                unknown_env.push(name.clone());
            }
            continue;
        };
        let parsed = parse_env_value(&known, section.as_deref(), &key, raw);
        let table = match &section {
            Some(s) => value.entry(s.clone()).or_insert_with(|| toml::Value::Table(toml::Table::new())),
            None => {
                value.insert(key.clone(), parsed);
                continue;
            }
        };
        if let toml::Value::Table(t) = table {
            t.insert(key.clone(), parsed);
        }
        // Check each variable on its own so the error names it.
        toml::Value::Table(value.clone()).try_into::<Config>().map_err(|e| ConfigError::Env {
            name: name.clone(),
            value: raw.clone(),
            message: e.message().to_string(),
        })?;
    }
    let config: Config = toml::Value::Table(value)
        .try_into()
        .map_err(|e| ConfigError::File { path: path.display().to_string(), message: e.to_string() })?;
    Ok(Loaded { config, has_file, unknown_env })
}

/// `SKILLRAG_*` variables that are not settings of this file (used by scripts and other subsystems).
const NOT_SETTINGS: [&str; 12] = [
    "SKILLRAG_CACHE",
    "SKILLRAG_PG_BIN",
    "SKILLRAG_PG_DIR",
    "SKILLRAG_PG_PORT",
    "SKILLRAG_API_TOKEN",
    "SKILLRAG_LLM_API_KEY",
    "SKILLRAG_LLM_DIR",
    "SKILLRAG_LLM_PORT",
    "SKILLRAG_EMBED_API_KEY",
    "SKILLRAG_EMBED_PORT",
    "SKILLRAG_E5_PORT",
    "SKILLRAG_RERANK_API_KEY",
];

/// (section, key) → default value, from the defaults themselves.
fn known_keys() -> BTreeMap<(Option<String>, String), toml::Value> {
    let mut out = BTreeMap::new();
    let Ok(toml::Value::Table(t)) = toml::Value::try_from(Config::default()) else { return out };
    for (k, v) in t {
        match v {
            toml::Value::Table(section) => {
                for (kk, vv) in section {
                    out.insert((Some(k.clone()), kk), vv);
                }
            }
            other => {
                out.insert((None, k), other);
            }
        }
    }
    // Optional keys have no default to serialize.
    for key in ["query_prefix", "passage_prefix", "query_input_type", "passage_input_type"] {
        out.insert((Some("embed".into()), key.into()), toml::Value::String(String::new()));
    }
    out
}

fn locate(known: &BTreeMap<(Option<String>, String), toml::Value>, rest: &str) -> Option<(Option<String>, String)> {
    if known.contains_key(&(None, rest.to_string())) {
        return Some((None, rest.to_string()));
    }
    let (section, key) = rest.split_once('_')?;
    known
        .contains_key(&(Some(section.to_string()), key.to_string()))
        .then(|| (Some(section.to_string()), key.to_string()))
}

/// Parses an environment string as the type of the setting's default.
fn parse_env_value(
    known: &BTreeMap<(Option<String>, String), toml::Value>,
    section: Option<&str>,
    key: &str,
    raw: &str,
) -> toml::Value {
    let default = known.get(&(section.map(str::to_string), key.to_string()));
    let string = || toml::Value::String(raw.to_string());
    match default {
        Some(toml::Value::Integer(_)) => raw.trim().parse().map(toml::Value::Integer).unwrap_or_else(|_| string()),
        Some(toml::Value::Float(_)) => raw.trim().parse().map(toml::Value::Float).unwrap_or_else(|_| string()),
        Some(toml::Value::Boolean(_)) => raw.trim().parse().map(toml::Value::Boolean).unwrap_or_else(|_| string()),
        Some(toml::Value::Array(_)) => toml::Value::Array(
            raw.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| toml::Value::String(s.into())).collect(),
        ),
        _ => string(),
    }
}

impl Config {
    /// The embedding model folder, resolved against the project; `None` for `none`/empty, and
    /// when the model is an API's (`[embed] base_url` set).
    pub fn embed_model_path(&self, project: &Path) -> Option<PathBuf> {
        let m = self.embed.model.trim();
        if m.is_empty() || m.eq_ignore_ascii_case("none") || !self.embed.base_url.trim().is_empty() {
            return None;
        }
        Some(resolve(project, m))
    }

    /// The local cross-encoder folder, resolved against the project; `None` when unset or when
    /// a rerank endpoint (`url`) is configured.
    pub fn rerank_model_path(&self, project: &Path) -> Option<PathBuf> {
        let m = self.rerank.model.trim();
        if m.is_empty() || m.eq_ignore_ascii_case("none") || !self.rerank.base_url.trim().is_empty() {
            return None;
        }
        Some(resolve(project, m))
    }

    /// The local GGUF model file, resolved against the project; `None` when unset.
    pub fn llm_gguf_path(&self, project: &Path) -> Option<PathBuf> {
        let g = self.llm.gguf.trim();
        (!g.is_empty()).then(|| resolve(project, g))
    }

    pub fn state_dir(&self, project: &Path) -> PathBuf {
        resolve(project, &self.index.dir)
    }

    pub fn skill_roots(&self, project: &Path) -> Vec<PathBuf> {
        self.skills.iter().map(|s| resolve(project, s)).collect()
    }

    /// The folders outside `project` that knowledge symlinks may point into.
    pub fn allowed_roots(&self, project: &Path) -> Vec<PathBuf> {
        self.index.allowed_roots.iter().map(|r| resolve(project, r)).collect()
    }
}

fn resolve(project: &Path, p: &str) -> PathBuf {
    let expanded = match p.strip_prefix("~/") {
        Some(rest) => std::env::var_os("HOME").map(|h| Path::new(&h).join(rest)),
        None => None,
    };
    let path = expanded.unwrap_or_else(|| PathBuf::from(p));
    if path.is_absolute() {
        path
    } else {
        project.join(path)
    }
}

/// The `skillrag.toml` written by `skillrag init`, documenting every setting.
pub fn template(model: Option<&Path>) -> String {
    let model = model.map_or_else(|| "none".to_string(), |m| m.display().to_string());
    format!(
        r#"# skillrag project configuration.
# Every setting can be overridden by an environment variable SKILLRAG_<SECTION>_<KEY>
# (e.g. SKILLRAG_INDEX_CHUNK_SIZE=400) or a line in .env; command-line flags win over both.

# Folders that hold skill folders (each with a SKILL.md).
skills = ["skills"]

# Where indexes live: "embedded" (files in .skillrag/index) or PostgreSQL with pgvector,
# "postgres://user@host:5432/db", shared by several `skillrag serve` replicas
# (docs/deployment.md). Env: SKILLRAG_STORE. `skillrag migrate --to` copies indexes over.
store = "embedded"

[index]
dir = ".skillrag"        # indexes and caches (safe to delete; `skillrag index` rebuilds)
chunk_size = 500         # characters per chunk; a skill can override in SKILL.md metadata
chunk_overlap = 80       # characters shared by neighbouring chunks
max_file_mb = 32         # larger knowledge files are reported and skipped
# A file that would cost more than these to read is refused with its reason (bombs, runaway exports):
# max_inflated_mb = 64   # a DOCX part, or a PDF's page content, once inflated
# max_page_content_mb = 16
# max_pdf_pages = 5000
# max_text_mb = 32       # text of one file
# max_chunks_per_file = 20000
# Symlinks are followed only inside the project, or into these folders:
# allowed_roots = ["/srv/shared-docs"]
# Chunking preset: auto (statutes → legal, Q/A files → faq, else general), general, faq, legal,
# technical (code-aware, chunks twice as large). A skill sets its own with `doc_type` in SKILL.md.
preset = "auto"
# presets = ["labor-law/** = legal", "*/knowledge/faq/** = faq"]   # by file, first match wins
summary_min_chars = 4000 # longer documents carry their title and outline on every chunk (0 = off)
faq_examples = false     # questions of FAQ files (csv/tsv/json/jsonl) become routing examples
# Scanned PDF pages and pictures (png, jpg, webp, tif) are read by OCR when Tesseract is installed
# (`scripts/setup-ocr`; `skillrag doctor` says what it found). Without it they are reported and skipped.
ocr = true
# ocr_languages = "chi_sim+eng"   # Tesseract's names; default: from each skill's SKILL.md
# ocr_dpi = 300                   # resolution scanned pages are rendered at
# max_ocr_megapixels = 64         # larger pictures or pages are refused (decompression bombs)
# ocr_low_confidence = 0.6        # `sources` lists pages OCR was less sure of

[embed]
# A local embedding model folder (Hugging Face layout), or "none" for BM25 only.
# Env: SKILLRAG_EMBED_MODEL. `scripts/setup-model` installs all-MiniLM-L6-v2.
model = "{model}"
# query_prefix = "query: "      # override the model's own prompts (e5, bge)
# passage_prefix = "passage: "
# What runs the model: "candle" (built in), "onnx" (ONNX Runtime, `scripts/setup-onnx`), or
# "auto": ONNX Runtime when it and the model's graph are installed, candle otherwise.
backend = "auto"         # env SKILLRAG_EMBED_BACKEND
onnx_graph = "onnx/model.onnx"   # in the model folder; "onnx/model_qint8.onnx" = int8, faster
onnx_runtime = ""        # libonnxruntime.so; "" = ORT_DYLIB_PATH, else scripts/setup-onnx's
# Or an OpenAI-compatible /v1/embeddings API (OpenAI, DashScope, Ollama, vLLM, TEI, llama.cpp;
# docs/rerank.md): `model` is then the API's model name, the key only from the environment
# (SKILLRAG_EMBED_API_KEY). Changing server or model asks for a re-index.
base_url = ""            # e.g. "http://127.0.0.1:11434/v1"; env SKILLRAG_EMBED_BASE_URL
# query_input_type = "query"       # sent as `input_type` where the API embeds questions and
# passage_input_type = "passage"   # passages differently (`scripts/setup-e5`: multilingual-e5)
dim = 0                  # the API's vector size; 0 = ask the server once and remember it
batch = 32               # texts per request (DashScope: at most 10)
timeout_secs = 30
retries = 2              # after a connection failure, timeout, 429 or 5xx

[rerank]
# Optional: rescore the best fused hits with a cross-encoder (docs/rerank.md). Off when both
# `model` and `url` are empty. A failing reranker keeps the fused order, with a notice.
model = ""               # a local cross-encoder folder (BERT / XLM-RoBERTa, e.g. bge-reranker-base)
base_url = ""            # or an endpoint, `/rerank` appended: TEI "http://127.0.0.1:8083", llama.cpp "http://127.0.0.1:8012/v1"
api = "tei"              # tei ({{query, texts}} → [{{index, score}}]) or jina (Jina, Cohere, llama.cpp, vLLM)
candidates = 20          # fused hits rescored
timeout_secs = 10        # then the fused order is kept
retries = 1

[retrieval]
top_k = 10               # hits returned by `skillrag search`
candidates = 0           # taken from each of BM25 and dense before fusion; 0 = top_k
rrf_k = 60               # Reciprocal Rank Fusion constant
bm25_weight = 1.0
dense_weight = 1.0
min_visibility = 0.5     # drop the dense signal when the model sees less of the text than this

[ask]
hits = 10                # hits returned with an answer
context_k = 5            # chunks in the context (a skill's metadata.top_k overrides)
context_chars = 4000     # context budget in characters
per_source = 2           # at most this many chunks of one document in the context
max_attempts = 3         # the question plus at most two reformulations when evidence is weak
trace = ""               # e.g. ".skillrag/trace.jsonl": one JSON line per question
gaps = true              # log unanswered questions for `skillrag gaps` and GET /v1/gaps
refusal_cost = 4.0       # refusing an answerable question vs answering an unanswerable one (fits not_found)

[llm]
# Without an LLM, answers are extractive (sentences of the knowledge, cited). With one, it writes
# the answer from the same context; every sentence is checked against the passage it cites.
# An OpenAI-compatible API (docs/llm.md has presets for DeepSeek, DashScope, Ollama, vLLM,
# llama.cpp); the key only from the environment: SKILLRAG_LLM_API_KEY.
base_url = ""            # e.g. "https://api.deepseek.com/v1"; env SKILLRAG_LLM_BASE_URL
model = ""               # e.g. "deepseek-chat"; env SKILLRAG_LLM_MODEL
# Or a local GGUF model run in-process (Qwen2 and Llama families); `scripts/setup-llm model`
# installs Qwen2.5-Coder-0.5B-Instruct. Env SKILLRAG_LLM_GGUF.
gguf = ""
max_tokens = 256         # most tokens in one answer
context_tokens = 1200    # context budget in the model's tokens (local GGUF; else [ask] context_chars)
temperature = 0.0
timeout_secs = 60        # wait for the answer to start, and for each next piece
retries = 2              # after a connection failure, timeout, 429 or 5xx
judge = true             # the model may say the context does not answer → not_found
# LLM-assisted steps, each cached in .skillrag/cache/llm-assist.jsonl:
rewrite = false          # the model rewrites follow-ups, and weak queries as the last retry
multi_query = 0          # other wordings of the question searched too, fused by RRF (0 = off)
hyde = false             # also search with a hypothetical answer passage (HyDE), fused by RRF
route = false            # the model settles a route between two equally likely skills
clarify = true           # the model words the clarifying question of an `ambiguous` refusal
self_check = false       # the model confirms each checked sentence (answers then come whole)
chitchat = true          # the model replies to small talk and text operations (no retrieval)
conversation_tokens = 50000  # LLM tokens one chat may spend, then extractive answers (0 = no limit)
min_support = 0.5        # share of a sentence's terms its cited passage must contain

[serve]
addr = "127.0.0.1:8080"  # other than loopback requires SKILLRAG_API_TOKEN (bearer token)
max_body_kb = 256        # larger request bodies get 413
rate_limit = 0           # requests per minute per client address; 0 = unlimited
cors_origins = []        # e.g. ["https://intranet.example"]; empty = CORS off
allowed_hosts = []       # Host names besides localhost and the bound address, e.g. ["rag.intranet.example"]
header_timeout_secs = 10 # a client has this long to send a request's headers
body_timeout_secs = 30   # ... and this long to send its whole body (else 408)
connections_per_client = 128  # open connections per client address; beyond that closed at once (0 = no cap)
workers = 0              # questions and searches worked on at once; 0 = one per CPU core
queue = 256              # requests waiting beyond this get 503 + Retry-After
cache_entries = 1024     # repeated questions answered from memory until the next re-index
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn defaults_without_file() {
        let tmp = tempfile::tempdir().unwrap();
        let loaded = load(tmp.path(), &env(&[])).unwrap();
        assert!(!loaded.has_file);
        assert_eq!(loaded.config, Config::default());
    }

    #[test]
    fn precedence_env_over_dotenv_over_file() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(
            tmp.path().join(CONFIG_FILE),
            "[index]\nchunk_size = 300\nchunk_overlap = 50\n[embed]\nmodel = \"file-model\"\n",
        )
        .unwrap();
        std::fs::write(tmp.path().join(".env"), "SKILLRAG_INDEX_CHUNK_OVERLAP=40\nSKILLRAG_EMBED_MODEL=dotenv-model\n")
            .unwrap();
        let loaded = load(tmp.path(), &env(&[("SKILLRAG_EMBED_MODEL", "none"), ("SKILLRAG_SKILLS", "a, b")])).unwrap();
        let c = loaded.config;
        assert_eq!(c.index.chunk_size, 300, "file");
        assert_eq!(c.index.chunk_overlap, 40, ".env over file");
        assert_eq!(c.embed.model, "none", "environment over .env");
        assert_eq!(c.skills, vec!["a", "b"]);
    }

    #[test]
    fn aliases_and_typed_values() {
        let tmp = tempfile::tempdir().unwrap();
        let c = load(tmp.path(), &env(&[("SKILLRAG_CHUNK_SIZE", "256"), ("SKILLRAG_RETRIEVAL_RRF_K", "30.5")]))
            .unwrap()
            .config;
        assert_eq!(c.index.chunk_size, 256);
        assert_eq!(c.retrieval.rrf_k, 30.5);
    }

    #[test]
    fn clear_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let err = load(tmp.path(), &env(&[("SKILLRAG_INDEX_CHUNK_SIZE", "big")])).unwrap_err().to_string();
        assert!(err.starts_with("SKILLRAG_INDEX_CHUNK_SIZE=big:"), "{err}");
        std::fs::write(tmp.path().join(CONFIG_FILE), "[index]\nchunk_sise = 3\n").unwrap();
        let err = load(tmp.path(), &env(&[])).unwrap_err().to_string();
        assert!(err.contains("skillrag.toml") && err.contains("chunk_sise"), "{err}");
        std::fs::remove_file(tmp.path().join(CONFIG_FILE)).unwrap();
        let loaded = load(tmp.path(), &env(&[("SKILLRAG_INDEX_CHUNKSIZE", "3"), ("SKILLRAG_CACHE", "/x")])).unwrap();
        assert_eq!(loaded.unknown_env, vec!["SKILLRAG_INDEX_CHUNKSIZE"]);
    }

    #[test]
    fn remote_embedding_and_rerank_settings_from_the_environment() {
        let tmp = tempfile::tempdir().unwrap();
        let loaded = load(
            tmp.path(),
            &env(&[
                ("SKILLRAG_EMBED_BASE_URL", "http://127.0.0.1:11434/v1"),
                ("SKILLRAG_EMBED_MODEL", "bge-m3"),
                ("SKILLRAG_EMBED_DIM", "1024"),
                ("SKILLRAG_EMBED_API_KEY", "sk-x"),
                ("SKILLRAG_RERANK_BASE_URL", "http://127.0.0.1:8083"),
                ("SKILLRAG_RERANK_CANDIDATES", "30"),
                ("SKILLRAG_RERANK_TIMEOUT_SECS", "3"),
                ("SKILLRAG_RERANK_API_KEY", "sk-y"),
            ]),
        )
        .unwrap();
        assert!(loaded.unknown_env.is_empty(), "{:?}", loaded.unknown_env);
        let c = loaded.config;
        assert_eq!(
            (c.embed.base_url.as_str(), c.embed.model.as_str(), c.embed.dim),
            ("http://127.0.0.1:11434/v1", "bge-m3", 1024)
        );
        assert_eq!(c.embed_model_path(tmp.path()), None, "an API model is no folder");
        assert_eq!(
            (c.rerank.base_url.as_str(), c.rerank.candidates, c.rerank.timeout_secs),
            ("http://127.0.0.1:8083", 30, 3)
        );
        assert_eq!(c.rerank_model_path(tmp.path()), None);
        // `url` / SKILLRAG_RERANK_URL, the old name, still reach the same setting.
        let old = load(tmp.path(), &env(&[("SKILLRAG_RERANK_URL", "http://h:1")])).unwrap();
        assert!(old.unknown_env.is_empty(), "{:?}", old.unknown_env);
        assert_eq!(old.config.rerank.base_url, "http://h:1");
        std::fs::write(tmp.path().join("skillrag.toml"), "[rerank]\nurl = \"http://h:2/v1\"\n").unwrap();
        assert_eq!(load(tmp.path(), &env(&[])).unwrap().config.rerank.base_url, "http://h:2/v1");
        std::fs::remove_file(tmp.path().join("skillrag.toml")).unwrap();
        let c = load(tmp.path(), &env(&[("SKILLRAG_RERANK_MODEL", "models/bge-reranker-base")])).unwrap().config;
        assert_eq!(c.rerank_model_path(tmp.path()), Some(tmp.path().join("models/bge-reranker-base")));
        let err = load(tmp.path(), &env(&[("SKILLRAG_RERANK_CANDIDATES", "many")])).unwrap_err().to_string();
        assert!(err.starts_with("SKILLRAG_RERANK_CANDIDATES=many"), "{err}");
    }

    #[test]
    fn template_parses_to_defaults() {
        let c: Config = toml::from_str(&template(None)).unwrap();
        assert_eq!(c, Config::default());
    }
}
