//! A local GGUF chat model run in-process with candle.
//!
//! Everything comes from the one GGUF file: the weights (quantized Qwen2 or Llama), the
//! tokenizer (`tokenizer.ggml.*`, see [`tokenizer`]) and the chat template
//! (`tokenizer.chat_template`, see [`template`]). Files in the slow 4/5-bit legacy formats are
//! requantized to Q8_0 once into a cache directory ([`requant`]).

mod requant;
mod template;
#[cfg(test)]
mod tests;
mod tokenizer;

use crate::{
    reply_spellings, ChatRequest, Choice, FinishReason, GenerateError, Generation, Generator, Message, OnPiece,
};
use candle_core::quantized::gguf_file::Content;
use candle_core::{DType, Device, Tensor};
use candle_transformers::generation::{LogitsProcessor, Sampling};
use candle_transformers::models::{quantized_llama, quantized_qwen2};
use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use template::ChatTemplate;
use tokenizer::GgufTokenizer;

/// Largest context window used, whatever the model declares: the KV cache grows with it and
/// the ask path never needs more.
const MAX_CONTEXT: usize = 8192;
/// Repeat penalty applied to the last [`REPEAT_LAST_N`] tokens; mild, it only keeps small
/// models out of loops.
const REPEAT_PENALTY: f32 = 1.1;
const REPEAT_LAST_N: usize = 64;
const TOP_P: f64 = 0.9;
const SUPPORTED: &str = "qwen2, llama";

/// How to open a GGUF model.
#[derive(Debug, Clone, Default)]
pub struct GgufOptions {
    /// Where a Q8_0 copy of a Q4/Q5 file is kept (none: the file is used as is).
    pub cache_dir: Option<PathBuf>,
    /// Sampling seed when temperature > 0.
    pub seed: u64,
}

enum Weights {
    Qwen2(quantized_qwen2::ModelWeights),
    Llama(quantized_llama::ModelWeights),
}

impl Weights {
    fn forward(&mut self, input: &Tensor, index_pos: usize) -> candle_core::Result<Tensor> {
        match self {
            Weights::Qwen2(m) => m.forward(input, index_pos),
            Weights::Llama(m) => m.forward(input, index_pos),
        }
    }

    /// Both models also drop their KV cache when called with `index_pos == 0` (each
    /// attention layer replaces instead of appending then), which is how every request
    /// starts; clearing explicitly as well keeps a request that failed mid-way from holding
    /// on to its cache memory.
    fn clear_kv_cache(&mut self) {
        match self {
            Weights::Qwen2(m) => m.clear_kv_cache(),
            Weights::Llama(m) => m.clear_kv_cache(),
        }
    }
}

/// A GGUF chat model. Requests are served one at a time (the model and its KV cache sit
/// behind a mutex).
pub struct GgufGenerator {
    name: String,
    model: Mutex<Weights>,
    tokenizer: GgufTokenizer,
    template: ChatTemplate,
    context_window: usize,
    seed: u64,
    /// The file the weights were loaded from: the original, or its Q8_0 copy.
    loaded_from: PathBuf,
    load_time: Duration,
}

fn model_error(path: &Path, message: impl std::fmt::Display) -> GenerateError {
    GenerateError::Model { path: path.display().to_string(), message: message.to_string() }
}

fn inference(e: impl std::fmt::Display) -> GenerateError {
    GenerateError::Inference(e.to_string())
}

fn read_content(path: &Path) -> Result<(Content, BufReader<File>), GenerateError> {
    let file = File::open(path).map_err(|e| model_error(path, format!("cannot open the model file: {e}")))?;
    let mut reader = BufReader::new(file);
    let content =
        Content::read(&mut reader).map_err(|e| model_error(path, format!("not a readable GGUF model file: {e}")))?;
    Ok((content, reader))
}

impl GgufGenerator {
    /// Loads the model at `path`. Fails with [`GenerateError::Model`] on a missing or
    /// unreadable file, a file that is not GGUF, or an unsupported architecture.
    pub fn open(path: &Path, options: GgufOptions) -> Result<GgufGenerator, GenerateError> {
        let started = Instant::now();
        let (content, reader) = read_content(path)?;
        let architecture = content
            .metadata
            .get("general.architecture")
            .and_then(|v| v.to_string().ok())
            .cloned()
            .ok_or_else(|| model_error(path, "no general.architecture in the GGUF metadata"))?;
        if !matches!(architecture.as_str(), "qwen2" | "llama") {
            return Err(model_error(
                path,
                format!("architecture '{architecture}' is not supported (supported: {SUPPORTED})"),
            ));
        }
        let tokenizer = GgufTokenizer::from_gguf(&content).map_err(|e| model_error(path, e))?;
        let token_text = |t: &Option<(u32, String)>| t.as_ref().map(|(_, s)| s.clone()).unwrap_or_default();
        let template_source = content.metadata.get("tokenizer.chat_template").and_then(|v| v.to_string().ok());
        let template = ChatTemplate::new(
            template_source.map(String::as_str),
            &token_text(&tokenizer.bos),
            &token_text(&tokenizer.eos),
        )
        .map_err(|e| model_error(path, e))?;

        let declared = tokenizer::metadata_u32(&content, &format!("{architecture}.context_length"))
            .map(|n| n as usize)
            .unwrap_or(MAX_CONTEXT);
        let mut context_window = declared.min(MAX_CONTEXT);
        if architecture == "llama" {
            // candle's llama precomputes its rotary table for this many positions only.
            context_window = context_window.min(quantized_llama::MAX_SEQ_LEN);
        }

        // The Q8_0 copy when worthwhile and possible; a cache that cannot be written is not
        // fatal, the original still works (only slower).
        let (content, mut reader, loaded_from) = match &options.cache_dir {
            Some(dir) if requant::needs_requantize(&content) => {
                let cached = requant::cached_path(path, dir).map_err(|e| model_error(path, e))?;
                let ready = cached.is_file() || requant::write_requantized(path, &content, &cached).is_ok();
                match ready.then(|| read_content(&cached)).transpose() {
                    Ok(Some((content, reader))) => (content, reader, cached),
                    _ => (content, reader, path.to_path_buf()),
                }
            }
            _ => (content, reader, path.to_path_buf()),
        };

        let device = Device::Cpu;
        let weights = match architecture.as_str() {
            "qwen2" => quantized_qwen2::ModelWeights::from_gguf(content, &mut reader, &device).map(Weights::Qwen2),
            _ => quantized_llama::ModelWeights::from_gguf(content, &mut reader, &device).map(Weights::Llama),
        }
        .map_err(|e| model_error(&loaded_from, format!("cannot load the {architecture} weights: {e}")))?;

        let name =
            path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string());
        Ok(GgufGenerator {
            name,
            model: Mutex::new(weights),
            tokenizer,
            template,
            context_window,
            seed: options.seed,
            loaded_from,
            load_time: started.elapsed(),
        })
    }

    /// The file the weights came from (the original or its requantized copy).
    pub fn loaded_from(&self) -> &Path {
        &self.loaded_from
    }

    /// The token ids of `messages` rendered with the chat template. A prompt that does not fit is
    /// refused rather than cut: the caller (the context compiler) budgets with
    /// count_tokens/context_window and knows what to drop.
    fn prompt_ids(&self, messages: &[Message]) -> Result<Vec<u32>, GenerateError> {
        let prompt = self.template.render(messages).map_err(GenerateError::Inference)?;
        let prompt_ids = self.tokenizer.encode_prompt(&prompt).map_err(GenerateError::Inference)?;
        if prompt_ids.len() >= self.context_window {
            return Err(GenerateError::Inference(format!(
                "the prompt takes {} tokens, the model's context window is {} tokens",
                prompt_ids.len(),
                self.context_window
            )));
        }
        Ok(prompt_ids)
    }

    /// How long [`GgufGenerator::open`] took (including a first requantization).
    pub fn load_time(&self) -> Duration {
        self.load_time
    }
}

/// Holds back streamed text that could be the start of a stop string, and finds stop strings.
struct StopScan<'a> {
    stops: Vec<&'a str>,
    /// All text generated so far.
    text: String,
    /// Bytes of `text` already handed out.
    emitted: usize,
}

impl<'a> StopScan<'a> {
    fn new(stops: &'a [String]) -> Self {
        StopScan {
            stops: stops.iter().map(String::as_str).filter(|s| !s.is_empty()).collect(),
            text: String::new(),
            emitted: 0,
        }
    }

    /// Appends `piece`; returns the text now safe to emit and whether a stop string was hit
    /// (the text is then cut before it).
    fn push(&mut self, piece: &str) -> (&str, bool) {
        let search_from = self.emitted;
        self.text.push_str(piece);
        let hit = self.stops.iter().filter_map(|s| self.text[search_from..].find(s).map(|p| search_from + p)).min();
        if let Some(at) = hit {
            self.text.truncate(at);
            let start = self.emitted.min(at);
            self.emitted = at;
            return (&self.text[start..at], true);
        }
        // Keep back the longest tail that a stop string starts with.
        let safe = (self.emitted..self.text.len())
            .filter(|&i| self.text.is_char_boundary(i))
            .find(|&i| self.stops.iter().any(|s| s.starts_with(&self.text[i..])))
            .unwrap_or(self.text.len());
        let start = self.emitted;
        self.emitted = safe;
        (&self.text[start..safe], false)
    }

    /// The held-back rest, at the end of generation.
    fn flush(&mut self) -> &str {
        let start = self.emitted;
        self.emitted = self.text.len();
        &self.text[start..]
    }
}

impl Generator for GgufGenerator {
    fn describe(&self) -> String {
        format!("gguf:{}", self.name)
    }

    fn generate(&self, request: &ChatRequest, on_piece: OnPiece<'_>) -> Result<Generation, GenerateError> {
        let started = Instant::now();
        let prompt_ids = self.prompt_ids(&request.messages)?;
        let sampling = if request.temperature <= 0.0 {
            Sampling::ArgMax
        } else {
            Sampling::TopP { p: TOP_P, temperature: request.temperature as f64 }
        };
        if request.max_tokens == 0 {
            let elapsed = started.elapsed();
            return Ok(Generation {
                text: String::new(),
                finish: FinishReason::Length,
                prompt_tokens: prompt_ids.len(),
                completion_tokens: 0,
                first_token: elapsed,
                elapsed,
            });
        }
        let mut sampler = LogitsProcessor::from_sampling(self.seed, sampling);

        // A panic while the lock was held leaves only a stale KV cache, which is cleared below.
        let mut model = self.model.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        model.clear_kv_cache();
        let device = Device::Cpu;
        let mut tokens = prompt_ids.clone();
        let mut decoder = self.tokenizer.tokenizer.decode_stream(true);
        let mut scan = StopScan::new(&request.stop);
        let mut first_token = None;
        let mut completion_tokens = 0;
        let finish;

        let input = Tensor::new(prompt_ids.as_slice(), &device).and_then(|t| t.unsqueeze(0)).map_err(inference)?;
        let mut logits = model.forward(&input, 0).map_err(inference)?;
        loop {
            let last = logits.squeeze(0).and_then(|l| l.to_dtype(DType::F32)).map_err(inference)?;
            let recent = &tokens[tokens.len().saturating_sub(REPEAT_LAST_N)..];
            let last =
                candle_transformers::utils::apply_repeat_penalty(&last, REPEAT_PENALTY, recent).map_err(inference)?;
            let next = sampler.sample(&last).map_err(inference)?;
            first_token.get_or_insert_with(|| started.elapsed());
            // Counts every sampled token, the end-of-turn one included: each took a step.
            completion_tokens += 1;
            if self.tokenizer.stop_ids.contains(&next) {
                finish = FinishReason::Stop;
                break;
            }
            tokens.push(next);
            if let Some(piece) = decoder.step(next).map_err(inference)? {
                let (safe, stopped) = scan.push(&piece);
                if !safe.is_empty() {
                    on_piece(safe);
                }
                if stopped {
                    finish = FinishReason::Stop;
                    break;
                }
            }
            if completion_tokens >= request.max_tokens || tokens.len() >= self.context_window {
                finish = FinishReason::Length;
                break;
            }
            let input = Tensor::new(&[next], &device).and_then(|t| t.unsqueeze(0)).map_err(inference)?;
            logits = model.forward(&input, tokens.len() - 1).map_err(inference)?;
        }
        model.clear_kv_cache();
        drop(model);

        let rest = scan.flush();
        if !rest.is_empty() {
            on_piece(rest);
        }
        let elapsed = started.elapsed();
        Ok(Generation {
            text: scan.text,
            finish,
            prompt_tokens: prompt_ids.len(),
            completion_tokens,
            first_token: first_token.unwrap_or(elapsed),
            elapsed,
        })
    }

    fn count_tokens(&self, text: &str) -> Option<usize> {
        self.tokenizer.count(text)
    }

    /// One forward pass over the prompt; the choices' first tokens are read from its last logits.
    fn choose(&self, messages: &[Message], choices: &[&str]) -> Result<Choice, GenerateError> {
        let started = Instant::now();
        let prompt_ids = self.prompt_ids(messages)?;
        // Each choice's token ids: the first token of each spelling (the reply starts with it).
        let mut ids: Vec<Vec<u32>> = Vec::with_capacity(choices.len());
        for choice in choices {
            let mut own = Vec::new();
            for spelling in reply_spellings(choice) {
                let encoding = self.tokenizer.tokenizer.encode(spelling, false).map_err(inference)?;
                if let Some(&id) = encoding.get_ids().first() {
                    if !own.contains(&id) {
                        own.push(id);
                    }
                }
            }
            ids.push(own);
        }
        let mut model = self.model.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        model.clear_kv_cache();
        let input = Tensor::new(prompt_ids.as_slice(), &Device::Cpu).and_then(|t| t.unsqueeze(0)).map_err(inference)?;
        let logits = model.forward(&input, 0).and_then(|l| l.squeeze(0)?.to_dtype(DType::F32)?.to_vec1::<f32>());
        model.clear_kv_cache();
        drop(model);
        let logits = logits.map_err(inference)?;
        // Softmax over the whole vocabulary, so `mass` is the share the choices really got.
        let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let total: f32 = logits.iter().map(|l| (l - max).exp()).sum();
        let weights = ids
            .iter()
            .map(|own| own.iter().filter_map(|&id| logits.get(id as usize)).map(|l| (l - max).exp() / total).sum())
            .collect();
        Choice::from_weights(weights, prompt_ids.len(), started.elapsed())
            .ok_or_else(|| GenerateError::Inference("the model gave none of the choices any probability".into()))
    }

    fn context_window(&self) -> Option<usize> {
        Some(self.context_window)
    }
}
