//! A `tokenizers::Tokenizer` built from GGUF metadata (`tokenizer.ggml.*`), so a GGUF file is
//! all a local model needs: no tokenizer.json next to it.
//!
//! The tokenizer is described as a tokenizer.json-shaped JSON value and loaded with
//! `Tokenizer::from_str`, which keeps the actual BPE, pre-tokenization and decoding in the
//! tokenizers library.

use candle_core::quantized::gguf_file::{Content, Value};
use serde_json::{json, Map};
use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use tokenizers::Tokenizer;

// llama.cpp token types (`tokenizer.ggml.token_type`).
const TOKEN_TYPE_CONTROL: i32 = 3;
const TOKEN_TYPE_USER_DEFINED: i32 = 4;

/// Control tokens that end an assistant turn in the common chat formats.
const END_OF_TURN: &[&str] =
    &["<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end_of_text|>", "<end_of_turn>", "<|end|>"];

// Split regexes of llama.cpp's `tokenizer.ggml.pre` variants (as in the models' tokenizer.json).
const QWEN2_SPLIT: &str =
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
const LLAMA3_SPLIT: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// The tokenizer of a GGUF model and the token ids generation needs.
pub struct GgufTokenizer {
    pub tokenizer: Tokenizer,
    pub bos: Option<(u32, String)>,
    pub eos: Option<(u32, String)>,
    /// Whether a prompt starts with BOS (`tokenizer.ggml.add_bos_token`).
    pub add_bos: bool,
    /// Tokens that end generation: EOS and the end-of-turn control tokens.
    pub stop_ids: HashSet<u32>,
}

impl std::fmt::Debug for GgufTokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GgufTokenizer")
            .field("vocab", &self.tokenizer.get_vocab_size(true))
            .field("bos", &self.bos)
            .field("eos", &self.eos)
            .field("stop_ids", &self.stop_ids)
            .finish()
    }
}

fn string_array<'a>(content: &'a Content, key: &str) -> Result<Option<Vec<&'a str>>, String> {
    match content.metadata.get(key) {
        None => Ok(None),
        Some(value) => {
            let items = value.to_vec().map_err(|e| format!("{key}: {e}"))?;
            items
                .iter()
                .map(|v| v.to_string().map(String::as_str).map_err(|e| format!("{key}: {e}")))
                .collect::<Result<Vec<_>, _>>()
                .map(Some)
        }
    }
}

fn number_array(content: &Content, key: &str) -> Result<Option<Vec<f64>>, String> {
    let Some(value) = content.metadata.get(key) else { return Ok(None) };
    let items = value.to_vec().map_err(|e| format!("{key}: {e}"))?;
    items
        .iter()
        .map(|v| value_f64(v).ok_or_else(|| format!("{key}: not a number array")))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn value_f64(value: &Value) -> Option<f64> {
    Some(match value {
        Value::U8(v) => *v as f64,
        Value::I8(v) => *v as f64,
        Value::U16(v) => *v as f64,
        Value::I16(v) => *v as f64,
        Value::U32(v) => *v as f64,
        Value::I32(v) => *v as f64,
        Value::U64(v) => *v as f64,
        Value::I64(v) => *v as f64,
        Value::F32(v) => *v as f64,
        Value::F64(v) => *v,
        _ => return None,
    })
}

pub(crate) fn metadata_u32(content: &Content, key: &str) -> Option<u32> {
    content.metadata.get(key).and_then(value_f64).filter(|v| *v >= 0.0 && *v <= u32::MAX as f64).map(|v| v as u32)
}

fn metadata_str<'a>(content: &'a Content, key: &str) -> Option<&'a str> {
    content.metadata.get(key).and_then(|v| v.to_string().ok()).map(String::as_str)
}

impl GgufTokenizer {
    /// Builds the tokenizer described by the GGUF metadata. Errors are plain messages; the
    /// caller adds the file path.
    pub fn from_gguf(content: &Content) -> Result<GgufTokenizer, String> {
        let model = metadata_str(content, "tokenizer.ggml.model").ok_or("no tokenizer.ggml.model in the metadata")?;
        let tokens =
            string_array(content, "tokenizer.ggml.tokens")?.ok_or("no tokenizer.ggml.tokens in the metadata")?;
        let types = number_array(content, "tokenizer.ggml.token_type")?.unwrap_or_default();
        let token_type = |id: usize| types.get(id).map(|t| *t as i32).unwrap_or(1);

        let mut added = Vec::new();
        for (id, token) in tokens.iter().enumerate() {
            let kind = token_type(id);
            if kind == TOKEN_TYPE_CONTROL || kind == TOKEN_TYPE_USER_DEFINED {
                added.push(json!({
                    "id": id, "content": token, "single_word": false, "lstrip": false, "rstrip": false,
                    "normalized": false, "special": kind == TOKEN_TYPE_CONTROL,
                }));
            }
        }
        let mut vocab = Map::with_capacity(tokens.len());
        for (id, token) in tokens.iter().enumerate() {
            // A duplicated token string keeps its first id, as llama.cpp does.
            vocab.entry(token.to_string()).or_insert(json!(id));
        }
        let merges = string_array(content, "tokenizer.ggml.merges")?;

        let (add_bos_default, spec) = match model {
            "gpt2" => {
                let merges = merges.ok_or("a gpt2 tokenizer without tokenizer.ggml.merges")?;
                let pre = metadata_str(content, "tokenizer.ggml.pre").unwrap_or("default");
                (false, byte_level(pre, vocab, &merges))
            }
            "llama" => {
                let merges = match merges {
                    Some(merges) => merges.iter().map(|m| json!(m)).collect(),
                    None => {
                        let scores = number_array(content, "tokenizer.ggml.scores")?
                            .ok_or("a llama tokenizer with neither merges nor scores")?;
                        sentencepiece_merges(&tokens, &scores)
                    }
                };
                let unk = metadata_u32(content, "tokenizer.ggml.unknown_token_id")
                    .and_then(|id| tokens.get(id as usize))
                    .map(|t| t.to_string())
                    .unwrap_or_else(|| "<unk>".to_string());
                (true, sentencepiece(vocab, merges, &unk))
            }
            other => return Err(format!("tokenizer.ggml.model '{other}' is not supported (supported: gpt2, llama)")),
        };
        let mut spec = spec;
        spec["added_tokens"] = json!(added);
        let tokenizer =
            Tokenizer::from_str(&spec.to_string()).map_err(|e| format!("cannot build the tokenizer: {e}"))?;

        let named =
            |key: &str| metadata_u32(content, key).and_then(|id| tokens.get(id as usize).map(|t| (id, t.to_string())));
        let bos = named("tokenizer.ggml.bos_token_id");
        let eos = named("tokenizer.ggml.eos_token_id");
        let add_bos = content
            .metadata
            .get("tokenizer.ggml.add_bos_token")
            .and_then(|v| v.to_bool().ok())
            .unwrap_or(add_bos_default)
            && bos.is_some();
        let mut stop_ids: HashSet<u32> = eos.iter().map(|(id, _)| *id).collect();
        if let Some(id) = metadata_u32(content, "tokenizer.ggml.eot_token_id") {
            stop_ids.insert(id);
        }
        for (id, token) in tokens.iter().enumerate() {
            if token_type(id) == TOKEN_TYPE_CONTROL && END_OF_TURN.contains(token) {
                stop_ids.insert(id as u32);
            }
        }
        Ok(GgufTokenizer { tokenizer, bos, eos, add_bos, stop_ids })
    }

    /// Token ids of a rendered prompt: the template already wrote the special tokens as text,
    /// so only BOS is added, and only when the model wants it and the template did not.
    pub fn encode_prompt(&self, prompt: &str) -> Result<Vec<u32>, String> {
        let encoding = self.tokenizer.encode(prompt, false).map_err(|e| format!("cannot tokenize the prompt: {e}"))?;
        let mut ids = encoding.get_ids().to_vec();
        if let (true, Some((bos, _))) = (self.add_bos, &self.bos) {
            if ids.first() != Some(bos) {
                ids.insert(0, *bos);
            }
        }
        Ok(ids)
    }

    pub fn count(&self, text: &str) -> Option<usize> {
        self.tokenizer.encode(text, false).ok().map(|e| e.len())
    }
}

/// GPT-2 style byte-level BPE (Qwen2, Llama 3, ...).
fn byte_level(pre: &str, vocab: Map<String, serde_json::Value>, merges: &[&str]) -> serde_json::Value {
    let split = match pre {
        "qwen2" | "deepseek-r1-qwen" => Some(QWEN2_SPLIT),
        "llama-bpe" | "llama3" | "llama-v3" | "smaug-bpe" => Some(LLAMA3_SPLIT),
        // GPT-2's own regex is built into the ByteLevel pre-tokenizer.
        _ => None,
    };
    let pre_tokenizer = match split {
        Some(regex) => json!({"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": false},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
        ]}),
        None => json!({"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}),
    };
    // Qwen2's tokenizer.json normalizes to NFC first.
    let normalizer = if split == Some(QWEN2_SPLIT) { json!({"type": "NFC"}) } else { json!(null) };
    json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "normalizer": normalizer,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false},
        "model": {
            "type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
            "vocab": vocab, "merges": merges,
        },
    })
}

/// SentencePiece-style BPE (Llama 2, Mistral, ...): `▁` for spaces, byte fallback (`<0x0A>`).
fn sentencepiece(
    vocab: Map<String, serde_json::Value>,
    merges: Vec<serde_json::Value>,
    unk: &str,
) -> serde_json::Value {
    json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "normalizer": null,
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": false},
        "post_processor": null,
        "decoder": {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0},
        ]},
        "model": {
            "type": "BPE", "dropout": null, "unk_token": unk, "continuing_subword_prefix": null,
            "end_of_word_suffix": null, "fuse_unk": true, "byte_fallback": true, "ignore_merges": false,
            "vocab": vocab, "merges": merges,
        },
    })
}

/// Merges for a SentencePiece BPE vocabulary that ships scores instead of merges: every split
/// of a piece into two known pieces is a merge, ranked by the merged piece's score (the same
/// extraction as Hugging Face's `SentencePieceExtractor`).
fn sentencepiece_merges(tokens: &[&str], scores: &[f64]) -> Vec<serde_json::Value> {
    let ids: HashMap<&str, usize> = tokens.iter().enumerate().map(|(id, t)| (*t, id)).collect();
    let mut merges = Vec::new();
    for (id, piece) in tokens.iter().enumerate() {
        let score = scores.get(id).copied().unwrap_or(0.0);
        for (split, _) in piece.char_indices().skip(1) {
            let (left, right) = piece.split_at(split);
            if let (Some(&l), Some(&r)) = (ids.get(left), ids.get(right)) {
                merges.push((score, l, r, left, right));
            }
        }
    }
    merges.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    merges.into_iter().map(|(_, _, _, l, r)| json!([l, r])).collect()
}
