//! Answers written by an LLM: a real OpenAI-compatible server (llama.cpp's own C++ server with
//! Qwen2.5-Coder-0.5B-Instruct, started by `scripts/setup-llm`), and what happens when the LLM
//! is unreachable or misconfigured.
mod common;

use common::server::Server;
use common::*;
use serde_json::{json, Value};
use std::process::Command;

fn output_json(mut cmd: Command) -> Value {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// Every marker in the answer names a listed citation, and every citation a context passage.
fn assert_citations_hold(answer: &Value) {
    let context: Vec<u64> =
        answer["context"]["pieces"].as_array().unwrap().iter().map(|p| p["n"].as_u64().unwrap()).collect();
    let cited: Vec<u64> = answer["citations"].as_array().unwrap().iter().map(|c| c["n"].as_u64().unwrap()).collect();
    assert!(cited.iter().all(|n| context.contains(n)), "{cited:?} ⊄ {context:?}");
    let text = answer["answer"].as_str().unwrap();
    for (i, open) in text.char_indices().filter(|(_, c)| matches!(c, '[' | '【' | '［')) {
        let after = &text[i + open.len_utf8()..];
        let Some(end) = after.find([']', '】', '］']) else { continue };
        let inner = after[..end].trim();
        match inner.parse::<u64>() {
            Ok(n) => {
                assert_eq!(open, '[', "a marker the check did not renumber in {text:?}");
                assert!(cited.contains(&n), "[{n}] in {text:?} is not among the citations {cited:?}");
            }
            // No placeholder that names no passage ("[n]" copied from the prompt) is left; the
            // model's prose may still bracket the prompt's nouns ("根据【资料】").
            Err(_) => assert!(
                !(inner.chars().count() == 1 && inner.chars().all(|c| c.is_ascii_alphabetic())
                    || inner.chars().all(|c| !c.is_alphanumeric())
                    || ["citation", "source", "number", "来源", "引用", "编号"]
                        .contains(&inner.to_lowercase().as_str())),
                "a placeholder marker {inner:?} in {text:?}"
            ),
        }
    }
}

#[test]
fn ask_batch_and_chat_with_a_real_openai_compatible_server() {
    let Some((url, model)) = llm_server() else { return };
    let project = demo_indexed();
    let dir = project.path();

    let question = "劳动合同期限两年，试用期最长可以约定多久？";
    let answer = output_json(with_llm(skillrag(dir, &["ask", question, "--json"]), &url, &model));
    let generation = &answer["generation"];
    assert!(generation["model"].as_str().unwrap().starts_with("openai:"), "{generation}");
    // The server answered; a 0.5B model's answer may still have no supported sentence (then the
    // extractive answer stands in, and says so).
    let unsupported = generation["fallback"].as_str().is_some_and(|f| f.contains("no sentence"));
    assert!(generation["fallback"].is_null() || unsupported, "the server answered: {generation}");
    assert!(generation["completion_tokens"].as_u64().unwrap() > 0, "{generation}");
    assert!(!generation["raw"].as_str().unwrap().is_empty());
    match answer["refusal"]["kind"].as_str() {
        // The model judged the context insufficient: a typed refusal, never free text.
        Some(kind) => assert_eq!(kind, "not_found", "{answer}"),
        None => {
            assert!(!answer["answer"].as_str().unwrap().trim().is_empty(), "{answer}");
            assert_citations_hold(&answer);
        }
    }

    // Streamed to the terminal, then the citations and the model's speed.
    let out = with_llm(skillrag(dir, &["ask", "How do I factory reset the router?"]), &url, &model).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.trim().is_empty());
    let err = stderr(&out);
    assert!(err.contains("tokens/s") || err.contains("refusal not_found"), "{err}");

    // A compare question: one retrieval per side, both sides in the context, the model's
    // comparison checked like any answer.
    let question = "绿茶和乌龙茶的冲泡水温有什么区别？";
    let compared = output_json(with_llm(skillrag(dir, &["ask", question, "--json"]), &url, &model));
    assert_eq!(compared["plan"].as_array().map(Vec::len), Some(2), "{compared}");
    let pieces = compared["context"]["pieces"].as_array().unwrap();
    for side in ["references/green-tea.md", "references/oolong-and-black-tea.md"] {
        assert!(pieces.iter().any(|p| p["source"] == side), "{side} missing from the context: {compared}");
    }
    if compared["refusal"].is_null() {
        assert_citations_hold(&compared);
    }

    // Batch: one JSON line per question, in order; chat keeps the conversation.
    let (lines, out) = json_lines(
        with_llm(skillrag(dir, &["batch"]), &url, &model),
        "{\"id\":\"a\",\"query\":\"绿茶用多少度的水泡？\"}\n{\"id\":\"b\",\"query\":\"你好\"}\n",
    );
    assert_eq!(lines.len(), 2, "{}", stderr(&out));
    assert_eq!((lines[0]["id"].as_str(), lines[1]["id"].as_str()), (Some("a"), Some("b")));
    assert!(lines[0]["generation"]["model"].is_string(), "{}", lines[0]);
    // Small talk: the model replies, without retrieval.
    assert_eq!(lines[1]["retrieved"], false, "{}", lines[1]);
    assert!(lines[1]["generation"]["model"].is_string() && !lines[1]["answer"].as_str().unwrap().is_empty());

    // Chat with rewriting: the follow-up is retrieved as the model's standalone question.
    let mut cmd = with_llm(skillrag(dir, &["chat", "--json"]), &url, &model);
    cmd.env("SKILLRAG_LLM_REWRITE", "true");
    let (turns, out) = json_lines(cmd, "绿茶用多少度的水泡？\n那红茶呢？\n");
    assert_eq!(turns.len(), 2, "{}", stderr(&out));
    assert_eq!(turns[1]["route"]["skills"][0], "tea-brewing", "the follow-up keeps the skill: {}", turns[1]);
    let first_query = turns[1]["queries"][0].as_str().unwrap();
    assert_ne!(first_query, "那红茶呢？", "retrieved as the model's standalone question");
    // It is the model's rewrite (not key terms + question), cached with the project for the next run.
    let cache = std::fs::read_to_string(dir.join(".skillrag/cache/llm-assist.jsonl")).unwrap();
    assert!(cache.contains(first_query), "{cache}");

    // A conversation's LLM budget is enforced in code: once spent, answers come without the model.
    let mut cmd = with_llm(skillrag(dir, &["chat", "--json"]), &url, &model);
    cmd.env("SKILLRAG_LLM_CONVERSATION_TOKENS", "10");
    let (turns, out) = json_lines(cmd, "How do I factory reset the router?\n你好\n");
    assert_eq!(turns.len(), 2, "{}", stderr(&out));
    assert!(turns[0]["generation"]["completion_tokens"].as_u64().unwrap() > 0, "{}", turns[0]);
    assert!(turns[1]["generation"].is_null(), "{}", turns[1]);
    let warnings = turns[1]["warnings"].to_string();
    assert!(warnings.contains("额度") || warnings.contains("budget"), "{warnings}");
}

/// The cached replies of the LLM-assisted steps (`.skillrag/cache/llm-assist.jsonl`).
fn assist_cache(dir: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join(".skillrag/cache/llm-assist.jsonl")).unwrap_or_default();
    text.lines().map(|l| serde_json::from_str::<(String, String)>(l).unwrap().1).collect()
}

#[test]
fn multi_query_hyde_and_self_check_with_a_real_server() {
    let Some((url, model)) = llm_server() else { return };
    let project = demo_indexed();
    let dir = project.path();
    let question = "绿茶用多少度的水泡？";
    let mut cmd = with_llm(skillrag(dir, &["ask", question, "--json"]), &url, &model);
    cmd.env("SKILLRAG_LLM_MULTI_QUERY", "2").env("SKILLRAG_LLM_HYDE", "true").env("SKILLRAG_LLM_SELF_CHECK", "true");
    let answer = output_json(cmd);
    // The wording and HyDE calls were made and cached (whatever the small model wrote).
    assert_eq!(assist_cache(dir).len(), 2, "{:?}", assist_cache(dir));
    let queries: Vec<&str> = answer["queries"].as_array().unwrap().iter().map(|q| q.as_str().unwrap()).collect();
    assert_eq!(queries[0], question, "the question is searched first: {queries:?}");
    // Extra queries only add candidates: the routed skill is unchanged and hits come from it.
    assert_eq!(answer["route"]["skills"][0], "tea-brewing", "{}", answer["route"]);
    assert!(answer["hits"].as_array().unwrap().iter().all(|h| h["skill"] == "tea-brewing"));
    match answer["refusal"]["kind"].as_str() {
        Some(kind) => assert_eq!(kind, "not_found", "{answer}"),
        None if answer["generation"]["fallback"].is_null() => {
            // The model was asked to confirm each sentence; its verdicts were used or reported unusable.
            assert!(answer["generation"]["self_checked"].is_boolean(), "{}", answer["generation"]);
            assert_citations_hold(&answer);
        }
        None => assert!(!answer["answer"].as_str().unwrap().is_empty()),
    }
}

#[test]
fn the_llm_routing_vote_settles_or_keeps_an_ambiguous_route() {
    let Some((url, model)) = llm_server() else { return };
    // Two skills whose profiles both fit a question about "my pet", and whose feeding pages cover
    // it equally well, so the evidence is tied too (testdata/pets).
    let project = TestProject::new(Backend::Embedded);
    let dir = project.path();
    copy_dir(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/pets/skills"), &dir.join("skills"));
    run(dir, &["index"]);
    let question = "How often should I feed my pet?";
    let plain = json(dir, &["route", question]);
    assert_eq!(plain["decision"], "ambiguous", "the fixture must be ambiguous: {plain}");

    let mut cmd = with_llm(skillrag(dir, &["ask", question, "--json"]), &url, &model);
    cmd.env("SKILLRAG_LLM_ROUTE", "true");
    let answer = output_json(cmd);
    let route = &answer["route"];
    // Asked in both orders: two cached votes (plus the clarifying question when it stays ambiguous).
    assert!(assist_cache(dir).iter().filter(|r| r.contains("skills")).count() >= 1, "{:?}", assist_cache(dir));
    match route["decision"].as_str() {
        Some("single") => {
            let vote: Vec<&str> = route["llm_vote"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
            assert_eq!(vote, vec![route["skills"][0].as_str().unwrap()], "{route}");
        }
        Some("ambiguous") => {
            assert_eq!(answer["refusal"]["kind"], "ambiguous", "{answer}");
            let message = answer["refusal"]["message"].as_str().unwrap();
            assert!(message.contains("cat-care") && message.contains("dog-care"), "{message}");
        }
        other => panic!("unexpected decision {other:?}: {route}"),
    }
}

#[test]
fn an_unreachable_llm_falls_back_to_the_extractive_answer() {
    let project = demo_indexed();
    let dir = project.path();
    let question = "劳动合同期限两年，试用期最长可以约定多久？";
    let extractive = json(dir, &["ask", question, "--no-llm"]);
    assert!(extractive["generation"].is_null());
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut cmd = skillrag(dir, &["ask", question, "--json"]);
    cmd.env("SKILLRAG_LLM_BASE_URL", format!("http://127.0.0.1:{port}/v1")).env("SKILLRAG_LLM_RETRIES", "0");
    let answer = output_json(cmd);
    assert_eq!(answer["answer"], extractive["answer"], "the extractive answer, unchanged");
    assert!(answer["generation"]["fallback"].as_str().unwrap().contains("cannot reach"), "{}", answer["generation"]);
    let warnings = answer["warnings"].to_string();
    assert!(warnings.contains("could not answer") || warnings.contains("未能回答"), "{warnings}");
}

#[test]
fn a_missing_gguf_file_is_a_clear_error() {
    let project = demo_indexed();
    let mut cmd = skillrag(project.path(), &["ask", "How do I factory reset the router?"]);
    cmd.env("SKILLRAG_LLM_GGUF", "models/nowhere.gguf");
    let out = cmd.output().unwrap();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("nowhere.gguf"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // Routing never loads the model.
    let mut cmd = skillrag(project.path(), &["route", "How do I factory reset the router?"]);
    cmd.env("SKILLRAG_LLM_GGUF", "models/nowhere.gguf");
    assert!(cmd.output().unwrap().status.success());
}

#[test]
fn ask_with_a_local_gguf_model_in_process() {
    let Some(gguf) = std::env::var_os("SKILLRAG_TEST_LLM_GGUF") else {
        assert!(
            std::env::var("SKILLRAG_TEST_REQUIRE_LLM").as_deref() != Ok("1"),
            "SKILLRAG_TEST_LLM_GGUF is not set: run `eval \"$(scripts/setup-llm)\"`"
        );
        eprintln!("skipped: no local GGUF model (SKILLRAG_TEST_LLM_GGUF)");
        return;
    };
    let project = demo_indexed();
    let mut cmd = skillrag(project.path(), &["ask", "How do I factory reset the router?", "--json"]);
    // A small context and a short answer: the CPU reads the prompt at a few dozen tokens/s.
    cmd.env("SKILLRAG_LLM_GGUF", &gguf).env("SKILLRAG_LLM_MAX_TOKENS", "60").env("SKILLRAG_LLM_CONTEXT_TOKENS", "300");
    let answer = output_json(cmd);
    let generation = &answer["generation"];
    assert!(generation["model"].as_str().unwrap().starts_with("gguf:"), "{generation}");
    assert!(generation["fallback"].is_null() || generation["supported"] == 0, "{generation}");
    assert_eq!(answer["context"]["unit"], "tokens", "budgeted in the model's tokens");
    assert!(
        answer["context"]["used"].as_u64().unwrap() <= 300
            || answer["context"]["pieces"].as_array().unwrap().len() == 1
    );
    assert!(generation["prompt_tokens"].as_u64().unwrap() > 0 && generation["completion_tokens"].as_u64().unwrap() > 0);
    if answer["refusal"].is_null() {
        assert_citations_hold(&answer);
    }
    // The requantized copy is cached with the project.
    let cache = project.path().join(".skillrag/cache/llm");
    assert!(std::fs::read_dir(&cache).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with("-q8_0.gguf")));
}

/// With an LLM, a gap's draft is the model's answer from the passages it cites (checked like
/// every answer), or the best passage when the model supports nothing; drafting asks nothing
/// that joins the gaps.
#[test]
fn an_llm_drafts_the_entry_of_a_gap_from_the_passages_it_cites() {
    let Some((url, model)) = llm_server() else { return };
    let project = demo_indexed();
    let mut env = vec![("SKILLRAG_LLM_BASE_URL", url.as_str()), ("SKILLRAG_LLM_MODEL", model.as_str())];
    env.extend(LLM_TEST_SETTINGS);
    let server = Server::start(project.path(), &["--allow-writes"], &env);
    let question = "How do I factory reset the router?";
    let (_, answered) = server.post_json("/v1/ask", json!({"query": question, "skill": "router-faq"}));
    let (status, _) = server.post_json("/v1/feedback", json!({"answer_id": answered["answer_id"], "rating": "down"}));
    assert_eq!(status, 201);
    let (_, gaps) = server.get_json("/v1/gaps");
    let gap = gaps["gaps"].as_array().unwrap().iter().find(|g| g["query"] == question).cloned().expect("a gap");
    let logged = || std::fs::read_to_string(project.path().join(".skillrag/gaps.jsonl")).unwrap_or_default();
    let before = logged();

    let (status, drafted) = server.post_json(&format!("/v1/gaps/{}/draft", gap["id"].as_str().unwrap()), json!({}));
    assert_eq!(status, 201, "{drafted}");
    let draft = &drafted["draft"];
    let text = draft["answer"].as_str().unwrap();
    let sources: Vec<&str> = draft["sources"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(!text.trim().is_empty() && !sources.is_empty(), "{draft}");
    assert!(sources.iter().all(|s| s.starts_with("knowledge/")), "{draft}");
    eprintln!("drafted: {draft}");
    match draft["drafted_by"].as_str() {
        Some("llm") => assert!(!text.contains("[1]"), "the entry has no markers into a context: {draft}"),
        // A 0.5B model's sentences may all fail the check: the passage stands in, as without one.
        Some("passage") => assert_eq!(sources.len(), 1, "{draft}"),
        other => panic!("drafted by {other:?}: {draft}"),
    }
    assert_eq!(logged(), before, "drafting is not a user's question: nothing joins the gaps");
}
