//! Live answers: the worker hands the LLM's checked sentences over a channel as they are
//! written, so an SSE response can send each one at once instead of after the whole answer.

use crate::error::ApiError;
use crate::service::{Service, TextSink, Thread};
use skillrag_ask::{Answer, AskOptions};
use std::sync::Arc;
use tokio::sync::mpsc;

/// What the worker reports, in order: sentences, then the finished answer (or why there is none).
pub enum Progress {
    Text(String),
    Done(Arc<Answer>),
    Failed(ApiError),
}

/// An answer being written.
pub struct Streaming {
    rx: mpsc::UnboundedReceiver<Progress>,
    first: Option<Progress>,
}

impl Streaming {
    /// Starts answering and waits until the question has a worker (or its answer came from the
    /// cache, or failed), so that errors before the stream begins — a busy server, an empty
    /// question — keep their HTTP status, while a client gets its response head at once.
    ///
    /// The work runs in its own task with its worker slot: a client that goes away does not
    /// cut the answer short (it still fills the cache), and unsent sentences are dropped.
    pub async fn start(
        service: Arc<Service>,
        query: String,
        options: AskOptions,
        thread: Thread,
    ) -> Result<Streaming, ApiError> {
        // Unbounded: a few sentences per answer, and the worker must never block on a slow client.
        let (tx, mut rx) = mpsc::unbounded_channel();
        let sentences = tx.clone();
        let sink: TextSink = Box::new(move |text: &str| {
            // The receiver is gone when the client disconnected: nothing to do.
            let _ = sentences.send(Progress::Text(text.to_string()));
        });
        tokio::spawn(async move {
            let done = match service.ask_streaming(query, options, thread, Some(sink)).await {
                Ok((answer, _)) => Progress::Done(answer),
                Err(e) => Progress::Failed(e),
            };
            let _ = tx.send(done);
        });
        match rx.recv().await {
            Some(Progress::Failed(e)) => Err(e),
            // The worker's empty text says it started; nothing to send.
            Some(Progress::Text(text)) if text.is_empty() => Ok(Streaming { rx, first: None }),
            Some(first) => Ok(Streaming { rx, first: Some(first) }),
            None => Err(ApiError::internal("the answer's worker stopped without an answer")),
        }
    }

    /// The next report (never an empty text); `None` after the last.
    pub async fn next(&mut self) -> Option<Progress> {
        if let Some(first) = self.first.take() {
            return Some(first);
        }
        loop {
            match self.rx.recv().await {
                Some(Progress::Text(text)) if text.is_empty() => continue,
                other => return other,
            }
        }
    }
}

/// What remains to be sent after `sent` was streamed, for the answer's full `content`. When the
/// answer goes on from what was streamed, only the rest; when it does not (the model failed
/// midway and the extractive answer or a refusal replaces it), a break, the notices, then the
/// whole content: what was shown cannot be taken back, so it is followed by why it stopped.
pub fn rest_after(sent: &str, content: &str, replaced: bool, notices: &[String]) -> String {
    if sent.is_empty() {
        return content.to_string();
    }
    if !replaced {
        if let Some(rest) = content.strip_prefix(sent) {
            return rest.to_string();
        }
        // A reply streamed with trailing white space the answer trimmed.
        if let Some(rest) = content.strip_prefix(sent.trim_end()) {
            return rest.trim_start().to_string();
        }
    }
    let mut rest = String::from("\n\n");
    for notice in notices {
        rest.push_str(notice);
        rest.push_str("\n\n");
    }
    rest.push_str(content);
    rest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rest_continues_what_was_streamed() {
        assert_eq!(rest_after("", "A.[1]\n\n[1] x", false, &[]), "A.[1]\n\n[1] x");
        assert_eq!(rest_after("A.[1] B.[1]", "A.[1] B.[1]\n\n[1] x", false, &[]), "\n\n[1] x");
        assert_eq!(rest_after("Hello! ", "Hello!", false, &[]), "");
        // The model's answer broke off: the extractive one follows, with its notice, even when
        // it happens to open with the sentence already shown.
        let notices = ["The LLM could not answer.".to_string()];
        let rest = rest_after("A.[1]", "A.[1] C.[2]\n\n[2] y", true, &notices);
        assert_eq!(rest, "\n\nThe LLM could not answer.\n\nA.[1] C.[2]\n\n[2] y");
        // Something unexpected: never a silent jump.
        assert!(rest_after("A.[1]", "Z.", false, &[]).ends_with("Z."));
    }
}
