//! A blocking JSON POST client for the remote model backends (OpenAI-compatible embeddings, TEI /
//! Jina-style rerank): connect and read timeouts, retries with exponential backoff on connection
//! failures, timeouts, 429 and 5xx (honouring `Retry-After`, capped), and errors that name the
//! URL and quote the server's own message — never the API key.
//!
//! [`scripted`] is a loopback HTTP server for tests: faults a real server will not produce on
//! demand (429, 500, malformed JSON, silence) can be played back in order.

pub mod scripted;

use serde_json::Value;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("{url}: cannot connect ({message}); is the server running?")]
    Unreachable { url: String, message: String },
    #[error("{url}: no answer within {seconds} s")]
    Timeout { url: String, seconds: u64 },
    #[error("{url}: HTTP {status}: {message}")]
    Status { url: String, status: u16, message: String },
    #[error("{url}: unexpected response: {message}")]
    Protocol { url: String, message: String },
}

/// Timeouts and retries.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpConfig {
    /// Longest wait for the response (and for each read of its body).
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// Further attempts after a failed one (connection, timeout, 429, 5xx).
    pub retries: u32,
    /// Wait before the first retry; doubled for each next one.
    pub backoff: Duration,
    /// Sent as `Authorization: Bearer …` when set (from the environment only).
    pub api_key: Option<String>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            retries: 2,
            backoff: Duration::from_millis(500),
            api_key: None,
        }
    }
}

/// The longest `Retry-After` honoured; a server asking for more is treated as unavailable.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// Largest response body read (a batch of 1024-dim vectors is a few MiB of JSON).
const MAX_BODY: u64 = 64 * 1024 * 1024;

pub struct JsonClient {
    config: HttpConfig,
    agent: ureq::Agent,
}

impl std::fmt::Debug for JsonClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("JsonClient")
            .field("timeout", &self.config.timeout)
            .field("retries", &self.config.retries)
            .finish()
    }
}

/// A failed attempt, and whether another one may help.
#[derive(Debug)]
pub enum Failure<E> {
    /// Transient (connection, timeout, 429, 5xx); `after` is the wait the server asked for.
    Retry {
        error: E,
        after: Option<Duration>,
    },
    Final(E),
}

impl<E> Failure<E> {
    /// An HTTP error status: 429 and 5xx are worth another attempt, any other is final.
    pub fn of_status(status: u16, error: E, retry_after: Option<Duration>) -> Failure<E> {
        if status == 429 || status >= 500 {
            Failure::Retry { error, after: retry_after }
        } else {
            Failure::Final(error)
        }
    }

    /// A request that got no response: a timeout or a failed connection is worth another
    /// attempt, anything else (a bad URL, TLS…) is final. `unreachable` gets ureq's message.
    pub fn of_transport(
        error: ureq::Error,
        timeout: impl FnOnce() -> E,
        unreachable: impl FnOnce(String) -> E,
    ) -> Self {
        match error {
            ureq::Error::Timeout(_) => Failure::Retry { error: timeout(), after: None },
            ureq::Error::Io(_) | ureq::Error::ConnectionFailed | ureq::Error::HostNotFound => {
                Failure::Retry { error: unreachable(error.to_string()), after: None }
            }
            other => Failure::Final(unreachable(other.to_string())),
        }
    }
}

/// Runs `attempt` until it succeeds, fails for good, or `retries` further attempts failed too.
/// The first retry waits `backoff`, each next one twice as long; a server's `Retry-After`
/// replaces the wait, and one beyond [`MAX_RETRY_AFTER`] ends the retries (the server is
/// treated as unavailable).
pub fn with_retries<T, E>(
    retries: u32,
    backoff: Duration,
    mut attempt: impl FnMut() -> Result<T, Failure<E>>,
) -> Result<T, E> {
    let mut wait = backoff;
    let mut tries = 0;
    loop {
        match attempt() {
            Ok(v) => return Ok(v),
            Err(Failure::Final(e)) => return Err(e),
            Err(Failure::Retry { error, after }) => {
                if tries >= retries || after.is_some_and(|a| a > MAX_RETRY_AFTER) {
                    return Err(error);
                }
                tries += 1;
                std::thread::sleep(after.unwrap_or(wait));
                wait = wait.saturating_mul(2);
            }
        }
    }
}

/// Whether a read error means the server went silent (ureq reports its per-read timeout
/// either as the I/O error kind or as a wrapped error that says "timeout").
pub fn is_timeout(error: &std::io::Error) -> bool {
    matches!(error.kind(), std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock)
        || error.get_ref().is_some_and(|inner| inner.to_string().contains("timeout"))
}

/// Checks that `url` is an http(s) URL; returns it without a trailing slash.
pub fn check_url(url: &str, what: &str) -> Result<String, HttpError> {
    let url = url.trim().trim_end_matches('/');
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(url.to_string())
    } else {
        Err(HttpError::Unreachable {
            url: url.to_string(),
            message: format!("the {what} URL must start with http:// or https://"),
        })
    }
}

/// The HTTP agent every skillrag client uses: error statuses are answers to read (their body
/// says why), `timeout` bounds the wait for the response head and for each read after it.
pub fn agent(connect_timeout: Duration, timeout: Duration) -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_connect(Some(connect_timeout))
        .timeout_recv_response(Some(timeout))
        .timeout_per_read(Some(timeout))
        .user_agent(concat!("skillrag/", env!("CARGO_PKG_VERSION")))
        .build()
        .into()
}

impl JsonClient {
    pub fn new(config: HttpConfig) -> JsonClient {
        let agent = agent(config.connect_timeout, config.timeout);
        JsonClient { config, agent }
    }

    pub fn config(&self) -> &HttpConfig {
        &self.config
    }

    /// POSTs `body` to `url` and parses the JSON answer, retrying transient failures.
    pub fn post_json(&self, url: &str, body: &Value) -> Result<Value, HttpError> {
        with_retries(self.config.retries, self.config.backoff, || self.attempt(url, body))
    }

    fn attempt(&self, url: &str, body: &Value) -> Result<Value, Failure<HttpError>> {
        let mut call = self.agent.post(url).header("Accept", "application/json");
        if let Some(key) = self.config.api_key.as_deref().filter(|k| !k.is_empty()) {
            call = call.header("Authorization", &format!("Bearer {key}"));
        }
        let response = call.send_json(body).map_err(|e| self.transport_failure(url, e))?;
        let status = response.status().as_u16();
        let retry_after = retry_after(&response);
        let mut body = response.into_body();
        let text = body.with_config().limit(MAX_BODY).read_to_string();
        if !(200..300).contains(&status) {
            let error =
                HttpError::Status { url: url.to_string(), status, message: error_message(&text.unwrap_or_default()) };
            return Err(Failure::of_status(status, error, retry_after));
        }
        let text = text.map_err(|e| self.read_failure(url, e.into_io()))?;
        serde_json::from_str(&text).map_err(|e| {
            Failure::Final(HttpError::Protocol {
                url: url.to_string(),
                message: format!("the body is not JSON ({e}): {}", clip(&text)),
            })
        })
    }

    fn transport_failure(&self, url: &str, error: ureq::Error) -> Failure<HttpError> {
        Failure::of_transport(
            error,
            || HttpError::Timeout { url: url.to_string(), seconds: self.timeout_secs() },
            |message| HttpError::Unreachable { url: url.to_string(), message },
        )
    }

    fn read_failure(&self, url: &str, error: std::io::Error) -> Failure<HttpError> {
        let url = url.to_string();
        let error = if is_timeout(&error) {
            HttpError::Timeout { url, seconds: self.timeout_secs() }
        } else {
            HttpError::Protocol { url, message: format!("the body could not be read: {error}") }
        };
        Failure::Retry { error, after: None }
    }

    fn timeout_secs(&self) -> u64 {
        self.config.timeout.as_secs().max(1)
    }
}

/// A page fetched by [`fetch`].
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL as asked (checked).
    pub url: String,
    /// `Content-Type` without its parameters, lowercased (`text/html`); empty when not sent.
    pub content_type: String,
    pub bytes: Vec<u8>,
}

/// GETs one document (a page to import into a skill): `timeout` for the answer and each read, at
/// most `max_bytes` of body (a larger one is refused, not cut), redirects followed (ureq's default
/// limit). No retries: a person is waiting and can try again.
pub fn fetch(url: &str, timeout: Duration, max_bytes: u64) -> Result<Fetched, HttpError> {
    let url = check_url(url, "document")?;
    let response = agent(Duration::from_secs(10).min(timeout), timeout).get(&url).call().map_err(|e| match e {
        ureq::Error::Timeout(_) => HttpError::Timeout { url: url.clone(), seconds: timeout.as_secs().max(1) },
        other => HttpError::Unreachable { url: url.clone(), message: other.to_string() },
    })?;
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .unwrap_or_default();
    let mut body = response.into_body();
    if !(200..300).contains(&status) {
        let text = body.with_config().limit(64 * 1024).read_to_string().unwrap_or_default();
        return Err(HttpError::Status { url, status, message: clip(&error_message(&text)) });
    }
    let bytes = body.with_config().limit(max_bytes).read_to_vec().map_err(|e| {
        let message = match e {
            ureq::Error::BodyExceedsLimit(_) => format!("the document is larger than {} MB", max_bytes / (1024 * 1024)),
            other => format!("the body could not be read: {other}"),
        };
        HttpError::Protocol { url: url.clone(), message }
    })?;
    Ok(Fetched { url, content_type, bytes })
}

/// The `error.message` of an OpenAI-style error body (or `error` / `message` / TEI's `error`
/// string), or the body itself, shortened.
pub fn error_message(body: &str) -> String {
    let value: Option<Value> = serde_json::from_str(body).ok();
    let message = value.as_ref().and_then(|v| {
        v["error"]["message"]
            .as_str()
            .or_else(|| v["error"].as_str())
            .or_else(|| v["message"].as_str())
            .or_else(|| v["detail"].as_str())
            .map(str::to_string)
    });
    clip(&message.unwrap_or_else(|| body.trim().to_string()))
}

/// The wait a 429 or 503 response asks for in its `Retry-After` header (seconds), if any.
pub fn retry_after<B>(response: &ureq::http::Response<B>) -> Option<Duration> {
    response
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs)
}

/// `text` cut to 300 characters.
pub fn clip(text: &str) -> String {
    const MAX: usize = 300;
    if text.chars().count() <= MAX {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX).collect();
    format!("{cut}…")
}

#[cfg(test)]
mod tests {
    use super::scripted::{json_reply, serve, Reply};
    use super::*;
    use serde_json::json;
    use std::time::Instant;

    fn client(retries: u32) -> JsonClient {
        JsonClient::new(HttpConfig {
            timeout: Duration::from_millis(400),
            retries,
            backoff: Duration::from_millis(10),
            api_key: Some("sk-secret".into()),
            ..Default::default()
        })
    }

    #[test]
    fn posts_json_with_the_key_and_parses_the_answer() {
        let server = serve(vec![Reply::raw(json_reply(200, "", r#"{"ok": 1}"#))]);
        let v = client(0).post_json(&server.url("/x"), &json!({"a": 1})).unwrap();
        assert_eq!(v["ok"], 1);
        let request = &server.requests()[0];
        assert!(request.head.starts_with("POST /x"), "{}", request.head);
        assert!(request.head.contains("Bearer sk-secret"));
        assert_eq!(request.body["a"], 1);
    }

    #[test]
    fn retries_429_and_5xx_honouring_retry_after() {
        let server = serve(vec![
            Reply::raw(json_reply(429, "retry-after: 0\r\n", r#"{"error":{"message":"slow down"}}"#)),
            Reply::raw(json_reply(503, "", "overloaded")),
            Reply::raw(json_reply(200, "", "{}")),
        ]);
        client(2).post_json(&server.url("/x"), &json!({})).unwrap();
        assert_eq!(server.requests().len(), 3);
        // A Retry-After beyond the cap is not waited for.
        let server = serve(vec![Reply::raw(json_reply(429, "retry-after: 3600\r\n", "busy"))]);
        let started = Instant::now();
        let err = client(3).post_json(&server.url("/x"), &json!({})).unwrap_err();
        assert!(matches!(err, HttpError::Status { status: 429, .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(600), "waited out the Retry-After");
    }

    #[test]
    fn final_errors_quote_the_server_and_hide_the_key() {
        let server = serve(vec![Reply::raw(json_reply(500, "", r#"{"error":{"message":"model crashed"}}"#))]);
        let err = client(1).post_json(&server.url("/x"), &json!({})).unwrap_err().to_string();
        assert!(err.contains("500") && err.contains("model crashed") && !err.contains("sk-secret"), "{err}");
        assert_eq!(server.requests().len(), 2, "one try plus one retry");
        let server = serve(vec![Reply::raw(json_reply(401, "", r#"{"error":"bad key"}"#))]);
        let err = client(3).post_json(&server.url("/x"), &json!({})).unwrap_err().to_string();
        assert!(err.contains("401") && err.contains("bad key"), "{err}");
        assert_eq!(server.requests().len(), 1, "4xx is final");
        let server = serve(vec![Reply::raw(json_reply(200, "", "<html>gateway</html>"))]);
        let err = client(3).post_json(&server.url("/x"), &json!({})).unwrap_err();
        assert!(matches!(err, HttpError::Protocol { .. }), "{err}");
        assert!(format!("{:?}", client(0)).find("sk-secret").is_none());
    }

    #[test]
    fn with_retries_stops_at_success_final_or_the_last_retry() {
        let run = |failures: Vec<Failure<u32>>, retries| {
            let mut failures = failures.into_iter();
            let mut calls = 0;
            let result = with_retries(retries, Duration::from_millis(1), || {
                calls += 1;
                failures.next().map_or(Ok("ok"), Err)
            });
            (result, calls)
        };
        let retry = |e| Failure::Retry { error: e, after: None };
        assert_eq!(run(vec![retry(1), retry(2)], 2), (Ok("ok"), 3));
        assert_eq!(run(vec![retry(1), retry(2)], 1), (Err(2), 2));
        assert_eq!(run(vec![retry(1), Failure::Final(2), retry(3)], 5), (Err(2), 2));
        let too_long = Failure::Retry { error: 9, after: Some(MAX_RETRY_AFTER + Duration::from_secs(1)) };
        assert_eq!(run(vec![too_long], 5), (Err(9), 1));
        // The doubling wait saturates instead of overflowing.
        let mut calls = 0;
        let slow = with_retries(1, Duration::MAX, || {
            calls += 1;
            if calls == 1 {
                Err(Failure::Retry { error: 0, after: Some(Duration::ZERO) })
            } else {
                Ok(calls)
            }
        });
        assert_eq!(slow, Ok(2));
    }

    #[test]
    fn down_and_silent_servers() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let err = client(1).post_json(&format!("http://127.0.0.1:{port}/x"), &json!({})).unwrap_err();
        assert!(matches!(err, HttpError::Unreachable { .. }), "{err}");
        assert!(err.to_string().contains("is the server running"), "{err}");
        // Stalled far beyond the client's timeout, so that load cannot make the two meet.
        let server = serve(vec![Reply::Stall(String::new(), Duration::from_secs(20))]);
        let started = Instant::now();
        let err = client(0).post_json(&server.url("/x"), &json!({})).unwrap_err();
        assert!(matches!(err, HttpError::Timeout { .. }), "{err}");
        assert!(started.elapsed() < Duration::from_secs(20));
        assert!(check_url("localhost:1", "test").is_err());
        assert_eq!(check_url(" http://h/v1/ ", "test").unwrap(), "http://h/v1");
    }
}
