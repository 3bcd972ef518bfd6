//! The reader (docs/design.md §4.9) with the real model: Qwen2.5-Coder-1.5B-Instruct served by
//! llama.cpp (`scripts/setup-reader`, `SKILLRAG_TEST_READER`), on the bundled example.

mod common;

use common::{demo_indexed, json_lines, reader_server, skillrag};
use serde_json::Value;

/// `batch` over `questions` on the indexed example, with the reader at `url` (or without one).
fn batch(dir: &std::path::Path, reader: Option<&str>, questions: &[&str]) -> Vec<Value> {
    let mut cmd = skillrag(dir, &["batch"]);
    if let Some(url) = reader {
        cmd.env("SKILLRAG_READER", url);
    }
    let input: String =
        questions.iter().map(|q| format!("{}\n", serde_json::json!({ "query": q }))).collect::<Vec<_>>().concat();
    let (answers, out) = json_lines(cmd, &input);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    answers
}

#[test]
fn the_reader_picks_the_answer_and_refuses_passages_about_something_else() {
    let Some(url) = reader_server() else { return };
    let demo = demo_indexed();
    let questions = ["绿茶用多少度的水泡？", "How long is the warranty?", "How do I change the Wi-Fi password?"];
    let answers = batch(demo.path(), Some(&url), &questions);
    for a in &answers {
        eprintln!("{} → {} | refusal {} | reader {}", a["query"], a["answer"], a["refusal"], a["reader"]);
    }
    let green = &answers[0];
    let text = green["answer"].as_str().unwrap();
    assert!(text.contains("80–85°C") && !text.contains("85–90°C"), "green tea, not white tea: {green}");
    assert_eq!(green["reader"]["decision"], "answered", "{green}");

    let warranty = &answers[1];
    assert!(warranty["answer"].as_str().unwrap().contains("2 years"), "{warranty}");

    // The steps that change it, not the sentence about the default admin password.
    let wifi = &answers[2];
    assert!(wifi["answer"].as_str().unwrap().contains("SSID"), "{wifi}");
    for a in &answers {
        let reader = &a["reader"];
        let verdicts = reader["verdicts"].as_array().unwrap();
        assert!(
            !verdicts.is_empty() && verdicts.len() <= 3,
            "at most max_calls (3) + passages (0) judgements: {reader}"
        );
        assert!(reader["ms"].as_f64().unwrap() > 0.0 && reader["model"].as_str().unwrap().contains("18083"));
    }
}

#[test]
fn without_a_reader_or_with_one_that_is_down_the_lexical_decision_stands() {
    let Some(url) = reader_server() else { return };
    let demo = demo_indexed();
    let question = ["红茶用多少度的水冲泡？"];
    let plain = batch(demo.path(), None, &question);
    assert!(plain[0].get("reader").is_none(), "{}", plain[0]);
    // A reader on a port nothing listens on: the answer stands, and says the reader failed.
    let down = batch(demo.path(), Some("http://127.0.0.1:9/v1"), &question);
    assert_eq!(down[0]["answer"], plain[0]["answer"]);
    assert_eq!(down[0]["reader"]["decision"], "failed", "{}", down[0]);
    assert!(down[0]["reader"]["error"].as_str().unwrap().contains("127.0.0.1:9"), "{}", down[0]);
    // doctor names it as a problem; the working reader is reported with a test verdict.
    let out = skillrag(demo.path(), &["doctor"]).env("SKILLRAG_READER", "http://127.0.0.1:9/v1").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success() && stdout.contains("reader: openai:reader@http://127.0.0.1:9/v1"), "{stdout}");
    let out = skillrag(demo.path(), &["doctor"]).env("SKILLRAG_READER", &url).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("judged a test passage"), "{stdout}");
    // `--no-reader` leaves a configured reader out.
    let mut cmd = skillrag(demo.path(), &["batch", "--no-reader"]);
    cmd.env("SKILLRAG_READER", &url);
    let (answers, _) = json_lines(cmd, "{\"query\": \"红茶用多少度的水冲泡？\"}\n");
    assert!(answers[0].get("reader").is_none(), "{}", answers[0]);
}

/// The quick start installs the reader (issue 44): every question it asks is answered right with
/// the reader — its `with_reader` lines, which the lexical evidence alone gets wrong, and the
/// lines it asks in any case.
#[test]
fn with_the_reader_every_question_the_quick_start_asks_is_answered_right() {
    let Some(url) = reader_server() else { return };
    let demo = demo_indexed();
    let lines: Vec<_> = [common::quickstart_questions("with_reader "), common::quickstart_questions("run ")]
        .concat()
        .into_iter()
        .filter(|(_, args, _)| args[0] == "ask")
        .collect();
    assert!(lines.len() >= 8, "{} ask lines", lines.len());
    let questions: Vec<&str> = lines.iter().map(|(_, args, _)| args[1].as_str()).collect();
    let answers = batch(demo.path(), Some(&url), &questions);
    for ((line, _, right), answer) in lines.iter().zip(&answers) {
        let shown = answer["answer"].as_str().unwrap_or_default();
        assert!(shown.contains(right), "{line}: shows no \"{right}\" with the reader: {answer}");
    }
}
