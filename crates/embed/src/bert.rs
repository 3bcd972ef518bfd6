//! A sentence-transformers BERT-family model run with candle on the CPU.

use crate::model_dir::{ModelDir, Pooling};
use crate::{l2_normalize, EmbedError, EmbedKind, Embedder, Embedding};
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::{bert, xlm_roberta};
use std::path::Path;
use tokenizers::{Tokenizer, TruncationParams};

enum Encoder {
    Bert(bert::BertModel),
    XlmRoberta(xlm_roberta::XLMRobertaModel),
}

/// A local BERT or XLM-RoBERTa sentence embedder (all-MiniLM, bge, e5, multilingual MiniLM, bge-m3…).
pub struct BertEmbedder {
    encoder: Encoder,
    tokenizer: Tokenizer,
    model: ModelDir,
    model_id: String,
    dim: usize,
    unk_id: Option<u32>,
    pad_id: u32,
    device: Device,
}

/// Texts per forward pass. Texts are sorted by length first, so padding stays small.
const BATCH: usize = 16;

#[derive(serde::Deserialize)]
struct Head {
    #[serde(default)]
    model_type: Option<String>,
    hidden_size: usize,
}

impl BertEmbedder {
    /// Loads the model in `path`; `None` prefixes use the model's own prompts.
    pub fn open(path: &Path, query_prefix: Option<&str>, passage_prefix: Option<&str>) -> Result<Self, EmbedError> {
        let model = ModelDir::open(path, query_prefix, passage_prefix)?;
        let err = |message: String| EmbedError::ModelDir { path: path.display().to_string(), message };
        let head: Head = serde_json::from_str(&model.config_json).map_err(|e| err(format!("config.json: {e}")))?;
        let device = Device::Cpu;
        let vb = if model.weights.extension().is_some_and(|e| e == "safetensors") {
            // SAFETY: the weights file is memory-mapped read-only; the model folder must not be
            // rewritten while skillrag runs, as with any mmap-based model loader.
            unsafe { VarBuilder::from_mmaped_safetensors(&[&model.weights], DType::F32, &device)? }
        } else {
            VarBuilder::from_pth(&model.weights, DType::F32, &device)?
        };
        let encoder = match head.model_type.as_deref() {
            Some("xlm-roberta") => {
                let config: xlm_roberta::Config =
                    serde_json::from_str(&model.config_json).map_err(|e| err(format!("config.json: {e}")))?;
                let vb =
                    if vb.contains_tensor("roberta.embeddings.word_embeddings.weight") { vb.pp("roberta") } else { vb };
                Encoder::XlmRoberta(xlm_roberta::XLMRobertaModel::new(&config, vb)?)
            }
            Some("bert") | None => {
                let config: bert::Config =
                    serde_json::from_str(&model.config_json).map_err(|e| err(format!("config.json: {e}")))?;
                Encoder::Bert(bert::BertModel::load(vb, &config)?)
            }
            Some(other) => {
                return Err(err(format!("model_type `{other}` is not supported (BERT and XLM-RoBERTa are)")));
            }
        };

        let mut tokenizer =
            Tokenizer::from_file(&model.tokenizer_json).map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        tokenizer
            .with_truncation(Some(TruncationParams { max_length: model.max_seq_length, ..Default::default() }))
            .map_err(|e| EmbedError::Tokenizer(e.to_string()))?;
        tokenizer.with_padding(None);
        let unk_id = ["[UNK]", "<unk>"].iter().find_map(|t| tokenizer.token_to_id(t));
        let pad_id = ["[PAD]", "<pad>"].iter().find_map(|t| tokenizer.token_to_id(t)).unwrap_or(0);
        let model_id = model.model_id()?;
        Ok(BertEmbedder { encoder, tokenizer, model, model_id, dim: head.hidden_size, unk_id, pad_id, device })
    }

    pub fn model_dir(&self) -> &ModelDir {
        &self.model
    }

    fn embed_batch(&self, encodings: &[&tokenizers::Encoding]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let len = encodings.iter().map(|e| e.get_ids().len()).max().unwrap_or(0).max(1);
        let n = encodings.len();
        let mut ids = Vec::with_capacity(n * len);
        let mut mask = Vec::with_capacity(n * len);
        for e in encodings {
            let real = e.get_ids();
            ids.extend_from_slice(real);
            ids.extend(std::iter::repeat_n(self.pad_id, len - real.len()));
            mask.extend(std::iter::repeat_n(1u32, real.len()));
            mask.extend(std::iter::repeat_n(0u32, len - real.len()));
        }
        let ids = Tensor::from_vec(ids, (n, len), &self.device)?;
        let mask = Tensor::from_vec(mask, (n, len), &self.device)?;
        let types = ids.zeros_like()?;
        let hidden = match &self.encoder {
            Encoder::Bert(m) => m.forward(&ids, &types, Some(&mask))?,
            Encoder::XlmRoberta(m) => m.forward(&ids, &mask, &types, None, None, None)?,
        };
        let pooled = pool(&hidden, &mask, self.model.pooling)?;
        let mut out: Vec<Vec<f32>> = pooled.to_vec2()?;
        out.iter_mut().for_each(|v| l2_normalize(v));
        Ok(out)
    }

    /// Tokenizes `texts` with the prefix of `kind`, truncated to the model's limit.
    fn encode(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<tokenizers::Encoding>, EmbedError> {
        let prefix = match kind {
            EmbedKind::Query => &self.model.query_prefix,
            EmbedKind::Passage => &self.model.passage_prefix,
        };
        let inputs: Vec<String> = texts.iter().map(|t| format!("{prefix}{t}")).collect();
        self.tokenizer.encode_batch(inputs, true).map_err(|e| EmbedError::Tokenizer(e.to_string()))
    }

    fn seen_share(&self, encoding: &tokenizers::Encoding) -> f32 {
        let special = encoding.get_special_tokens_mask();
        let ids = encoding.get_ids();
        let content = special.iter().filter(|&&s| s == 0).count();
        if content == 0 {
            return 0.0;
        }
        let unknown = match self.unk_id {
            Some(unk) => ids.iter().zip(special).filter(|(&id, &s)| s == 0 && id == unk).count(),
            None => 0,
        };
        1.0 - unknown as f32 / content as f32
    }
}

fn pool(hidden: &Tensor, mask: &Tensor, pooling: Pooling) -> Result<Tensor, candle_core::Error> {
    let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (n, len, 1)
    match pooling {
        Pooling::Cls => hidden.narrow(1, 0, 1)?.squeeze(1),
        Pooling::Mean | Pooling::MeanSqrtLen => {
            let summed = hidden.broadcast_mul(&mask)?.sum(1)?;
            let counts = mask.sum(1)?.clamp(1e-9f32, f32::MAX)?;
            let divisor = if pooling == Pooling::Mean { counts } else { counts.sqrt()? };
            summed.broadcast_div(&divisor)
        }
        Pooling::Max => {
            // Padding positions must never win the max.
            let penalty = ((mask.ones_like()? - &mask)? * -1e9f64)?;
            hidden.broadcast_add(&penalty)?.max(1)
        }
    }
}

impl Embedder for BertEmbedder {
    fn model_id(&self) -> &str {
        &self.model_id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn visibility(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<f32>, EmbedError> {
        Ok(self.encode(texts, kind)?.iter().map(|e| self.seen_share(e)).collect())
    }

    fn embed(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<Embedding>, EmbedError> {
        let encodings = self.encode(texts, kind)?;
        let mut order: Vec<usize> = (0..encodings.len()).collect();
        order.sort_by_key(|&i| encodings[i].get_ids().len());
        let mut vectors: Vec<Vec<f32>> = vec![Vec::new(); encodings.len()];
        for batch in order.chunks(BATCH) {
            let refs: Vec<&tokenizers::Encoding> = batch.iter().map(|&i| &encodings[i]).collect();
            for (&i, v) in batch.iter().zip(self.embed_batch(&refs)?) {
                vectors[i] = v;
            }
        }
        Ok(vectors
            .into_iter()
            .zip(&encodings)
            .map(|(vector, e)| Embedding { vector, visibility: self.seen_share(e) })
            .collect())
    }
}
