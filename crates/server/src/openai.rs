//! The OpenAI-compatible endpoints: `GET /v1/models` and `POST /v1/chat/completions`, so chat
//! clients can use skillrag as a model. Citations travel both as `[n]` markers with footnotes in
//! the content and as a structured `citations` field (in the response, or the last stream chunk);
//! a refusal is a normal assistant message whose kind is in `skillrag.refusal`.

use crate::error::{ApiError, Json};
use crate::stream::{self, Progress, Streaming};
use crate::Shared;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde::Deserialize;
use serde_json::{json, Value};
use skillrag_ask::marker_len;
use skillrag_ask::{Answer, AskOptions};
use std::convert::Infallible;

const AUTO: &str = "auto";
const PREFIX: &str = "skillrag/";

pub async fn models(State(shared): State<Shared>) -> Response {
    let live = shared.service.live();
    let created = crate::now_secs();
    let mut ids = vec![format!("{PREFIX}{AUTO}")];
    ids.extend(live.assistant.engine.skills().iter().map(|s| format!("{PREFIX}{}", s.id)));
    let data: Vec<Value> = ids
        .into_iter()
        .map(|id| json!({"id": id, "object": "model", "created": created, "owned_by": "skillrag"}))
        .collect();
    axum::Json(json!({"object": "list", "data": data})).into_response()
}

/// One model (`models.retrieve`): `skillrag/auto` or `skillrag/<skill>`.
pub async fn model(State(shared): State<Shared>, Path(id): Path<String>) -> Result<Response, ApiError> {
    skill_of_model(&shared, &id)?;
    let id = if id.starts_with(PREFIX) { id } else { format!("{PREFIX}{id}") };
    Ok(axum::Json(json!({"id": id, "object": "model", "created": crate::now_secs(), "owned_by": "skillrag"}))
        .into_response())
}

#[derive(Deserialize)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    #[serde(default)]
    pub stream: bool,
    /// Function calling is not offered: refused with a clear 400 instead of being ignored
    /// (a client that relies on it would otherwise fail later on a confusing validation error).
    #[serde(default)]
    pub tools: Option<Value>,
    #[serde(default)]
    pub functions: Option<Value>,
    #[serde(default)]
    pub response_format: Option<Value>,
    // Other OpenAI parameters (temperature, max_tokens…) are accepted and have no effect on an
    // extractive answer.
}

impl ChatRequest {
    /// What this request asks for that the endpoint does not do.
    fn unsupported(&self) -> Option<String> {
        let present = |v: &Option<Value>| v.as_ref().is_some_and(|v| !v.is_null() && v != &json!([]));
        if present(&self.tools) || present(&self.functions) {
            return Some(
                "`tools`/`functions` (function calling) are not supported: skillrag answers from its skills with \
                 citations. Send the request without them, or use skillrag's MCP server (/mcp) to give an agent \
                 its tools"
                    .into(),
            );
        }
        let format = self.response_format.as_ref().and_then(|f| f.get("type")).and_then(Value::as_str);
        match format {
            None | Some("text") => None,
            Some(other) => Some(format!(
                "`response_format` `{other}` is not supported: answers are cited text. Send the request without \
                 it (or with `{{\"type\": \"text\"}}`), or use POST /v1/ask, whose JSON carries the answer, \
                 citations and route"
            )),
        }
    }
}

#[derive(Deserialize)]
pub struct ChatMessage {
    pub role: String,
    #[serde(default)]
    pub content: Value,
}

impl ChatMessage {
    /// The text of a message: a string, or the text parts of a content array.
    fn text(&self) -> String {
        match &self.content {
            Value::String(s) => s.clone(),
            Value::Array(parts) => {
                parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
            }
            _ => String::new(),
        }
    }
}

/// `skillrag/auto` routes; `skillrag/<skill>` answers from that skill only.
fn skill_of_model(shared: &Shared, model: &str) -> Result<Option<String>, ApiError> {
    let name = model.strip_prefix(PREFIX).unwrap_or(model);
    if name == AUTO {
        return Ok(None);
    }
    let live = shared.service.live();
    if live.assistant.engine.skills().iter().any(|s| s.id == name) {
        Ok(Some(name.to_string()))
    } else {
        Err(ApiError::not_found(format!(
            "the model `{model}` does not exist; GET /v1/models lists `{PREFIX}{AUTO}` and one model per skill"
        )))
    }
}

pub async fn chat_completions(
    State(shared): State<Shared>,
    Json(req): Json<ChatRequest>,
) -> Result<Response, ApiError> {
    if let Some(why) = req.unsupported() {
        return Err(ApiError::bad_request(why));
    }
    let skill = skill_of_model(&shared, &req.model)?;
    let mut user: Vec<String> = req.messages.iter().filter(|m| m.role == "user").map(ChatMessage::text).collect();
    let Some(question) = user.pop() else {
        return Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "`messages` has no user message to answer"));
    };
    // The earlier user messages are the conversation: follow-ups keep their topic.
    let history = user;
    let options = AskOptions { skill, id: None, ..Default::default() };
    let chunks = Chunks { id: format!("chatcmpl-{}", uuid_like()), created: crate::now_secs(), model: req.model };
    if !req.stream {
        let (answer, _) = shared.service.ask(question, options, history).await?;
        let mut body = json!({
            "id": chunks.id, "object": "chat.completion", "created": chunks.created, "model": chunks.model,
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": null,
                "message": {"role": "assistant", "content": content_of(&answer)}}],
            "usage": usage_of(&answer),
        });
        merge(&mut body, extras_of(&answer));
        return Ok(axum::Json(body).into_response());
    }
    let streaming = Streaming::start(shared.service.clone(), question, options, history.into()).await?;
    let head = chunks.chunk(json!({"role": "assistant", "content": ""}), None);
    let state = Some(Live { streaming, chunks, sent: String::new() });
    // One SSE event per checked sentence as the worker delivers it; the rest when it is done.
    let live = futures_util::stream::unfold(state, |state| async move {
        let mut live = state?;
        let (events, next) = match live.streaming.next().await {
            Some(Progress::Text(text)) => {
                let text = if live.sent.is_empty() { text.trim_start().to_string() } else { text };
                live.sent.push_str(&text);
                let events =
                    if text.is_empty() { vec![] } else { vec![live.chunks.chunk(json!({"content": text}), None)] };
                (events, Some(live))
            }
            Some(Progress::Done(answer)) => (live.finish(&answer), None),
            // OpenAI's shape for an error after the stream began.
            Some(Progress::Failed(e)) => (vec![e.body()], None),
            None => (vec![ApiError::internal("the answer was lost").body()], None),
        };
        let mut events: Vec<Event> = events.into_iter().map(|e| Event::default().data(e.to_string())).collect();
        if next.is_none() {
            events.push(Event::default().data("[DONE]"));
        }
        Some((futures_util::stream::iter(events), next))
    })
    .flatten();
    let stream =
        futures_util::stream::iter([Event::default().data(head.to_string())]).chain(live).map(Ok::<_, Infallible>);
    Ok(Sse::new(stream).into_response())
}

/// What every chunk of one completion shares.
struct Chunks {
    id: String,
    created: u64,
    model: String,
}

impl Chunks {
    fn chunk(&self, delta: Value, finish: Option<&str>) -> Value {
        json!({"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": null}]})
    }
}

/// A completion being streamed, and the content sent so far.
struct Live {
    streaming: Streaming,
    chunks: Chunks,
    sent: String,
}

impl Live {
    /// The content not streamed yet (all of it for a cached, extractive or refused answer), in
    /// pieces, then the last chunk with `finish_reason`, usage, citations and the extras.
    fn finish(&self, answer: &Answer) -> Vec<Value> {
        let replaced = answer.refusal.is_some() || answer.generation.as_ref().is_some_and(|g| g.fallback.is_some());
        let rest = stream::rest_after(&self.sent, &content_of(answer), replaced, &answer.warnings);
        let mut events: Vec<Value> =
            pieces(&rest).into_iter().map(|p| self.chunks.chunk(json!({"content": p}), None)).collect();
        let mut last = self.chunks.chunk(json!({}), Some("stop"));
        merge(&mut last, json!({"usage": usage_of(answer)}));
        merge(&mut last, extras_of(answer));
        events.push(last);
        events
    }
}

/// Token counts of the LLM's answer (zero for an answer written without one).
fn usage_of(answer: &Answer) -> Value {
    let (prompt, completion) = answer.generation.as_ref().map_or((0, 0), |g| (g.prompt_tokens, g.completion_tokens));
    json!({"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion})
}

/// The answer with its footnotes: `[n] skill/source p. 3 › heading`.
pub fn content_of(answer: &Answer) -> String {
    let mut content = if answer.answer.is_empty() {
        answer.refusal.as_ref().map(|r| r.message.clone()).unwrap_or_default()
    } else {
        answer.answer.clone()
    };
    if !answer.citations.is_empty() {
        content.push_str("\n\n");
        let notes: Vec<String> = answer.citations.iter().map(|c| format!("[{}] {}", c.n, c.note())).collect();
        content.push_str(&notes.join("\n"));
    }
    content
}

/// `citations` (with the cited text) and the `skillrag` details: route, refusal, hits, timings.
fn extras_of(answer: &Answer) -> Value {
    let citations: Vec<Value> = answer
        .citations
        .iter()
        .map(|c| {
            let text = answer.context.pieces.iter().find(|p| p.n == c.context_n).map(|p| p.text.as_str()).unwrap_or("");
            let mut citation = json!({"n": c.n, "context_n": c.context_n, "skill": c.skill, "source": c.source,
                "heading": c.heading, "pages": c.pages, "text": text});
            if let Some(image) = &c.image {
                merge(&mut citation, json!({"image": image}));
            }
            citation
        })
        .collect();
    json!({
        "citations": citations,
        "skillrag": {"answer_id": answer.answer_id, "route": answer.route, "refusal": answer.refusal, "hits": answer.hits,
            "attempts": answer.attempts, "timings_ms": answer.timings_ms,
            "generation": answer.generation, "warnings": answer.warnings},
    })
}

fn merge(into: &mut Value, extra: Value) {
    if let (Value::Object(a), Value::Object(b)) = (into, extra) {
        a.extend(b);
    }
}

/// The content in stream pieces: sentences and lines, each with the citation markers that
/// follow it, so a client renders progressively and never splits `[n]` from its sentence.
fn pieces(content: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, c) in content.char_indices() {
        if i < start || !matches!(c, '\n' | '。' | '！' | '？' | '；' | '.' | '!' | '?' | ';') {
            continue;
        }
        let mut end = i + c.len_utf8();
        // Keep trailing markers such as "[1][2]" with the sentence they cite.
        while let Some(len) = marker_len(&content[end..]) {
            end += len;
        }
        out.push(content[start..end].to_string());
        start = end;
    }
    if start < content.len() {
        out.push(content[start..].to_string());
    }
    out
}

/// A unique-enough id for a completion: time and a process-wide counter.
fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{nanos:x}{:04x}", COUNTER.fetch_add(1, Ordering::Relaxed) & 0xffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_rejoin_to_the_content() {
        let content = "试用期最长六个月。[1][2] Then reset.\n\n[1] labor-law/a.md [x]";
        let p = pieces(content);
        assert_eq!(p[0], "试用期最长六个月。[1][2]");
        assert!(p.len() >= 3);
        assert_eq!(p.concat(), content);
    }
}
