//! MCP over stdin/stdout, answering every line per JSON-RPC 2.0.
//!
//! rmcp's own stdio transport drops a line that is not JSON (so that a peer which echoes
//! errors back cannot start a storm), and answers a misshapen request without its id. A
//! client then waits forever for the answer to a request it got wrong. This transport answers
//! each such line instead (`jsonrpc::classify`, which HTTP shares): `-32700` for one that is not
//! JSON (bad UTF-8, bad syntax, too deep, trailing bytes), `-32600` for JSON that is not a
//! request, `-32602` for params that do not fit their method, each with the request's id when
//! it can still be read. It cannot storm: every answer it writes is well-formed JSON, and a
//! well-formed error response that comes back is passed on to rmcp, not answered.

use super::jsonrpc::{classify, Incoming};
use rmcp::model::{ClientJsonRpcMessage, ErrorData, ServerJsonRpcMessage};
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use std::future::Future;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// The longest line read; anything longer is answered `-32600` and skipped to its newline.
/// A tool call is a question and a few options, so 4 MiB is far above any real request.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// One line read with a bound on its length.
enum Line {
    Complete,
    TooLong,
    End,
}

/// The stdio transport rmcp serves on: lines in, answers and rmcp's messages out through one
/// writer task, so that `receive`, which rmcp may cancel, never waits on a write.
pub struct GuardedStdio<R> {
    input: R,
    line: Vec<u8>,
    skipping_long_line: bool,
    output: mpsc::UnboundedSender<Vec<u8>>,
}

impl<R: AsyncBufRead + Unpin + Send> GuardedStdio<R> {
    /// Reads `input`; what is written goes to `output` from a task whose handle is returned, so
    /// the caller can wait until the last answer is out.
    pub fn new<W>(input: R, mut output: W) -> (GuardedStdio<R>, tokio::task::JoinHandle<()>)
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
        let writer = tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                    break;
                }
            }
        });
        (GuardedStdio { input, line: Vec::new(), skipping_long_line: false, output: tx }, writer)
    }

    /// Reads up to the next newline without ever holding more than [`MAX_LINE_BYTES`]. Partial
    /// bytes stay in `self.line`, so a cancelled call resumes where it stopped.
    async fn read_line(&mut self) -> std::io::Result<Line> {
        loop {
            let available = self.input.fill_buf().await?;
            if available.is_empty() {
                return Ok(Line::End);
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let mut outcome = None;
            if self.skipping_long_line {
                if newline.is_some() {
                    self.skipping_long_line = false;
                }
            } else if self.line.len() + take > MAX_LINE_BYTES {
                self.line.clear();
                self.skipping_long_line = newline.is_none();
                outcome = Some(Line::TooLong);
            } else {
                self.line.extend_from_slice(&available[..take]);
                if newline.is_some() {
                    outcome = Some(Line::Complete);
                }
            }
            self.input.consume(take);
            if let Some(outcome) = outcome {
                return Ok(outcome);
            }
        }
    }

    fn write(&self, message: &ServerJsonRpcMessage) -> Result<(), std::io::Error> {
        let mut bytes = serde_json::to_vec(message)?;
        bytes.push(b'\n');
        self.output.send(bytes).map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "stdout closed"))
    }
}

impl<R: AsyncBufRead + Unpin + Send> Transport<RoleServer> for GuardedStdio<R> {
    type Error = std::io::Error;

    fn send(&mut self, item: ServerJsonRpcMessage) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let sent = self.write(&item);
        async move { sent }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            match self.read_line().await {
                Ok(Line::Complete) => {}
                Ok(Line::TooLong) => {
                    let error =
                        ErrorData::invalid_request(format!("request line longer than {MAX_LINE_BYTES} bytes"), None);
                    self.write(&ServerJsonRpcMessage::error(error, None)).ok()?;
                    continue;
                }
                // A last line without its newline is still a request.
                Ok(Line::End) if !self.line.is_empty() => {}
                Ok(Line::End) => return None,
                Err(e) => {
                    eprintln!("MCP stdio: reading stdin failed: {e}");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            let text = line.strip_suffix(b"\n").unwrap_or(&line);
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            match classify(text) {
                Incoming::Message(message) => return Some(*message),
                Incoming::Ignore => {}
                Incoming::Reject(answer) => self.write(&answer).ok()?,
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    /// Runs `input` through the transport with nothing behind it and returns what it answered
    /// and which messages it passed on.
    async fn feed(input: &[u8]) -> (Vec<Value>, usize) {
        let (writer_end, reader_end) = tokio::io::duplex(1 << 20);
        let (mut transport, writer) = GuardedStdio::new(tokio::io::BufReader::new(input), writer_end);
        let mut passed = 0;
        while transport.receive().await.is_some() {
            passed += 1;
        }
        drop(transport);
        writer.await.unwrap();
        let mut out = String::new();
        let mut reader = tokio::io::BufReader::new(reader_end);
        tokio::io::AsyncReadExt::read_to_string(&mut reader, &mut out).await.unwrap();
        (out.lines().map(|l| serde_json::from_str(l).unwrap()).collect(), passed)
    }

    fn code(answer: &Value) -> i64 {
        answer["error"]["code"].as_i64().unwrap()
    }

    #[tokio::test]
    async fn every_bad_line_is_answered_with_its_id_and_good_ones_pass() {
        let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let mut input = Vec::new();
        for bad in [
            &b"{not json"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}",
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"\ud800"}}"#,
            b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\0\0\0",
            br#"[1, 2]"#,
            br#"{"id":"six","method":"ping"}"#,
        ] {
            input.extend_from_slice(bad);
            input.push(b'\n');
        }
        input.extend_from_slice(&"[".repeat(100_000).into_bytes());
        input.push(b'\n');
        input.extend_from_slice(ping);
        input.push(b'\n');
        let (answers, passed) = feed(&input).await;
        assert_eq!(passed, 1, "only the ping reaches the server: {answers:?}");
        assert_eq!(answers.len(), 7, "{answers:?}");
        let ids: Vec<&Value> = answers.iter().map(|a| &a["id"]).collect();
        assert_eq!(ids, [&Value::Null, &json!(2), &json!(3), &json!(4), &Value::Null, &json!("six"), &Value::Null]);
        let codes: Vec<i64> = answers.iter().map(code).collect();
        assert_eq!(codes, [-32700, -32700, -32700, -32700, -32600, -32600, -32700]);
        assert!(answers[1]["error"]["message"].as_str().unwrap().contains("UTF-8"), "{:?}", answers[1]);
        assert!(answers[3]["error"]["message"].as_str().unwrap().contains("trailing"), "{:?}", answers[3]);
    }

    #[tokio::test]
    async fn an_overlong_line_is_refused_without_being_held_and_reading_goes_on() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}");
        let (answers, passed) = feed(&input).await;
        assert_eq!(answers.len(), 1, "{answers:?}");
        assert_eq!(code(&answers[0]), -32600);
        assert_eq!(passed, 1, "the request after it, without a final newline, still passes");
    }

    #[tokio::test]
    async fn notifications_and_blank_lines_get_no_answer() {
        // A notification is rmcp's to handle (a custom one included); JSON-RPC answers none.
        let input = b"\n   \n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}\n";
        let (answers, passed) = feed(input).await;
        assert!(answers.is_empty(), "{answers:?}");
        assert_eq!(passed, 1);
    }
}
