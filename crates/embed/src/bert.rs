//! A sentence-transformers BERT-family model run with candle on the CPU.

use crate::local::{Batch, Encoder, LocalEmbedder};
use crate::model_dir::ModelDir;
use crate::EmbedError;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::{bert, xlm_roberta};
use std::path::Path;

enum Model {
    Bert(bert::BertModel),
    XlmRoberta(xlm_roberta::XLMRobertaModel),
}

/// The forward pass of a BERT or XLM-RoBERTa checkpoint (safetensors or PyTorch) in candle.
pub struct CandleEncoder {
    model: Model,
    device: Device,
}

/// A local BERT or XLM-RoBERTa sentence embedder run by candle (all-MiniLM, bge, e5,
/// multilingual MiniLM, bge-m3…). Needs nothing but the model folder.
pub type BertEmbedder = LocalEmbedder<CandleEncoder>;

#[derive(serde::Deserialize)]
pub(crate) struct Head {
    #[serde(default)]
    pub model_type: Option<String>,
    pub hidden_size: usize,
}

impl Head {
    pub(crate) fn read(model: &ModelDir) -> Result<Head, EmbedError> {
        serde_json::from_str(&model.config_json).map_err(|e| EmbedError::ModelDir {
            path: model.path.display().to_string(),
            message: format!("config.json: {e}"),
        })
    }
}

impl BertEmbedder {
    /// Loads the model in `path`; `None` prefixes use the model's own prompts.
    pub fn open(path: &Path, query_prefix: Option<&str>, passage_prefix: Option<&str>) -> Result<Self, EmbedError> {
        let model = ModelDir::open(path, query_prefix, passage_prefix)?;
        let err = |message: String| EmbedError::ModelDir { path: path.display().to_string(), message };
        let head = Head::read(&model)?;
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
                Model::XlmRoberta(xlm_roberta::XLMRobertaModel::new(&config, vb)?)
            }
            Some("bert") | None => {
                let config: bert::Config =
                    serde_json::from_str(&model.config_json).map_err(|e| err(format!("config.json: {e}")))?;
                Model::Bert(bert::BertModel::load(vb, &config)?)
            }
            Some(other) => {
                return Err(err(format!("model_type `{other}` is not supported (BERT and XLM-RoBERTa are)")));
            }
        };
        let model_id = model.model_id()?;
        LocalEmbedder::new(CandleEncoder { model: encoder, device }, model, model_id, head.hidden_size)
    }
}

impl Encoder for CandleEncoder {
    fn hidden_states(&self, batch: &Batch) -> Result<Vec<f32>, EmbedError> {
        let shape = (batch.rows, batch.len);
        let ids = Tensor::from_vec(batch.ids.clone(), shape, &self.device)?;
        let mask = Tensor::from_vec(batch.mask.clone(), shape, &self.device)?;
        let types = ids.zeros_like()?;
        let hidden = match &self.model {
            Model::Bert(m) => m.forward(&ids, &types, Some(&mask))?,
            Model::XlmRoberta(m) => m.forward(&ids, &mask, &types, None, None, None)?,
        };
        Ok(hidden.flatten_all()?.to_vec1()?)
    }
}
