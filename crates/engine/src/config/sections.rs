//! The sections of `skillrag.toml`, one struct each, with their defaults.

use serde::{Deserialize, Serialize};

/// The reader (docs/design.md §4.9): a small local instruction model that judges whether the
/// answer the knowledge gives does answer the question, and chooses among candidate answers.
/// `model` empty → no reader. The API key, for a remote reader, is `SKILLRAG_READER_API_KEY`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReaderConfig {
    /// A GGUF file run in-process, or an OpenAI-compatible API root that reports token
    /// log-probabilities (llama.cpp's server: `scripts/setup-reader`). `SKILLRAG_READER` for short.
    pub model: String,
    /// The reader's "yes" is taken above this probability that the answer answers the question.
    pub threshold: f32,
    /// Most extractive candidate answers judged for one question.
    pub max_calls: usize,
    /// The first retrieved passages also judged as answers of their own, after the extractive
    /// candidates (the passage-level evaluator of Corrective RAG); 0 = candidates only, the default:
    /// measured on dev v2 it answers more with the fact but also more unanswerable questions.
    pub passages: usize,
    /// With a reader, evidence below the fitted threshold but at least this share of it is kept
    /// for the reader to judge, instead of being refused at once; 1 = the reader only checks
    /// answers the lexical evidence already accepts.
    pub band: f32,
    /// Seconds to wait for a remote reader's verdict.
    pub timeout_secs: u64,
}

impl Default for ReaderConfig {
    fn default() -> Self {
        ReaderConfig { model: String::new(), threshold: 0.5, max_calls: 3, passages: 0, band: 0.5, timeout_secs: 30 }
    }
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
