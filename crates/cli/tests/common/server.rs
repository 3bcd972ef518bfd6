//! A running `skillrag serve` and plain HTTP calls to it, for the tests that drive the server.

use super::skillrag;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// A running `skillrag serve`, killed on drop.
pub struct Server {
    pub child: Child,
    pub base: String,
    pub agent: ureq::Agent,
}

impl Server {
    pub fn start(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        // A free port on loopback, unless the test says where.
        let mut cmd = if args.iter().any(|a| *a == "--port" || *a == "--addr") {
            skillrag(dir, &["serve"])
        } else {
            skillrag(dir, &["serve", "--addr", "127.0.0.1:0"])
        };
        cmd.args(args).envs(env.iter().copied()).stdout(Stdio::null()).stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("start skillrag serve");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[serve] {line}");
                if let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) {
                    let _ = tx.send(url.to_string());
                }
            }
        });
        let base = rx.recv_timeout(Duration::from_secs(120)).expect("skillrag serve did not report its address");
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .into();
        Server { child, base, agent }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn get(&self, path: &str) -> (u16, String, Vec<(String, String)>) {
        response(self.agent.get(self.url(path)).call())
    }

    pub fn post(&self, path: &str, body: &str) -> (u16, String, Vec<(String, String)>) {
        response(self.agent.post(self.url(path)).header("content-type", "application/json").send(body))
    }

    pub fn post_json(&self, path: &str, body: Value) -> (u16, Value) {
        let (status, text, _) = self.post(path, &body.to_string());
        (status, parse(&text))
    }

    pub fn get_json(&self, path: &str) -> (u16, Value) {
        let (status, text, _) = self.get(path);
        (status, parse(&text))
    }

    /// A request written byte for byte, so paths reach the server exactly as given.
    pub fn raw_get(&self, path: &str) -> u16 {
        let addr = self.base.trim_start_matches("http://");
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
    }

    /// Sends SIGTERM and waits for a clean exit.
    pub fn stop(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "serve did not stop within 30 s of SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn response(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> (u16, String, Vec<(String, String)>) {
    let mut r = r.expect("HTTP request failed");
    let headers =
        r.headers().iter().map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string())).collect();
    (r.status().as_u16(), r.body_mut().read_to_string().unwrap_or_default(), headers)
}

pub fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

impl Server {
    pub fn send(&self, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
        let url = self.url(path);
        let r = match (method, body) {
            ("GET", _) => self.agent.get(&url).call(),
            ("DELETE", Some(b)) => {
                self.agent.delete(&url).force_send_body().header("content-type", "application/json").send(b.to_string())
            }
            ("DELETE", None) => self.agent.delete(&url).call(),
            ("POST", Some(b)) => self.agent.post(&url).header("content-type", "application/json").send(b.to_string()),
            ("POST", None) => self.agent.post(&url).send_empty(),
            ("PATCH", Some(b)) => self.agent.patch(&url).header("content-type", "application/json").send(b.to_string()),
            ("PUT", Some(b)) => self.agent.put(&url).header("content-type", "application/json").send(b.to_string()),
            other => panic!("unsupported request {other:?}"),
        };
        let (status, text, _) = response(r);
        (status, if text.is_empty() { Value::Null } else { parse(&text) })
    }

    /// `PUT` of a text body (a `SKILL.md`).
    pub fn put_text(&self, path: &str, text: &str) -> (u16, Value) {
        let r = self.agent.put(self.url(path)).header("content-type", "text/markdown").send(text);
        let (status, text, _) = response(r);
        (status, parse(&text))
    }

    /// `POST` of a multipart/form-data body with one `file` part per `(file name, bytes)`.
    pub fn upload(&self, path: &str, files: &[(&str, &[u8])]) -> (u16, Value) {
        let boundary = "skillrag-test-boundary-7MA4YWxkTrZu0gW";
        let mut body = Vec::new();
        for (name, bytes) in files {
            body.extend_from_slice(
                format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
                     Content-Type: application/octet-stream\r\n\r\n"
                )
                .as_bytes(),
            );
            body.extend_from_slice(bytes);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
        let r = self
            .agent
            .post(self.url(path))
            .header("content-type", format!("multipart/form-data; boundary={boundary}"))
            .send(&body[..]);
        let (status, text, _) = response(r);
        (status, parse(&text))
    }

    /// Waits for the re-index job `id` to end; its final state.
    pub fn wait_for_job(&self, id: u64) -> Value {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let (_, body) = self.get_json("/v1/index");
            let job = &body["job"];
            if job["id"] == id && job["state"] != "running" {
                // The new generation is served once the job says done.
                return job.clone();
            }
            assert!(Instant::now() < deadline, "re-index job {id} did not end: {body}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
