//! A local cross-encoder run with candle on the CPU.

use crate::{sigmoid, RerankError, Reranker};
use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{Linear, VarBuilder};
use candle_transformers::models::{bert, xlm_roberta};
use serde::Deserialize;
use skillrag_embed::model_folder::{FolderSpec, ModelFiles};
use std::path::Path;
use tokenizers::{EncodeInput, Encoding, Tokenizer, TruncationParams, TruncationStrategy};

enum Classifier {
    /// `BertForSequenceClassification`: the encoder, the pooler (dense + tanh on `[CLS]`) and a
    /// linear classifier.
    Bert { encoder: bert::BertModel, pooler: Linear, classifier: Linear },
    /// `XLMRobertaForSequenceClassification` (dense + tanh + out_proj on `<s>`).
    XlmRoberta(xlm_roberta::XLMRobertaForSequenceClassification),
}

/// A Hugging Face cross-encoder folder (config.json, tokenizer.json, model.safetensors): BERT
/// (ms-marco MiniLM cross-encoders…) or XLM-RoBERTa (bge-reranker-base/large/v2-m3). The score
/// of a pair is the logistic function of the logit (one label) or the softmax probability of
/// label 1 (two labels).
pub struct CrossEncoder {
    classifier: Classifier,
    tokenizer: Tokenizer,
    model_id: String,
    num_labels: usize,
    pad_id: u32,
    /// Whether the model has token type embeddings for a second segment.
    segment_types: bool,
    device: Device,
}

/// Pairs per forward pass (sorted by length first, so padding stays small).
const BATCH: usize = 8;
/// The longest pair, in tokens.
const MAX_TOKENS: usize = 512;

#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    model_type: Option<String>,
    #[serde(default)]
    architectures: Vec<String>,
    hidden_size: usize,
    #[serde(default)]
    num_labels: Option<usize>,
    #[serde(default)]
    id2label: Option<serde_json::Map<String, serde_json::Value>>,
    #[serde(default)]
    max_position_embeddings: Option<usize>,
    #[serde(default)]
    type_vocab_size: Option<usize>,
    #[serde(default)]
    pad_token_id: Option<u32>,
}

impl CrossEncoder {
    /// What a cross-encoder folder must hold.
    pub const FOLDER: FolderSpec = FolderSpec {
        what: "reranker model folder",
        fix: "set [rerank] model / SKILLRAG_RERANK_MODEL to a cross-encoder folder",
        weights: &["model.safetensors"],
    };

    /// Loads the cross-encoder in `path`.
    pub fn open(path: &Path) -> Result<CrossEncoder, RerankError> {
        let err = |message: String| RerankError::ModelDir { path: path.display().to_string(), message };
        let ModelFiles { config_json, tokenizer_json, weights } = CrossEncoder::FOLDER.check(path)?;
        let head: Head = serde_json::from_str(&config_json).map_err(|e| err(format!("config.json: {e}")))?;
        if !head.architectures.is_empty()
            && !head.architectures.iter().any(|a| a.ends_with("ForSequenceClassification"))
        {
            return Err(err(format!(
                "architectures {:?} is not a cross-encoder (…ForSequenceClassification); an embedding model goes in [embed]",
                head.architectures
            )));
        }
        let num_labels = head.num_labels.or(head.id2label.as_ref().map(|m| m.len())).unwrap_or(1);
        if !(1..=2).contains(&num_labels) {
            return Err(err(format!("{num_labels} labels: a reranker has one (a relevance logit) or two")));
        }
        let device = Device::Cpu;
        // SAFETY: the weights file is memory-mapped read-only; the model folder must not be
        // rewritten while skillrag runs, as with any mmap-based model loader.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &device)? };
        let missing = |name: &str| err(format!("model.safetensors has no `{name}`: is this a cross-encoder?"));
        let (classifier, default_pad) = match head.model_type.as_deref() {
            Some("xlm-roberta") | Some("roberta") => {
                if !vb.contains_tensor("classifier.out_proj.weight") {
                    return Err(missing("classifier.out_proj.weight"));
                }
                let config: xlm_roberta::Config =
                    serde_json::from_str(&config_json).map_err(|e| err(format!("config.json: {e}")))?;
                (
                    Classifier::XlmRoberta(xlm_roberta::XLMRobertaForSequenceClassification::new(
                        num_labels, &config, vb,
                    )?),
                    1,
                )
            }
            Some("bert") | None => {
                if !vb.contains_tensor("classifier.weight") {
                    return Err(missing("classifier.weight"));
                }
                let config: bert::Config =
                    serde_json::from_str(&config_json).map_err(|e| err(format!("config.json: {e}")))?;
                let vb_bert = if vb.contains_tensor("bert.embeddings.word_embeddings.weight") {
                    vb.pp("bert")
                } else {
                    vb.clone()
                };
                let pooler = candle_nn::linear(head.hidden_size, head.hidden_size, vb_bert.pp("pooler").pp("dense"))
                    .map_err(|_| missing("bert.pooler.dense.weight"))?;
                let encoder = bert::BertModel::load(vb_bert, &config)?;
                let classifier = candle_nn::linear(head.hidden_size, num_labels, vb.pp("classifier"))?;
                (Classifier::Bert { encoder, pooler, classifier }, 0)
            }
            Some(other) => {
                return Err(err(format!("model_type `{other}` is not supported (BERT and XLM-RoBERTa are)")));
            }
        };

        let mut tokenizer = Tokenizer::from_file(&tokenizer_json).map_err(|e| RerankError::Tokenizer(e.to_string()))?;
        // XLM-RoBERTa offsets positions by the padding index: 514 positions hold 512 tokens.
        let max_length =
            head.max_position_embeddings.map_or(MAX_TOKENS, |p| p.saturating_sub(2).max(16)).min(MAX_TOKENS);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length,
                strategy: TruncationStrategy::LongestFirst,
                ..Default::default()
            }))
            .map_err(|e| RerankError::Tokenizer(e.to_string()))?;
        tokenizer.with_padding(None);
        let pad_id = head
            .pad_token_id
            .or_else(|| ["[PAD]", "<pad>"].iter().find_map(|t| tokenizer.token_to_id(t)))
            .unwrap_or(default_pad);
        let model_id = model_id(path, &config_json, &tokenizer_json, &weights).map_err(|e| err(e.to_string()))?;
        Ok(CrossEncoder {
            classifier,
            tokenizer,
            model_id,
            num_labels,
            pad_id,
            segment_types: head.type_vocab_size.unwrap_or(2) > 1,
            device,
        })
    }

    fn score_batch(&self, encodings: &[&Encoding]) -> Result<Vec<f32>, RerankError> {
        let len = encodings.iter().map(|e| e.get_ids().len()).max().unwrap_or(0).max(1);
        let n = encodings.len();
        let (mut ids, mut mask, mut types) =
            (Vec::with_capacity(n * len), Vec::with_capacity(n * len), Vec::with_capacity(n * len));
        for e in encodings {
            let real = e.get_ids();
            let pad = len - real.len();
            ids.extend_from_slice(real);
            ids.extend(std::iter::repeat_n(self.pad_id, pad));
            mask.extend(std::iter::repeat_n(1u32, real.len()));
            mask.extend(std::iter::repeat_n(0u32, pad));
            if self.segment_types {
                types.extend_from_slice(e.get_type_ids());
            } else {
                types.extend(std::iter::repeat_n(0u32, real.len()));
            }
            types.extend(std::iter::repeat_n(0u32, pad));
        }
        let ids = Tensor::from_vec(ids, (n, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (n, len), &self.device)?;
        let types = Tensor::from_vec(types, (n, len), &self.device)?;
        let logits = match &self.classifier {
            Classifier::Bert { encoder, pooler, classifier } => {
                let hidden = encoder.forward(&ids, &types, Some(&mask))?;
                let cls = hidden.narrow(1, 0, 1)?.squeeze(1)?;
                classifier.forward(&pooler.forward(&cls)?.tanh()?)?
            }
            Classifier::XlmRoberta(m) => m.forward(&ids, &mask, &types)?,
        };
        let logits: Vec<Vec<f32>> = logits.to_vec2()?;
        Ok(logits
            .iter()
            .map(|l| match (self.num_labels, l.as_slice()) {
                (2, [a, b]) => sigmoid(b - a), // softmax probability of label 1
                (_, [x, ..]) => sigmoid(*x),
                _ => 0.0,
            })
            .collect())
    }
}

impl Reranker for CrossEncoder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn rerank(&self, query: &str, passages: &[&str]) -> Result<Vec<f32>, RerankError> {
        let inputs: Vec<EncodeInput> = passages.iter().map(|p| (query, *p).into()).collect();
        let encodings = self.tokenizer.encode_batch(inputs, true).map_err(|e| RerankError::Tokenizer(e.to_string()))?;
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| encodings[i].get_ids().len());
        let mut scores = vec![0.0; encodings.len()];
        for batch in order.chunks(BATCH) {
            let refs: Vec<&Encoding> = batch.iter().map(|&i| &encodings[i]).collect();
            for (&i, s) in batch.iter().zip(self.score_batch(&refs)?) {
                scores[i] = s;
            }
        }
        Ok(scores)
    }
}

/// `<folder name>@<fingerprint of config, tokenizer and a sample of the weights>`.
fn model_id(path: &Path, config: &str, tokenizer: &Path, weights: &Path) -> std::io::Result<String> {
    use std::io::{Read, Seek, SeekFrom};
    const SAMPLE: u64 = 1 << 20;
    let mut hasher = blake3::Hasher::new();
    hasher.update(config.as_bytes());
    hasher.update(&std::fs::read(tokenizer)?);
    let mut file = std::fs::File::open(weights)?;
    let len = file.metadata()?.len();
    hasher.update(&len.to_le_bytes());
    let mut sample = Vec::new();
    (&mut file).take(SAMPLE).read_to_end(&mut sample)?;
    if len > SAMPLE {
        file.seek(SeekFrom::Start(len - SAMPLE))?;
        file.read_to_end(&mut sample)?;
    }
    hasher.update(&sample);
    let name = path.file_name().map_or_else(|| "reranker".into(), |n| n.to_string_lossy().into_owned());
    Ok(format!("{name}@{}", &hasher.finalize().to_hex()[..12]))
}

#[cfg(test)]
mod tests;
