//! Any OpenAI-compatible chat-completions endpoint: DeepSeek, Qwen/DashScope, Ollama, vLLM,
//! llama.cpp's server (presets in docs/llm.md).
//!
//! Always streams (`"stream": true`, SSE): pieces reach the caller as they arrive, and a server
//! that answers with one JSON body instead is understood too. Connection failures, timeouts, 429
//! and 5xx are retried with exponential backoff (honouring `Retry-After`) — but only before the
//! first piece was handed out; a stream that breaks later is an [`GenerateError::Interrupted`]
//! error, which the ask path turns into a notice plus the extractive answer.

use crate::sse::Events;
use crate::{
    reply_spellings, ChatRequest, Choice, FinishReason, GenerateError, Generation, Generator, Message, OnPiece,
};
use serde_json::{json, Value};
use skillrag_http::{clip, error_message, with_retries};
use std::io::BufReader;
use std::time::{Duration, Instant};

/// Where and how to reach the server.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiConfig {
    /// The API root, e.g. `https://api.deepseek.com/v1` or `http://127.0.0.1:11434/v1`;
    /// `/chat/completions` is appended.
    pub base_url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer …` when set (from the environment only).
    pub api_key: Option<String>,
    /// Longest wait for the answer to start, and for each next piece of it.
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// Further attempts after a failed one (connection, timeout, 429, 5xx).
    pub retries: u32,
    /// Wait before the first retry; doubled for each next one.
    pub backoff: Duration,
}

impl OpenAiConfig {
    pub fn new(base_url: &str, model: &str) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key: None,
            timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(5),
            retries: 2,
            backoff: Duration::from_millis(500),
        }
    }
}

pub struct OpenAiGenerator {
    config: OpenAiConfig,
    endpoint: String,
    agent: ureq::Agent,
}

type Failure = skillrag_http::Failure<GenerateError>;

impl OpenAiGenerator {
    pub fn new(config: OpenAiConfig) -> Result<OpenAiGenerator, GenerateError> {
        let base = skillrag_http::check_url(&config.base_url, "LLM base").map_err(|e| match e {
            skillrag_http::HttpError::Unreachable { url, message } => GenerateError::Unreachable { url, message },
            other => GenerateError::Unreachable { url: config.base_url.clone(), message: other.to_string() },
        })?;
        let endpoint = format!("{base}/chat/completions");
        let agent = skillrag_http::agent(config.connect_timeout, config.timeout);
        Ok(OpenAiGenerator { config, endpoint, agent })
    }

    fn body(&self, request: &ChatRequest) -> Value {
        let mut body = json!({
            "model": self.config.model,
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        if !request.stop.is_empty() {
            body["stop"] = json!(request.stop);
        }
        body
    }

    fn attempt(&self, body: &Value, on_piece: OnPiece<'_>) -> Result<Generation, Failure> {
        let started = Instant::now();
        let response = self.post(body, "text/event-stream")?;
        let is_stream = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let mut body = response.into_body();
        if !is_stream {
            let text = body
                .with_config()
                .limit(16 * 1024 * 1024)
                .read_to_string()
                .map_err(|e| self.read_failure(e.into_io(), 0))?;
            let generation = self.whole_completion(&text, started).map_err(Failure::Final)?;
            on_piece(&generation.text);
            return Ok(generation);
        }
        self.read_stream(BufReader::new(body.into_reader()), started, on_piece)
    }

    /// Reads an SSE completion stream to its end.
    fn read_stream(
        &self,
        reader: impl std::io::BufRead,
        started: Instant,
        on_piece: OnPiece<'_>,
    ) -> Result<Generation, Failure> {
        let url = &self.endpoint;
        let mut events = Events::new(reader);
        let mut text = String::new();
        let mut first_token = None;
        let mut finish = None;
        let (mut prompt_tokens, mut completion_tokens, mut pieces) = (0, None, 0);
        loop {
            let event = match events.next_event() {
                Ok(Some(e)) => e,
                Ok(None) if finish.is_some() => break,
                Ok(None) => {
                    let error = GenerateError::Interrupted {
                        url: url.clone(),
                        received: text.chars().count(),
                        message: "the stream ended before the completion did".into(),
                    };
                    return Err(if text.is_empty() {
                        Failure::Retry { error, after: None }
                    } else {
                        Failure::Final(error)
                    });
                }
                Err(e) => return Err(self.read_failure(e, text.chars().count())),
            };
            if event.trim() == "[DONE]" {
                break;
            }
            let chunk: Value = serde_json::from_str(&event).map_err(|e| {
                Failure::Final(GenerateError::Protocol {
                    url: url.clone(),
                    message: format!("stream event is not JSON ({e}): {}", clip(&event)),
                })
            })?;
            if let Some(error) = chunk.get("error") {
                return Err(Failure::Final(GenerateError::Status {
                    url: url.clone(),
                    status: 200,
                    message: error_message(&error.to_string()),
                }));
            }
            if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
                prompt_tokens = usage["prompt_tokens"].as_u64().unwrap_or(0) as usize;
                completion_tokens = usage["completion_tokens"].as_u64().map(|n| n as usize);
            }
            let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else { continue };
            if let Some(piece) = choice["delta"]["content"].as_str().filter(|p| !p.is_empty()) {
                first_token.get_or_insert_with(|| started.elapsed());
                text.push_str(piece);
                pieces += 1;
                on_piece(piece);
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                finish = Some(if reason == "length" { FinishReason::Length } else { FinishReason::Stop });
            }
        }
        Ok(Generation {
            text,
            finish: finish.unwrap_or(FinishReason::Stop),
            prompt_tokens,
            completion_tokens: completion_tokens.unwrap_or(pieces),
            first_token: first_token.unwrap_or_else(|| started.elapsed()),
            elapsed: started.elapsed(),
        })
    }

    /// A server that ignored `"stream": true` and sent one `chat.completion` object.
    fn whole_completion(&self, text: &str, started: Instant) -> Result<Generation, GenerateError> {
        let protocol = |message: String| GenerateError::Protocol { url: self.endpoint.clone(), message };
        let value: Value =
            serde_json::from_str(text).map_err(|e| protocol(format!("body is not JSON ({e}): {}", clip(text))))?;
        let choice = &value["choices"][0];
        let content = choice["message"]["content"]
            .as_str()
            .ok_or_else(|| protocol(format!("no choices[0].message.content in {}", clip(text))))?;
        let elapsed = started.elapsed();
        Ok(Generation {
            text: content.to_string(),
            finish: if choice["finish_reason"] == "length" { FinishReason::Length } else { FinishReason::Stop },
            prompt_tokens: value["usage"]["prompt_tokens"].as_u64().unwrap_or(0) as usize,
            completion_tokens: value["usage"]["completion_tokens"].as_u64().unwrap_or(0) as usize,
            first_token: elapsed,
            elapsed,
        })
    }

    /// Posts `body` to the endpoint; an HTTP error status is a failure (429 and 5xx retried).
    fn post(&self, body: &Value, accept: &str) -> Result<ureq::http::Response<ureq::Body>, Failure> {
        let mut call = self.agent.post(&self.endpoint).header("Accept", accept);
        if let Some(key) = &self.config.api_key {
            call = call.header("Authorization", &format!("Bearer {key}"));
        }
        let response = call.send_json(body).map_err(|e| self.transport_failure(e))?;
        let status = response.status().as_u16();
        if !(200..300).contains(&status) {
            let retry_after = skillrag_http::retry_after(&response);
            let text = response.into_body().with_config().limit(64 * 1024).read_to_string().unwrap_or_default();
            let error = GenerateError::Status { url: self.endpoint.clone(), status, message: error_message(&text) };
            return Err(Failure::of_status(status, error, retry_after));
        }
        Ok(response)
    }

    /// One non-streamed completion of a single token with its top log-probabilities
    /// (`logprobs`, as OpenAI, vLLM and llama.cpp's server report them).
    fn choose_attempt(&self, body: &Value, choices: &[&str]) -> Result<Choice, Failure> {
        let started = Instant::now();
        let url = &self.endpoint;
        let text = self
            .post(body, "application/json")?
            .into_body()
            .with_config()
            .limit(4 * 1024 * 1024)
            .read_to_string()
            .map_err(|e| self.read_failure(e.into_io(), 0))?;
        let protocol = |message: String| Failure::Final(GenerateError::Protocol { url: url.clone(), message });
        let value: Value =
            serde_json::from_str(&text).map_err(|e| protocol(format!("body is not JSON ({e}): {}", clip(&text))))?;
        let top = value["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
            .as_array()
            .ok_or_else(|| protocol(format!("no choices[0].logprobs.content[0].top_logprobs in {}", clip(&text))))?;
        let spellings: Vec<Vec<String>> = choices.iter().map(|c| reply_spellings(c)).collect();
        let mut weights = vec![0.0f32; choices.len()];
        for entry in top {
            let (Some(token), Some(logprob)) = (entry["token"].as_str(), entry["logprob"].as_f64()) else { continue };
            if let Some(i) = spellings.iter().position(|s| s.iter().any(|s| s == token)) {
                weights[i] += logprob.exp() as f32;
            }
        }
        let prompt_tokens = value["usage"]["prompt_tokens"].as_u64().unwrap_or(0) as usize;
        Choice::from_weights(weights, prompt_tokens, started.elapsed()).ok_or_else(|| {
            protocol(format!("none of {choices:?} is among the reply's most likely first tokens: {}", clip(&text)))
        })
    }

    fn transport_failure(&self, error: ureq::Error) -> Failure {
        Failure::of_transport(
            error,
            || GenerateError::Timeout { url: self.endpoint.clone(), seconds: self.config.timeout.as_secs() },
            |message| GenerateError::Unreachable { url: self.endpoint.clone(), message },
        )
    }

    /// A read error in the body: a stall is a timeout; anything else a broken connection.
    /// Retried only when nothing was handed out yet.
    fn read_failure(&self, error: std::io::Error, received: usize) -> Failure {
        let url = self.endpoint.clone();
        let error = if skillrag_http::is_timeout(&error) && received == 0 {
            GenerateError::Timeout { url, seconds: self.config.timeout.as_secs() }
        } else {
            GenerateError::Interrupted { url, received, message: error.to_string() }
        };
        if received == 0 {
            Failure::Retry { error, after: None }
        } else {
            Failure::Final(error)
        }
    }
}

impl Generator for OpenAiGenerator {
    fn describe(&self) -> String {
        format!("openai:{}@{}", self.config.model, self.config.base_url)
    }

    fn generate(&self, request: &ChatRequest, on_piece: OnPiece<'_>) -> Result<Generation, GenerateError> {
        let body = self.body(request);
        with_retries(self.config.retries, self.config.backoff, || self.attempt(&body, &mut *on_piece))
    }

    fn choose(&self, messages: &[Message], choices: &[&str]) -> Result<Choice, GenerateError> {
        let body = json!({
            "model": self.config.model,
            "messages": messages,
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": true,
            "top_logprobs": 20,
        });
        with_retries(self.config.retries, self.config.backoff, || self.choose_attempt(&body, choices))
    }
}

#[cfg(test)]
mod tests;
