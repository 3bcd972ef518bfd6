//! The optional model backends end to end through the real binary: a rerank endpoint (a scripted
//! TEI-style server: its scores are made up, so this checks the plumbing, not quality), and a
//! real OpenAI-compatible embeddings server (llama.cpp in embedding mode, started by
//! `scripts/setup-llm embed`) when `SKILLRAG_TEST_EMBED_BASE_URL` names one, and the real
//! multilingual-e5-small server of `scripts/setup-e5` when `SKILLRAG_TEST_E5_BASE_URL` does.

mod common;

use common::{demo, run, skillrag, stderr};
use serde_json::{json, Value};
use skillrag_http::scripted::{serve, Reply, Request};
use std::path::Path;

/// TEI `/rerank`: passages that mention the reset pin score 0.9, the others 0.2.
fn tei(r: &Request) -> Value {
    let texts = r.body["texts"].as_array().cloned().unwrap_or_default();
    let scored: Vec<Value> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| json!({"index": i, "score": if t.as_str().unwrap_or("").contains("pin") { 0.9 } else { 0.2 }}))
        .collect();
    Value::Array(scored)
}

fn with_env(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Value {
    let mut cmd = skillrag(dir, args);
    cmd.arg("--json");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// The URL of a real server the test suite started (`variable`), or `None` to skip when run
/// without `scripts/test` — except where the suite requires every server (`SKILLRAG_TEST_REQUIRE_LLM`).
fn server_url(variable: &str, starter: &str) -> Option<String> {
    let url = std::env::var(variable).ok().filter(|u| !u.is_empty());
    if url.is_none() {
        if std::env::var_os("SKILLRAG_TEST_REQUIRE_LLM").is_some() {
            panic!("{variable} is not set: run scripts/test ({starter} starts the server)");
        }
        eprintln!("skipped: {variable} is not set ({starter} starts a server)");
    }
    url
}

/// A project with one skill `name` (SKILL.md front matter `front`, after its name) whose
/// knowledge is one Markdown file: small enough for a slow real model to embed in seconds.
fn one_skill_project(name: &str, front: &str, knowledge: &str) -> tempfile::TempDir {
    let project = tempfile::tempdir().unwrap();
    let skill = project.path().join("skills").join(name);
    std::fs::create_dir_all(skill.join("knowledge")).unwrap();
    std::fs::write(skill.join("SKILL.md"), format!("---\nname: {name}\n{front}\n---\n# {name}\n")).unwrap();
    std::fs::write(skill.join("knowledge/knowledge.md"), knowledge).unwrap();
    project
}

#[test]
fn search_and_ask_carry_the_rerank_score() {
    let project = demo();
    let dir = project.path();
    run(dir, &["index"]);
    let server = serve(vec![Reply::json(tei)]);
    let url = server.url("");
    let env = [("SKILLRAG_RERANK_BASE_URL", url.as_str())];

    let q = "How do I factory reset the router?";
    let result = with_env(dir, &["search", q, "--skill", "router-faq", "-k", "3"], &env);
    let hits = result["hits"].as_array().unwrap();
    assert!(!hits.is_empty());
    assert!(hits[0]["text"].as_str().unwrap().contains("pin"), "{result}");
    assert!((hits[0]["scores"]["rerank"].as_f64().unwrap() - 0.9).abs() < 1e-6, "{result}");
    assert!(hits[0]["scores"]["fused"].is_number());
    assert!(result["rerank"]["model"].as_str().unwrap().starts_with("tei@"), "{result}");
    assert!(server.requests()[0].body["texts"].as_array().unwrap().len() >= 3, "candidates beyond -k are rescored");

    let answer = with_env(dir, &["ask", q], &env);
    let hits = answer["hits"].as_array().unwrap();
    assert!(hits.iter().any(|h| h["scores"]["rerank"].is_number()), "{answer}");

    // The endpoint down: the same answer from the fused order, with a notice.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let down = format!("http://127.0.0.1:{port}");
    let env = [("SKILLRAG_RERANK_BASE_URL", down.as_str()), ("SKILLRAG_RERANK_RETRIES", "0")];
    let result = with_env(dir, &["search", q, "--skill", "router-faq"], &env);
    assert!(result["hits"][0]["scores"]["rerank"].is_null());
    assert!(result["skills"][0]["notice"].as_str().unwrap_or("").contains("reranking failed"), "{result}");
    let answer = with_env(dir, &["ask", q], &env);
    assert!(answer["refusal"].is_null(), "{answer}");
    let warnings = answer["warnings"].to_string();
    assert!(warnings.contains("reranking failed"), "{answer}");
}

#[test]
fn a_real_embeddings_server_indexes_and_answers() {
    let Some(base_url) = server_url("SKILLRAG_TEST_EMBED_BASE_URL", "scripts/setup-llm embed") else { return };
    // The demo's router skill, cut to a few short sections: a 0.5B model embeds ~100 tokens per
    // second on two busy CPU cores, and this test should cost seconds, not minutes.
    let project = one_skill_project(
        "router-faq",
        "description: Answers questions about the Nimbus AX3000 home router.\nmetadata:\n  triggers: router, reset, Wi-Fi",
        "# Nimbus AX3000 FAQ\n\n## Factory reset\n\nHold the reset pin with a paper clip for 10 seconds, until the LED \
         blinks amber.\n\n## Guest network\n\nOpen the app, choose Wi-Fi, then Guest network, and switch it on.\n\n\
         ## Firmware\n\nThe router installs firmware updates by itself at night.\n",
    );
    let dir = project.path();
    let env = [
        ("SKILLRAG_EMBED_BASE_URL", base_url.as_str()),
        ("SKILLRAG_EMBED_MODEL", "qwen2.5-coder-0.5b-instruct"),
        ("SKILLRAG_EMBED_TIMEOUT_SECS", "120"),
        ("SKILLRAG_INDEX_CHUNK_SIZE", "150"),
        ("SKILLRAG_INDEX_CHUNK_OVERLAP", "0"),
    ];
    let report = with_env(dir, &["index"], &env);
    assert!(report["skills"].as_array().unwrap().iter().all(|s| s["chunks"].as_u64().unwrap() > 0), "{report}");
    let dim: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".skillrag/cache/embed-dims.json")).unwrap()).unwrap();
    assert!(dim.as_object().unwrap().values().all(|d| d.as_u64().unwrap() > 0), "{dim}");

    let result =
        with_env(dir, &["search", "How do I factory reset the router?", "--skill", "router-faq", "-k", "5"], &env);
    assert_eq!(result["skills"][0]["dense_used"], true, "{result}");
    let hits = result["hits"].as_array().unwrap();
    assert!(hits.iter().any(|h| h["scores"]["dense"].is_number()), "{result}");
    // A chat model's mean-pooled hidden states are no retrieval model: the plumbing is what is
    // tested here, not the ranking.
    assert!(hits.iter().any(|h| h["heading"].as_str().unwrap_or("").contains("Factory reset")), "{result}");
    let answer = with_env(dir, &["ask", "How do I factory reset the router?", "--skill", "router-faq"], &env);
    assert!(answer["refusal"].is_null(), "{answer}");
    assert!(answer["citations"].as_array().is_some_and(|c| !c.is_empty()), "{answer}");

    // The local model now configured: the index is reported as built under another model.
    let out = skillrag(dir, &["search", "reset", "--skill", "router-faq", "--json"]).output().unwrap();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(result["skills"][0]["notice"].as_str().unwrap_or("").contains("re-index"), "{result}");
}

#[test]
fn a_multilingual_embeddings_server_gives_chinese_a_dense_signal() {
    let Some(base_url) = server_url("SKILLRAG_TEST_E5_BASE_URL", "scripts/setup-e5 test") else { return };
    // Three short statute articles; the question shares no word with the one that answers it
    // (带薪休假 / 几天 vs 年休假 / 5天), so only a model that reads Chinese ranks it first.
    let project = one_skill_project(
        "labor-law",
        "description: 中国劳动法规条文，回答劳动合同、工资与休假问题。",
        "# 劳动法规节选\n\n## 试用期\n\n劳动合同期限三个月以上不满一年的，试用期不得超过一个月。\n\n\
         ## 年休假\n\n职工累计工作已满1年不满10年的，年休假5天；已满10年不满20年的，年休假10天。\n\n\
         ## 加班工资\n\n安排劳动者延长工作时间的，支付不低于工资的百分之一百五十的工资报酬。\n",
    );
    let dir = project.path();
    let env = [
        ("SKILLRAG_EMBED_BASE_URL", base_url.as_str()),
        ("SKILLRAG_EMBED_MODEL", "multilingual-e5-small"),
        ("SKILLRAG_EMBED_QUERY_INPUT_TYPE", "query"),
        ("SKILLRAG_EMBED_PASSAGE_INPUT_TYPE", "passage"),
        ("SKILLRAG_INDEX_CHUNK_SIZE", "100"),
        ("SKILLRAG_INDEX_CHUNK_OVERLAP", "0"),
    ];
    let report = with_env(dir, &["index"], &env);
    assert!(report["skills"][0]["chunks"].as_u64().unwrap() >= 3, "{report}");

    let q = "员工带薪休假一年有几天？";
    let result = with_env(dir, &["search", q, "--skill", "labor-law", "--mode", "dense", "-k", "3"], &env);
    assert_eq!(result["skills"][0]["dense_used"], true, "{result}");
    assert!(result["hits"][0]["heading"].as_str().unwrap_or("").contains("年休假"), "{result}");
    let route = with_env(dir, &["route", q], &env);
    assert!(route["candidates"][0]["dense"].is_number(), "Chinese is visible to this model: {route}");
}
