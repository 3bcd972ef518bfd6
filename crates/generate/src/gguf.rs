//! A local GGUF chat model run in-process with candle. (Being written; this stub keeps the API.)

use crate::{ChatRequest, GenerateError, Generation, Generator, OnPiece};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default)]
pub struct GgufOptions {
    pub threads: Option<usize>,
    pub cache_dir: Option<PathBuf>,
    pub seed: u64,
}

pub struct GgufGenerator;

impl GgufGenerator {
    pub fn open(path: &Path, _options: GgufOptions) -> Result<GgufGenerator, GenerateError> {
        Err(GenerateError::Model { path: path.display().to_string(), message: "not available yet".into() })
    }
}

impl Generator for GgufGenerator {
    fn describe(&self) -> String {
        String::new()
    }
    fn generate(&self, _: &ChatRequest, _: OnPiece<'_>) -> Result<Generation, GenerateError> {
        Err(GenerateError::Inference("not available yet".into()))
    }
}
