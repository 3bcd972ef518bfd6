//! Opens the configured LLM (`[llm]`): an OpenAI-compatible API when `base_url` is set, else a
//! local GGUF file when `gguf` is set, else none (extractive answers).

use skillrag_engine::Engine;
use skillrag_generate::gguf::{GgufGenerator, GgufOptions};
use skillrag_generate::openai::{OpenAiConfig, OpenAiGenerator};
use skillrag_generate::{GenerateError, Generator};
use std::sync::Arc;
use std::time::Duration;

/// The API key's environment variable (never read from a file).
pub const API_KEY_VAR: &str = "SKILLRAG_LLM_API_KEY";

pub fn open_generator(engine: &Engine) -> Result<Option<Arc<dyn Generator>>, GenerateError> {
    let config = &engine.project.config.llm;
    let base_url = config.base_url.trim();
    if !base_url.is_empty() {
        let mut c = OpenAiConfig::new(base_url, config.model.trim());
        c.api_key = std::env::var(API_KEY_VAR).ok().filter(|k| !k.trim().is_empty());
        c.timeout = Duration::from_secs(config.timeout_secs.max(1));
        c.retries = config.retries;
        return Ok(Some(Arc::new(OpenAiGenerator::new(c)?)));
    }
    let Some(path) = engine.project.config.llm_gguf_path(&engine.project.root) else { return Ok(None) };
    let options = GgufOptions {
        // The faster requantized copy lives with the project's other caches.
        cache_dir: Some(engine.project.state_dir().join("cache/llm")),
        seed: 0,
    };
    Ok(Some(Arc::new(GgufGenerator::open(&path, options)?)))
}
