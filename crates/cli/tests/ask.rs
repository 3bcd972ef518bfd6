//! End-to-end tests of the ask path through the real binary: `ask`, `chat`, `batch`, `route`,
//! `tune` and `eval` on the bundled example project with the real embedding model.

mod common;

on_both_stores!(
    ask_answers_with_citations_in_the_contract_shape,
    gate_refusals_and_boundaries,
    forced_skill_and_not_found,
    bad_questions_never_panic,
    route_shows_every_signal,
    batch_keeps_order_and_reports_bad_lines,
    chat_follow_up_keeps_the_skill,
    tune_fits_and_reports,
    eval_writes_markdown_json_and_chart,
    eval_leave_gold_out_asks_a_copy_without_the_gold_files,
    trace_and_model_mismatch,
    empty_tiny_and_foreign_skills_take_no_questions,
    extractive_answers_hand_over_the_passage_that_answers,
);

use common::{demo_indexed_on, json, json_lines, run, skillrag, stderr, Backend};
use serde_json::Value;

fn ask_answers_with_citations_in_the_contract_shape(backend: Backend) {
    let tmp = demo_indexed_on(backend);
    let dir = tmp.path();
    let a = json(dir, &["ask", "劳动合同期限一年的，试用期最长多久？"]);
    for field in ["query", "route", "retrieved", "attempts", "hits", "answer", "citations", "refusal", "timings_ms"] {
        assert!(a.get(field).is_some(), "answer lacks {field}: {a}");
    }
    assert_eq!(a["route"]["skills"], serde_json::json!(["labor-law"]), "{a}");
    assert_eq!(a["route"]["decision"], "single");
    assert!(a["route"]["confidence"].as_f64().unwrap() > 0.5);
    assert_eq!(a["retrieved"], true);
    assert!(a["refusal"].is_null(), "{a}");
    let text = a["answer"].as_str().unwrap();
    assert!(text.contains("试用期") && text.contains(']'), "{text}");
    // Every [n] in the answer is a citation, and every citation names a retrieved source.
    let citations = a["citations"].as_array().unwrap();
    assert!(!citations.is_empty());
    for c in citations {
        assert!(text.contains(&format!("[{}]", c["n"])), "citation {c} unused in {text}");
        assert!(a["hits"].as_array().unwrap().iter().any(|h| h["source"] == c["source"]));
    }
    // The answer only holds the knowledge's own text: every excerpt occurs in the document it cites.
    assert_quotes_its_sources(dir, &a);
    // Two passages of one chapter read differently: each statute citation is labelled by the
    // articles its passage holds (issue 45).
    let reads = |c: &Value| format!("{}/{} › {} · {}", c["skill"], c["source"], c["heading"], c["label"]);
    let notes: std::collections::HashSet<String> = citations.iter().map(reads).collect();
    assert_eq!(notes.len(), citations.len(), "two citations read the same: {citations:?}");
    for c in citations {
        let label = c["label"].as_str().unwrap_or_else(|| panic!("a statute citation without a label: {c}"));
        let first = label.split('–').next().unwrap();
        let piece = a["context"]["pieces"].as_array().unwrap().iter().find(|p| p["n"] == c["context_n"]).unwrap();
        assert!(piece["text"].as_str().unwrap().contains(first), "{label} is not in its passage: {piece}");
    }
}

/// Every excerpt of an extractive answer (the text before each `[n]`, paragraph by paragraph)
/// occurs, whitespace aside, in the knowledge file its citation names.
fn assert_quotes_its_sources(dir: &std::path::Path, a: &Value) {
    let squash = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let text = a["answer"].as_str().unwrap();
    for paragraph in text.split("\n\n").filter(|p| !p.starts_with("相关条文") && !p.starts_with("See also")) {
        let Some(open) = paragraph.rfind('[') else { continue };
        let n: usize = paragraph[open + 1..].trim_end_matches([']', ' ', '|']).parse().unwrap();
        let excerpt = paragraph[..open].trim_end_matches(' ');
        let c = a["citations"].as_array().unwrap().iter().find(|c| c["n"] == n).unwrap();
        let file = dir.join("skills").join(c["skill"].as_str().unwrap()).join(c["source"].as_str().unwrap());
        let source = squash(&std::fs::read_to_string(&file).unwrap());
        for line in excerpt.lines().map(|l| l.trim_start_matches("- ")).filter(|l| l.chars().count() > 3) {
            assert!(source.contains(&squash(line)), "{line:?} is not in {}", file.display());
        }
    }
}

/// The regressions of issue 18 on the demo (no LLM): the answer is the passage that answers,
/// whole — the article with its label, the table row under its header, the steps with their
/// introduction — never a rule, a question or a header; citations count from [1]; a question
/// with one part per skill answers each part from its skill.
fn extractive_answers_hand_over_the_passage_that_answers(backend: Backend) {
    let tmp = demo_indexed_on(backend);
    let dir = tmp.path();
    let answer = |q: &str| {
        let a = json(dir, &["ask", q]);
        assert!(a["refusal"].is_null(), "{q}: {a}");
        let text = a["answer"].as_str().unwrap().to_string();
        let first = text.find('[').map(|i| &text[i..]).unwrap_or_default();
        assert!(first.starts_with("[1]"), "{q}: citations count from [1]: {text}");
        let numbers: Vec<u64> = a["citations"].as_array().unwrap().iter().map(|c| c["n"].as_u64().unwrap()).collect();
        assert_eq!(numbers, (1..=numbers.len() as u64).collect::<Vec<_>>(), "{q}");
        for c in a["citations"].as_array().unwrap() {
            assert!(c["context_n"].as_u64().unwrap() >= 1, "{c}");
        }
        assert_quotes_its_sources(dir, &a);
        (a, text)
    };
    for q in ["试用期最长可以约定多久？", "劳动合同期限两年，试用期最长可以约定多久？"]
    {
        let (_, text) = answer(q);
        assert!(text.starts_with("第十九条"), "{q}: the article with its label: {text}");
        assert!(text.contains("试用期不得超过六个月") && text.contains("试用期不得超过二个月"), "{text}");
    }
    let (_, text) = answer("年休假有几天？");
    assert!(text.starts_with("第三条") && text.contains("年休假5天"), "{text}");
    assert!(!text.contains("每个结论"), "a rule is not an answer: {text}");
    let (_, text) = answer("What does a blinking amber LED mean?");
    assert!(text.contains("| Blinking amber | Factory reset in progress"), "{text}");
    assert!(text.starts_with("| LED | Meaning |\n|---|---|"), "the row under its header: {text}");
    let (_, text) = answer("How do I update the firmware?");
    assert!(text.contains("To update by hand:") && text.contains("Check for updates"), "{text}");
    assert!(!text.contains("warranty"), "{text}");
    let (_, text) = answer("How do I factory reset the router?");
    assert!(text.contains("10 seconds"), "{text}");
    for line in text.lines() {
        assert!(!line.trim_end_matches(|c: char| c == ']' || c.is_ascii_digit() || c == '[').ends_with('?'), "{text}");
    }
    // A follow-up that refers back ("it") is answered from the previous topic's passage.
    let (turns, _) = json_lines(
        skillrag(dir, &["chat", "--json"]),
        "How do I update the firmware?\nhow long does it take?\n/quit\n",
    );
    let text = turns[1]["answer"].as_str().unwrap_or_default();
    assert!(text.contains("five minutes"), "{}", turns[1]);
    let (a, text) = answer("试用期最长可以约定多久？另外，绿茶一般要不要洗茶？");
    assert_eq!(a["route"]["decision"], "multi", "{a}");
    assert!(text.contains("试用期不得超过六个月") && text.contains("洗茶"), "each part from its skill: {text}");
    let skills: Vec<&str> = a["citations"].as_array().unwrap().iter().map(|c| c["skill"].as_str().unwrap()).collect();
    assert!(skills.contains(&"labor-law") && skills.contains(&"tea-brewing"), "{skills:?}");
}

fn gate_refusals_and_boundaries(backend: Backend) {
    let tmp = demo_indexed_on(backend);
    let dir = tmp.path();
    for q in ["你好", "谢谢！", "帮我润色这段话：我们明天开会。", "Thanks, that's all."] {
        let a = json(dir, &["ask", q]);
        assert!(a["route"]["gate"].is_string(), "{q}: {a}");
        assert_eq!(a["retrieved"], false);
        assert!(a["refusal"].is_null());
        assert!(!a["answer"].as_str().unwrap().is_empty());
    }
    let a = json(dir, &["ask", "股票基金怎么选？"]);
    assert_eq!(a["refusal"]["kind"], "out_of_scope", "{a}");
    assert!(a["refusal"]["message"].as_str().unwrap().contains("范围"), "answers in the question's language: {a}");
    // labor-law's SKILL.md says it does not cover 工伤认定: unrouted, the question is out of
    // scope with that boundary as the reason; asked of labor-law, it is refused as `boundary`.
    let a = json(dir, &["ask", "工伤认定的申请时限是多久？"]);
    assert_eq!(a["refusal"]["kind"], "out_of_scope", "{a}");
    assert!(a["refusal"]["message"].as_str().unwrap().contains("工伤认定"), "{a}");
    let a = json(dir, &["ask", "工伤认定的申请时限是多久？", "--skill", "labor-law"]);
    assert_eq!(a["refusal"]["kind"], "boundary", "{a}");
    assert!(a["refusal"]["message"].as_str().unwrap().contains("工伤认定"), "{a}");
}

fn forced_skill_and_not_found(backend: Backend) {
    let tmp = demo_indexed_on(backend);
    let dir = tmp.path();
    let a = json(dir, &["ask", "What is the boiling point of mercury?", "--skill", "router-faq"]);
    assert_eq!(a["route"]["forced"], true);
    assert_eq!(a["refusal"]["kind"], "not_found", "{a}");
    assert!(a["refusal"]["message"].as_str().unwrap().starts_with("Not found in the knowledge base"), "{a}");
    assert!(a["attempts"].as_u64().unwrap() >= 2, "weak evidence is retried: {a}");
    assert!(a["attempts"].as_u64().unwrap() <= 3, "at most two retries: {a}");
}

fn bad_questions_never_panic(backend: Backend) {
    let tmp = demo_indexed_on(backend);
    let dir = tmp.path();
    let out = skillrag(dir, &["ask", "   "]).output().unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("the question is empty"), "{}", stderr(&out));
    let huge = "劳动合同".repeat(8_500); // 100 KB (a single argument may not exceed 128 KB)
    let a = json(dir, &["ask", &huge]);
    assert!(a["answer"].is_string());
    for q in ["？？？!!!", "试用期 probation 多久 how long", "🙂"] {
        let a = json(dir, &["ask", q]);
        assert!(a["answer"].is_string(), "{q}");
    }
}

fn route_shows_every_signal(backend: Backend) {
    let tmp = demo_indexed_on(backend);
    let route = json(tmp.path(), &["route", "How do I factory reset the router?"]);
    let candidates = route["candidates"].as_array().unwrap();
    assert_eq!(candidates.len(), 3);
    for field in
        ["score", "keyword_hits", "dense", "profile", "specificity", "knowledge", "knowledge_dense", "language_match"]
    {
        assert!(candidates[0].get(field).is_some(), "candidate lacks {field}");
    }
    assert_eq!(route["skills"], serde_json::json!(["router-faq"]), "{route}");
    assert!(candidates[0]["dense"].is_number(), "English is visible to the model: {route}");
    let out = run(tmp.path(), &["route", "试用期最长多久？"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("decision: single labor-law"), "{text}");
}

fn batch_keeps_order_and_reports_bad_lines(backend: Backend) {
    let tmp = demo_indexed_on(backend);
    let input = "{\"id\": \"a\", \"query\": \"试用期工资最低多少？\"}\nnot json\n{\"id\": 7, \"query\": \"hi\"}\n{\"id\": \"c\", \"query\": \"How do I update the firmware?\"}\n";
    let (lines, out) = json_lines(skillrag(tmp.path(), &["batch"]), input);
    assert!(out.status.success());
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["id"], "a");
    assert!(lines[1]["error"].as_str().unwrap().contains("line 2"), "{}", lines[1]);
    assert_eq!(lines[2]["id"], "7");
    assert!(lines[2]["route"]["gate"].is_string());
    assert_eq!(lines[3]["id"], "c");
    assert_eq!(lines[3]["route"]["skills"], serde_json::json!(["router-faq"]));
}

fn chat_follow_up_keeps_the_skill(backend: Backend) {
    let tmp = demo_indexed_on(backend);
    let (turns, out) = json_lines(
        skillrag(tmp.path(), &["chat", "--json"]),
        "用人单位解除劳动合同时，什么情况下要支付经济补偿？\n那试用期呢？\n那两年呢？\n绿茶用多少度的水泡？\n/quit\n",
    );
    assert_eq!(turns.len(), 4, "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(turns[0]["route"]["skills"], serde_json::json!(["labor-law"]));
    assert_eq!(turns[1]["route"]["skills"], serde_json::json!(["labor-law"]), "{}", turns[1]);
    assert!(turns[1]["queries"][0].as_str().unwrap().contains("试用期"), "{}", turns[1]);
    assert!(turns[1]["queries"][0].as_str().unwrap().chars().count() > "那试用期呢？".chars().count());
    // Two words alone do not leave the topic; a question another skill owns does.
    assert_eq!(turns[2]["route"]["skills"], serde_json::json!(["labor-law"]), "{}", turns[2]);
    assert_eq!(turns[3]["route"]["skills"], serde_json::json!(["tea-brewing"]), "{}", turns[3]);
}

fn tune_fits_and_reports(backend: Backend) {
    let tmp = demo_indexed_on(backend);
    let dir = tmp.path();
    let labelled = dir.join("labelled.jsonl");
    std::fs::write(
        &labelled,
        "{\"query\": \"试用期可以约定几次？\", \"skill\": \"labor-law\"}\n{\"query\": \"Where is the WPS button?\", \"skill\": \"router-faq\"}\n{\"query\": \"明天股市会涨吗？\", \"skill\": null}\n",
    )
    .unwrap();
    let out = run(dir, &["tune", "--labelled", labelled.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("cross-validated routing accuracy") && text.contains("calibration error"), "{text}");
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".skillrag/router.json")).unwrap()).unwrap();
    assert_eq!(saved["labelled"].as_array().unwrap().len(), 3);
    assert!(saved["model"]["accept"].as_f64().unwrap() > 0.0);
    assert!(saved["model"]["report"]["synthetic"].as_u64().unwrap() > 0, "no questions drawn from the knowledge");
    std::fs::write(&labelled, "{\"query\": \"x\", \"skill\": \"nope\"}\n").unwrap();
    let out = skillrag(dir, &["tune", "--labelled", labelled.to_str().unwrap()]).output().unwrap();
    assert!(stderr(&out).contains("labelled.jsonl:1: unknown skill `nope`"), "{}", stderr(&out));
}

fn eval_writes_markdown_json_and_chart(backend: Backend) {
    let tmp = demo_indexed_on(backend);
    let dir = tmp.path();
    let bench = dir.join("bench");
    std::fs::create_dir_all(&bench).unwrap();
    common::copy_dir(&dir.join("skills"), &bench.join("skills"));
    std::fs::write(
        bench.join("queries.jsonl"),
        [
            r#"{"id": "q1", "query": "劳动合同期限一年的，试用期最长多久？", "skill": "labor-law", "answers": ["第十九条"], "gold_sources": ["knowledge/labor-contract-law-03.md"], "type": "fact"}"#,
            r#"{"id": "q2", "query": "How do I factory reset the router?", "skill": "router-faq", "answers": ["10 seconds"], "gold_sources": ["knowledge/troubleshooting.md", "knowledge/faq.md"], "type": "fact"}"#,
            r#"{"id": "q3", "query": "你好", "skill": null, "answers": [], "gold_sources": [], "type": "chitchat"}"#,
            r#"{"id": "q4", "query": "股票基金怎么选？", "skill": null, "answers": [], "gold_sources": [], "type": "out_of_scope"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let report = json(dir, &["eval", bench.to_str().unwrap(), "--out", dir.join("report").to_str().unwrap()]);
    let m = &report["report"]["overall"];
    assert_eq!(m["questions"], 4);
    assert_eq!(m["routing_accuracy"], 1.0, "{report}");
    assert_eq!(m["hit_at_5"], 1.0, "{report}");
    assert_eq!(m["chitchat_without_retrieval"], 1.0);
    assert_eq!(m["out_of_scope_rejected"], 1.0);
    for file in ["report.md", "report.json", "chart.svg", "answers.jsonl"] {
        assert!(dir.join("report").join(file).is_file(), "{file}");
    }
    let md = std::fs::read_to_string(dir.join("report/report.md")).unwrap();
    assert!(md.contains("| hit@5 (fact) |") && md.contains("latency"), "{md}");
}

/// `eval --leave-gold-out`: the fact rows are asked again of a copy of the skills that lacks their
/// gold files, and reported in their own section; a bad share or a benchmark without gold fails
/// before anything is indexed.
fn eval_leave_gold_out_asks_a_copy_without_the_gold_files(backend: Backend) {
    let tmp = common::demo_on(backend);
    let dir = tmp.path();
    let bench = dir.join("bench");
    common::copy_dir(&dir.join("skills"), &bench.join("skills"));
    std::fs::write(
        bench.join("queries.jsonl"),
        [
            r#"{"id": "q1", "query": "劳动合同期限一年的，试用期最长多久？", "skill": "labor-law", "answers": ["第十九条"], "gold_sources": ["knowledge/labor-contract-law-03.md"], "type": "fact"}"#,
            r#"{"id": "q2", "query": "How do I factory reset the router?", "skill": "router-faq", "answers": ["10 seconds"], "gold_sources": ["knowledge/troubleshooting.md", "knowledge/faq.md"], "type": "fact"}"#,
            r#"{"id": "q3", "query": "绿茶用多少度的水泡？", "skill": "tea-brewing", "answers": ["80"], "gold_sources": ["references/green-tea.md"], "type": "fact"}"#,
            r#"{"id": "q4", "query": "你好", "skill": null, "answers": [], "gold_sources": [], "type": "chitchat"}"#,
            r#"{"id": "q5", "query": "股票基金怎么选？", "skill": null, "answers": [], "gold_sources": [], "type": "out_of_scope"}"#,
        ]
        .join("\n"),
    )
    .unwrap();
    let out = dir.join("report");
    let (bench_arg, out_arg) = (bench.to_str().unwrap(), out.to_str().unwrap());
    // The whole share: every gold file goes, so every fact row is asked again.
    let report = json(dir, &["eval", bench_arg, "--out", out_arg, "--leave-gold-out", "--share", "1"]);
    assert_eq!(report["report"]["overall"]["questions"], 5, "the normal evaluation runs too");
    let lgo = &report["leave_gold_out"];
    assert_eq!(lgo["questions"], 3, "{lgo}");
    assert_eq!(lgo["removed_files"], 4, "{lgo}");
    assert_eq!(lgo["seed"], 7);
    for skill in ["labor-law", "router-faq", "tea-brewing"] {
        assert_eq!(lgo["per_skill"][skill]["questions"], 1, "{skill}: {lgo}");
    }
    let refused: u64 = lgo["refused"].as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(lgo["answered"].as_u64().unwrap() + refused, 3, "{lgo}");
    assert_eq!(lgo["report"]["rows"].as_array().unwrap().len(), 3);
    // The copy lacks exactly the gold files, and its answers never cite or retrieve them.
    let copy = dir.join(".skillrag/eval/bench-leave-gold-out");
    assert!(!copy.join("skills/labor-law/knowledge/labor-contract-law-03.md").exists());
    assert!(copy.join("skills/labor-law/knowledge/labor-contract-law-07.md").is_file());
    assert!(bench.join("skills/labor-law/knowledge/labor-contract-law-03.md").is_file(), "the bench is untouched");
    assert_eq!(std::fs::read_to_string(copy.join("queries.jsonl")).unwrap().lines().count(), 3);
    let answers = std::fs::read_to_string(out.join("answers-leave-gold-out.jsonl")).unwrap();
    let answers: Vec<Value> = answers.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(answers.len(), 3);
    for a in &answers {
        assert!(a["id"].as_str().unwrap().ends_with("-lgo"), "{a}");
        for hit in a["hits"].as_array().unwrap() {
            let removed = lgo["removed"][hit["skill"].as_str().unwrap()].as_array().unwrap();
            assert!(!removed.contains(&hit["source"]), "a removed file was retrieved: {hit}");
        }
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Leave-gold-out: 3 questions whose gold sources were removed; answered anyway:"), "{md}");
    assert!(md.contains("| tea-brewing | 1 | 1 |"), "{md}");

    // Errors, before any indexing: a share outside (0, 1], a benchmark without gold sources.
    let eval =
        |args: &[&str]| skillrag(dir, &[&["eval", bench_arg, "--out", out_arg][..], args].concat()).output().unwrap();
    for share in ["--share=0", "--share=1.5", "--share=-0.2", "--share=NaN"] {
        let o = eval(&["--leave-gold-out", share]);
        assert!(
            !o.status.success() && stderr(&o).contains("--share must be more than 0 and at most 1"),
            "{}",
            stderr(&o)
        );
        assert!(!stderr(&o).contains("index ready"), "{}", stderr(&o));
    }
    let o = eval(&["--share", "0.5"]);
    assert!(!o.status.success() && stderr(&o).contains("--leave-gold-out"), "{}", stderr(&o));
    std::fs::write(bench.join("queries.jsonl"), r#"{"id": "c", "query": "你好", "skill": null, "type": "chitchat"}"#)
        .unwrap();
    let o = eval(&["--leave-gold-out"]);
    assert!(!o.status.success() && stderr(&o).contains("no fact rows with gold_sources"), "{}", stderr(&o));
}

fn trace_and_model_mismatch(backend: Backend) {
    let tmp = demo_indexed_on(backend);
    let dir = tmp.path();
    let out = skillrag(dir, &["ask", "试用期工资最低多少？", "--json"])
        .env("SKILLRAG_ASK_TRACE", ".skillrag/trace.jsonl")
        .output()
        .unwrap();
    assert!(out.status.success());
    let trace = std::fs::read_to_string(dir.join(".skillrag/trace.jsonl")).unwrap();
    let line: Value = serde_json::from_str(trace.lines().next().unwrap()).unwrap();
    for field in ["query", "route", "queries", "hits", "refusal", "timings_ms"] {
        assert!(line.get(field).is_some(), "trace lacks {field}");
    }
    // An index built with the model, asked without it: detected, with a request to re-index.
    let out =
        skillrag(dir, &["ask", "How do I update the firmware?"]).env("SKILLRAG_EMBED_MODEL", "none").output().unwrap();
    assert!(stderr(&out).contains("run `skillrag index"), "{}", stderr(&out));
    // A skill with no index yet.
    tmp.remove_index("router-faq");
    let out = skillrag(dir, &["ask", "How do I update the firmware?", "--skill", "router-faq"]).output().unwrap();
    assert!(stderr(&out).contains("run `skillrag index --skill router-faq`"), "{}", stderr(&out));
}

/// Bad input for routing: a skill with no knowledge files, one with a single tiny file, and one
/// in another language that shares the question's digits and Latin names must not take the
/// example's questions from the skills that answer them.
fn empty_tiny_and_foreign_skills_take_no_questions(backend: Backend) {
    let tmp = demo_indexed_on(backend);
    let dir = tmp.path();
    let skill = |id: &str, description: &str, files: &[(&str, &str)]| {
        let folder = dir.join("skills").join(id);
        std::fs::create_dir_all(folder.join("knowledge")).unwrap();
        std::fs::write(folder.join("SKILL.md"), format!("---\nname: {id}\ndescription: \"{description}\"\n---\n"))
            .unwrap();
        for (name, text) in files {
            std::fs::write(folder.join("knowledge").join(name), text).unwrap();
        }
    };
    skill("team-notes", "Team notes.", &[]);
    skill("office-hours", "Office hours.", &[("hours.md", "# Hours\n\nThe office is open from 9 to 5.\n")]);
    skill(
        "nimbus-release-notes",
        "Release notes of the Nimbus X2 firmware.",
        &[(
            "notes.md",
            "# Firmware 2.4.10\n\nVersion 2.4.10 of the Nimbus X2 fixes WPS pairing on the 5 GHz band after 10 to 20 \
             minutes. Version 2.4.9 shipped 6 months earlier.\n",
        )],
    );
    run(dir, &["index"]);
    for (question, owner) in [
        ("职工累计工作满10年不满20年的，年休假是几天？", "labor-law"),
        ("试用期最长可以约定6个月吗？", "labor-law"),
        ("How do I factory reset the router?", "router-faq"),
        ("绿茶用多少度的水泡？", "tea-brewing"),
    ] {
        let route = json(dir, &["route", question]);
        assert_eq!(route["skills"], serde_json::json!([owner]), "{question}: {route}");
    }
}

/// `skillrag context`: the routed skill's instructions and boundary, then its pieces in tier
/// order within the budget; the same refusals and gate as `ask`; bad budgets are refused.
#[test]
fn context_compiles_the_routed_skill_for_a_task() {
    let tmp = common::demo_indexed();
    let dir = tmp.path();
    let task = "Write a reply to a customer who asks whether a factory reset voids the warranty";
    let c = json(dir, &["context", task]);
    assert!(c.get("refusal").is_none(), "{c}");
    assert_eq!(c["route"]["skills"], serde_json::json!(["router-faq"]), "{c}");
    assert_eq!(c["skills"][0]["skill"], "router-faq", "{c}");
    assert!(c["skills"][0]["instructions"].as_str().unwrap().contains("Never ask the customer"), "{c}");
    assert!(c["skills"][0]["boundary"].as_str().unwrap().contains("Does not support"), "{c}");
    let pieces = c["context"]["pieces"].as_array().unwrap();
    assert_eq!(pieces[0]["tier"], "rules", "the rules come first: {c}");
    let rank = |t: &str| ["rules", "examples", "references"].iter().position(|x| *x == t).unwrap();
    let tiers: Vec<usize> = pieces.iter().map(|p| rank(p["tier"].as_str().unwrap())).collect();
    assert!(tiers.windows(2).all(|w| w[0] <= w[1]), "tier order: {tiers:?}");
    assert!(pieces.iter().enumerate().all(|(i, p)| p["n"] == i + 1), "labelled [1], [2]… in order: {c}");
    assert_eq!(c["context"]["unit"], "chars");

    // The text an agent reads: instructions, boundary, then the labelled pieces.
    let out = run(dir, &["context", task]);
    let text = String::from_utf8_lossy(&out.stdout);
    let at = |needle: &str| text.find(needle).unwrap_or_else(|| panic!("{needle:?} missing in {text}"));
    assert!(at("# Skill: router-faq") < at("## Instructions") && at("## Instructions") < at("## Boundary"));
    assert!(at("## Boundary") < at("[1] rules · router-faq/knowledge/rules/support-policy.md"), "{text}");

    // A small budget keeps the first piece and lists what it left out.
    let small = json(dir, &["context", task, "--budget", "200"]);
    assert_eq!(small["context"]["budget"], 200, "{small}");
    assert!(small["context"]["pieces"].as_array().unwrap().len() < pieces.len(), "{small}");
    assert!(!small["context"]["dropped"].as_array().unwrap().is_empty(), "{small}");

    // The same refusals and gate as `ask`; a forced skill skips routing.
    let refused = json(dir, &["context", "股票基金怎么选？"]);
    assert_eq!(refused["refusal"]["kind"], "out_of_scope", "{refused}");
    assert!(refused["skills"].as_array().unwrap().is_empty() && refused["context"]["pieces"] == serde_json::json!([]));
    // Refused for its skill's knowledge, a task still gets that skill's rules: not from memory.
    let missing = json(dir, &["context", "写一段给员工的说明：周末加班的加班工资按什么标准计算。"]);
    assert_eq!(missing["refusal"]["kind"], "not_found", "{missing}");
    assert_eq!(missing["skills"][0]["skill"], "labor-law", "{missing}");
    assert_eq!(missing["context"]["pieces"][0]["source"], "knowledge/rules/citation.md", "{missing}");
    let gated = json(dir, &["context", "你好"]);
    assert!(gated["route"]["gate"].is_string() && gated["context"]["pieces"] == serde_json::json!([]), "{gated}");
    let forced = json(dir, &["context", "Summarise the warranty terms", "--skill", "router-faq"]);
    assert_eq!(forced["route"]["forced"], true, "{forced}");

    for bad in ["0", "1000001", "many"] {
        let out = skillrag(dir, &["context", task, "--budget", bad]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "--budget {bad}: {}", stderr(&out));
        assert!(stderr(&out).contains("--budget"), "{}", stderr(&out));
    }
}

/// A skill that uses another (`metadata.uses`) and a shared folder of the project
/// (`/shared/style-guide/**`): both are retrieved for it, under its budget, each passage cited
/// with the skill it came from; bad dependencies are `lint` errors with the line, and the skill
/// still answers without them.
#[test]
fn skills_use_other_skills_and_shared_knowledge() {
    let tmp = common::demo_indexed();
    let dir = tmp.path();
    let reply = dir.join("skills/support-reply");
    std::fs::create_dir_all(reply.join("knowledge")).unwrap();
    std::fs::write(
        reply.join("SKILL.md"),
        "---\nname: support-reply\ndescription: Drafts replies to Nimbus router customers in the house style.\n\
         metadata:\n  uses: \"router-faq\"\n  knowledge: \"knowledge, /shared/style-guide/**\"\n  triggers: reply, customer email\n---\n\
         # Support replies\n\n## Examples\n\n- Draft a reply to a customer whose Wi-Fi is slow\n",
    )
    .unwrap();
    std::fs::write(
        reply.join("knowledge/openers.md"),
        "# Openers\n\nOpen every reply by thanking the customer for writing in.\n",
    )
    .unwrap();
    let guide = dir.join("shared/style-guide/rules");
    std::fs::create_dir_all(&guide).unwrap();
    std::fs::write(guide.join("tone.md"), "# Tone\n\nSign every customer reply with \"The Halcyon support team\".\n")
        .unwrap();
    let out = run(dir, &["index"]);
    assert!(out.status.success(), "{}", stderr(&out));

    let card = json(dir, &["sources", "support-reply"]);
    let sources: Vec<&str> = card.as_array().unwrap().iter().filter_map(|s| s["source"].as_str()).collect();
    assert!(sources.contains(&"/shared/style-guide/rules/tone.md"), "the shared folder is indexed: {card}");

    let task = "Draft a reply to a customer asking how to do a factory reset on the router";
    let c = json(dir, &["context", task, "--skill", "support-reply"]);
    let pieces = c["context"]["pieces"].as_array().unwrap();
    let from = |skill: &str| pieces.iter().filter(|p| p["skill"] == skill).count();
    assert!(from("router-faq") > 0, "the used skill is retrieved too: {c}");
    let tone = pieces.iter().find(|p| p["source"] == "/shared/style-guide/rules/tone.md");
    assert_eq!(tone.map(|p| &p["tier"]), Some(&Value::from("rules")), "the shared rule keeps its tier: {c}");
    let text = String::from_utf8_lossy(&run(dir, &["context", task, "--skill", "support-reply"]).stdout).to_string();
    assert!(text.contains("rules · /shared/style-guide/rules/tone.md"), "named by its project path: {text}");
    assert!(text.contains("rules · router-faq/knowledge/rules/support-policy.md"), "the used skill's rule: {text}");
    let a = json(dir, &["ask", "How do I do a factory reset?", "--skill", "support-reply"]);
    assert!(a.get("refusal").is_none_or(Value::is_null), "{a}");
    assert!(a["citations"].as_array().unwrap().iter().any(|c| c["skill"] == "router-faq"), "cited with its skill: {a}");

    // A cycle, the skill itself, an unknown name: lint errors with the line; the skill still answers.
    let skill_md = std::fs::read_to_string(reply.join("SKILL.md")).unwrap();
    std::fs::write(
        reply.join("SKILL.md"),
        skill_md.replace("uses: \"router-faq\"", "uses: \"router-faq, support-reply, nope\""),
    )
    .unwrap();
    let faq = dir.join("skills/router-faq/SKILL.md");
    let faq_md = std::fs::read_to_string(&faq).unwrap();
    std::fs::write(&faq, faq_md.replace("metadata:\n", "metadata:\n  uses: support-reply\n")).unwrap();
    let lint = skillrag(dir, &["lint"]).output().unwrap();
    let text = String::from_utf8_lossy(&lint.stdout);
    assert_eq!(lint.status.code(), Some(1), "{text}");
    assert!(text.contains("support-reply/SKILL.md:5") && text.contains("names the skill itself"), "{text}");
    assert!(text.contains("`nope`, which is not a skill"), "{text}");
    assert!(text.contains("cycle (router-faq → support-reply → router-faq)"), "{text}");
    let a = json(dir, &["ask", "How do I do a factory reset?", "--skill", "support-reply"]);
    assert!(a["hits"].as_array().unwrap().iter().all(|h| h["skill"] == "support-reply"), "served alone: {a}");

    // A path out of the project is refused.
    std::fs::write(reply.join("SKILL.md"), skill_md.replace("/shared/style-guide/**", "/../../etc/**")).unwrap();
    let lint = skillrag(dir, &["lint", "support-reply"]).output().unwrap();
    assert!(
        String::from_utf8_lossy(&lint.stdout).contains("leaves the project"),
        "{}",
        String::from_utf8_lossy(&lint.stdout)
    );
}

/// "A 和 B 有什么区别": one retrieval per side, compiled side by side, answered without an LLM as a
/// table with one row per side, each quoted and cited from its own evidence; the plan is in the JSON.
#[test]
fn compare_questions_are_answered_side_by_side() {
    let tmp = common::demo_indexed();
    let dir = tmp.path();
    let a = json(dir, &["ask", "绿茶和乌龙茶的冲泡水温有什么区别？"]);
    assert!(a.get("refusal").is_none_or(Value::is_null), "{a}");
    let plan = a["plan"].as_array().unwrap();
    assert_eq!(plan.len(), 2, "{a}");
    assert_eq!(plan[0]["query"], "绿茶 冲泡水温", "{a}");
    assert_eq!(plan[1]["query"], "乌龙茶 冲泡水温", "{a}");
    assert!(plan.iter().all(|s| s["skill"] == "tea-brewing"), "{a}");
    let text = a["answer"].as_str().unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| 绿茶") || l.starts_with("| 乌龙茶")).collect();
    assert_eq!(rows.len(), 2, "one row per side: {text}");
    assert!(rows[0].contains("80–85"), "green tea's own temperature: {text}");
    assert!(rows[1].contains("95–100"), "oolong's own temperature: {text}");
    assert!(a["citations"].as_array().unwrap().len() >= 2, "{a}");

    // An ordinary question with 和 in it is not split.
    let plain = json(dir, &["ask", "试用期和工资怎么约定？"]);
    assert!(plain.get("plan").is_none(), "{plain}");
}

/// Issue 46 items 28 and 3: `exit`, `quit`, `:q` and Ctrl-D leave `chat` without being asked or
/// saved; an unknown `/command` gets "unknown command" and the list of commands, and is neither
/// asked nor logged as a gap.
#[test]
fn chat_leaves_on_exit_words_and_refuses_unknown_commands() {
    let tmp = common::demo_indexed();
    let dir = tmp.path();
    let state = dir.join(".skillrag");
    for leave in ["exit", "quit", ":q", "\u{4}"] {
        let (turns, out) = json_lines(skillrag(dir, &["chat", "--json"]), &format!("{leave}\n试用期最长多久？\n"));
        assert!(out.status.success(), "{leave:?}: {}", stderr(&out));
        assert!(turns.is_empty(), "{leave:?} is not a question: {turns:?}");
    }
    let (turns, out) = json_lines(skillrag(dir, &["chat", "--json"]), "/frobnicate\n/skill\n");
    assert!(turns.is_empty(), "{turns:?}");
    let err = stderr(&out);
    assert!(err.contains("unknown command `/frobnicate`") && err.contains("/skill NAME"), "{err}");
    let saved = std::fs::read_dir(state.join("conversations")).map_or(0, |d| d.count());
    assert_eq!(saved, 0, "nothing was asked, so nothing was saved");
    let gaps = std::fs::read_to_string(state.join("gaps.jsonl")).unwrap_or_default();
    assert!(!gaps.contains("frobnicate") && !gaps.contains("exit"), "{gaps}");
}
