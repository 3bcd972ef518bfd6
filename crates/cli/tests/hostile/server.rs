//! Hostile inputs: server. `skillrag serve` over real TCP, as a hostile web page, a slow client
//! or a careless operator would meet it: cross-site requests, DNS rebinding, connections that
//! never finish their headers, too many connections from one client, and weak tokens.

use crate::common::{demo_indexed, skillrag};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const ASK: &str = r#"{"query": "How do I factory reset the router?"}"#;
const EVIL: &str = "http://evil.example";
/// What `openssl rand -hex 32` prints.
const GOOD_TOKEN: &str = "3c9e1f7a5b2d8046e1a97c3f5d0b2e84a6c1f9d3e7b5a0c2d4f6e8a1b3c5d7f9";

/// A running `skillrag serve`, killed on drop.
pub(crate) struct Server {
    child: Child,
    /// `127.0.0.1:PORT`, also when bound to 0.0.0.0.
    addr: String,
}

impl Server {
    pub(crate) fn start(dir: &Path, bind: &str, env: &[(&str, &str)]) -> Server {
        let mut cmd = skillrag(dir, &["serve", "--addr", bind]);
        cmd.envs(env.iter().copied()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start skillrag serve");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[serve] {line}");
                if let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) {
                    let _ = tx.send(url.trim_start_matches("http://").to_string());
                }
            }
        });
        let bound = rx.recv_timeout(Duration::from_secs(120)).expect("skillrag serve did not report its address");
        let port = bound.rsplit(':').next().expect("port");
        Server { child, addr: format!("127.0.0.1:{port}") }
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        s
    }

    /// One request written byte for byte (`Host` given in `headers` or the server's address),
    /// answered as (status, body).
    pub(crate) fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
        let mut s = self.connect();
        let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            head.push_str(&format!("Host: {}\r\n", self.addr));
        }
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        // A write the server cut short (it closed a connection over a cap, or answered before
        // reading the body) is not the test's failure: what it answered, if anything, is read next,
        // and a connection closed unanswered reads as status 0.
        let _ = write!(s, "{head}\r\n{body}");
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        let out = String::from_utf8_lossy(&out).into_owned();
        let status = out.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
        let body = out.split_once("\r\n\r\n").map_or("", |(_, b)| b).to_string();
        (status, body)
    }

    pub(crate) fn post_json(&self, path: &str, extra: &[(&str, &str)], body: &str) -> (u16, String) {
        let mut headers = vec![("Content-Type", "application/json")];
        headers.extend_from_slice(extra);
        self.send("POST", path, &headers, body)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn parse(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

/// The JSON error shape, with a message that mentions `says`.
fn assert_refused(answer: &(u16, String), code: u16, kind: &str, says: &str) {
    let body = parse(&answer.1);
    assert_eq!(answer.0, code, "{body}");
    assert_eq!(body["error"]["type"], kind, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(says), "{message:?} should mention {says:?}");
}

/// Polls `done` every 100 ms until `limit`.
fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out after {limit:?} waiting until {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Reads until the server closes the connection; the time that took, or `None` if it did not
/// within the socket's read timeout.
fn time_to_close(s: &mut TcpStream, since: Instant) -> Option<Duration> {
    let mut buf = [0u8; 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Some(since.elapsed()),
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => return None,
            // Reset by the server: closed too.
            Err(_) => return Some(since.elapsed()),
        }
    }
}

#[test]
fn cross_site_and_non_json_posts_are_refused() {
    let project = demo_indexed();
    let server = Server::start(project.path(), "127.0.0.1:0", &[]);
    let own = format!("http://{}", server.addr);

    // The audit's requests: a page elsewhere posting text/plain, which needs no preflight.
    let evil = [("Origin", EVIL), ("Content-Type", "text/plain")];
    assert_refused(&server.send("POST", "/v1/index", &evil, r#"{"rebuild": true}"#), 403, "forbidden", EVIL);
    assert_refused(&server.send("POST", "/v1/ask", &evil, ASK), 403, "forbidden", "cross-site");
    assert_refused(&server.post_json("/v1/index", &[("Origin", EVIL)], "{}"), 403, "forbidden", EVIL);
    assert_refused(&server.post_json("/v1/chat/completions", &[("Origin", "null")], "{}"), 403, "forbidden", "null");
    let (status, job) = server.send("GET", "/v1/index", &[], "");
    assert_eq!((status, parse(&job)), (200, json!({"job": null})), "no re-index was started");

    // Bodies the API takes are declared JSON.
    for kind in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
        assert_refused(
            &server.send("POST", "/v1/ask", &[("Content-Type", kind)], ASK),
            415,
            "unsupported_media_type",
            "application/json",
        );
    }
    assert_refused(&server.send("POST", "/v1/search", &[], ASK), 415, "unsupported_media_type", "none");
    let text_index = server.send("POST", "/v1/index", &[("Content-Type", "text/plain")], r#"{"rebuild": true}"#);
    assert_refused(&text_index, 415, "unsupported_media_type", "text/plain");

    // The web page's own requests (same origin) and non-browser clients (no Origin) work.
    let (status, body) = server.post_json("/v1/ask", &[("Origin", &own)], ASK);
    assert_eq!(status, 200, "{body}");
    assert_eq!(parse(&body)["route"]["skills"], json!(["router-faq"]), "{body}");
    let (status, body) = server.post_json("/v1/ask", &[], ASK);
    assert_eq!(status, 200, "{body}");
    let (status, body) = server.post_json("/v1/search", &[("Origin", &own)], r#"{"query": "reset", "k": 2}"#);
    assert_eq!(status, 200, "{body}");
    // A GET from elsewhere changes nothing and reads only what CORS lets the page see.
    assert_eq!(server.send("GET", "/v1/skills", &[("Origin", EVIL)], "").0, 200);
}

#[test]
fn hosts_other_than_the_servers_own_are_refused() {
    let project = demo_indexed();
    let server =
        Server::start(project.path(), "127.0.0.1:0", &[("SKILLRAG_SERVE_ALLOWED_HOSTS", "rag.test, other.test")]);
    let port = server.addr.rsplit(':').next().unwrap().to_string();

    // A DNS-rebinding page reaches 127.0.0.1 under its own name.
    let rebound = format!("evil.example:{port}");
    let bad = [("Host", rebound.as_str())];
    assert_refused(&server.post_json("/v1/ask", &bad, ASK), 403, "forbidden", "evil.example");
    assert_refused(&server.send("GET", "/v1/skills", &bad, ""), 403, "forbidden", "DNS rebinding");
    assert_refused(&server.send("GET", "/", &bad, ""), 403, "forbidden", "evil.example");
    assert_refused(&server.send("GET", "/healthz", &bad, ""), 403, "forbidden", "evil.example");
    assert_refused(&server.send("POST", "/mcp", &bad, "{}"), 403, "forbidden", "evil.example");
    assert_refused(&server.send("GET", "/v1/skills", &[("Host", "127.0.0.2")], ""), 403, "forbidden", "127.0.0.2");

    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}"), format!("[::1]:{port}"), "rag.test".into()] {
        let (status, body) = server.send("GET", "/v1/skills", &[("Host", &host)], "");
        assert_eq!(status, 200, "Host {host}: {body}");
        let own = format!("http://{host}");
        let (status, body) = server.post_json("/v1/ask", &[("Host", &host), ("Origin", &own)], ASK);
        assert_eq!(status, 200, "Host {host}: {body}");
    }
    let (status, page) = server.send("GET", "/", &[("Host", &format!("localhost:{port}"))], "");
    assert!(status == 200 && page.contains("<html"), "{status}");
}

#[test]
fn partial_headers_and_bodies_are_cut_off() {
    let project = demo_indexed();
    let server = Server::start(
        project.path(),
        "127.0.0.1:0",
        &[("SKILLRAG_SERVE_HEADER_TIMEOUT_SECS", "1"), ("SKILLRAG_SERVE_BODY_TIMEOUT_SECS", "2")],
    );
    let started = Instant::now();
    let mut held: Vec<TcpStream> = (0..50)
        .map(|_| {
            let mut s = server.connect();
            s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
            write!(s, "POST /v1/index HTTP/1.1\r\nHost: {}\r\nX-Slow: ", server.addr).unwrap();
            s
        })
        .collect();
    let closed: Vec<Option<Duration>> = held.iter_mut().map(|s| time_to_close(s, started)).collect();
    let open = closed.iter().filter(|c| c.is_none()).count();
    assert_eq!(open, 0, "{open} of 50 partial-header connections still open after 60 s");
    let slowest = closed.iter().flatten().max().copied().unwrap_or_default();
    assert!(slowest >= Duration::from_millis(900), "closed before the 1 s timeout: {slowest:?}");
    assert!(slowest < Duration::from_secs(30), "the 1 s header timeout took {slowest:?}");
    let (status, job) = server.send("GET", "/v1/index", &[], "");
    assert_eq!((status, parse(&job)), (200, json!({"job": null})));

    // Headers complete, the body never: 408 within the body timeout.
    let mut s = server.connect();
    write!(
        s,
        "POST /v1/ask HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"qu",
        server.addr
    )
    .unwrap();
    let sent = Instant::now();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    assert!(out.starts_with("HTTP/1.1 408"), "{out}");
    assert!(out.contains("request_timeout"), "{out}");
    assert!(sent.elapsed() < Duration::from_secs(30), "the 2 s body timeout took {:?}", sent.elapsed());
    assert_eq!(server.send("GET", "/healthz", &[], "").0, 200, "the server still answers");
}

#[test]
fn one_client_cannot_hold_more_connections_than_its_cap() {
    let project = demo_indexed();
    let server = Server::start(
        project.path(),
        "127.0.0.1:0",
        // Long header timeout: the held connections stay open unless the cap closes them.
        &[("SKILLRAG_SERVE_CONNECTIONS_PER_CLIENT", "4"), ("SKILLRAG_SERVE_HEADER_TIMEOUT_SECS", "120")],
    );
    let mut held: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = server.connect();
            write!(s, "GET /healthz HTTP/1.1\r\nHost: {}\r\n", server.addr).unwrap();
            s
        })
        .collect();
    // The server takes connections in order, so these come after the four held ones.
    for _ in 0..3 {
        let mut extra = server.connect();
        let _ = write!(extra, "GET /healthz HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n", server.addr);
        let since = Instant::now();
        let mut out = Vec::new();
        let _ = extra.read_to_end(&mut out);
        assert!(out.is_empty(), "a connection over the cap was answered: {}", String::from_utf8_lossy(&out));
        assert!(since.elapsed() < Duration::from_secs(60), "closed only after {:?}", since.elapsed());
    }
    // The held ones were not touched: one finishes its request and is answered.
    let mut first = held.remove(0);
    write!(first, "Connection: close\r\n\r\n").unwrap();
    let mut out = String::new();
    let _ = first.read_to_string(&mut out);
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    // Its slot is free again.
    wait_until("a connection is accepted again", Duration::from_secs(60), || {
        server.send("GET", "/healthz", &[], "").0 == 200
    });
    drop(held);
}

#[test]
fn weak_tokens_are_refused_at_startup() {
    let project = demo_indexed();
    let hex20 = "8f3a1c9e7b2d5f0a4c6e";
    for (token, says) in [
        ("                ", "whitespace"),
        ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "only 1 different character"),
        (&format!("{GOOD_TOKEN}\n") as &str, "whitespace"),
        (hex20, "20 characters long; at least 32"),
    ] {
        let out = skillrag(project.path(), &["serve", "--addr", "0.0.0.0:0"])
            .env("SKILLRAG_API_TOKEN", token)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{token:?} was accepted");
        assert!(stderr.contains("SKILLRAG_API_TOKEN is too weak") && stderr.contains(says), "{token:?}: {stderr}");
        assert!(stderr.contains("openssl rand -hex 32"), "says how to make one: {stderr}");
    }

    // A real one works; on 0.0.0.0 with a token, any Host is accepted (the token guards it).
    let server = Server::start(project.path(), "0.0.0.0:0", &[("SKILLRAG_API_TOKEN", GOOD_TOKEN)]);
    let bearer = format!("Bearer {GOOD_TOKEN}");
    assert_eq!(server.send("GET", "/v1/skills", &[], "").0, 401);
    let (status, body) = server.send("GET", "/v1/skills", &[("Authorization", &bearer), ("Host", "rag.lan:8080")], "");
    assert_eq!(status, 200, "{body}");
    assert_eq!(parse(&body)["skills"].as_array().map(Vec::len), Some(3), "{body}");
}
