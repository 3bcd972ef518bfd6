//! Reading a Hugging Face / sentence-transformers model folder.

use crate::model_folder::{FolderSpec, ModelFiles};
use crate::EmbedError;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// How token vectors become one sentence vector (from `1_Pooling/config.json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pooling {
    Cls,
    Mean,
    Max,
    MeanSqrtLen,
}

/// The files and settings of a local embedding model.
#[derive(Debug, Clone)]
pub struct ModelDir {
    pub path: PathBuf,
    pub config_json: String,
    pub tokenizer_json: PathBuf,
    pub weights: PathBuf,
    pub pooling: Pooling,
    /// Token limit the model was trained with (`sentence_bert_config.json`), capped by its positions.
    pub max_seq_length: usize,
    pub query_prefix: String,
    pub passage_prefix: String,
}

#[derive(Deserialize)]
struct PoolingConfig {
    #[serde(default)]
    pooling_mode_cls_token: bool,
    #[serde(default)]
    pooling_mode_mean_tokens: bool,
    #[serde(default)]
    pooling_mode_max_tokens: bool,
    #[serde(default)]
    pooling_mode_mean_sqrt_len_tokens: bool,
}

#[derive(Deserialize)]
struct SentenceBertConfig {
    max_seq_length: Option<usize>,
}

#[derive(Deserialize, Default)]
struct SentenceTransformersConfig {
    #[serde(default)]
    prompts: std::collections::BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct ModelConfigHead {
    #[serde(default)]
    max_position_embeddings: Option<usize>,
    #[serde(default)]
    hidden_size: Option<usize>,
}

impl ModelDir {
    /// What an embedding model folder must hold.
    pub const FOLDER: FolderSpec = FolderSpec {
        what: "embedding model folder",
        fix: "set SKILLRAG_EMBED_MODEL to a model folder, or `none`",
        weights: &["model.safetensors", "pytorch_model.bin"],
    };

    /// Reads the folder. Prefixes default to the model's own `prompts` (query / document) in
    /// `config_sentence_transformers.json`; `None` arguments keep them, `Some` overrides.
    pub fn open(path: &Path, query_prefix: Option<&str>, passage_prefix: Option<&str>) -> Result<ModelDir, EmbedError> {
        let err = |message: String| EmbedError::ModelDir { path: path.display().to_string(), message };
        let ModelFiles { config_json, tokenizer_json, weights } = ModelDir::FOLDER.check(path)?;

        let pooling = match std::fs::read_to_string(path.join("1_Pooling/config.json")) {
            Ok(text) => {
                let c: PoolingConfig =
                    serde_json::from_str(&text).map_err(|e| err(format!("1_Pooling/config.json: {e}")))?;
                if c.pooling_mode_cls_token {
                    Pooling::Cls
                } else if c.pooling_mode_max_tokens {
                    Pooling::Max
                } else if c.pooling_mode_mean_sqrt_len_tokens {
                    Pooling::MeanSqrtLen
                } else if c.pooling_mode_mean_tokens {
                    Pooling::Mean
                } else {
                    return Err(err("1_Pooling/config.json enables no pooling mode".into()));
                }
            }
            // Plain transformers checkpoints have no pooling module; mean pooling is the usual default.
            Err(_) => Pooling::Mean,
        };

        let positions = serde_json::from_str::<ModelConfigHead>(&config_json)
            .map_err(|e| err(format!("config.json: {e}")))?
            .max_position_embeddings
            .unwrap_or(512);
        let max_seq_length = std::fs::read_to_string(path.join("sentence_bert_config.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<SentenceBertConfig>(&t).ok())
            .and_then(|c| c.max_seq_length)
            .unwrap_or(positions)
            .min(positions);

        let st: SentenceTransformersConfig = std::fs::read_to_string(path.join("config_sentence_transformers.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        let prompt = |keys: &[&str]| keys.iter().find_map(|k| st.prompts.get(*k).cloned()).unwrap_or_default();
        Ok(ModelDir {
            path: path.to_path_buf(),
            config_json,
            tokenizer_json,
            weights,
            pooling,
            max_seq_length,
            query_prefix: query_prefix.map_or_else(|| prompt(&["query"]), str::to_string),
            passage_prefix: passage_prefix.map_or_else(|| prompt(&["document", "passage"]), str::to_string),
        })
    }

    /// The embedding dimension (`hidden_size` in config.json), read without loading weights.
    pub fn dim(&self) -> Option<usize> {
        serde_json::from_str::<ModelConfigHead>(&self.config_json).ok()?.hidden_size
    }

    /// `<folder name>@<fingerprint>`: the fingerprint covers the config, tokenizer, weights
    /// (size and samples of their bytes), pooling and prefixes.
    pub fn model_id(&self) -> Result<String, EmbedError> {
        let err =
            |e: std::io::Error| EmbedError::ModelDir { path: self.path.display().to_string(), message: e.to_string() };
        let mut hasher = blake3::Hasher::new();
        hasher.update(self.config_json.as_bytes());
        hasher.update(&std::fs::read(&self.tokenizer_json).map_err(err)?);
        hasher.update(&weights_sample(&self.weights).map_err(err)?);
        hasher.update(
            format!("{:?}|{}|{}|{}", self.pooling, self.max_seq_length, self.query_prefix, self.passage_prefix)
                .as_bytes(),
        );
        let name = self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "model".into());
        // A pip-installed model sits in `<package>/model`; name it after the package.
        let name = if name == "model" {
            self.path.parent().and_then(|p| p.file_name()).map_or(name, |n| n.to_string_lossy().into_owned())
        } else {
            name
        };
        Ok(format!("{name}@{}", &hasher.finalize().to_hex()[..12]))
    }
}

/// The weights' length plus their first and last 1 MiB: enough to tell models apart without
/// hashing hundreds of megabytes on every start.
pub(crate) fn weights_sample(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    const SAMPLE: u64 = 1 << 20;
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let mut out = len.to_le_bytes().to_vec();
    let mut head = Vec::new();
    (&mut file).take(SAMPLE).read_to_end(&mut head)?;
    out.extend(head);
    if len > SAMPLE {
        file.seek(SeekFrom::Start(len.saturating_sub(SAMPLE)))?;
        file.read_to_end(&mut out)?;
    }
    Ok(out)
}
