//! An LLM that fails — an error status, 429, a malformed body, a stall, a stream cut midway —
//! through a fault-injecting proxy on loopback (in front of the real llama.cpp server where the
//! fault needs real output): `skillrag ask` still answers, extractively, with a notice; never a
//! crash, a hang or an empty answer.
mod common;

use common::*;
use serde_json::Value;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const QUESTION: &str = "How do I factory reset the router?";

/// Runs `cmd`, failing the test if it takes longer than `limit` (a hang) or does not succeed.
fn run_within(mut cmd: Command, limit: Duration) -> (Output, Duration) {
    let started = Instant::now();
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn skillrag");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(limit) {
        Ok(out) => out.expect("wait for skillrag"),
        Err(_) => {
            // Only the child this test started, by its id.
            let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
            panic!("skillrag did not finish within {limit:?}: it hangs");
        }
    };
    assert!(out.status.success(), "skillrag failed: {}", stderr(&out));
    (out, started.elapsed())
}

/// `ask --json` with the LLM behind `proxy`.
fn ask_through(dir: &std::path::Path, proxy: &FaultProxy, env: &[(&str, &str)]) -> (Value, Duration) {
    let mut cmd = with_llm(skillrag(dir, &["ask", QUESTION, "--json"]), &proxy.base_url, "qwen");
    cmd.envs(env.iter().copied());
    let (out, took) = run_within(cmd, Duration::from_secs(90));
    let answer =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (answer, took)
}

/// The extractive answer, unchanged, with a warning and the reason in `generation.fallback`.
fn assert_fell_back(answer: &Value, extractive: &Value, reason: &str) {
    assert!(!answer["answer"].as_str().unwrap_or_default().trim().is_empty(), "{answer}");
    assert_eq!(answer["answer"], extractive["answer"], "the extractive answer: {answer}");
    assert_eq!(answer["citations"], extractive["citations"]);
    let fallback = answer["generation"]["fallback"].as_str().unwrap_or_default();
    assert!(fallback.contains(reason), "fallback {fallback:?} should say {reason:?}");
    let warnings = answer["warnings"].to_string();
    assert!(warnings.contains("could not answer"), "{warnings}");
}

#[test]
fn llm_errors_and_stalls_end_in_the_extractive_answer() {
    let project = demo_indexed();
    let dir = project.path();
    let extractive = json(dir, &["ask", QUESTION, "--no-llm"]);
    // No real server is involved: the proxy answers (or doesn't) itself.
    let nowhere = "http://127.0.0.1:9/v1";
    let cases: [(Fault, &str, &str, usize); 5] = [
        (Fault::Status(500), "0", "HTTP 500", 1),
        // Retried once (Retry-After: 0), then given up.
        (Fault::Status(429), "1", "HTTP 429", 2),
        (Fault::MalformedJson, "1", "not a chat completion", 1),
        (Fault::MalformedEvent, "1", "not JSON", 1),
        (Fault::Stall, "0", "did not answer within 2 s", 1),
    ];
    for (fault, retries, reason, requests) in cases {
        let proxy = FaultProxy::start(fault, nowhere);
        let (answer, took) =
            ask_through(dir, &proxy, &[("SKILLRAG_LLM_RETRIES", retries), ("SKILLRAG_LLM_TIMEOUT_SECS", "2")]);
        eprintln!("{fault:?}: {took:?}");
        assert_fell_back(&answer, &extractive, reason);
        assert_eq!(proxy.requests(), requests, "{fault:?}: requests to the LLM");
    }
}

#[test]
fn a_stream_cut_midway_ends_in_the_extractive_answer() {
    let Some((url, _)) = llm_server() else { return };
    let project = demo_indexed();
    let dir = project.path();
    let extractive = json(dir, &["ask", QUESTION, "--no-llm"]);

    // Cut after the first few events: the model had begun, so no retry (it would show text twice).
    let proxy = FaultProxy::start(Fault::CutAfterEvents(6), &url);
    let (answer, _) = ask_through(dir, &proxy, &[("SKILLRAG_LLM_RETRIES", "2")]);
    assert_fell_back(&answer, &extractive, "broke off");
    assert!(!answer["generation"]["raw"].as_str().unwrap_or_default().is_empty(), "what arrived is kept");
    assert_eq!(proxy.requests(), 1, "not retried once text had arrived");

    // In the terminal, checked sentences stream as they come; when the stream then breaks off,
    // the notice and the extractive answer follow them.
    let proxy = FaultProxy::start(Fault::CutBeforeFinish, &url);
    let cmd = with_llm(skillrag(dir, &["ask", QUESTION]), &proxy.base_url, "qwen");
    let (out, _) = run_within(cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let err = stderr(&out);
    assert!(err.contains("warning: The LLM could not answer") && err.contains("broke off"), "{err}");
    let extractive_text = extractive["answer"].as_str().unwrap();
    assert!(stdout.contains(extractive_text), "the extractive answer is printed: {stdout}");
    assert!(!err.contains("panicked"), "{err}");
}
