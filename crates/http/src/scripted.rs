//! A loopback HTTP server for tests: each accepted connection gets the next scripted reply (the
//! last one repeats), or a reply computed from the request. Every request is logged.

use serde_json::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

type Handler = Arc<dyn Fn(&Request) -> String + Send + Sync>;

/// What to answer.
#[derive(Clone)]
pub enum Reply {
    /// Raw HTTP bytes, then close.
    Raw(String),
    /// Raw bytes, then wait this long with the connection open, then close.
    Stall(String, Duration),
    /// Computed from the request: the raw HTTP bytes to send.
    With(Handler),
}

impl Reply {
    pub fn raw(text: String) -> Reply {
        Reply::Raw(text)
    }

    /// A 200 JSON reply computed from the request.
    pub fn json(f: impl Fn(&Request) -> Value + Send + Sync + 'static) -> Reply {
        Reply::With(Arc::new(move |r| json_reply(200, "", &f(r).to_string())))
    }
}

/// One received request.
#[derive(Debug, Clone)]
pub struct Request {
    /// Request line and headers.
    pub head: String,
    /// The path of the request line.
    pub path: String,
    /// The body as JSON (`Null` when it is not).
    pub body: Value,
}

pub struct Server {
    addr: SocketAddr,
    log: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.log.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// An HTTP response with a JSON body.
pub fn json_reply(status: u16, extra_headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra_headers}connection: close\r\n\r\n{body}",
        body.len()
    )
}

/// Serves `replies` in order (the last one repeats) on a loopback port, in a background thread.
pub fn serve(replies: Vec<Reply>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("local address");
    let log = Arc::new(Mutex::new(Vec::new()));
    let seen = log.clone();
    std::thread::spawn(move || {
        for (i, stream) in listener.incoming().enumerate() {
            let Ok(mut stream) = stream else { return };
            let Some(reply) = replies.get(i.min(replies.len().saturating_sub(1))).cloned() else { return };
            let request = read_request(&mut stream);
            seen.lock().unwrap_or_else(|e| e.into_inner()).push(request.clone());
            match reply {
                Reply::Raw(r) => {
                    let _ = stream.write_all(r.as_bytes());
                }
                Reply::With(f) => {
                    let _ = stream.write_all(f(&request).as_bytes());
                }
                Reply::Stall(r, wait) => {
                    let _ = stream.write_all(r.as_bytes());
                    let _ = stream.flush();
                    std::thread::sleep(wait);
                }
            }
        }
    });
    Server { addr, log }
}

fn read_request(stream: &mut TcpStream) -> Request {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut request = Vec::new();
    let mut buf = [0u8; 16384];
    let mut split = None;
    while let Ok(n) = stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        request.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&request);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_string()))
                .and_then(|v| v.parse::<usize>().ok())
                .unwrap_or(0);
            split = Some(end);
            if request.len() >= end + 4 + length {
                break;
            }
        }
    }
    let text = String::from_utf8_lossy(&request).into_owned();
    let (head, body) = match split {
        Some(end) => (text[..end].to_string(), &text[end + 4..]),
        None => (text.clone(), ""),
    };
    let path = head.split_whitespace().nth(1).unwrap_or_default().to_string();
    Request { head, path, body: serde_json::from_str(body).unwrap_or(Value::Null) }
}
