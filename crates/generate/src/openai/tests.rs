//! The client against a scripted loopback server: each accepted connection gets the next
//! scripted reply (raw HTTP), so faults a real server will not produce on demand can be tested.

use super::*;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;

#[derive(Clone)]
enum Reply {
    /// Raw bytes, then close.
    Raw(String),
    /// Raw bytes, then wait this long with the connection open, then close.
    Stall(String, Duration),
}

fn sse(status: u16, events: &[&str]) -> String {
    let mut body = String::new();
    for e in events {
        body.push_str(&format!("data: {e}\n\n"));
    }
    format!("HTTP/1.1 {status} OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{body}")
}

fn json_reply(status: u16, extra_headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra_headers}connection: close\r\n\r\n{body}",
        body.len()
    )
}

fn delta(text: &str) -> String {
    json!({"choices": [{"delta": {"content": text}, "finish_reason": null}]}).to_string()
}

fn finish(reason: &str) -> String {
    json!({"choices": [{"delta": {}, "finish_reason": reason}], "usage": {"prompt_tokens": 7, "completion_tokens": 2}})
        .to_string()
}

/// Serves the replies in order (the last one repeats); returns the base URL and the request log.
fn serve(replies: Vec<Reply>) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    thread::spawn(move || {
        for (i, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { return };
            let reply = replies[i.min(replies.len() - 1)].clone();
            let mut request = Vec::new();
            let mut buf = [0u8; 8192];
            // Read headers and the JSON body (small) before answering.
            while let Ok(n) = stream.read(&mut buf) {
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request);
                if let Some(end) = text.find("\r\n\r\n") {
                    let length = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string())
                        })
                        .and_then(|v| v.parse::<usize>().ok())
                        .unwrap_or(0);
                    if request.len() >= end + 4 + length {
                        break;
                    }
                }
            }
            seen.lock().unwrap().push(String::from_utf8_lossy(&request).into_owned());
            match reply {
                Reply::Raw(r) => {
                    let _ = stream.write_all(r.as_bytes());
                }
                Reply::Stall(r, wait) => {
                    let _ = stream.write_all(r.as_bytes());
                    let _ = stream.flush();
                    thread::sleep(wait);
                }
            }
        }
    });
    (format!("http://{addr}/v1"), log)
}

fn client(base: &str, retries: u32) -> OpenAiGenerator {
    let mut config = OpenAiConfig::new(base, "test-model");
    config.retries = retries;
    config.backoff = Duration::from_millis(10);
    config.timeout = Duration::from_millis(400);
    config.api_key = Some("sk-secret".into());
    OpenAiGenerator::new(config).unwrap()
}

fn run(g: &OpenAiGenerator) -> (Result<Generation, GenerateError>, Vec<String>) {
    let mut pieces = Vec::new();
    let request = ChatRequest::new(vec![crate::Message::user("hi")]);
    let result = g.generate(&request, &mut |p| pieces.push(p.to_string()));
    (result, pieces)
}

#[test]
fn streams_pieces_and_usage() {
    let (base, log) = serve(vec![Reply::Raw(sse(200, &[&delta("Hel"), &delta("lo [1]"), &finish("stop"), "[DONE]"]))]);
    let (result, pieces) = run(&client(&base, 0));
    let g = result.unwrap();
    assert_eq!(g.text, "Hello [1]");
    assert_eq!(pieces, vec!["Hel", "lo [1]"]);
    assert_eq!((g.prompt_tokens, g.completion_tokens, g.finish), (7, 2, FinishReason::Stop));
    let request = log.lock().unwrap()[0].clone();
    assert!(request.starts_with("POST /v1/chat/completions"), "{request}");
    assert!(request.contains("Bearer sk-secret"), "{request}");
    let body: Value = serde_json::from_str(request.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!((body["stream"].as_bool(), body["model"].as_str()), (Some(true), Some("test-model")));
}

#[test]
fn length_finish_and_a_whole_json_answer() {
    let (base, _) = serve(vec![Reply::Raw(sse(200, &[&delta("cut"), &finish("length")]))]);
    assert_eq!(run(&client(&base, 0)).0.unwrap().finish, FinishReason::Length);
    let body = json!({"choices": [{"message": {"content": "whole"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1}})
    .to_string();
    let (base, _) = serve(vec![Reply::Raw(json_reply(200, "", &body))]);
    let (result, pieces) = run(&client(&base, 0));
    assert_eq!(result.unwrap().text, "whole");
    assert_eq!(pieces, vec!["whole"]);
}

#[test]
fn retries_429_and_5xx_then_succeeds() {
    let ok = sse(200, &[&delta("fine"), &finish("stop")]);
    let (base, log) = serve(vec![
        Reply::Raw(json_reply(429, "retry-after: 0\r\n", r#"{"error":{"message":"slow down"}}"#)),
        Reply::Raw(json_reply(503, "", "overloaded")),
        Reply::Raw(ok),
    ]);
    assert_eq!(run(&client(&base, 2)).0.unwrap().text, "fine");
    assert_eq!(log.lock().unwrap().len(), 3);
}

#[test]
fn gives_up_after_the_retries_with_the_servers_message() {
    let (base, log) = serve(vec![Reply::Raw(json_reply(500, "", r#"{"error":{"message":"model crashed"}}"#))]);
    let err = run(&client(&base, 1)).0.unwrap_err();
    assert!(matches!(err, GenerateError::Status { status: 500, .. }), "{err}");
    assert!(err.to_string().contains("model crashed"), "{err}");
    assert_eq!(log.lock().unwrap().len(), 2, "one try plus one retry");
    // 4xx other than 429 is final at once.
    let (base, log) = serve(vec![Reply::Raw(json_reply(401, "", r#"{"error":{"message":"bad key"}}"#))]);
    let err = run(&client(&base, 3)).0.unwrap_err().to_string();
    assert!(err.contains("401") && err.contains("bad key") && !err.contains("sk-secret"), "{err}");
    assert_eq!(log.lock().unwrap().len(), 1);
}

#[test]
fn server_down_is_unreachable() {
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err = run(&client(&format!("http://127.0.0.1:{port}/v1"), 1)).0.unwrap_err();
    assert!(matches!(err, GenerateError::Unreachable { .. }), "{err}");
    assert!(OpenAiGenerator::new(OpenAiConfig::new("localhost:8080", "m")).is_err(), "scheme required");
}

#[test]
fn https_apis_are_reachable() {
    // Hosted APIs (DeepSeek, DashScope…) are https: TLS is built in, so a closed port is just
    // unreachable, not "built without TLS".
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err = run(&client(&format!("https://127.0.0.1:{port}/v1"), 0)).0.unwrap_err();
    assert!(matches!(err, GenerateError::Unreachable { .. }), "{err}");
    // A server that does not speak TLS fails the handshake with a clear error, not a hang.
    let (base, _) = serve(vec![Reply::Stall(String::new(), Duration::from_millis(200))]);
    let err = run(&client(&base.replace("http://", "https://"), 0)).0.unwrap_err().to_string();
    assert!(!err.is_empty() && !err.to_lowercase().contains("without tls"), "{err}");
}

#[test]
fn a_silent_server_times_out() {
    // The server stalls for far longer than the client's timeout, so that a loaded machine
    // cannot make the two meet.
    let (base, _) = serve(vec![Reply::Stall(String::new(), Duration::from_secs(20))]);
    let started = Instant::now();
    let err = run(&client(&base, 0)).0.unwrap_err();
    assert!(matches!(err, GenerateError::Timeout { .. }), "{err}");
    assert!(started.elapsed() < Duration::from_secs(20), "gave up at the timeout, not when the server closed");
}

#[test]
fn a_stream_cut_midway_is_interrupted_not_retried() {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
    let partial = format!("{head}data: {}\n\n", delta("partial"));
    // Cut: the connection closes without a finish_reason or [DONE].
    let (base, log) = serve(vec![Reply::Raw(partial.clone())]);
    let (result, pieces) = run(&client(&base, 2));
    let err = result.unwrap_err();
    assert!(matches!(err, GenerateError::Interrupted { received: 7, .. }), "{err}");
    assert_eq!(pieces, vec!["partial"]);
    assert_eq!(log.lock().unwrap().len(), 1, "pieces were handed out: no retry");
    // Stalled mid-stream: the per-read timeout ends it.
    let (base, _) = serve(vec![Reply::Stall(partial, Duration::from_secs(3))]);
    let err = run(&client(&base, 2)).0.unwrap_err();
    assert!(matches!(err, GenerateError::Interrupted { .. }), "{err}");
}

#[test]
fn malformed_json_is_a_protocol_error() {
    let (base, _) = serve(vec![Reply::Raw(sse(200, &["{not json", "[DONE]"]))]);
    let err = run(&client(&base, 2)).0.unwrap_err();
    assert!(matches!(err, GenerateError::Protocol { .. }), "{err}");
    let (base, _) = serve(vec![Reply::Raw(json_reply(200, "", "<html>gateway</html>"))]);
    let err = run(&client(&base, 0)).0.unwrap_err();
    assert!(matches!(err, GenerateError::Protocol { .. }), "{err}");
    // An error object inside the stream.
    let (base, _) = serve(vec![Reply::Raw(sse(200, &[r#"{"error":{"message":"context too long"}}"#]))]);
    let err = run(&client(&base, 0)).0.unwrap_err().to_string();
    assert!(err.contains("context too long"), "{err}");
}

fn logprobs_reply(top: &[(&str, f64)]) -> String {
    let top: Vec<Value> = top.iter().map(|(t, l)| json!({"token": t, "logprob": l})).collect();
    let body = json!({
        "choices": [{"message": {"content": top.first().map_or("", |t| t["token"].as_str().unwrap_or(""))},
                     "logprobs": {"content": [{"token": "x", "logprob": 0.0, "top_logprobs": top}]}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 1}
    });
    json_reply(200, "", &body.to_string())
}

#[test]
fn a_choice_is_read_from_the_first_tokens_log_probabilities() {
    // Yes/yes pool into "yes", No/no into "no"; other tokens only lower the mass.
    let top = [("Yes", (0.5f64).ln()), ("yes", (0.2f64).ln()), ("No", (0.1f64).ln()), ("Maybe", (0.2f64).ln())];
    let (base, log) = serve(vec![Reply::Raw(logprobs_reply(&top))]);
    let choice = client(&base, 0).choose(&[crate::Message::user("q")], &["yes", "no"]).unwrap();
    assert!((choice.probabilities[0] - 0.875).abs() < 1e-4, "{choice:?}");
    assert!((choice.mass - 0.8).abs() < 1e-4, "{choice:?}");
    assert_eq!(choice.prompt_tokens, 12);
    let request = log.lock().unwrap()[0].clone();
    let body: Value = serde_json::from_str(request.split("\r\n\r\n").nth(1).unwrap_or_default()).unwrap();
    assert_eq!((body["logprobs"].as_bool(), body["max_tokens"].as_u64()), (Some(true), Some(1)), "{request}");
}

#[test]
fn a_server_without_log_probabilities_is_a_protocol_error_not_a_verdict() {
    let plain = json!({"choices": [{"message": {"content": "yes"}}]}).to_string();
    let (base, _) = serve(vec![Reply::Raw(json_reply(200, "", &plain))]);
    let error = client(&base, 0).choose(&[crate::Message::user("q")], &["yes", "no"]).unwrap_err();
    assert!(matches!(error, GenerateError::Protocol { .. }), "{error}");
    // Log-probabilities that name none of the choices are no verdict either.
    let (base, _) = serve(vec![Reply::Raw(logprobs_reply(&[("Perhaps", -0.1)]))]);
    let error = client(&base, 0).choose(&[crate::Message::user("q")], &["yes", "no"]).unwrap_err();
    assert!(error.to_string().contains("none of"), "{error}");
}
