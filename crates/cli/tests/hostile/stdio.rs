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

/// `skillrag mcp` as a live child: requests in, the answer with each request's id out, each
/// bounded in time, and the server's memory read while it runs.
struct McpStdio {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    answers: std::sync::mpsc::Receiver<Value>,
}

impl McpStdio {
    fn start(dir: &std::path::Path) -> McpStdio {
        let mut child = skillrag(dir, &["mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn skillrag mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, answers) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for l in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(serde_json::from_str(&l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")));
            }
        });
        let mut mcp = McpStdio { child, stdin, answers };
        let init = mcp.request(json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "0"}}}));
        assert!(init["result"].is_object(), "{init}");
        mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        mcp
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("write to skillrag mcp");
    }

    /// The answer to `message`, within 120 s.
    fn request(&mut self, message: Value) -> Value {
        self.send(&message);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let answer = self.answers.recv_timeout(left).unwrap_or_else(|e| panic!("no answer to {message}: {e}"));
            if answer["id"] == message["id"] {
                return answer;
            }
        }
    }

    fn peak_mib(&self) -> u64 {
        crate::common::peak_rss_mib(self.child.id()).expect("the server's memory")
    }
}

impl Drop for McpStdio {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn search_call(id: u32, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "search_knowledge_base", "arguments": arguments}})
}

/// Issue 46, 9: the MCP Inspector CLI (0.15) sends `"k": "2"`, which was refused with
/// "`k`: invalid type: string "2", expected u64". A string that parses whole as the declared
/// number is read as it; anything else is refused as before, naming the argument.
#[test]
fn mcp_stdio_reads_numbers_sent_as_strings() {
    let project = demo_indexed();
    let mut mcp = McpStdio::start(project.path());
    let two = mcp.request(search_call(1, json!({"query": "factory reset", "k": "2"})));
    assert!(two["result"].is_object() && two["result"]["isError"] != true, "{two}");
    let hits = two["result"]["structuredContent"]["hits"].as_array().map_or(0, Vec::len);
    assert!((1..=2).contains(&hits), "{hits} hits: {two}");
    for (id, k, needle) in [
        (2, json!("two"), "`k`: invalid type: string \"two\""),
        (3, json!("0"), "`k` must be at least 1"),
        (4, json!("2.5"), "`k`"),
        (5, json!(" 2"), "`k`"),
        (6, json!(true), "`k`"),
    ] {
        let bad = mcp.request(search_call(id, json!({"query": "factory reset", "k": k})));
        assert_eq!(bad["result"]["isError"], true, "k = {k}: {bad}");
        let text = bad["result"]["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains(needle), "k = {k}: {text}");
    }
    let budget = mcp.request(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "compile_context", "arguments": {"task": "reset the router", "budget": "400"}}}));
    assert!(budget["result"]["isError"] != true, "{budget}");
    assert_eq!(budget["result"]["structuredContent"]["context"]["budget"], 400, "{budget}");
    assert!(mcp.peak_mib() < 1024, "peak {} MiB", mcp.peak_mib());
}

/// Issue 46, 23 over stdio: params of the wrong type for a method MCP defines were answered
/// -32601 "method not found" with only the method's name; they are -32602 with the reason.
#[test]
fn mcp_stdio_wrong_typed_params_are_invalid_params() {
    let project = demo_indexed();
    let mut mcp = McpStdio::start(project.path());
    let wrong = mcp.request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}}));
    assert_eq!(wrong["error"]["code"], -32602, "{wrong}");
    let message = wrong["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("name") && message.contains("integer"), "{message}");
    let read = mcp.request(json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": 7}}));
    assert_eq!(read["error"]["code"], -32602, "{read}");
    let unknown = mcp.request(json!({"jsonrpc": "2.0", "id": 3, "method": "vendor/thing"}));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let tools = mcp.request(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}));
    assert!(tools["result"]["tools"].is_array(), "{tools}");
    assert!(mcp.peak_mib() < 1024, "peak {} MiB", mcp.peak_mib());
}

/// Issue 46, 8: `skillrag mcp --help` named 4 of the 6 tools, and its config left out the
/// `SKILLRAG_EMBED_MODEL` that docs/agents.md says the server needs. Every tool `tools/list`
/// serves is in the help, and so is the setting.
#[test]
fn mcp_help_names_every_served_tool_and_the_model_setting() {
    let project = demo_indexed();
    let (help, _) = crate::common::run_bounded(
        skillrag(project.path(), &["mcp", "--help"]),
        std::time::Duration::from_secs(60),
        512,
    );
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let mut mcp = McpStdio::start(project.path());
    let tools = mcp.request(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let names: Vec<&str> =
        tools["result"]["tools"].as_array().expect("tools").iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    for name in names {
        assert!(help.contains(name), "the help does not name the tool {name}:\n{help}");
    }
    assert!(help.contains("SKILLRAG_EMBED_MODEL"), "the help's config leaves out SKILLRAG_EMBED_MODEL:\n{help}");
}
