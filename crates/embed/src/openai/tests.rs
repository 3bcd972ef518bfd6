//! The embeddings client against a scripted loopback server.

use super::*;
use skillrag_http::scripted::{json_reply, serve, Reply, Request};
use std::time::Duration;

fn config(url: &str) -> OpenAiEmbedConfig {
    let mut c = OpenAiEmbedConfig::new(url, "test-embed");
    c.batch = 2;
    c.http = HttpConfig {
        timeout: Duration::from_millis(500),
        retries: 2,
        backoff: Duration::from_millis(10),
        api_key: Some("sk-embed-secret".into()),
        ..Default::default()
    };
    c
}

/// `[len(text), 1, 0]` per input, answered in reverse order (as some servers do).
fn reversed(r: &Request) -> Value {
    let input = r.body["input"].as_array().cloned().unwrap_or_default();
    let data: Vec<Value> = input
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| json!({"object": "embedding", "index": i, "embedding": [t.as_str().unwrap_or("").len() as f32, 1.0, 0.0]}))
        .collect();
    json!({"object": "list", "data": data, "model": "test-embed"})
}

#[test]
fn batches_orders_by_index_and_normalizes() {
    let server = serve(vec![Reply::json(reversed)]);
    let mut c = config(&server.url("/v1"));
    c.query_prefix = "q: ".into();
    let e = OpenAiEmbedder::new(c, Some(3)).unwrap();
    let out = e.embed(&["a", "bbb", "cc"], EmbedKind::Passage).unwrap();
    assert_eq!(out.len(), 3);
    for (emb, len) in out.iter().zip([1.0f32, 3.0, 2.0]) {
        let norm = (len * len + 1.0).sqrt();
        assert!((emb.vector[0] - len / norm).abs() < 1e-6, "{:?}", emb.vector);
        assert_eq!(emb.visibility, 1.0);
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "batch of 2, then 1");
    assert!(requests[0].head.starts_with("POST /v1/embeddings"), "{}", requests[0].head);
    assert!(requests[0].head.contains("Bearer sk-embed-secret"));
    assert_eq!(requests[0].body["model"], "test-embed");
    assert_eq!(requests[0].body["input"], json!(["a", "bbb"]));
    // The query prefix goes only on queries.
    let q = e.embed_query("x").unwrap();
    assert_eq!(server.requests()[2].body["input"], json!(["q: x"]));
    assert!((q.vector[0] - 4.0 / 17f32.sqrt()).abs() < 1e-6);
    assert_eq!(e.dim(), 3);
    assert_eq!(e.visibility(&["x", "y"], EmbedKind::Query).unwrap(), vec![1.0, 1.0]);
    assert!(requests.iter().all(|r| r.body.get("input_type").is_none()), "not sent unless configured");
}

#[test]
fn input_types_tell_questions_from_passages() {
    let server = serve(vec![Reply::json(reversed)]);
    let mut c = config(&server.url("/v1"));
    c.query_input_type = "query".into();
    c.passage_input_type = "passage".into();
    let e = OpenAiEmbedder::new(c, Some(3)).unwrap();
    e.embed(&["a"], EmbedKind::Passage).unwrap();
    e.embed_query("x").unwrap();
    let requests = server.requests();
    assert_eq!(requests[0].body["input_type"], "passage");
    assert_eq!(requests[1].body["input_type"], "query");
    assert_eq!(requests[1].body["input"], json!(["x"]), "no prefix added by us");
}

#[test]
fn model_id_names_server_model_and_prefixes() {
    let a = OpenAiEmbedConfig::new("http://h:1/v1/", "m");
    assert_eq!(a.model_id(), "openai:m@http://h:1/v1");
    let mut b = a.clone();
    b.query_prefix = "query: ".into();
    assert_ne!(a.model_id(), b.model_id());
    let mut c = a.clone();
    c.query_input_type = "query".into();
    assert_ne!(a.model_id(), c.model_id());
    assert_ne!(b.model_id(), c.model_id());
    assert_ne!(a.model_id(), OpenAiEmbedConfig::new("http://h:2/v1", "m").model_id());
    assert_ne!(a.model_id(), OpenAiEmbedConfig::new("http://h:1/v1", "m2").model_id());
}

#[test]
fn probes_the_dimension_when_not_given() {
    let server = serve(vec![Reply::json(reversed)]);
    let e = OpenAiEmbedder::new(config(&server.url("/v1")), None).unwrap();
    assert_eq!(e.dim(), 3);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn retries_429_then_succeeds() {
    let server = serve(vec![
        Reply::raw(json_reply(429, "retry-after: 0\r\n", r#"{"error":{"message":"rate limited"}}"#)),
        Reply::json(reversed),
    ]);
    let e = OpenAiEmbedder::new(config(&server.url("/v1")), Some(3)).unwrap();
    assert_eq!(e.embed(&["a"], EmbedKind::Passage).unwrap().len(), 1);
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_500_that_persists_is_an_error_quoting_the_server() {
    let server = serve(vec![Reply::raw(json_reply(500, "", r#"{"error":{"message":"CUDA out of memory"}}"#))]);
    let e = OpenAiEmbedder::new(config(&server.url("/v1")), Some(3)).unwrap();
    let err = e.embed(&["a"], EmbedKind::Passage).unwrap_err().to_string();
    assert!(err.contains("500") && err.contains("CUDA out of memory"), "{err}");
    assert!(!err.contains("sk-embed-secret"), "{err}");
    assert_eq!(server.requests().len(), 3, "one try and two retries");
}

#[test]
fn malformed_and_inconsistent_answers_are_clear_errors() {
    let cases: Vec<(Reply, &str)> = vec![
        (Reply::raw(json_reply(200, "", "{not json")), "not JSON"),
        (Reply::json(|_| json!({"object": "list"})), "no `data` array"),
        (Reply::json(|_| json!({"data": [{"index": 0, "embedding": [1.0, 0.0, 0.0]}]})), "2 texts were sent but 1"),
        (
            Reply::json(
                |_| json!({"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 1, "embedding": [1.0, 0.0, 0.0]}]}),
            ),
            "has 2 dimensions, expected 3",
        ),
        (
            Reply::json(
                |_| json!({"data": [{"index": 0, "embedding": [1.0, 0.0, 0.0]}, {"index": 0, "embedding": [1.0, 0.0, 0.0]}]}),
            ),
            "appears twice",
        ),
        (
            Reply::json(
                |_| json!({"data": [{"index": 0, "embedding": [1.0, 0.0, 0.0]}, {"index": 7, "embedding": [1.0, 0.0, 0.0]}]}),
            ),
            "index 7",
        ),
        (
            Reply::json(
                |_| json!({"data": [{"index": 0, "embedding": [[1.0], [0.0]]}, {"index": 1, "embedding": [1.0, 0.0, 0.0]}]}),
            ),
            "--pooling",
        ),
    ];
    for (reply, expected) in cases {
        let server = serve(vec![reply]);
        let e = OpenAiEmbedder::new(config(&server.url("/v1")), Some(3)).unwrap();
        let err = e.embed(&["a", "b"], EmbedKind::Passage).unwrap_err().to_string();
        assert!(err.contains(expected), "expected `{expected}` in: {err}");
        assert_eq!(server.requests().len(), 1, "not retried: {err}");
    }
    // Ragged vectors without a configured dimension: checked against the first.
    let server = serve(vec![Reply::json(
        |_| json!({"data": [{"index": 0, "embedding": [1.0, 0.0, 0.0]}, {"index": 1, "embedding": [1.0]}]}),
    )]);
    let mut e = OpenAiEmbedder::new(config(&server.url("/v1")), Some(3)).unwrap();
    e.dim = 0;
    let err = e.embed(&["a", "b"], EmbedKind::Passage).unwrap_err().to_string();
    assert!(err.contains("has 1 dimensions, expected 3"), "{err}");
}

#[test]
fn server_down_and_bad_settings() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let err = OpenAiEmbedder::new(config(&url), None).unwrap_err().to_string();
    assert!(err.contains("cannot connect") && err.contains(&url), "{err}");
    let e = OpenAiEmbedder::new(config(&url), Some(3)).unwrap();
    let err = e.embed(&["a"], EmbedKind::Passage).unwrap_err().to_string();
    assert!(err.contains("cannot connect"), "{err}");
    assert!(OpenAiEmbedder::new(config("localhost:8080/v1"), Some(3)).is_err(), "scheme required");
    let err = OpenAiEmbedder::new(OpenAiEmbedConfig::new(&url, "none"), Some(3)).unwrap_err().to_string();
    assert!(err.contains("[embed] model"), "{err}");
}
