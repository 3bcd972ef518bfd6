//! Any OpenAI-compatible `/v1/embeddings` endpoint: OpenAI, DashScope (text-embedding-v3),
//! Ollama, vLLM, TEI, llama.cpp's server started with `--embedding` (presets in docs/rerank.md).
//!
//! Texts are sent in batches of [`OpenAiEmbedConfig::batch`]; the vectors are put back in input
//! order by their `index`, checked (count, dimension, finite values) and L2-normalized. A remote
//! model is assumed to see all of its text: visibility is 1.0.

use crate::{l2_normalize, EmbedError, EmbedKind, Embedder, Embedding};
use serde_json::{json, Value};
use skillrag_http::{check_url, HttpConfig, JsonClient};

/// Where and how to reach the embeddings API.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiEmbedConfig {
    /// The API root, e.g. `https://api.openai.com/v1`; `/embeddings` is appended.
    pub base_url: String,
    /// The model name sent to the API.
    pub model: String,
    /// Texts per request.
    pub batch: usize,
    pub query_prefix: String,
    pub passage_prefix: String,
    /// The `input_type` sent with questions / passages; empty = not sent.
    pub query_input_type: String,
    pub passage_input_type: String,
    /// Timeouts, retries and the API key (from the environment only).
    pub http: HttpConfig,
}

impl OpenAiEmbedConfig {
    pub fn new(base_url: &str, model: &str) -> OpenAiEmbedConfig {
        OpenAiEmbedConfig {
            base_url: base_url.trim().trim_end_matches('/').to_string(),
            model: model.trim().to_string(),
            batch: 32,
            query_prefix: String::new(),
            passage_prefix: String::new(),
            query_input_type: String::new(),
            passage_input_type: String::new(),
            http: HttpConfig::default(),
        }
    }

    /// The prefix and the `input_type` of questions or of passages.
    fn for_kind(&self, kind: EmbedKind) -> (&str, &str) {
        match kind {
            EmbedKind::Query => (&self.query_prefix, &self.query_input_type),
            EmbedKind::Passage => (&self.passage_prefix, &self.passage_input_type),
        }
    }

    /// `openai:<model>@<base_url>`, plus a fingerprint of the prefixes and input types when there
    /// are any: another server, model, prefix or input type gives other vectors, so another id.
    /// Known without contacting the server.
    pub fn model_id(&self) -> String {
        let mut id = format!("openai:{}@{}", self.model, self.base_url);
        if !self.query_prefix.is_empty() || !self.passage_prefix.is_empty() {
            let hash = blake3::hash(format!("{}\u{0}{}", self.query_prefix, self.passage_prefix).as_bytes());
            id.push_str(&format!("+prefixes:{}", &hash.to_hex()[..8]));
        }
        if !self.query_input_type.is_empty() || !self.passage_input_type.is_empty() {
            id.push_str(&format!("+input_type:{}/{}", self.query_input_type, self.passage_input_type));
        }
        id
    }
}

/// An embedder that calls an OpenAI-compatible embeddings API.
pub struct OpenAiEmbedder {
    config: OpenAiEmbedConfig,
    endpoint: String,
    client: JsonClient,
    model_id: String,
    dim: usize,
}

impl std::fmt::Debug for OpenAiEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedder").field("model_id", &self.model_id).field("dim", &self.dim).finish()
    }
}

impl OpenAiEmbedder {
    /// A client for `config`. With `dim` the vectors are expected to have that many dimensions;
    /// without, one short request asks the server (an error when it cannot be reached).
    pub fn new(config: OpenAiEmbedConfig, dim: Option<usize>) -> Result<OpenAiEmbedder, EmbedError> {
        let base = check_url(&config.base_url, "embeddings").map_err(EmbedError::Remote)?;
        if config.model.is_empty() || config.model.eq_ignore_ascii_case("none") {
            return Err(EmbedError::Config(format!(
                "embeddings API {base}: set [embed] model (SKILLRAG_EMBED_MODEL) to the model name the API serves"
            )));
        }
        if dim == Some(0) {
            return Err(EmbedError::Config("the embedding dimension must be positive".into()));
        }
        let mut embedder = OpenAiEmbedder {
            endpoint: format!("{base}/embeddings"),
            client: JsonClient::new(config.http.clone()),
            model_id: config.model_id(),
            dim: dim.unwrap_or(0),
            config,
        };
        if dim.is_none() {
            let probe = embedder.request(&["dimension probe"], EmbedKind::Passage)?;
            embedder.dim = probe.first().map_or(0, Vec::len);
        }
        Ok(embedder)
    }

    pub fn config(&self) -> &OpenAiEmbedConfig {
        &self.config
    }

    fn bad(&self, message: String) -> EmbedError {
        EmbedError::Response { url: self.endpoint.clone(), message }
    }

    /// One request: the raw vectors, in input order, checked.
    fn request(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<Vec<f32>>, EmbedError> {
        // Most APIs reject an empty input string.
        let input: Vec<&str> = texts.iter().map(|t| if t.trim().is_empty() { " " } else { t }).collect();
        let mut body = json!({"model": self.config.model, "input": input, "encoding_format": "float"});
        let (_, input_type) = self.config.for_kind(kind);
        if !input_type.is_empty() {
            body["input_type"] = json!(input_type);
        }
        let value = self.client.post_json(&self.endpoint, &body).map_err(EmbedError::Remote)?;
        let data = value
            .get("data")
            .and_then(Value::as_array)
            .ok_or_else(|| self.bad(format!("no `data` array in {}", skillrag_http::clip(&value.to_string()))))?;
        if data.len() != texts.len() {
            return Err(self.bad(format!("{} texts were sent but {} embeddings came back", texts.len(), data.len())));
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; texts.len()];
        for (position, item) in data.iter().enumerate() {
            let index = match item.get("index") {
                None => position,
                Some(i) => i
                    .as_u64()
                    .map(|i| i as usize)
                    .filter(|&i| i < texts.len())
                    .ok_or_else(|| self.bad(format!("data[{position}].index {i} is not an index of the input")))?,
            };
            let vector = item
                .get("embedding")
                .and_then(Value::as_array)
                .ok_or_else(|| self.bad(format!("data[{position}] has no `embedding` array of numbers")))?
                .iter()
                .map(|x| x.as_f64().map(|x| x as f32).filter(|x| x.is_finite()))
                .collect::<Option<Vec<f32>>>()
                .ok_or_else(|| {
                    self.bad(format!(
                        "data[{position}].embedding holds something other than finite numbers (a server without \
                         pooling returns one vector per token: start llama.cpp with --pooling mean or cls)"
                    ))
                })?;
            if vector.is_empty() {
                return Err(self.bad(format!("data[{position}].embedding is empty")));
            }
            let expected =
                if self.dim > 0 { self.dim } else { out.iter().flatten().next().map_or(vector.len(), Vec::len) };
            if vector.len() != expected {
                return Err(self.bad(format!(
                    "data[{position}].embedding has {} dimensions, expected {expected} (set [embed] dim to what the \
                     model returns, then re-index)",
                    vector.len()
                )));
            }
            if out[index].replace(vector).is_some() {
                return Err(self.bad(format!("index {index} appears twice in `data`")));
            }
        }
        Ok(out.into_iter().map(|v| v.unwrap_or_default()).collect())
    }
}

impl Embedder for OpenAiEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<Embedding>, EmbedError> {
        let (prefix, _) = self.config.for_kind(kind);
        let prefixed: Vec<String> = texts.iter().map(|t| format!("{prefix}{t}")).collect();
        let mut out = Vec::with_capacity(texts.len());
        for batch in prefixed.chunks(self.config.batch.max(1)) {
            let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
            for mut vector in self.request(&refs, kind)? {
                l2_normalize(&mut vector);
                out.push(Embedding { vector, visibility: 1.0 });
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
