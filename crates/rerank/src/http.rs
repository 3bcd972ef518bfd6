//! Rerank endpoints over HTTP.

use crate::{sigmoid, RerankError, Reranker};
use serde_json::{json, Value};
use skillrag_http::{check_url, clip, HttpConfig, JsonClient};

/// The request/response shape of the endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RerankApi {
    /// Hugging Face text-embeddings-inference: `POST {base_url}/rerank` with
    /// `{"query", "texts", "raw_scores": false}` → `[{"index", "score"}]` (sigmoid scores).
    Tei,
    /// Jina / Cohere / llama.cpp (`--reranking`) / vLLM / Xinference: `POST {base_url}/rerank`
    /// (the base URL carries the version, e.g. `https://api.jina.ai/v1`) with
    /// `{"model", "query", "documents", "top_n"}` → `{"results": [{"index", "relevance_score"}]}`.
    Jina,
}

impl RerankApi {
    /// `tei` or `jina` (also `cohere`, `llama.cpp`, `vllm`: the same shape).
    pub fn parse(s: &str) -> Option<RerankApi> {
        match s.trim().to_ascii_lowercase().as_str() {
            "tei" | "" => Some(RerankApi::Tei),
            "jina" | "cohere" | "llama.cpp" | "llamacpp" | "vllm" | "openai" => Some(RerankApi::Jina),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct HttpRerankConfig {
    /// The base URL (`/rerank` is appended, the one rule of `[llm]` and `[embed]` too), or the
    /// full endpoint ending in `/rerank`.
    pub url: String,
    pub api: RerankApi,
    /// The model name sent in Jina-style requests (TEI serves one model and ignores it).
    pub model: String,
    /// Passages per request (TEI's `--max-client-batch-size` defaults to 32).
    pub batch: usize,
    pub http: HttpConfig,
}

impl HttpRerankConfig {
    pub fn new(url: &str, api: RerankApi) -> HttpRerankConfig {
        HttpRerankConfig { url: url.to_string(), api, model: String::new(), batch: 32, http: HttpConfig::default() }
    }
}

/// A reranker behind an HTTP endpoint.
///
/// TEI is asked for sigmoid scores (`raw_scores: false`). Jina-style servers differ: Jina and
/// Cohere return probabilities, llama.cpp raw logits; when any score of a response lies outside
/// [0, 1] the whole response is taken as logits and mapped through the logistic function (which
/// keeps its order), so scores are always in [0, 1].
pub struct HttpReranker {
    config: HttpRerankConfig,
    endpoint: String,
    client: JsonClient,
    model_id: String,
}

impl HttpReranker {
    pub fn new(config: HttpRerankConfig) -> Result<HttpReranker, RerankError> {
        let base = check_url(&config.url, "rerank").map_err(RerankError::Remote)?;
        let endpoint = if base.ends_with("/rerank") { base.clone() } else { format!("{base}/rerank") };
        let model_id = match config.api {
            RerankApi::Tei => format!("tei@{endpoint}"),
            RerankApi::Jina => format!("jina:{}@{endpoint}", config.model),
        };
        Ok(HttpReranker { client: JsonClient::new(config.http.clone()), config, endpoint, model_id })
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn bad(&self, message: String) -> RerankError {
        RerankError::Response { url: self.endpoint.clone(), message }
    }

    /// Raw scores of one batch, in input order.
    fn request(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, RerankError> {
        let (body, key) = match self.config.api {
            RerankApi::Tei => {
                (json!({"query": query, "texts": passages, "raw_scores": false, "truncate": true}), "score")
            }
            RerankApi::Jina => (
                json!({"model": self.config.model, "query": query, "documents": passages, "top_n": passages.len()}),
                "relevance_score",
            ),
        };
        let value = self.client.post_json(&self.endpoint, &body).map_err(RerankError::Remote)?;
        let items = match self.config.api {
            RerankApi::Tei => value.as_array(),
            RerankApi::Jina => value.get("results").and_then(Value::as_array),
        }
        .ok_or_else(|| {
            let want = if self.config.api == RerankApi::Tei {
                "a JSON array of {index, score} (is this a TEI server? set [rerank] api = \"jina\" for Jina-style servers)"
            } else {
                "{\"results\": [{index, relevance_score}]} (is this a Jina-style server? set [rerank] api = \"tei\" for TEI)"
            };
            self.bad(format!("expected {want}, got {}", clip(&value.to_string())))
        })?;
        let mut scores: Vec<Option<f32>> = vec![None; passages.len()];
        for (position, item) in items.iter().enumerate() {
            let index = item
                .get("index")
                .and_then(Value::as_u64)
                .map(|i| i as usize)
                .filter(|&i| i < passages.len())
                .ok_or_else(|| {
                self.bad(format!("result {position} has no valid `index`: {}", clip(&item.to_string())))
            })?;
            let score =
                item.get(key).and_then(Value::as_f64).map(|s| s as f32).filter(|s| s.is_finite()).ok_or_else(|| {
                    self.bad(format!("result {position} has no numeric `{key}`: {}", clip(&item.to_string())))
                })?;
            if scores[index].replace(score).is_some() {
                return Err(self.bad(format!("index {index} appears twice")));
            }
        }
        let missing = scores.iter().filter(|s| s.is_none()).count();
        if missing > 0 {
            return Err(self.bad(format!("{} passages were sent but {missing} got no score", passages.len())));
        }
        Ok(scores.into_iter().flatten().collect())
    }
}

impl Reranker for HttpReranker {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn rerank(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, RerankError> {
        let mut scores = Vec::with_capacity(passages.len());
        for batch in passages.chunks(self.config.batch.max(1)) {
            scores.extend(self.request(query, batch)?);
        }
        if scores.iter().any(|s| !(0.0..=1.0).contains(s)) {
            scores.iter_mut().for_each(|s| *s = sigmoid(*s));
        }
        Ok(scores)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillrag_http::scripted::{json_reply, serve, Reply, Request};
    use std::time::Duration;

    fn reranker(url: &str, api: RerankApi) -> HttpReranker {
        let mut c = HttpRerankConfig::new(url, api);
        c.model = "bge-reranker-base".into();
        c.batch = 2;
        c.http = HttpConfig {
            timeout: Duration::from_millis(500),
            retries: 2,
            backoff: Duration::from_millis(10),
            api_key: Some("sk-rerank".into()),
            ..Default::default()
        };
        HttpReranker::new(c).unwrap()
    }

    /// Score = share of the query's words in the passage; answered best first, as servers do.
    fn overlap(query: &str, passages: &[Value]) -> Vec<(usize, f64)> {
        let words: Vec<&str> = query.split_whitespace().collect();
        let mut out: Vec<(usize, f64)> = passages
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let p = p.as_str().unwrap_or("");
                (i, words.iter().filter(|w| p.contains(*w)).count() as f64 / words.len().max(1) as f64)
            })
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1));
        out
    }

    fn tei(r: &Request) -> Value {
        let texts = r.body["texts"].as_array().cloned().unwrap_or_default();
        let q = r.body["query"].as_str().unwrap_or("");
        Value::Array(overlap(q, &texts).into_iter().map(|(i, s)| json!({"index": i, "score": s})).collect())
    }

    fn jina(r: &Request) -> Value {
        let docs = r.body["documents"].as_array().cloned().unwrap_or_default();
        let q = r.body["query"].as_str().unwrap_or("");
        let results: Vec<Value> = overlap(q, &docs)
            .into_iter()
            .map(|(i, s)| json!({"index": i, "relevance_score": s, "document": {"text": docs[i]}}))
            .collect();
        json!({"model": "m", "results": results})
    }

    #[test]
    fn tei_scores_in_input_order_across_batches() {
        let server = serve(vec![Reply::json(tei)]);
        let r = reranker(&server.url(""), RerankApi::Tei);
        let scores = r.rerank("red apple", &["green pear", "red apple pie", "a red car"]).unwrap();
        assert_eq!(scores, vec![0.0, 1.0, 0.5]);
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "batches of 2");
        assert!(requests[0].head.starts_with("POST /rerank"), "{}", requests[0].head);
        assert_eq!(requests[0].body["raw_scores"], false);
        assert!(requests[0].head.contains("Bearer sk-rerank"));
        assert!(r.rerank("q", &[]).unwrap().is_empty());
        assert_eq!(server.requests().len(), 2, "nothing to score, no request");
    }

    #[test]
    fn jina_shape_and_endpoints() {
        let server = serve(vec![Reply::json(jina)]);
        let r = reranker(&server.url("/v1"), RerankApi::Jina);
        assert_eq!(r.rerank("red apple", &["green pear", "red apple pie"]).unwrap(), vec![0.0, 1.0]);
        let req = &server.requests()[0];
        assert!(req.head.starts_with("POST /v1/rerank"), "{}", req.head);
        assert_eq!((req.body["model"].as_str(), req.body["top_n"].as_u64()), (Some("bge-reranker-base"), Some(2)));
        assert_eq!(reranker("http://h/v1", RerankApi::Jina).endpoint(), "http://h/v1/rerank");
        assert_eq!(reranker("http://h/api/v2/rerank", RerankApi::Jina).endpoint(), "http://h/api/v2/rerank");
        assert_eq!(reranker("http://h:8080/", RerankApi::Tei).endpoint(), "http://h:8080/rerank");
        // One rule, as for `[llm]` and `[embed]`: `/rerank` is appended to the base URL.
        assert_eq!(reranker("http://h:8012", RerankApi::Jina).endpoint(), "http://h:8012/rerank");
        assert_ne!(
            reranker("http://h/v1", RerankApi::Jina).model_id(),
            reranker("http://h/v1", RerankApi::Tei).model_id()
        );
        assert_eq!(RerankApi::parse("llama.cpp"), Some(RerankApi::Jina));
        assert_eq!(RerankApi::parse("nope"), None);
    }

    #[test]
    fn logits_are_mapped_to_probabilities_keeping_order() {
        let server = serve(vec![Reply::json(
            |_| json!({"results": [{"index": 0, "relevance_score": -3.5}, {"index": 1, "relevance_score": 0.7}]}),
        )]);
        let mut c = HttpRerankConfig::new(&server.url("/v1"), RerankApi::Jina);
        c.http.retries = 0;
        let scores = HttpReranker::new(c).unwrap().rerank("q", &["a", "b"]).unwrap();
        assert!((scores[0] - sigmoid(-3.5)).abs() < 1e-6 && (scores[1] - sigmoid(0.7)).abs() < 1e-6, "{scores:?}");
    }

    #[test]
    fn faults_are_clear_errors() {
        // 429 then success.
        let server = serve(vec![Reply::raw(json_reply(429, "retry-after: 0\r\n", "{}")), Reply::json(tei)]);
        assert!(reranker(&server.url(""), RerankApi::Tei).rerank("q", &["a"]).is_ok());
        assert_eq!(server.requests().len(), 2);
        // 500 exhausted: quotes the server.
        let server = serve(vec![Reply::raw(json_reply(503, "", r#"{"error":"Model is overloaded"}"#))]);
        let err = reranker(&server.url(""), RerankApi::Tei).rerank("q", &["a"]).unwrap_err().to_string();
        assert!(err.contains("503") && err.contains("Model is overloaded") && !err.contains("sk-rerank"), "{err}");
        assert_eq!(server.requests().len(), 3);
        // Wrong shape: says which api setting to try.
        let server = serve(vec![Reply::json(jina)]);
        let err = reranker(&server.url(""), RerankApi::Tei).rerank("q", &["a"]).unwrap_err().to_string();
        assert!(err.contains("api = \\\"jina\\\"") || err.contains("api = \"jina\""), "{err}");
        for (reply, expected) in [
            (Reply::raw(json_reply(200, "", "[{oops")), "not JSON"),
            (Reply::json(|_| json!([{"index": 0, "score": 0.5}])), "got no score"),
            (Reply::json(|_| json!([{"index": 9, "score": 0.5}, {"index": 1, "score": 0.5}])), "no valid `index`"),
            (Reply::json(|_| json!([{"index": 0, "score": "high"}, {"index": 1, "score": 0.5}])), "no numeric `score`"),
            (Reply::json(|_| json!([{"index": 0, "score": 0.1}, {"index": 0, "score": 0.5}])), "appears twice"),
        ] {
            let server = serve(vec![reply]);
            let err = reranker(&server.url(""), RerankApi::Tei).rerank("q", &["a", "b"]).unwrap_err().to_string();
            assert!(err.contains(expected), "expected `{expected}` in: {err}");
        }
        // Server down.
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let err = reranker(&format!("http://127.0.0.1:{port}"), RerankApi::Tei).rerank("q", &["a"]).unwrap_err();
        assert!(err.to_string().contains("cannot connect"), "{err}");
        assert!(HttpReranker::new(HttpRerankConfig::new("127.0.0.1:80", RerankApi::Tei)).is_err());
    }
}
