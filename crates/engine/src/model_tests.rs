//! The remote embedding model and the rerank stage, against scripted loopback servers.

use super::*;
use skillrag_embed::OpenAiEmbedder;
use skillrag_http::scripted::{serve, Reply, Request, Server};
use skillrag_rerank::RerankError;
use std::fs;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// Hashed bag of words (16 dimensions), like an embedding server would answer, out of order.
fn bag_of_words(r: &Request) -> serde_json::Value {
    let input = r.body["input"].as_array().cloned().unwrap_or_default();
    let data: Vec<serde_json::Value> = input
        .iter()
        .enumerate()
        .rev()
        .map(|(i, t)| {
            let mut v = vec![0.0f32; 16];
            for w in skillrag_text::analyze(t.as_str().unwrap_or("")) {
                v[blake3::hash(w.as_bytes()).as_bytes()[0] as usize % 16] += 1.0;
            }
            v[15] += 0.01; // never the zero vector
            serde_json::json!({"index": i, "embedding": v})
        })
        .collect();
    serde_json::json!({"data": data})
}

/// A project with one skill and two documents; `config` is appended to skillrag.toml.
fn project(config: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(&root.join("skillrag.toml"), &format!("[index]\nchunk_size = 200\nchunk_overlap = 40\n{config}"));
    write(&root.join("skills/good/SKILL.md"), "---\nname: good\ndescription: Router and law facts.\n---\n# Good\n");
    write(&root.join("skills/good/knowledge/law.md"), "# 劳动合同法\n\n第十条 建立劳动关系，应当订立书面劳动合同。\n");
    write(
        &root.join("skills/good/knowledge/faq.md"),
        "# FAQ\n\n## Reset\n\nHold the power button for ten seconds to reset the router.\n\n## Lights\n\nA blinking light means the router is updating.\n",
    );
    tmp
}

fn open(root: &Path) -> Result<Engine, EngineError> {
    Engine::open(Project::open(root, &BTreeMap::new())?)
}

fn embed_config(server: &Server) -> String {
    format!("[embed]\nbase_url = \"{}\"\nmodel = \"bow\"\nretries = 0\ntimeout_secs = 2\n", server.url("/v1"))
}

fn index(engine: &Engine) -> IndexReport {
    engine.index(&IndexOptions::default(), &SilentProgress).unwrap()
}

fn one_skill() -> SearchOptions {
    SearchOptions { skills: vec!["good".into()], ..Default::default() }
}

#[test]
fn remote_embeddings_index_and_search_in_hybrid_mode() {
    let server = serve(vec![Reply::json(bag_of_words)]);
    let tmp = project(&embed_config(&server));
    let e = open(tmp.path()).unwrap();
    assert_eq!(server.requests().len(), 1, "the dimension was asked once");
    let model = e.model().unwrap().clone();
    assert_eq!((model.id.as_str(), model.dim), (format!("openai:bow@{}", server.url("/v1")).as_str(), 16));
    index(&e);
    let result = e.search("reset the router", &one_skill()).unwrap();
    let hit = &result.hits[0];
    assert_eq!(hit.source, "knowledge/faq.md");
    assert!(hit.scores.dense.is_some() && result.skills[0].dense_used, "{:?}", result.skills);
    assert_eq!(result.query_visibility, Some(1.0));
    assert!(result.rerank.is_none(), "no reranker configured");

    // Reopened: the remembered dimension, no probe; nothing re-embedded.
    let before = server.requests().len();
    let e = open(tmp.path()).unwrap();
    assert_eq!(server.requests().len(), before);
    assert_eq!(e.model().unwrap().dim, 16);
    assert_eq!(index(&e).skills[0].embedded, 0);
    assert!(server.requests().iter().all(|r| r.path == "/v1/embeddings"));
}

#[test]
fn switching_between_local_and_remote_models_asks_for_a_reindex() {
    let server = serve(vec![Reply::json(bag_of_words)]);
    let tmp = project(&embed_config(&server));
    let remote_id = open(tmp.path()).unwrap().model().unwrap().id.clone();

    // Indexed under a local model, then the remote one is configured.
    let local: Arc<dyn Embedder> = Arc::new(
        OpenAiEmbedder::new(skillrag_embed::OpenAiEmbedConfig::new(&server.url("/v1"), "bow"), Some(16)).unwrap(),
    );
    struct Local(Arc<dyn Embedder>);
    impl Embedder for Local {
        fn model_id(&self) -> &str {
            "all-MiniLM-L6-v2@0123456789ab"
        }
        fn dim(&self) -> usize {
            16
        }
        fn embed(
            &self,
            t: &[&str],
            k: skillrag_embed::EmbedKind,
        ) -> Result<Vec<skillrag_embed::Embedding>, skillrag_embed::EmbedError> {
            self.0.embed(t, k)
        }
    }
    let local_engine = open(tmp.path()).unwrap().with_embedder(Arc::new(Local(local)));
    index(&local_engine);
    let result = open(tmp.path()).unwrap().search("reset", &one_skill()).unwrap();
    let notice = result.skills[0].notice.clone().unwrap_or_default();
    assert!(notice.contains("all-MiniLM-L6-v2@0123456789ab") && notice.contains(&remote_id), "{notice}");
    assert!(!result.skills[0].dense_used);
    let report = index(&open(tmp.path()).unwrap());
    assert!(report.skills[0].rebuilt.as_deref().unwrap_or("").contains("embedding model changed"), "{report:?}");

    // And back: the remote index is not served to the local model.
    let result = local_engine.search("reset", &one_skill()).unwrap();
    assert!(result.skills[0].notice.as_deref().unwrap_or("").contains("re-index"), "{:?}", result.skills);

    // Another model name on the same server is another model.
    let other = format!("[embed]\nbase_url = \"{}\"\nmodel = \"bow-2\"\ndim = 16\n", server.url("/v1"));
    write(&tmp.path().join("skillrag.toml"), &other);
    assert_ne!(open(tmp.path()).unwrap().model().unwrap().id, remote_id);
}

#[test]
fn an_embedding_server_that_is_down_is_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let tmp = project(&format!("[embed]\nbase_url = \"{url}\"\nmodel = \"bow\"\nretries = 0\n"));
    let err = open(tmp.path()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("cannot connect") && err.contains(&url) && err.contains("[embed] dim"), "{err}");
    // With the dimension given, the engine opens; indexing then fails clearly, keeping nothing half-done.
    let tmp = project(&format!("[embed]\nbase_url = \"{url}\"\nmodel = \"bow\"\nretries = 0\ndim = 16\n"));
    let e = open(tmp.path()).unwrap();
    let err = e.index(&IndexOptions::default(), &SilentProgress).unwrap_err().to_string();
    assert!(err.contains("cannot connect"), "{err}");
    assert!(e.index_of("good").unwrap().is_none());
    // A base URL without a model name.
    let tmp = project(&format!("[embed]\nbase_url = \"{url}\"\ndim = 16\n"));
    let err = open(tmp.path()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("needs [embed] model"), "{err}");
}

/// Scores passages by how many query words they contain; counts calls.
struct Overlap(std::sync::atomic::AtomicUsize);

impl skillrag_rerank::Reranker for Overlap {
    fn model_id(&self) -> &str {
        "overlap"
    }
    fn rerank(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, RerankError> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let words = skillrag_text::analyze(query);
        Ok(passages
            .iter()
            .map(|p| {
                let have = skillrag_text::analyze(p);
                words.iter().filter(|w| have.contains(w)).count() as f32 / words.len().max(1) as f32
            })
            .collect())
    }
}

struct Broken;

impl skillrag_rerank::Reranker for Broken {
    fn model_id(&self) -> &str {
        "broken"
    }
    fn rerank(&self, _: &str, _: &[&str]) -> Result<Vec<f32>, RerankError> {
        Err(RerankError::Config("server on fire".into()))
    }
}

#[test]
fn the_rerank_stage_reorders_the_fused_candidates() {
    let tmp = project("");
    let e = open(tmp.path()).unwrap();
    index(&e);
    let plain = e.search("router blinking light", &one_skill()).unwrap();
    assert!(plain.hits.iter().all(|h| h.scores.rerank.is_none()));

    let counter = Arc::new(Overlap(Default::default()));
    let e = open(tmp.path()).unwrap().with_reranker(Some(counter.clone()));
    let result = e.search("blinking light router", &one_skill()).unwrap();
    let report = result.rerank.clone().unwrap();
    assert_eq!((report.model.as_str(), report.error.as_ref()), ("overlap", None));
    assert_eq!(report.candidates, result.hits.len());
    let scores: Vec<f32> = result.hits.iter().map(|h| h.scores.rerank.unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "ordered by rerank score: {scores:?}");
    assert!(result.hits[0].text.contains("blinking"), "{:?}", result.hits[0]);
    // The fused breakdown is kept as it was.
    for hit in &result.hits {
        let before = plain.hits.iter().find(|h| h.chunk_id == hit.chunk_id);
        if let Some(before) = before {
            assert_eq!((before.scores.fused, before.ranks.fused), (hit.scores.fused, hit.ranks.fused));
        }
    }
    let json = serde_json::to_value(&result).unwrap();
    assert!(json["hits"][0]["scores"]["rerank"].is_number(), "{json}");

    // Opting out, and fewer candidates than hits.
    let n = counter.0.load(std::sync::atomic::Ordering::SeqCst);
    let off = e.search("blinking light router", &SearchOptions { rerank: false, ..one_skill() }).unwrap();
    assert!(off.rerank.is_none() && off.hits.iter().all(|h| h.scores.rerank.is_none()));
    assert_eq!(counter.0.load(std::sync::atomic::Ordering::SeqCst), n);
    write(
        &tmp.path().join("skillrag.toml"),
        "[index]\nchunk_size = 200\nchunk_overlap = 40\n[rerank]\ncandidates = 1\n",
    );
    let e = open(tmp.path()).unwrap().with_reranker(Some(counter));
    let result = e.search("blinking light router", &one_skill()).unwrap();
    assert_eq!(result.hits.iter().filter(|h| h.scores.rerank.is_some()).count(), 1);
    assert_eq!(result.rerank.unwrap().candidates, 1);
}

#[test]
fn a_failing_reranker_keeps_the_fused_order_with_a_notice() {
    let tmp = project("");
    let e = open(tmp.path()).unwrap();
    index(&e);
    let plain = e.search("router light", &one_skill()).unwrap();
    let e = open(tmp.path()).unwrap().with_reranker(Some(Arc::new(Broken)));
    let result = e.search("router light", &one_skill()).unwrap();
    let ids = |r: &SearchResult| r.hits.iter().map(|h| h.chunk_id).collect::<Vec<_>>();
    assert_eq!(ids(&result), ids(&plain));
    assert!(result.hits.iter().all(|h| h.scores.rerank.is_none()));
    let notice = result.skills[0].notice.clone().unwrap_or_default();
    assert!(notice.contains("reranking failed, fused order kept") && notice.contains("server on fire"), "{notice}");
    assert!(result.rerank.unwrap().error.is_some());
}

#[test]
fn a_configured_rerank_endpoint_is_used_and_its_faults_are_notices() {
    // TEI shape: the passage that mentions "blinking" scores highest.
    let server = serve(vec![Reply::json(|r: &Request| {
        let texts = r.body["texts"].as_array().cloned().unwrap_or_default();
        let scores: Vec<serde_json::Value> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| serde_json::json!({"index": i, "score": if t.as_str().unwrap_or("").contains("blinking") { 0.9 } else { 0.1 }}))
            .collect();
        serde_json::Value::Array(scores)
    })]);
    let tmp = project(&format!("[rerank]\nurl = \"{}\"\n", server.url("")));
    let e = open(tmp.path()).unwrap();
    index(&e);
    let result = e.search("router", &one_skill()).unwrap();
    assert!(result.hits[0].text.contains("blinking"), "{:?}", result.hits);
    assert_eq!(result.hits[0].scores.rerank, Some(0.9));
    assert!(server.requests()[0].head.starts_with("POST /rerank"));
    assert!(result.rerank.unwrap().model.starts_with("tei@"));

    // Server down: the answer survives, with a notice.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    write(
        &tmp.path().join("skillrag.toml"),
        &format!("[rerank]\nurl = \"http://127.0.0.1:{port}\"\nretries = 0\ntimeout_secs = 1\n"),
    );
    let result = open(tmp.path()).unwrap().search("router", &SearchOptions::default()).unwrap();
    assert!(!result.hits.is_empty());
    let notice = result.skills[0].notice.clone().unwrap_or_default();
    assert!(notice.contains("cannot connect"), "{notice}");
}

#[test]
fn bad_rerank_settings_are_errors_at_open() {
    let err = |config: &str| open(project(config).path()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err("[rerank]\nurl = \"http://h\"\napi = \"soap\"\n").contains("`soap` is not supported"));
    assert!(err("[rerank]\nurl = \"h:80\"\n").contains("http://"));
    assert!(err("[rerank]\nmodel = \"no/such/folder\"\n").contains("no config.json"));
    assert!(err("[rerank]\nurl = \"http://h\"\ncandidates = 0\n").contains("candidates"));
    // A folder that exists but does not load is reported at query time, keeping the fused order.
    let tmp = project("[rerank]\nmodel = \"xenc\"\n");
    write(&tmp.path().join("xenc/config.json"), "{}");
    let e = open(tmp.path()).unwrap();
    index(&e);
    let result = e.search("router", &one_skill()).unwrap();
    assert!(!result.hits.is_empty());
    assert!(
        result.skills[0].notice.as_deref().unwrap_or("").contains("tokenizer.json is missing"),
        "{:?}",
        result.skills
    );
}

#[test]
fn the_llm_opens_from_the_backend_factory() {
    let generator = |config: &str| open(project(config).path()).unwrap().open_generator();
    assert!(generator("").unwrap().is_none(), "no [llm]: extractive answers");
    let api = generator("[llm]\nbase_url = \"http://127.0.0.1:9/v1/\"\nmodel = \"m\"\n").unwrap().unwrap();
    assert_eq!(api.describe(), "openai:m@http://127.0.0.1:9/v1");
    let err = generator("[llm]\nbase_url = \"localhost:9\"\n").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("must start with http://"), "{err}");
    let err = generator("[llm]\ngguf = \"no/such.gguf\"\n").err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err.contains("such.gguf"), "{err}");
}
