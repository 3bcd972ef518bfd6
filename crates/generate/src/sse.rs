//! Server-sent events, as chat-completion streams use them: `data:` lines, blank-line separated.
//!
//! Written by hand because the SSE crates are async (built on `futures` streams) and the
//! generator reads a blocking body; the part of the format a completion stream uses is small:
//! `data:` fields joined by newlines, comments (`:`) and other fields ignored.

use std::io::BufRead;

/// Reads events from `reader`; each `Ok(Some(data))` is one event's data.
pub struct Events<R> {
    reader: R,
    line: Vec<u8>,
}

impl<R: BufRead> Events<R> {
    pub fn new(reader: R) -> Events<R> {
        Events { reader, line: Vec::new() }
    }

    /// The next event's data; `Ok(None)` at the end of the stream.
    pub fn next_event(&mut self) -> std::io::Result<Option<String>> {
        let mut data: Option<String> = None;
        loop {
            self.line.clear();
            if self.reader.read_until(b'\n', &mut self.line)? == 0 {
                // End of stream: a last event without its blank line still counts.
                return Ok(data);
            }
            let line = String::from_utf8_lossy(&self.line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if data.is_some() {
                    return Ok(data);
                }
                continue;
            }
            if let Some(value) = line.strip_prefix("data:") {
                let value = value.strip_prefix(' ').unwrap_or(value);
                match &mut data {
                    Some(d) => {
                        d.push('\n');
                        d.push_str(value);
                    }
                    None => data = Some(value.to_string()),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        let mut events = Events::new(text.as_bytes());
        let mut out = Vec::new();
        while let Some(e) = events.next_event().unwrap() {
            out.push(e);
        }
        out
    }

    #[test]
    fn splits_events_and_skips_comments() {
        let stream =
            ": keep-alive\n\ndata: {\"a\":1}\n\ndata:{\"b\":2}\r\n\r\nevent: x\ndata: one\ndata: two\n\ndata: [DONE]";
        assert_eq!(all(stream), vec!["{\"a\":1}", "{\"b\":2}", "one\ntwo", "[DONE]"]);
        assert!(all("").is_empty());
    }
}
