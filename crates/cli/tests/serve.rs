//! `skillrag serve` and `skillrag mcp` driven over real HTTP and stdio: the JSON API and its
//! errors, the OpenAI-compatible endpoint (also through the official `openai` Python client),
//! MCP through the official `mcp` Python client and the MCP Inspector's CLI, auth, rate limits,
//! re-indexing while serving, and the web page in headless Chromium.

mod common;

use common::server::{parse, response, Server};
use common::{
    demo_indexed, json as cli_json, json_lines, llm_server, run, skillrag, Fault, FaultProxy, LLM_TEST_SETTINGS,
};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
}

/// The error shape every failure has.
fn assert_error(status: u16, body: &Value, code: u16, kind: &str) {
    assert_eq!(status, code, "{body}");
    assert_eq!(body["error"]["code"], code, "{body}");
    assert_eq!(body["error"]["type"], kind, "{body}");
    assert!(body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
}

const ROUTER_QUESTION: &str = "How do I factory reset the router?";
const OUT_OF_SCOPE: &str = "Who won the football world cup in 1998?";
/// A task whose evidence includes router-faq's support policy (a `rules` file).
const RULES_TASK: &str = "Write a reply to a customer who asks whether a factory reset voids the warranty";

#[test]
fn serves_the_api_with_json_errors_metrics_and_gaps() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &["--max-body-kb", "8"], &[]);

    let (status, health) = server.get_json("/healthz");
    assert_eq!((status, health["status"].as_str(), health["indexed"].as_u64()), (200, Some("ok"), Some(3)));

    // Ask: routed, cited, then served from the cache.
    let (status, text, headers) = server.post("/v1/ask", &json!({"query": ROUTER_QUESTION, "id": "q1"}).to_string());
    let answer = parse(&text);
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["id"], "q1");
    assert_eq!(answer["route"]["skills"], json!(["router-faq"]), "{answer}");
    assert!(answer["refusal"].is_null(), "{answer}");
    let first = &answer["citations"][0];
    assert_eq!(first["skill"], "router-faq", "{answer}");
    assert!(answer["answer"].as_str().unwrap().contains(&format!("[{}]", first["n"])), "{answer}");
    assert_eq!(header(&headers, "x-skillrag-cache"), Some("miss"));
    let (_, again, headers) = server.post("/v1/ask", &json!({"query": ROUTER_QUESTION}).to_string());
    assert_eq!(header(&headers, "x-skillrag-cache"), Some("hit"));
    assert_eq!(parse(&again)["answer"], answer["answer"]);
    assert!(parse(&again).get("id").is_none(), "a cached answer does not carry another caller's id");

    // Search, route, skills, sources, one source's chunks.
    let (status, search) =
        server.post_json("/v1/search", json!({"query": "试用期最长多久", "skills": ["labor-law"], "k": 3}));
    assert_eq!(status, 200, "{search}");
    let hits = search["hits"].as_array().unwrap();
    assert!(!hits.is_empty() && hits.len() <= 3, "{search}");
    assert!(hits[0]["scores"]["bm25"].is_number() && hits[0]["ranks"]["fused"] == 1, "{search}");
    let (status, route) = server.post_json("/v1/route", json!({"query": "绿茶用多少度的水泡？"}));
    assert_eq!((status, &route["skills"]), (200, &json!(["tea-brewing"])), "{route}");
    assert_eq!(route["candidates"].as_array().unwrap().len(), 3, "{route}");
    let (_, skills) = server.get_json("/v1/skills");
    assert_eq!(skills["skills"].as_array().unwrap().len(), 3);
    let (status, sources) = server.get_json("/v1/skills/router-faq/sources");
    assert_eq!(status, 200, "{sources}");
    let source = sources["sources"][0]["source"].as_str().unwrap().to_string();
    let (status, doc) = server.get_json(&format!("/v1/skills/router-faq/sources/{source}"));
    assert_eq!(status, 200, "{doc}");
    assert!(!doc["chunks"].as_array().unwrap().is_empty(), "{doc}");

    // The skill card, and the compiled context of a task: the skill's rules first.
    let (status, card) = server.get_json("/v1/skills/router-faq");
    assert_eq!(status, 200, "{card}");
    assert!(card["instructions"].as_str().unwrap().contains("Never ask the customer"), "{card}");
    assert!(!card["boundary"]["not_supported"].as_array().unwrap().is_empty(), "{card}");
    assert!(card["knowledge"]["tiers"]["rules"].as_u64() >= Some(1), "{card}");
    assert_eq!(card["knowledge"]["index"]["state"], "fresh", "{card}");
    let (status, task) = server.post_json("/v1/context", json!({"task": RULES_TASK, "budget": 4000}));
    assert_eq!(status, 200, "{task}");
    assert_eq!(task["skills"][0]["skill"], "router-faq", "{task}");
    assert_eq!(task["context"]["pieces"][0]["tier"], "rules", "{task}");
    assert_eq!(task["context"]["budget"], 4000, "{task}");
    let (status, body) = server.post_json("/v1/context", json!({"task": RULES_TASK, "budget": 0}));
    assert_error(status, &body, 400, "bad_request");
    let (status, body) = server.get_json("/v1/skills/nope");
    assert_error(status, &body, 404, "not_found");

    // Errors: one JSON shape, the right codes.
    let (status, text, _) = server.post("/v1/ask", "{not json");
    assert_error(status, &parse(&text), 400, "bad_request");
    let (status, body) = server.post_json("/v1/ask", json!({"question": "wrong field"}));
    assert_error(status, &body, 422, "unprocessable");
    let (status, body) = server.post_json("/v1/ask", json!({"query": "x".repeat(10_000)}));
    assert_error(status, &body, 413, "payload_too_large");
    let (status, body) = server.post_json("/v1/ask", json!({"query": "  "}));
    assert_error(status, &body, 400, "bad_request");
    let (status, body) = server.post_json("/v1/ask", json!({"query": "hi", "skill": "nope"}));
    assert_error(status, &body, 404, "not_found");
    let (status, body) = server.get_json("/v1/nothing-here");
    assert_error(status, &body, 404, "not_found");
    let (status, body) = server.get_json("/v1/skills/router-faq/sources/knowledge/missing.md");
    assert_error(status, &body, 404, "not_found");

    // Nothing from a request can name a file outside the project.
    for path in [
        "/v1/skills/../sources",
        "/v1/skills/..%2F..%2Fetc/sources",
        "/v1/skills/router-faq/sources/../../../../etc/passwd",
        "/v1/skills/router-faq/sources/%2e%2e/%2e%2e/skillrag.toml",
        "/v1/skills/router-faq/sources/..%2F..%2Fskillrag.toml",
        "/v1/skills/router-faq/sources//etc/passwd",
        "/v1/skills/router-faq/sources/%2Fetc%2Fpasswd",
        "/v1/skills/router-faq/sources/knowledge%5C..%5C..%5Cskillrag.toml",
        "/v1/skills/router-faq/sources/%252e%252e/skillrag.toml",
    ] {
        let status = server.raw_get(path);
        assert!(status == 400 || status == 404, "{path} answered {status}");
    }

    // Unanswered questions are logged for the knowledge-base owners.
    let (_, refused) = server.post_json("/v1/ask", json!({"query": OUT_OF_SCOPE}));
    assert_eq!(refused["refusal"]["kind"], "out_of_scope", "{refused}");
    server.post_json("/v1/ask", json!({"query": OUT_OF_SCOPE}));
    let (status, gaps) = server.get_json("/v1/gaps");
    assert_eq!(status, 200);
    assert_eq!(gaps["gaps"][0]["query"], OUT_OF_SCOPE, "{gaps}");
    assert_eq!(gaps["gaps"][0]["count"], 2, "{gaps}");
    let cli_gaps = common::json(project.path(), &["gaps"]);
    assert_eq!(cli_gaps["gaps"][0]["query"], OUT_OF_SCOPE, "{cli_gaps}");

    // Prometheus metrics.
    let (status, metrics, _) = server.get("/metrics");
    assert_eq!(status, 200);
    for needle in [
        "skillrag_http_requests_total{route=\"/v1/ask\",method=\"POST\",status=\"200\"}",
        "skillrag_answer_stage_duration_seconds_count{stage=\"retrieve\"} 2",
        "skillrag_refusals_total{kind=\"out_of_scope\"} 1",
        "skillrag_answer_cache_total{result=\"hit\"}",
    ] {
        assert!(metrics.contains(needle), "metrics lack {needle}:\n{metrics}");
    }

    // Graceful shutdown on SIGTERM.
    assert!(server.stop().success());
}

/// Parses an SSE body into its `data:` payloads.
fn sse_data(body: &str) -> Vec<String> {
    body.lines().filter_map(|l| l.strip_prefix("data:")).map(|d| d.trim().to_string()).collect()
}

/// One conversation, asked turn by turn in `skillrag chat` and over HTTP (where each request
/// carries the earlier questions): every turn is routed the same way by both.
#[test]
fn cli_and_http_chat_route_a_conversation_alike() {
    let project = demo_indexed();
    let turns = [
        "用人单位解除劳动合同时，什么情况下要支付经济补偿？",
        "那试用期呢？",
        "那两年呢？",
        // Short enough to read as a follow-up, but another skill owns it.
        "绿茶水温多少度？",
        "那红茶呢？",
    ];
    let (cli, out) = json_lines(skillrag(project.path(), &["chat", "--json"]), &(turns.join("\n") + "\n/quit\n"));
    assert_eq!(cli.len(), turns.len(), "{}", String::from_utf8_lossy(&out.stderr));
    let server = Server::start(project.path(), &[], &[]);
    for (i, turn) in turns.iter().enumerate() {
        let mut messages: Vec<Value> = turns[..i]
            .iter()
            .flat_map(|q| [json!({"role": "user", "content": q}), json!({"role": "assistant", "content": "……"})])
            .collect();
        messages.push(json!({"role": "user", "content": turn}));
        let (status, reply) =
            server.post_json("/v1/chat/completions", json!({"model": "skillrag/auto", "messages": messages}));
        assert_eq!(status, 200, "{reply}");
        let http = &reply["skillrag"]["route"];
        assert_eq!(http["skills"], cli[i]["route"]["skills"], "turn {i} `{turn}`: {http} vs {}", cli[i]["route"]);
        assert_eq!(http["decision"], cli[i]["route"]["decision"], "turn {i} `{turn}`");
    }
    assert_eq!(cli[3]["route"]["skills"], json!(["tea-brewing"]), "a question another skill owns leaves the topic");
    assert_eq!(cli[4]["route"]["skills"], json!(["tea-brewing"]), "and the next follow-up keeps the new one");
}

#[test]
fn openai_compatible_chat_carries_citations_and_refusals() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &[], &[]);

    let (status, models) = server.get_json("/v1/models");
    assert_eq!(status, 200);
    let ids: Vec<&str> = models["data"].as_array().unwrap().iter().filter_map(|m| m["id"].as_str()).collect();
    assert_eq!(ids, ["skillrag/auto", "skillrag/labor-law", "skillrag/router-faq", "skillrag/tea-brewing"]);

    let request = |stream: bool| {
        json!({"model": "skillrag/auto", "stream": stream,
            "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": ROUTER_QUESTION}]})
    };
    let (status, completion) = server.post_json("/v1/chat/completions", request(false));
    assert_eq!(status, 200, "{completion}");
    let content = completion["choices"][0]["message"]["content"].as_str().unwrap().to_string();
    let n = &completion["citations"][0]["n"];
    assert!(
        content.contains(&format!("[{n}]")) && content.contains(&format!("\n\n[{n}] router-faq/")),
        "markers and footnotes in content: {content}"
    );
    assert_eq!(completion["citations"][0]["skill"], "router-faq", "{completion}");
    assert!(!completion["citations"][0]["text"].as_str().unwrap().is_empty());
    assert!(completion["skillrag"]["refusal"].is_null());

    // Streaming: the same content in pieces, citations in the last chunk, then [DONE].
    let (status, body, headers) = server.post("/v1/chat/completions", &request(true).to_string());
    assert_eq!(status, 200, "{body}");
    assert!(header(&headers, "content-type").unwrap().starts_with("text/event-stream"));
    let data = sse_data(&body);
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"));
    let chunks: Vec<Value> = data[..data.len() - 1].iter().map(|d| parse(d)).collect();
    assert!(chunks.len() > 3, "streamed in pieces: {body}");
    let streamed: String =
        chunks.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str()).collect::<Vec<_>>().concat();
    assert_eq!(streamed, content);
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert_eq!(last["citations"], completion["citations"]);

    // A follow-up keeps the previous question's topic; a named model forces its skill.
    let (_, follow) = server.post_json(
        "/v1/chat/completions",
        json!({"model": "skillrag/auto", "messages": [
            {"role": "user", "content": "劳动合同期限三年，试用期最长可以约定多久？"},
            {"role": "assistant", "content": "……"},
            {"role": "user", "content": "那两年呢？"}]}),
    );
    assert_eq!(follow["skillrag"]["route"]["skills"], json!(["labor-law"]), "{follow}");
    let (_, forced) = server.post_json(
        "/v1/chat/completions",
        json!({"model": "skillrag/tea-brewing", "messages": [{"role": "user", "content": "绿茶用多少度的水？"}]}),
    );
    assert_eq!(forced["skillrag"]["route"]["skills"], json!(["tea-brewing"]));

    // A refusal is a normal assistant message with its kind in the extras.
    let (status, refusal) = server.post_json(
        "/v1/chat/completions",
        json!({"model": "skillrag/auto", "messages": [{"role": "user", "content": OUT_OF_SCOPE}]}),
    );
    assert_eq!(status, 200);
    assert_eq!(refusal["choices"][0]["message"]["role"], "assistant");
    assert!(!refusal["choices"][0]["message"]["content"].as_str().unwrap().is_empty());
    assert_eq!(refusal["skillrag"]["refusal"]["kind"], "out_of_scope", "{refusal}");

    let (status, body) = server.post_json(
        "/v1/chat/completions",
        json!({"model": "skillrag/nope", "messages": [{"role": "user", "content": "hi"}]}),
    );
    assert_error(status, &body, 404, "not_found");
    let (status, body) = server.post_json("/v1/chat/completions", json!({"model": "skillrag/auto", "messages": []}));
    assert_error(status, &body, 422, "unprocessable");
}

/// POSTs `body` and reads the SSE response as it arrives: each event's name (`message` when
/// unnamed) and `data:` payload, with the time since the request was sent.
fn sse_timed(server: &Server, path: &str, body: &Value) -> (u16, Vec<(Duration, String, String)>) {
    let started = Instant::now();
    // A CPU-only model on a busy machine may take minutes.
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(400)))
        .build()
        .into();
    let mut response = agent
        .post(server.url(path))
        .header("content-type", "application/json")
        .send(body.to_string())
        .expect("HTTP request failed");
    let status = response.status().as_u16();
    let mut events = Vec::new();
    let mut name = "message".to_string();
    for line in BufReader::new(response.body_mut().as_reader()).lines() {
        let line = line.expect("read the stream");
        if let Some(n) = line.strip_prefix("event:") {
            name = n.trim().to_string();
        } else if let Some(data) = line.strip_prefix("data:") {
            events.push((started.elapsed(), std::mem::replace(&mut name, "message".into()), data.trim().to_string()));
        }
    }
    (status, events)
}

/// The chunks of a streamed chat completion (after checking it ends in `[DONE]`), with the time
/// each arrived.
fn completion_chunks(events: &[(Duration, String, String)]) -> Vec<(Duration, Value)> {
    assert_eq!(events.last().map(|e| e.2.as_str()), Some("[DONE]"), "{events:?}");
    events[..events.len() - 1].iter().map(|(t, _, d)| (*t, parse(d))).collect()
}

fn delta(chunk: &Value) -> &str {
    chunk["choices"][0]["delta"]["content"].as_str().unwrap_or_default()
}

fn llm_env<'a>(url: &'a str, model: &'a str) -> Vec<(&'static str, &'a str)> {
    let mut env = vec![("SKILLRAG_LLM_BASE_URL", url), ("SKILLRAG_LLM_MODEL", model)];
    env.extend(LLM_TEST_SETTINGS);
    env
}

#[test]
fn chat_completions_stream_the_llm_answer_as_it_is_written() {
    let Some((url, model)) = llm_server() else { return };
    let project = demo_indexed();
    let server = Server::start(project.path(), &[], &llm_env(&url, &model));

    // Small talk is the model's own reply, streamed piece by piece as it writes.
    let (status, events) = sse_timed(
        &server,
        "/v1/chat/completions",
        &json!({"model": "skillrag/auto", "stream": true, "messages": [{"role": "user", "content": "你好"}]}),
    );
    assert_eq!(status, 200, "{events:?}");
    let chunks = completion_chunks(&events);
    assert_eq!(chunks[0].1["choices"][0]["delta"]["role"], "assistant", "the head comes first");
    let (done_at, last) = chunks.last().unwrap();
    assert!(last["skillrag"]["generation"]["fallback"].is_null(), "{last}");
    let content: Vec<&(Duration, Value)> = chunks.iter().filter(|(_, c)| !delta(c).is_empty()).collect();
    assert!(content.len() >= 3, "in pieces: {events:?}");
    // Live: the first piece came while the model was still writing, not with the rest. A
    // buffered reply arrives within a millisecond; the model writes its few tokens in well over
    // 50 ms even on an idle machine (200 ms here failed on one: 161 ms for a short greeting).
    let first_at = content[0].0;
    assert!(*done_at >= first_at + Duration::from_millis(50), "first piece at {first_at:?}, end at {done_at:?}");
    let reply: String = content.iter().map(|(_, c)| delta(c)).collect();
    assert_eq!(reply.trim(), reply, "{reply:?}");
    assert!(last["usage"]["completion_tokens"].as_u64().unwrap() > 0, "{last}");

    let request = |stream: bool| {
        json!({"model": "skillrag/auto", "stream": stream, "temperature": 0,
            "messages": [{"role": "user", "content": ROUTER_QUESTION}]})
    };
    let (status, events) = sse_timed(&server, "/v1/chat/completions", &request(true));
    assert_eq!(status, 200, "{events:?}");
    let chunks = completion_chunks(&events);
    let last = &chunks.last().unwrap().1;
    assert_eq!(last["choices"][0]["finish_reason"], "stop", "{last}");
    let generation = &last["skillrag"]["generation"];
    assert!(last["skillrag"]["refusal"].is_null(), "{last}");
    assert!(last["usage"]["completion_tokens"].as_u64().unwrap() > 0, "{last}");
    assert!(last["usage"]["prompt_tokens"].as_u64().unwrap() > 0, "{last}");
    let content: Vec<&(Duration, Value)> = chunks.iter().filter(|(_, c)| !delta(c).is_empty()).collect();
    // A 0.5B model sometimes only echoes the context; the check then leaves nothing and the
    // extractive answer comes instead, whole. Either way the stream ends consistently.
    let llm_answered = generation["fallback"].is_null();
    assert!(content.len() >= if llm_answered { 2 } else { 1 }, "the answer, then its footnotes: {events:?}");
    let streamed: String = content.iter().map(|(_, c)| delta(c)).collect();

    // The same question again (from the cache now): the content is exactly what was streamed,
    // and the model's answer is the one the citation check let through.
    let (status, completion) = server.post_json("/v1/chat/completions", request(false));
    assert_eq!(status, 200, "{completion}");
    assert_eq!(completion["choices"][0]["message"]["content"], streamed.as_str());
    assert_eq!(completion["usage"], last["usage"]);
    assert_eq!(completion["citations"], last["citations"]);
    let answer = generation["raw"].as_str().unwrap();
    assert!(!answer.is_empty());
    if !llm_answered {
        let warnings = last["skillrag"]["warnings"].to_string();
        assert!(warnings.contains("could not answer"), "a fallback says so: {warnings}");
    }
    let n = &last["citations"][0]["n"];
    assert!(streamed.contains(&format!("[{n}]")) && streamed.contains(&format!("\n\n[{n}] router-faq/")), "{streamed}");

    // `/v1/ask` streams too: `text` events, then the whole answer (docs/design.md §6).
    let question = "劳动合同期限两年，试用期最长可以约定多久？";
    let (status, events) = sse_timed(&server, "/v1/ask", &json!({"query": question, "stream": true}));
    assert_eq!(status, 200, "{events:?}");
    let (_, name, data) = events.last().unwrap();
    assert_eq!(name, "answer", "{events:?}");
    let answer = parse(data);
    let texts: Vec<String> = events[..events.len() - 1]
        .iter()
        .map(|(_, name, data)| {
            assert_eq!(name, "text");
            parse(data)["text"].as_str().unwrap().to_string()
        })
        .collect();
    assert!(answer["generation"]["completion_tokens"].as_u64().unwrap() > 0, "{answer}");
    if answer["refusal"].is_null() && answer["generation"]["fallback"].is_null() {
        assert!(!texts.is_empty(), "the model's answer streamed: {answer}");
        assert_eq!(texts.concat(), answer["answer"].as_str().unwrap());
    }

    // A client that goes away mid-answer breaks nothing: the server goes on serving.
    let addr = server.base.trim_start_matches("http://").to_string();
    let body = json!({"model": "skillrag/auto", "stream": true,
        "messages": [{"role": "user", "content": "谢谢你"}]})
    .to_string();
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        s,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut first = [0u8; 64];
    let n = s.read(&mut first).unwrap();
    assert!(String::from_utf8_lossy(&first[..n]).starts_with("HTTP/1.1 200"));
    drop(s);
    let (status, health) = server.get_json("/healthz");
    assert_eq!((status, health["status"].as_str()), (200, Some("ok")));
    let (status, again) = server.post_json(
        "/v1/chat/completions",
        json!({"model": "skillrag/auto", "messages": [{"role": "user", "content": "谢谢你"}]}),
    );
    assert_eq!(status, 200, "{again}");
    assert!(!again["choices"][0]["message"]["content"].as_str().unwrap().is_empty());
    assert!(server.stop().success());
}

#[test]
fn a_stream_cut_midway_still_ends_the_completion() {
    let Some((url, model)) = llm_server() else { return };
    let project = demo_indexed();
    let extractive = cli_json(project.path(), &["ask", ROUTER_QUESTION, "--no-llm"]);
    let proxy = FaultProxy::start(Fault::CutBeforeFinish, &url);
    let mut env = llm_env(&proxy.base_url, &model);
    env.push(("SKILLRAG_LLM_RETRIES", "0"));
    let server = Server::start(project.path(), &[], &env);

    let started = Instant::now();
    let request = json!({"model": "skillrag/auto", "stream": true,
        "messages": [{"role": "user", "content": ROUTER_QUESTION}]});
    let (status, events) = sse_timed(&server, "/v1/chat/completions", &request);
    assert_eq!(status, 200, "{events:?}");
    // The stream ended (a hang would time out above); bounded even on a busy CPU.
    assert!(started.elapsed() < Duration::from_secs(300), "took {:?}", started.elapsed());
    let chunks = completion_chunks(&events);
    let last = &chunks.last().unwrap().1;
    assert_eq!(last["choices"][0]["finish_reason"], "stop", "{last}");
    let fallback = last["skillrag"]["generation"]["fallback"].as_str().unwrap_or_default();
    assert!(fallback.contains("broke off"), "{last}");
    let content: String = chunks.iter().map(|(_, c)| delta(c)).collect();
    // What was shown stays; the notice and the extractive answer follow it.
    let extractive_text = extractive["answer"].as_str().unwrap();
    assert!(content.contains(extractive_text), "{content}");
    if !content.starts_with(extractive_text) {
        assert!(content.contains("could not answer"), "sentences were shown: the notice follows them: {content}");
    }
    assert_eq!(last["citations"].as_array().map(Vec::len), extractive["citations"].as_array().map(Vec::len));
}

#[test]
fn exposed_server_requires_a_token_and_limits_clients() {
    let project = demo_indexed();
    let refused = skillrag(project.path(), &["serve", "--addr", "0.0.0.0:0"]).output().unwrap();
    assert!(!refused.status.success());
    assert!(common::stderr(&refused).contains("SKILLRAG_API_TOKEN"), "{}", common::stderr(&refused));

    let token = "6f1c0e9a4b7d2c85e3f09a1b6d4c8e27f5a3b90c1d2e4f6a7b8c9d0e1f2a3b4c";
    let server = Server::start(project.path(), &["--rate-limit", "6"], &[("SKILLRAG_API_TOKEN", token)]);
    assert_eq!(server.get("/healthz").0, 200, "liveness needs no token");
    let (status, body) = server.get_json("/v1/skills");
    assert_error(status, &body, 401, "unauthorized");
    let wrong = server.agent.get(server.url("/v1/skills")).header("authorization", "Bearer wrong").call();
    assert_eq!(response(wrong).0, 401);
    let mut statuses = Vec::new();
    let mut retry_after = None;
    for _ in 0..8 {
        let (status, _, headers) = response(
            server.agent.get(server.url("/v1/skills")).header("authorization", format!("Bearer {token}")).call(),
        );
        if status == 429 {
            retry_after = header(&headers, "retry-after").map(String::from);
        }
        statuses.push(status);
    }
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), 4, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 4, "{statuses:?}");
    assert!(retry_after.is_some_and(|s| s.parse::<u64>().is_ok_and(|n| n >= 1)));
}

/// Re-indexing while many clients ask: no errors, and the new knowledge is served after the
/// switch (through the API, and when another process re-indexes).
#[test]
fn reindexing_while_serving_switches_atomically() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &[], &[]);
    let (_, before) = server.get_json("/v1/skills");
    let generation = |skills: &Value, id: &str| {
        skills["skills"].as_array().unwrap().iter().find(|s| s["skill"] == id).unwrap()["generation"].as_u64()
    };
    let g0 = generation(&before, "router-faq").unwrap();

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let clients: Vec<_> = (0..8)
        .map(|i| {
            let (base, stop) = (server.base.clone(), stop.clone());
            std::thread::spawn(move || {
                let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
                let mut served = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let q = if i % 2 == 0 { ROUTER_QUESTION.to_string() } else { format!("LED colours {served}") };
                    let (status, text, _) = response(
                        agent
                            .post(format!("{base}/v1/ask"))
                            .header("content-type", "application/json")
                            .send(json!({"query": q}).to_string()),
                    );
                    assert_eq!(status, 200, "{text}");
                    let a = parse(&text);
                    for c in a["citations"].as_array().unwrap() {
                        assert!(a["hits"].as_array().unwrap().iter().any(|h| h["source"] == c["source"]), "{a}");
                    }
                    served += 1;
                }
                served
            })
        })
        .collect();

    let (status, job) = server.post_json("/v1/index", json!({"rebuild": true}));
    assert_eq!(status, 202, "{job}");
    let (status, busy) = server.post_json("/v1/index", json!({}));
    assert!(status == 409 || status == 202, "{busy}");
    let deadline = Instant::now() + Duration::from_secs(300);
    let done = loop {
        let (_, j) = server.get_json("/v1/index");
        if j["job"]["state"] != "running" {
            break j;
        }
        assert!(Instant::now() < deadline, "re-index did not finish: {j}");
        std::thread::sleep(Duration::from_millis(200));
    };
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let served: usize = clients.into_iter().map(|c| c.join().expect("a client saw an error")).sum();
    assert_eq!(done["job"]["state"], "done", "{done}");
    assert!(served > 8, "clients kept being answered during the re-index ({served})");
    let (_, after) = server.get_json("/v1/skills");
    assert!(generation(&after, "router-faq").unwrap() > g0, "{after}");

    // Another process re-indexes new knowledge: the server switches within seconds, and the
    // cached answer to the same question is not served from the old generation.
    let question = json!({"query": "What does the blinking purple light mean?", "skill": "router-faq"});
    server.post_json("/v1/ask", question.clone());
    let note = project.path().join("skills/router-faq/knowledge/purple-light.md");
    std::fs::write(
        &note,
        "# Blinking purple light\n\nA blinking purple light means the router is in quarantine mode after a failed \
         firmware update; hold the reset button for 30 seconds to leave quarantine mode.\n",
    )
    .unwrap();
    run(project.path(), &["index", "--skill", "router-faq"]);
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let (_, a) = server.post_json("/v1/ask", question.clone());
        if a["answer"].as_str().unwrap_or("").contains("quarantine") {
            break;
        }
        assert!(Instant::now() < deadline, "the new generation was not served: {a}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// A server started before anything was indexed says so, answers 404 with the fix, and serves
/// the skills once another process indexes them.
#[test]
fn serves_skills_indexed_after_it_started() {
    let project = common::demo();
    let server = Server::start(project.path(), &[], &[]);
    let (_, health) = server.get_json("/healthz");
    assert_eq!(health["indexed"], 0, "{health}");
    let (status, body) = server.post_json("/v1/ask", json!({"query": ROUTER_QUESTION}));
    assert_error(status, &body, 404, "not_found");
    assert!(body["error"]["message"].as_str().unwrap().contains("skillrag index"), "{body}");

    run(project.path(), &["index"]);
    let deadline = Instant::now() + Duration::from_secs(180);
    while server.get_json("/healthz").1["indexed"] != 3 {
        assert!(Instant::now() < deadline, "the new indexes were not picked up");
        std::thread::sleep(Duration::from_millis(200));
    }
    let (status, answer) = server.post_json("/v1/ask", json!({"query": ROUTER_QUESTION}));
    assert_eq!((status, &answer["route"]["skills"]), (200, &json!(["router-faq"])), "{answer}");
}

/// Where `scripts/setup-test-clients` installed the client tools (`scripts/test` runs it).
fn client_tool(var: &str) -> PathBuf {
    std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
        panic!("{var} is not set: run `eval \"$(scripts/setup-test-clients)\"` first (scripts/test does)")
    })
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/tests").join(name)
}

fn run_checked(mut cmd: Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    eprintln!("{what}:\n{stdout}\n{stderr}");
    assert!(out.status.success(), "{what} failed:\n{stdout}\n{stderr}");
}

#[test]
fn official_openai_and_mcp_clients() {
    let python = client_tool("SKILLRAG_TEST_PYTHON");
    let project = demo_indexed();
    let server = Server::start(project.path(), &[], &[]);

    let mut openai = Command::new(&python);
    openai.arg(script("clients/openai_client.py")).arg(&server.base);
    run_checked(openai, "openai client");

    let mut http = Command::new(&python);
    http.arg(script("clients/mcp_client.py")).args(["http", &server.url("/mcp")]);
    run_checked(http, "mcp client over streamable HTTP");

    let mut stdio = Command::new(&python);
    stdio
        .arg(script("clients/mcp_client.py"))
        .args(["stdio", env!("CARGO_BIN_EXE_skillrag")])
        .arg(project.path())
        .env("SKILLRAG_EMBED_MODEL", common::model());
    run_checked(stdio, "mcp client over stdio");
}

/// The MCP server through the MCP Inspector's CLI (`npx @modelcontextprotocol/inspector --cli`).
#[test]
fn mcp_inspector_cli() {
    let inspector = client_tool("SKILLRAG_TEST_MCP_INSPECTOR");
    let project = demo_indexed();
    let server = Server::start(project.path(), &[], &[]);

    let mut http = Command::new("bash");
    http.arg(script("clients/mcp_inspector.sh"))
        .args(["http", &server.url("/mcp")])
        .env("SKILLRAG_TEST_MCP_INSPECTOR", &inspector);
    run_checked(http, "MCP Inspector CLI over streamable HTTP");

    let mut stdio = Command::new("bash");
    stdio
        .arg(script("clients/mcp_inspector.sh"))
        .args(["stdio", env!("CARGO_BIN_EXE_skillrag")])
        .arg(project.path())
        .env("SKILLRAG_TEST_MCP_INSPECTOR", &inspector)
        .env("SKILLRAG_EMBED_MODEL", common::model());
    run_checked(stdio, "MCP Inspector CLI over stdio");
}

#[test]
fn web_page_in_headless_chromium() {
    let node_path = client_tool("SKILLRAG_TEST_NODE_PATH");
    let chromium = client_tool("SKILLRAG_TEST_CHROMIUM");
    let project = demo_indexed();
    // The page uploads and deletes documents (the Documents tab).
    let server = Server::start(project.path(), &["--allow-writes"], &[]);
    let screenshots = tempfile::tempdir().unwrap();
    let documents = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/documents");
    let mut node = Command::new("node");
    node.arg(script("web/e2e.mjs"))
        .arg(&server.base)
        .arg(screenshots.path())
        .env("NODE_PATH", node_path)
        .env("SKILLRAG_TEST_CHROMIUM", chromium)
        .env("SKILLRAG_E2E_DOCX", documents.join("guide.docx"))
        .env("SKILLRAG_E2E_PDF", documents.join("manual.pdf"))
        .env("SKILLRAG_E2E_PDF_V2", documents.join("manual-cid.pdf"));
    run_checked(node, "web page end to end");
    let shots = [
        "chat.png",
        "chat-picture.png",
        "retrieval.png",
        "retrieval-controls.png",
        "index.png",
        "documents.png",
        "conversations.png",
        "feedback.png",
        "gaps.png",
        "skills.png",
        "skills-form-error.png",
        "skills-lint.png",
        "skills-disabled.png",
        "chunk-edits.png",
        "chunk-preset.png",
        "gaps-draft.png",
        "chat-420.png",
        "skills-420.png",
        "documents-420.png",
        "retrieval-420.png",
        "gaps-420.png",
        "index-420.png",
    ];
    for shot in &shots {
        let size = std::fs::metadata(screenshots.path().join(shot)).map_or(0, |m| m.len());
        assert!(size > 10_000, "{shot} is missing or blank ({size} bytes)");
    }

    // What the page did, as the server kept it: the uploaded PDF indexed, the deleted DOCX gone,
    // the renamed conversation with its two turns, and the 👎 naming another skill as a routing gap.
    let (status, tea) = server.get_json("/v1/skills/tea-brewing/documents");
    assert_eq!(status, 200, "{tea}");
    let pdf = tea["documents"].as_array().unwrap().iter().find(|d| d["name"] == "knowledge/manual.pdf");
    assert!(pdf.is_some_and(|d| d["status"] == "indexed" && d["chunks"].as_u64() > Some(0)), "{tea}");
    let (_, router) = server.get_json("/v1/skills/router-faq/documents");
    assert!(!router["documents"].as_array().unwrap().iter().any(|d| d["name"] == "knowledge/guide.docx"), "{router}");
    assert!(!project.path().join("skills/router-faq/knowledge/guide.docx").exists());
    // The skill the page created, edited and deleted: in the trash, no longer served.
    let (_, skills) = server.get_json("/v1/skills");
    assert!(!skills.to_string().contains("coffee-brewing") && !skills.to_string().contains("home-coffee"), "{skills}");
    let trash = std::fs::read_dir(project.path().join(".skillrag/trash")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(trash, 1, "the deleted skill's folder is not in the trash");
    let (_, conversations) = server.get_json("/v1/conversations");
    let renamed = conversations["conversations"].as_array().unwrap().iter().find(|c| c["title"] == "Tea questions");
    assert!(renamed.is_some_and(|c| c["turns"] == 2), "{conversations}");
    let (_, gaps) = server.get_json("/v1/gaps");
    let gaps = gaps["gaps"].as_array().unwrap();
    assert!(
        gaps.iter().any(|g| g["cause"] == "routing" && g["query"] == "How should I store white tea?"),
        "the 👎 naming tea-brewing is not a routing gap: {gaps:?}"
    );
    // Both ratings are stored with the answer they judge (found by its answer_id).
    let log = std::fs::read_to_string(project.path().join(".skillrag/feedback.jsonl")).unwrap_or_default();
    let records: Vec<Value> = log.lines().map(parse).collect();
    let up = records.iter().find(|r| r["rating"] == "up");
    assert!(up.is_some_and(|r| r["routed"] == json!(["tea-brewing"]) && r["answer_id"].is_string()), "{log}");
    let down = records.iter().find(|r| r["rating"] == "down");
    assert!(
        down.is_some_and(|r| r["skill"] == "tea-brewing"
            && r["routed"] == json!(["router-faq"])
            && r["comment"].is_string()),
        "{log}"
    );
    // tune learns from the page's feedback: the misroute names its skill; the 👍 was on a route
    // the user forced with the skill picker, which says nothing about the router.
    let tuned = run(project.path(), &["tune"]);
    let said = String::from_utf8_lossy(&tuned.stdout);
    assert!(said.contains("feedback: 1 question(s)"), "{said}");

    // SKILLRAG_SCREENSHOTS=$PWD/docs/screenshots keeps them (an absolute path: the test runs in
    // crates/cli), which is how the committed ones were made; not chat-picture*.png, whose cited
    // picture is stood in for: the committed ones show a real answer from an indexed scan.
    if let Some(keep) = std::env::var_os("SKILLRAG_SCREENSHOTS") {
        let kept = shots.iter().filter(|s| **s != "chat-picture.png").chain(&["chat-refusal.png"]);
        for shot in kept {
            std::fs::create_dir_all(&keep).unwrap();
            std::fs::copy(screenshots.path().join(shot), Path::new(&keep).join(shot)).unwrap();
        }
    }
}

/// The example project plus a skill whose knowledge is a scanned notice (a PNG read by OCR) and
/// the Markdown file that captions it, indexed.
fn project_with_a_picture() -> common::TestProject {
    let project = common::demo();
    let skill = project.path().join("skills/office-notices");
    let knowledge = skill.join("knowledge");
    std::fs::create_dir_all(&knowledge).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: office-notices\ndescription: 办公室通知：开放时间与办公安排。\n\
         metadata:\n  triggers: 办公室, 开放时间, 开门\n---\n# 办公室通知\n\n## Examples\n\n- 办公室几点开门？\n",
    )
    .unwrap();
    let scans = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/scans");
    for file in ["notice-zh.png", "notice-zh.md"] {
        std::fs::copy(scans.join(file), knowledge.join(file)).unwrap();
    }
    run(project.path(), &["index"]);
    project
}

const PICTURE: &str = "knowledge/notice-zh.png";
const PICTURE_QUESTION: &str = "办公室几点开门？";

/// The citation of the notice picture in an answer, checked to carry the picture's path and size;
/// no other citation carries `image`.
fn cited_picture(answer: &Value) -> &Value {
    let citations = answer["citations"].as_array().unwrap_or_else(|| panic!("no citations: {answer}"));
    for c in citations.iter().filter(|c| c["source"] != PICTURE) {
        assert!(c.get("image").is_none(), "only a picture's citation has `image`: {c}");
    }
    let cited =
        citations.iter().find(|c| c["source"] == PICTURE).unwrap_or_else(|| panic!("{PICTURE} not cited: {answer}"));
    let bytes = std::fs::metadata(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/scans/notice-zh.png"))
        .unwrap()
        .len();
    assert_eq!(cited["image"], json!({"path": PICTURE, "width": 1200, "height": 520, "bytes": bytes}), "{answer}");
    cited
}

#[test]
fn cited_pictures_carry_their_size_and_are_served() {
    if !common::ocr_available() {
        return;
    }
    let project = project_with_a_picture();
    let png = std::fs::read(project.path().join("skills/office-notices").join(PICTURE)).unwrap();

    // `ask --json` and the plain answer.
    let answer = cli_json(project.path(), &["ask", PICTURE_QUESTION]);
    assert_eq!(answer["route"]["skills"], json!(["office-notices"]), "{answer}");
    assert!(answer["answer"].as_str().unwrap().contains("九点"), "{answer}");
    let n = cited_picture(&answer)["n"].clone();
    let plain = String::from_utf8_lossy(&run(project.path(), &["ask", PICTURE_QUESTION]).stdout).into_owned();
    assert!(plain.contains(&format!("[{n}] office-notices/{PICTURE}")), "{plain}");
    assert!(plain.contains("(picture 1200×520)"), "{plain}");

    // The HTTP answer, streamed or not, and the OpenAI-compatible citations.
    let server = Server::start(project.path(), &[], &[]);
    let (status, answer) = server.post_json("/v1/ask", json!({"query": PICTURE_QUESTION}));
    assert_eq!(status, 200, "{answer}");
    cited_picture(&answer);
    let (status, body, _) = server.post("/v1/ask", &json!({"query": PICTURE_QUESTION, "stream": true}).to_string());
    assert_eq!(status, 200, "{body}");
    let streamed = sse_data(&body).last().map(|d| parse(d)).unwrap_or(Value::Null);
    cited_picture(&streamed);
    let (status, completion) = server.post_json(
        "/v1/chat/completions",
        json!({"model": "skillrag/auto", "messages": [{"role": "user", "content": PICTURE_QUESTION}]}),
    );
    assert_eq!(status, 200, "{completion}");
    cited_picture(&completion);

    // The picture's bytes, typed and locked down; nothing else through this route.
    let mut response =
        server.agent.get(server.url(&format!("/v1/skills/office-notices/pictures/{PICTURE}"))).call().unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let headers = response.headers().clone();
    let value = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    assert_eq!(value("content-type"), "image/png");
    assert_eq!(value("x-content-type-options"), "nosniff");
    assert!(value("content-security-policy").contains("default-src 'none'"), "{headers:?}");
    assert!(response.body_mut().read_to_vec().unwrap() == png, "the picture's bytes as they are on disk");
    for (path, code, kind) in [
        ("/v1/skills/office-notices/pictures/knowledge/notice-zh.md", 404, "not_found"),
        ("/v1/skills/office-notices/pictures/SKILL.md", 404, "not_found"),
        ("/v1/skills/office-notices/pictures/knowledge/missing.png", 404, "not_found"),
        ("/v1/skills/router-faq/pictures/knowledge/notice-zh.png", 404, "not_found"),
        ("/v1/skills/nope/pictures/knowledge/notice-zh.png", 404, "not_found"),
        ("/v1/skills/office-notices/pictures/knowledge/..%2Fknowledge%2Fnotice-zh.png", 400, "bad_request"),
    ] {
        let (status, body) = server.get_json(path);
        assert_error(status, &body, code, kind);
    }
    for path in [
        "/v1/skills/office-notices/pictures/../knowledge/notice-zh.png",
        "/v1/skills/office-notices/pictures/knowledge/../../../skillrag.toml",
        "/v1/skills/office-notices/pictures/%2e%2e/%2e%2e/skillrag.toml",
        "/v1/skills/office-notices/pictures//etc/passwd",
    ] {
        let status = server.raw_get(path);
        assert!(status == 400 || status == 404, "{path} answered {status}");
    }
}

/// Polls `done` every 300 ms for up to three minutes (a generous bound for a loaded machine).
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(180);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Stateless serving on PostgreSQL: two `skillrag serve` replicas over one database answer
/// alike, a re-index through one is served by the other after commit, and a replica on a hot
/// standby serves reads and refuses to index with a clear message.
#[test]
fn replicas_share_one_postgres_database() {
    let Some(_) = common::Backend::postgres_server() else { return };
    let a = common::demo_indexed_on(common::Backend::Postgres);
    let url = a.store_url().unwrap();
    // The second replica is deployed from the same files; its own copy of the project folder.
    let b = tempfile::tempdir().unwrap();
    common::copy_dir(a.path(), b.path());
    std::fs::remove_dir_all(b.path().join(".skillrag")).unwrap();
    let (one, two) = (Server::start(a.path(), &[], &[]), Server::start(b.path(), &[], &[]));

    for q in [ROUTER_QUESTION, "劳动合同期限两年的，试用期最长多久？", OUT_OF_SCOPE, "普洱熟茶要洗茶吗？"]
    {
        let (s1, x) = one.post_json("/v1/ask", json!({"query": q}));
        let (s2, y) = two.post_json("/v1/ask", json!({"query": q}));
        assert_eq!((s1, s2), (200, 200));
        assert_eq!(common::comparable(x), common::comparable(y), "{q}");
    }

    // New knowledge indexed through replica one is served by replica two after the commit.
    std::fs::write(
        a.path().join("skills/router-faq/knowledge/purple-light.md"),
        "# Blinking purple light\n\nA blinking purple light means the router is in quarantine mode after a failed \
         firmware update; hold the reset button for 30 seconds to leave quarantine mode.\n",
    )
    .unwrap();
    let (status, job) = one.post_json("/v1/index", json!({"skills": ["router-faq"]}));
    assert_eq!(status, 202, "{job}");
    let search = json!({"query": "blinking purple light quarantine", "skills": ["router-faq"], "k": 1});
    let serves_new_note = |server: &Server| {
        let (_, found) = server.post_json("/v1/search", search.clone());
        found["hits"][0]["source"] == "knowledge/purple-light.md"
    };
    wait_until("replica two serves the new generation", || serves_new_note(&two));

    // A replica on the hot standby serves what was replicated and refuses to index.
    let Ok(standby) = std::env::var("SKILLRAG_TEST_POSTGRES_STANDBY") else { return };
    let primary = common::Backend::postgres_server().unwrap();
    let c = tempfile::tempdir().unwrap();
    common::copy_dir(b.path(), c.path());
    std::fs::write(c.path().join(".env"), format!("SKILLRAG_STORE={}\n", url.replacen(&primary, &standby, 1))).unwrap();
    let three = Server::start(c.path(), &["--allow-writes"], &[]);
    wait_until("the standby replica serves the replicated generation", || serves_new_note(&three));
    let (status, answer) = three.post_json("/v1/ask", json!({"query": ROUTER_QUESTION}));
    assert_eq!(status, 200, "{answer}");
    assert!(answer["refusal"].is_null(), "{answer}");
    let (status, refused) = three.post_json("/v1/index", json!({}));
    assert_error(status, &refused, 409, "conflict");
    assert!(refused["error"]["message"].as_str().unwrap().contains("read-only replica"), "{refused}");
    // Uploads too, with the same message, even with writes allowed; nothing is written.
    let (status, refused) = three.upload("/v1/skills/router-faq/documents", &[("new.md", b"# New\n\ntext")]);
    assert_error(status, &refused, 409, "conflict");
    assert!(refused["error"]["message"].as_str().unwrap().contains("read-only replica"), "{refused}");
    assert!(!c.path().join("skills/router-faq/knowledge/new.md").exists());
    let out = skillrag(c.path(), &["index"]).output().unwrap();
    assert!(!out.status.success());
    assert!(common::stderr(&out).contains("read-only replica"), "{}", common::stderr(&out));
}
