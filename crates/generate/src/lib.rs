//! Generation (docs/design.md §4.8): the [`Generator`] trait and its backends.
//!
//! - [`openai::OpenAiGenerator`]: any OpenAI-compatible `/v1/chat/completions` endpoint
//!   (DeepSeek, Qwen/DashScope, Ollama, vLLM, llama.cpp's server), streaming over SSE, with
//!   timeouts and retries.
//! - [`gguf::GgufGenerator`]: a local GGUF model (quantized Qwen2 and Llama families) run
//!   in-process with candle; tokenizer and chat template come from the GGUF metadata.
//!
//! The ask path talks to the trait only, so a backend is swapped without touching the pipeline.

pub mod gguf;
pub mod openai;
mod sse;

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Who wrote a chat message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Message {
        Message { role: Role::System, content: content.into() }
    }
    pub fn user(content: impl Into<String>) -> Message {
        Message { role: Role::User, content: content.into() }
    }
    pub fn assistant(content: impl Into<String>) -> Message {
        Message { role: Role::Assistant, content: content.into() }
    }
}

/// One chat completion to run.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub messages: Vec<Message>,
    /// Most tokens to generate.
    pub max_tokens: usize,
    /// 0 = greedy (deterministic).
    pub temperature: f32,
    /// Generation stops before any of these strings.
    pub stop: Vec<String>,
}

impl ChatRequest {
    pub fn new(messages: Vec<Message>) -> ChatRequest {
        ChatRequest { messages, max_tokens: 512, temperature: 0.0, stop: Vec::new() }
    }
}

/// Why generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The model ended its answer (or a stop string was reached).
    Stop,
    /// `max_tokens` was reached.
    Length,
}

/// A finished completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Generation {
    pub text: String,
    pub finish: FinishReason,
    /// Tokens in the prompt, as the backend counted them (0 when it did not say).
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    /// Time to the first generated token.
    #[serde(with = "duration_ms")]
    pub first_token: Duration,
    #[serde(with = "duration_ms")]
    pub elapsed: Duration,
}

impl Generation {
    /// Decode speed: generated tokens per second after the first token.
    pub fn tokens_per_second(&self) -> f64 {
        let decode = self.elapsed.saturating_sub(self.first_token).as_secs_f64();
        if self.completion_tokens < 2 || decode <= 0.0 {
            return 0.0;
        }
        (self.completion_tokens - 1) as f64 / decode
    }
}

mod duration_ms {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64() * 1000.0)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        Ok(Duration::from_secs_f64(f64::deserialize(d)?.max(0.0) / 1000.0))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The server could not be reached, or the connection broke (retried before giving up).
    #[error("cannot reach the LLM at {url}: {message}")]
    Unreachable { url: String, message: String },
    #[error("the LLM at {url} did not answer within {seconds} s")]
    Timeout { url: String, seconds: u64 },
    /// The server answered with an HTTP error (after retries for 429 and 5xx).
    #[error("the LLM at {url} answered HTTP {status}: {message}")]
    Status { url: String, status: u16, message: String },
    /// The server's answer could not be understood.
    #[error("the LLM at {url} sent an answer that is not a chat completion: {message}")]
    Protocol { url: String, message: String },
    /// The stream ended before the completion did (connection cut mid-stream).
    #[error("the LLM's stream from {url} broke off after {received} characters: {message}")]
    Interrupted { url: String, received: usize, message: String },
    /// A local model file that cannot be used.
    #[error("{path}: {message}")]
    Model { path: String, message: String },
    #[error("local generation failed: {0}")]
    Inference(String),
}

/// The model's choice among a few one-word replies, read from its next-token distribution after
/// the prompt rather than from generated text: no sampling and no parsing, and the probabilities
/// say how sure it is (a judgement's "yes", a candidate's number).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// The probability of each choice, renormalised over the choices (they sum to 1).
    pub probabilities: Vec<f32>,
    /// The probability the model put on the choices at all, before renormalising: low when it
    /// wanted to say something else.
    pub mass: f32,
    pub prompt_tokens: usize,
    #[serde(with = "duration_ms")]
    pub elapsed: Duration,
}

impl Choice {
    /// Renormalises `weights` (each choice's summed next-token probability) into a `Choice`.
    pub fn from_weights(weights: Vec<f32>, prompt_tokens: usize, elapsed: Duration) -> Option<Choice> {
        let mass: f32 = weights.iter().sum();
        if !(mass > 0.0 && mass.is_finite()) {
            return None;
        }
        let probabilities = weights.iter().map(|w| w / mass).collect();
        Some(Choice { probabilities, mass, prompt_tokens, elapsed })
    }

    /// The most probable choice.
    pub fn best(&self) -> Option<usize> {
        (0..self.probabilities.len()).max_by(|&a, &b| self.probabilities[a].total_cmp(&self.probabilities[b]))
    }
}

/// The spellings of a one-word reply a model may start with: as given, capitalised, after a space.
pub fn reply_spellings(choice: &str) -> Vec<String> {
    let mut chars = choice.chars();
    let capital: String = chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default();
    let mut spellings = vec![choice.to_string(), capital.clone(), format!(" {choice}"), format!(" {capital}")];
    spellings.dedup();
    spellings
}

/// Receives the answer as it is generated, piece by piece (streaming).
pub type OnPiece<'a> = &'a mut dyn FnMut(&str);

/// A chat model: the answer step of the ask path and the LLM-assisted steps around it.
pub trait Generator: Send + Sync {
    /// What to show as the model (`openai:deepseek-chat@https://api.deepseek.com/v1`,
    /// `gguf:qwen2.5-coder-0.5b-instruct-q5_0.gguf`).
    fn describe(&self) -> String;

    /// Runs one chat completion, handing each generated piece to `on_piece` as it arrives.
    /// The returned [`Generation::text`] is the whole answer (the pieces concatenated).
    fn generate(&self, request: &ChatRequest, on_piece: OnPiece<'_>) -> Result<Generation, GenerateError>;

    /// Tokens `text` takes for this model, when the backend can count them locally (the
    /// context compiler budgets in tokens then, in characters otherwise).
    fn count_tokens(&self, _text: &str) -> Option<usize> {
        None
    }

    /// The most tokens prompt + answer may take, when known.
    fn context_window(&self) -> Option<usize> {
        None
    }

    /// How likely the model's reply to `messages` starts with each of `choices` (short replies:
    /// "yes"/"no", "0"…"9"; each counted in its [`reply_spellings`]). A backend that cannot
    /// expose its next-token distribution says so.
    fn choose(&self, _messages: &[Message], _choices: &[&str]) -> Result<Choice, GenerateError> {
        Err(GenerateError::Inference(format!("{} cannot report token probabilities", self.describe())))
    }
}
