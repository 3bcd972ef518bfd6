//! Hostile clients of MCP over streamable HTTP (`/mcp` under `skillrag serve`): a loop of
//! `initialize` calls that would hold a session each, and requests that are not JSON, have
//! params of the wrong type, or name no session or an unknown one. Every error is a JSON-RPC
//! error object, and the server stays within its memory.

use crate::common::{demo_indexed, peak_rss_mib, skillrag};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running `skillrag serve` on a free port, killed on drop.
struct Serve {
    child: Child,
    addr: String,
}

impl Serve {
    fn start(dir: &Path) -> Serve {
        let mut cmd = skillrag(dir, &["serve", "--addr", "127.0.0.1:0"]);
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start skillrag serve");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[serve] {line}");
                if let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) {
                    let _ = tx.send(url.trim_start_matches("http://").trim_end_matches('/').to_string());
                }
            }
        });
        let addr = rx.recv_timeout(Duration::from_secs(120)).expect("skillrag serve did not report its address");
        Serve { child, addr }
    }

    fn peak_mib(&self) -> u64 {
        peak_rss_mib(self.child.id()).expect("the server's memory")
    }

    /// One request to `/mcp`, answered as (status, headers in lowercase, body).
    fn send(&self, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
        let mut s = TcpStream::connect(&self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let mut head = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n\
             Accept: application/json, text/event-stream\r\n",
            self.addr,
            body.len()
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        s.write_all(format!("{head}\r\n{body}").as_bytes()).expect("write");
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).expect("read the answer");
        Reply::parse(&raw)
    }

    /// A JSON-RPC message posted in `session` (none for `initialize`).
    fn post(&self, session: Option<&str>, message: &Value) -> Reply {
        let mut headers = vec![("Content-Type", "application/json"), ("MCP-Protocol-Version", "2025-06-18")];
        if let Some(id) = session {
            headers.push(("Mcp-Session-Id", id));
        }
        self.send("POST", &headers, &message.to_string())
    }

    /// A new session, initialized; its id.
    fn session(&self) -> String {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "0"}}});
        let reply = self.post(None, &init);
        assert_eq!(reply.status, 200, "initialize: {}", reply.body);
        let id = reply.header("mcp-session-id").unwrap_or_else(|| panic!("no session id: {reply:?}")).to_string();
        let initialized = self.post(Some(&id), &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        assert!(initialized.status < 300, "notifications/initialized: {initialized:?}");
        id
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn parse(raw: &[u8]) -> Reply {
        let text = String::from_utf8_lossy(raw);
        let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
        let mut lines = head.lines();
        let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|s| s.parse().ok()).unwrap_or(0);
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        let chunked = headers.iter().any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"));
        let body = if chunked { dechunk(body) } else { body.to_string() };
        Reply { status, headers, body }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages of the body: the body itself, or each `data:` line of an SSE stream.
    fn messages(&self) -> Vec<Value> {
        if self.header("content-type").is_some_and(|t| t.starts_with("text/event-stream")) {
            return self
                .body
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str(d.trim()).ok())
                .collect();
        }
        serde_json::from_str(&self.body).map(|v| vec![v]).unwrap_or_default()
    }

    /// The one JSON-RPC error object of the body, or a failure that shows the reply.
    fn json_rpc_error(&self) -> Value {
        assert!(
            self.header("content-type").is_some_and(|t| t.starts_with("application/json")),
            "not a JSON answer: {self:?}"
        );
        let body: Value = serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"));
        assert_eq!(body["jsonrpc"], "2.0", "{body}");
        assert!(body["error"]["code"].is_i64() && body["error"]["message"].is_string(), "{body}");
        body
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else { break };
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

fn tools_list(id: u32) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"})
}

/// Issue 46, 17: 3000 `initialize` calls, each holding a session until it idles out after 5
/// minutes, grew the server by about 100 KiB each (2.1 GB for 20 000). Live sessions are capped:
/// the oldest idle one is ended, and the newest still works.
#[test]
fn mcp_http_sessions_are_capped_and_the_oldest_idle_goes() {
    let project = demo_indexed();
    let server = Serve::start(project.path());
    let started = Instant::now();
    let first = server.session();
    let before = server.peak_mib();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "flood", "version": "0"}}});
    for i in 0..3000 {
        let reply = server.post(None, &init);
        assert_eq!(reply.status, 200, "initialize #{i}: {reply:?}");
    }
    let last = server.session();
    let grown = server.peak_mib().saturating_sub(before);
    eprintln!("3000 sessions opened in {:?}; the server grew by {grown} MiB", started.elapsed());
    assert!(grown < 100, "3000 initialize calls grew the server by {grown} MiB");
    assert!(started.elapsed() < Duration::from_secs(240), "took {:?}", started.elapsed());

    let newest = server.post(Some(&last), &tools_list(1));
    assert!(newest.messages().iter().any(|m| m["result"]["tools"].is_array()), "the newest session: {newest:?}");
    let oldest = server.post(Some(&first), &tools_list(2));
    assert_eq!(oldest.status, 404, "the oldest idle session should be gone: {oldest:?}");
    assert_eq!(oldest.json_rpc_error()["error"]["code"], -32001);
}

/// Issue 46, 23: a body that is not JSON got HTTP 415 in plain text, params of the wrong type
/// "method not found" with only the method's name, and session faults plain text.
#[test]
fn mcp_http_errors_are_json_rpc_errors() {
    let project = demo_indexed();
    let server = Serve::start(project.path());
    let started = Instant::now();
    let json_type = [("Content-Type", "application/json")];

    let malformed = server.send("POST", &json_type, r#"{"jsonrpc": "2.0", "id": 1, "method": "#);
    assert_eq!(malformed.status, 400, "{malformed:?}");
    assert_eq!(malformed.json_rpc_error()["error"]["code"], -32700);

    let empty = server.send("POST", &json_type, "");
    assert_eq!(empty.status, 400, "{empty:?}");
    assert_eq!(empty.json_rpc_error()["error"]["code"], -32700);

    let session = server.session();
    let wrong = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 5}});
    let reply = server.post(Some(&session), &wrong);
    let answer = reply.messages().into_iter().find(|m| m["id"] == 3).unwrap_or_else(|| panic!("{reply:?}"));
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("name") && message.contains("integer"), "the reason is missing: {message}");

    let no_session = server.post(None, &tools_list(4));
    assert_eq!(no_session.status, 400, "{no_session:?}");
    assert_eq!(no_session.json_rpc_error()["id"], 4);

    let unknown = server.post(Some("no-such-session"), &tools_list(5));
    assert_eq!(unknown.status, 404, "{unknown:?}");
    let unknown = unknown.json_rpc_error();
    assert_eq!((unknown["id"].clone(), unknown["error"]["code"].clone()), (json!(5), json!(-32001)), "{unknown}");

    let text = server.send("POST", &[("Content-Type", "text/plain")], &tools_list(6).to_string());
    assert_eq!(text.status, 415, "{text:?}");
    text.json_rpc_error();

    // The server still serves its session, also a body that starts with a byte-order mark.
    let after = server.post(Some(&session), &tools_list(7));
    assert!(after.messages().iter().any(|m| m["result"]["tools"].is_array()), "{after:?}");
    let headers = [("Content-Type", "application/json"), ("Mcp-Session-Id", session.as_str())];
    let bom = server.send("POST", &headers, &format!("\u{feff}{}", tools_list(8)));
    assert!(bom.messages().iter().any(|m| m["result"]["tools"].is_array()), "{bom:?}");
    assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
    assert!(server.peak_mib() < 1024, "peak {} MiB", server.peak_mib());
}

/// Issue 46, 10: `DELETE /mcp` answered 202, which the Python SDK reports as "Session termination
/// failed: 202" on every close. A terminated session answers 204; an unknown one 404.
#[test]
fn mcp_http_delete_ends_the_session_with_204() {
    let project = demo_indexed();
    let server = Serve::start(project.path());
    let session = server.session();
    let headers = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-06-18")];
    let deleted = server.send("DELETE", &headers, "");
    assert!([200, 204].contains(&deleted.status), "{deleted:?}");
    let again = server.send("DELETE", &headers, "");
    assert_eq!(again.status, 404, "{again:?}");
    assert_eq!(again.json_rpc_error()["error"]["code"], -32001);
    let gone = server.post(Some(&session), &tools_list(1));
    assert_eq!(gone.status, 404, "{gone:?}");
    assert!(server.peak_mib() < 1024, "peak {} MiB", server.peak_mib());
}

/// Issue 46, 9 over HTTP: a number sent as a string (`"k": "2"`, as the MCP Inspector CLI sends
/// it) is read as the number; a string that is no number is still refused, naming `k`.
#[test]
fn mcp_http_reads_numbers_sent_as_strings() {
    let project = demo_indexed();
    let server = Serve::start(project.path());
    let session = server.session();
    let call = |id: u32, k: &str| {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "search_knowledge_base", "arguments": {"query": "factory reset", "k": k}}});
        let reply = server.post(Some(&session), &message);
        reply.messages().into_iter().find(|m| m["id"] == id).unwrap_or_else(|| panic!("{reply:?}"))
    };
    let two = call(1, "2");
    assert!(two["result"].is_object() && two["result"]["isError"] != true, "{two}");
    let hits = two["result"]["structuredContent"]["hits"].as_array().map_or(0, Vec::len);
    assert!((1..=2).contains(&hits), "{hits} hits: {two}");
    let bad = call(2, "two");
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(bad["result"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("`k`")), "{bad}");
    assert!(server.peak_mib() < 1024, "peak {} MiB", server.peak_mib());
}
