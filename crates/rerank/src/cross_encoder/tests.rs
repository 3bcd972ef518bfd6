//! The candle code path on tiny randomly initialised models written to a temporary folder:
//! shapes, determinism, batching invariance, truncation and clear errors. Random weights say
//! nothing about ranking quality; a real model is tested when `SKILLRAG_TEST_RERANK_MODEL`
//! names one.

use super::*;
use candle_nn::VarMap;
use serde_json::json;
use std::path::PathBuf;

const WORDS: [&str; 16] =
    ["the", "cat", "sat", "on", "mat", "dog", "ran", "in", "park", "what", "did", "where", "a", "red", "apple", "pie"];

/// A WordLevel tokenizer.json over `specials` then [`WORDS`], with the given post-processor.
fn tokenizer_json(specials: &[&str], unk: &str, post: serde_json::Value) -> String {
    let vocab: serde_json::Map<String, serde_json::Value> =
        specials.iter().chain(WORDS.iter()).enumerate().map(|(i, w)| (w.to_string(), json!(i))).collect();
    let added: Vec<_> = specials
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({"id": i, "content": s, "single_word": false, "lstrip": false, "rstrip": false,
                   "normalized": false, "special": true})
        })
        .collect();
    json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": added,
        "normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": post, "decoder": null,
        "model": {"type": "WordLevel", "vocab": vocab, "unk_token": unk}
    })
    .to_string()
}

fn tiny_bert(dir: &Path) -> PathBuf {
    let path = dir.join("tiny-bert-reranker");
    std::fs::create_dir_all(&path).unwrap();
    let vocab = 4 + WORDS.len();
    let config = json!({
        "architectures": ["BertForSequenceClassification"], "model_type": "bert",
        "vocab_size": vocab, "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
        "intermediate_size": 32, "hidden_act": "gelu", "hidden_dropout_prob": 0.0,
        "max_position_embeddings": 64, "type_vocab_size": 2, "initializer_range": 0.02,
        "layer_norm_eps": 1e-12, "pad_token_id": 0, "id2label": {"0": "LABEL_0"}
    });
    std::fs::write(path.join("config.json"), config.to_string()).unwrap();
    let bert_config: bert::Config = serde_json::from_value(config).unwrap();
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
    bert::BertModel::load(vb.pp("bert"), &bert_config).unwrap();
    candle_nn::linear(16, 16, vb.pp("bert.pooler.dense")).unwrap();
    candle_nn::linear(16, 1, vb.pp("classifier")).unwrap();
    varmap.save(path.join("model.safetensors")).unwrap();
    let post = json!({"type": "BertProcessing", "sep": ["[SEP]", 3], "cls": ["[CLS]", 2]});
    std::fs::write(path.join("tokenizer.json"), tokenizer_json(&["[PAD]", "[UNK]", "[CLS]", "[SEP]"], "[UNK]", post))
        .unwrap();
    path
}

fn tiny_xlm_roberta(dir: &Path) -> PathBuf {
    let path = dir.join("tiny-xlmr-reranker");
    std::fs::create_dir_all(&path).unwrap();
    let config = json!({
        "architectures": ["XLMRobertaForSequenceClassification"], "model_type": "xlm-roberta",
        "vocab_size": 4 + WORDS.len(), "hidden_size": 16, "num_hidden_layers": 2, "num_attention_heads": 2,
        "intermediate_size": 32, "hidden_act": "gelu", "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0, "position_embedding_type": "absolute",
        "max_position_embeddings": 66, "type_vocab_size": 1, "layer_norm_eps": 1e-5, "pad_token_id": 1,
        "num_labels": 1
    });
    std::fs::write(path.join("config.json"), config.to_string()).unwrap();
    let xc: xlm_roberta::Config = serde_json::from_value(config).unwrap();
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
    xlm_roberta::XLMRobertaForSequenceClassification::new(1, &xc, vb).unwrap();
    varmap.save(path.join("model.safetensors")).unwrap();
    let post = json!({"type": "RobertaProcessing", "sep": ["</s>", 2], "cls": ["<s>", 0],
                      "trim_offsets": true, "add_prefix_space": false});
    std::fs::write(path.join("tokenizer.json"), tokenizer_json(&["<s>", "<pad>", "</s>", "<unk>"], "<unk>", post))
        .unwrap();
    path
}

fn check_code_path(model: &CrossEncoder) {
    let passages = ["the cat sat on the mat", "a dog ran in the park", "red apple pie", "the cat"];
    let scores = model.rerank("where did the cat sit", &passages).unwrap();
    assert_eq!(scores.len(), 4);
    assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)), "{scores:?}");
    assert_eq!(model.rerank("where did the cat sit", &passages).unwrap(), scores, "deterministic");
    // Batching (and the padding it brings) does not change a pair's score.
    for (p, s) in passages.iter().zip(&scores) {
        let alone = model.rerank("where did the cat sit", &[p]).unwrap()[0];
        assert!((alone - s).abs() < 1e-5, "{p}: {alone} alone vs {s} in a batch");
    }
    let distinct: std::collections::BTreeSet<u32> = scores.iter().map(|s| s.to_bits()).collect();
    assert!(distinct.len() > 1, "the passages reach the score: {scores:?}");
    // Longer than the model's positions: truncated, not an error.
    let long = "the cat sat on the mat ".repeat(40);
    assert_eq!(model.rerank("cat", &[&long, "mat"]).unwrap().len(), 2);
    assert!(model.rerank("cat", &[]).unwrap().is_empty());
    // Unknown words are fine (the unknown token).
    assert_eq!(model.rerank("zebra", &["quokka"]).unwrap().len(), 1);
}

#[test]
fn bert_cross_encoder_code_path() {
    let tmp = tempfile::tempdir().unwrap();
    let model = CrossEncoder::open(&tiny_bert(tmp.path())).unwrap();
    assert!(model.model_id().starts_with("tiny-bert-reranker@"), "{}", model.model_id());
    assert_eq!(model.num_labels, 1);
    check_code_path(&model);
}

#[test]
fn xlm_roberta_cross_encoder_code_path() {
    let tmp = tempfile::tempdir().unwrap();
    let model = CrossEncoder::open(&tiny_xlm_roberta(tmp.path())).unwrap();
    assert!(!model.segment_types);
    check_code_path(&model);
}

#[test]
fn clear_errors_for_bad_folders() {
    let tmp = tempfile::tempdir().unwrap();
    let err = |p: &Path| CrossEncoder::open(p).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(err(&tmp.path().join("nothing")).contains("not a folder"));
    let path = tiny_bert(tmp.path());
    let config = std::fs::read_to_string(path.join("config.json")).unwrap();

    std::fs::rename(path.join("tokenizer.json"), tmp.path().join("t.json")).unwrap();
    assert!(err(&path).contains("tokenizer.json is missing"));
    std::fs::rename(tmp.path().join("t.json"), path.join("tokenizer.json")).unwrap();

    std::fs::rename(path.join("model.safetensors"), tmp.path().join("w")).unwrap();
    assert!(err(&path).contains("model.safetensors is missing"));
    std::fs::rename(tmp.path().join("w"), path.join("model.safetensors")).unwrap();

    let mut c: serde_json::Value = serde_json::from_str(&config).unwrap();
    c["model_type"] = json!("gpt2");
    c["architectures"] = json!(["GPT2ForSequenceClassification"]);
    std::fs::write(path.join("config.json"), c.to_string()).unwrap();
    let e = err(&path);
    assert!(e.contains("gpt2") && e.contains("not supported") && e.contains("tiny-bert-reranker"), "{e}");

    c["model_type"] = json!("bert");
    c["architectures"] = json!(["BertModel"]);
    std::fs::write(path.join("config.json"), c.to_string()).unwrap();
    assert!(err(&path).contains("not a cross-encoder"), "{}", err(&path));

    c["architectures"] = json!(["BertForSequenceClassification"]);
    c["id2label"] = json!({"0": "a", "1": "b", "2": "c"});
    std::fs::write(path.join("config.json"), c.to_string()).unwrap();
    assert!(err(&path).contains("3 labels"), "{}", err(&path));

    std::fs::write(path.join("config.json"), "{ not json").unwrap();
    assert!(err(&path).contains("config.json"), "{}", err(&path));

    // Weights without a classification head (an embedding model's).
    std::fs::write(path.join("config.json"), &config).unwrap();
    let varmap = VarMap::new();
    let vb = VarBuilder::from_varmap(&varmap, DType::F32, &Device::Cpu);
    bert::BertModel::load(vb, &serde_json::from_str::<bert::Config>(&config).unwrap()).unwrap();
    varmap.save(path.join("model.safetensors")).unwrap();
    assert!(err(&path).contains("classifier.weight"), "{}", err(&path));
}

/// A real cross-encoder folder (e.g. cross-encoder/ms-marco-MiniLM-L6-v2 or bge-reranker-base):
/// the relevant passage must win. Skipped unless `SKILLRAG_TEST_RERANK_MODEL` is set.
#[test]
fn real_model_prefers_the_relevant_passage() {
    let Some(dir) = std::env::var_os("SKILLRAG_TEST_RERANK_MODEL") else {
        eprintln!("skipped: set SKILLRAG_TEST_RERANK_MODEL to a cross-encoder folder");
        return;
    };
    let model = CrossEncoder::open(Path::new(&dir)).unwrap();
    let scores = model
        .rerank(
            "How many people live in Berlin?",
            &[
                "Berlin has a population of 3,520,031 registered inhabitants in an area of 891.82 square kilometers.",
                "Berlin is well known for its museums.",
                "The cat sat on the mat.",
            ],
        )
        .unwrap();
    assert!(scores[0] > scores[1] && scores[1] > scores[2] - 0.05 && scores[0] > 0.5, "{scores:?}");
}
