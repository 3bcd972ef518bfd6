//! Hostile bytes on standard input: `skillrag mcp` answers every line per JSON-RPC and keeps
//! serving; `skillrag batch` answers every readable line and names the unreadable one.

use crate::common::{demo_indexed, skillrag};
use serde_json::{json, Value};
use std::io::Write;
use std::process::Stdio;

/// Writes `input` to the command's stdin, closes it, and returns stdout's JSON lines and stderr.
fn feed(mut cmd: std::process::Command, input: &[u8]) -> (Vec<Value>, String) {
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    // Written from a thread: the child answers while it reads, and a full stdout pipe would
    // otherwise stop both sides.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().expect("writer");
    let lines = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (lines, String::from_utf8_lossy(&out.stderr).into_owned())
}

fn line(bytes: &[u8]) -> Vec<u8> {
    let mut l = bytes.to_vec();
    l.push(b'\n');
    l
}

#[test]
fn mcp_stdio_answers_every_malformed_line_and_keeps_serving() {
    let project = demo_indexed();
    let initialize = json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "0"}}});
    let mut input = line(initialize.to_string().as_bytes());
    input.extend(line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#));
    // The eight inputs the audit saw dropped, each followed by nothing: an answer must come
    // for each, and the tools/list at the end must still be served.
    let hostile: Vec<Vec<u8>> = vec![
        b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ".to_vec(),
        b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"x\":\"\xff\xfe\"}}".to_vec(),
        format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{{\"name\":\"{}\"}}}}",
            "a".repeat(10 << 20)
        )
        .into_bytes(),
        b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/list\"}\0\0\0\0".to_vec(),
        br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"ask","arguments":{"query":"\ud800"}}}"#
            .to_vec(),
        br#"{"jsonrpc":"1.0","id":7,"method":"tools/list"}"#.to_vec(),
        b"42".to_vec(),
    ];
    for bad in &hostile {
        input.extend(line(bad));
    }
    input.extend(line(br#"{"jsonrpc":"2.0","id":"last","method":"tools/list"}"#));

    let (answers, stderr) = feed(skillrag(project.path(), &["mcp"]), &input);
    let by_id = |id: Value| answers.iter().find(|a| a["id"] == id);
    assert!(by_id(json!("init")).is_some_and(|a| a["result"].is_object()), "{answers:?}\n{stderr}");
    let tools =
        by_id(json!("last")).unwrap_or_else(|| panic!("tools/list after the hostile lines: {answers:?}\n{stderr}"));
    assert!(tools["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{tools}");

    let errors: Vec<&Value> = answers.iter().filter(|a| a["error"].is_object()).collect();
    assert_eq!(errors.len(), hostile.len(), "one error answer per hostile line: {errors:?}\n{stderr}");
    for (id, code) in [(2, -32700), (5, -32700), (6, -32700), (7, -32600)] {
        let answer = by_id(json!(id)).unwrap_or_else(|| panic!("no answer for id {id}: {errors:?}"));
        assert_eq!(answer["error"]["code"], code, "{answer}");
    }
    let codes: Vec<i64> = errors.iter().filter_map(|a| a["error"]["code"].as_i64()).collect();
    assert!(codes.iter().all(|c| [-32700, -32600].contains(c)), "{codes:?}");
}

#[test]
fn batch_answers_every_readable_line_around_a_bad_byte() {
    let project = demo_indexed();
    let input = b"{\"id\": \"a\", \"query\": \"How do I update the firmware?\"}\n\
        {\"id\": \"b\", \"query\": \"\xff\xfe what?\"}\n\
        {\"id\": \"c\", \"query\": \"hi\"}\n";
    let (lines, stderr) = feed(skillrag(project.path(), &["batch"]), input);
    assert_eq!(lines.len(), 3, "{lines:?}\n{stderr}");
    assert_eq!(lines[0]["id"], "a");
    assert!(lines[0]["answer"].is_string(), "{}", lines[0]);
    assert_eq!(lines[1]["id"], "b", "the bad line keeps its id: {}", lines[1]);
    let error = lines[1]["error"].as_str().unwrap_or_default();
    assert!(error.contains("line 2") && error.contains("UTF-8"), "{error}");
    assert_eq!(lines[2]["id"], "c");
    assert!(stderr.contains("1 question(s) could not be answered"), "{stderr}");
}
