//! Hostile inputs: the index on disk. Bit flips in the embedding cache and in a generation's
//! vectors, every shape of a bad `CURRENT`, files where folders belong, and one damaged skill
//! among good ones: each is detected, named, skipped while it is damaged and repaired by
//! `index --rebuild` or `doctor --repair`.

use crate::common::{self, json, run, skillrag, stderr};
use serde_json::Value;
use std::path::{Path, PathBuf};

const ROUTER_Q: &str = "How do I factory reset the router?";
const LABOR_Q: &str = "劳动合同期限两年的，试用期最长多久？";

/// XORs `len` bytes of `path` starting at `at` (clamped to the file).
fn flip(path: &Path, at: usize, len: usize) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = at.min(bytes.len().saturating_sub(len));
    let end = (at + len).min(bytes.len());
    for b in &mut bytes[at..end] {
        *b ^= 0x5a;
    }
    std::fs::write(path, bytes).unwrap();
}

fn skill_dir(project: &Path, skill: &str) -> PathBuf {
    project.join(".skillrag/index").join(skill)
}

/// The folder of a skill's current generation.
fn current(project: &Path, skill: &str) -> PathBuf {
    let dir = skill_dir(project, skill);
    let name = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    dir.join(name.trim())
}

/// The only embedding cache file of the project.
fn cache_file(project: &Path) -> PathBuf {
    let dir = project.join(".skillrag/cache/embeddings");
    let files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

/// Every score of every hit is finite, and dense scores are cosines of unit vectors.
fn assert_sane(result: &Value) {
    let hits = result["hits"].as_array().unwrap();
    assert!(!hits.is_empty(), "{result}");
    for h in hits {
        let fused = h["scores"]["fused"].as_f64().unwrap();
        assert!(fused.is_finite() && fused > 0.0, "{h}");
        if let Some(dense) = h["scores"]["dense"].as_f64() {
            assert!(dense.is_finite() && dense.abs() <= 1.001, "dense score {dense}: {h}");
        }
    }
}

/// (chunk text, dense score) of the hits, to compare a search before and after a repair.
fn dense_scores(result: &Value) -> Vec<(String, Option<f64>)> {
    let hits = result["hits"].as_array().unwrap();
    hits.iter().map(|h| (h["text"].as_str().unwrap().to_string(), h["scores"]["dense"].as_f64())).collect()
}

fn search(project: &Path, query: &str, skill: &str) -> Value {
    json(project, &["search", query, "--skill", skill, "-k", "5"])
}

#[test]
fn flipped_cache_bytes_are_dropped_and_recomputed() {
    let tmp = common::demo_indexed();
    let dir = tmp.path();
    let before = search(dir, ROUTER_Q, "router-faq");
    let cache = cache_file(dir);
    let len = std::fs::metadata(&cache).unwrap().len() as usize;
    // As in the audit: a few hundred bytes in the middle of the file.
    flip(&cache, len / 2, 300);

    let out = run(dir, &["index", "--rebuild"]);
    let err = stderr(&out);
    assert!(err.contains("embedding cache:") && err.contains("damaged record(s)"), "{err}");
    let after = search(dir, ROUTER_Q, "router-faq");
    assert_sane(&after);
    for ((text_a, a), (text_b, b)) in dense_scores(&before).iter().zip(dense_scores(&after).iter()) {
        assert_eq!(text_a, text_b);
        assert!(a.zip(*b).is_none_or(|(a, b)| (a - b).abs() < 1e-4), "{a:?} vs {b:?}");
    }
    // The damaged records were dropped from the file: reported once only.
    let report = json(dir, &["index", "--rebuild"]);
    assert_eq!(report["cache_dropped"], 0, "{report}");
    let doctor = json(dir, &["doctor"]);
    assert_eq!(doctor["problems"], 0, "{doctor}");
}

#[test]
fn flipped_vector_bytes_are_reported_by_doctor_and_rebuilt_by_index() {
    let tmp = common::demo_indexed();
    let dir = tmp.path();
    let before = search(dir, ROUTER_Q, "router-faq");
    let generation = current(dir, "router-faq");
    // Two bytes of one float: still finite, only a checksum can tell.
    flip(&generation.join("vectors.f32"), 1000, 2);

    let out = skillrag(dir, &["doctor"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "doctor fails while something is damaged");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &stderr(&out);
    assert!(text.contains("router-faq") && text.contains("vectors.f32"), "{text}");
    assert!(text.contains("doctor --repair"), "it says what repairs it: {text}");
    let out = skillrag(dir, &["doctor", "--json"]).output().unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["problems"], 1, "{report}");
    let skill = report["skills"].as_array().unwrap().iter().find(|s| s["skill"] == "router-faq").unwrap();
    assert_eq!(skill["state"], "damaged", "{skill}");

    // The damaged generation never serves: searching it names the damage and the repair.
    let out = skillrag(dir, &["search", ROUTER_Q, "--skill", "router-faq"]).output().unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("index --skill router-faq --rebuild"), "{}", stderr(&out));

    // A plain `index` does not call it up to date: it quarantines and rebuilds.
    let out = run(dir, &["index"]);
    let err = stderr(&out);
    assert!(err.contains("router-faq") && err.contains("damaged") && err.contains("moved"), "{err}");
    assert!(!generation.exists(), "moved aside");
    let aside = std::fs::read_dir(skill_dir(dir, "router-faq"))
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().contains(".corrupt-"));
    assert!(aside, "the damaged generation is kept aside for a look");
    let after = search(dir, ROUTER_Q, "router-faq");
    assert_sane(&after);
    assert_eq!(dense_scores(&before), dense_scores(&after));
    let out = run(dir, &["doctor"]);
    assert!(stderr(&out).contains("no damage found"), "{}", stderr(&out));
}

/// Damages a project (or store) folder in one way.
type Damage = fn(&std::path::Path);

#[test]
fn every_bad_current_is_repaired_by_rebuild() {
    let tmp = common::demo_indexed();
    let dir = tmp.path();
    let labor_current = |d: &Path| skill_dir(d, "labor-law").join("CURRENT");
    let cases: [(&str, Damage); 6] = [
        ("empty", |d| std::fs::write(skill_dir(d, "labor-law").join("CURRENT"), "").unwrap()),
        ("garbage", |d| std::fs::write(skill_dir(d, "labor-law").join("CURRENT"), [0xffu8, 0, 0x13, b'x']).unwrap()),
        ("escape", |d| std::fs::write(skill_dir(d, "labor-law").join("CURRENT"), "../../../../etc").unwrap()),
        ("another skill's generation", |d| {
            let other = std::fs::read_to_string(skill_dir(d, "router-faq").join("CURRENT")).unwrap();
            std::fs::write(skill_dir(d, "labor-law").join("CURRENT"), format!("../router-faq/{}", other.trim()))
                .unwrap()
        }),
        ("a folder", |d| {
            std::fs::remove_file(skill_dir(d, "labor-law").join("CURRENT")).unwrap();
            std::fs::create_dir(skill_dir(d, "labor-law").join("CURRENT")).unwrap();
        }),
        (".skillrag/index is a file", |d| {
            std::fs::remove_dir_all(d.join(".skillrag/index")).unwrap();
            std::fs::write(d.join(".skillrag/index"), "not a folder").unwrap();
        }),
    ];
    for (name, damage) in cases {
        damage(dir);
        // While damaged, the other skills answer.
        if name != ".skillrag/index is a file" {
            assert_sane(&search(dir, ROUTER_Q, "router-faq"));
        }
        let out = skillrag(dir, &["index", "--rebuild"]).output().unwrap();
        assert!(out.status.success(), "{name}: index --rebuild failed: {}", stderr(&out));
        assert!(stderr(&out).contains("moved it aside"), "{name}: a notice says what was moved: {}", stderr(&out));
        let result = search(dir, LABOR_Q, "labor-law");
        assert_sane(&result);
        assert!(result["hits"][0]["text"].as_str().unwrap().contains("第十九条"), "{name}: {result}");
    }

    // doctor finds one too, and --repair repairs it.
    std::fs::write(labor_current(dir), "../../../../etc").unwrap();
    let out = skillrag(dir, &["doctor"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = run(dir, &["doctor", "--repair"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("repaired:") && text.contains("labor-law"), "{text}");
    assert_sane(&search(dir, LABOR_Q, "labor-law"));
}

#[test]
fn one_damaged_skill_does_not_break_the_others() {
    let tmp = common::demo_indexed();
    let dir = tmp.path();
    std::fs::write(skill_dir(dir, "tea-brewing").join("CURRENT"), "../../../../etc").unwrap();
    flip(&current(dir, "labor-law").join("vectors.f32"), 64, 3);
    let names_both = |text: &str| {
        for skill in ["tea-brewing", "labor-law"] {
            assert!(text.contains(&format!("skill `{skill}`")), "{skill} is not named: {text}");
            assert!(text.contains(&format!("index --skill {skill} --rebuild")), "no repair for {skill}: {text}");
        }
    };

    let out = run(dir, &["skills"]);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(table.lines().any(|l| l.starts_with("router-faq") && l.contains("fresh")), "{table}");
    assert!(table.lines().any(|l| l.starts_with("tea-brewing") && l.contains("damaged")), "{table}");
    names_both(&stderr(&out));
    let skills = json(dir, &["skills"]);
    let state = |id: &str| {
        skills.as_array().unwrap().iter().find(|s| s["skill"] == id).map(|s| s["index"]["state"].clone()).unwrap()
    };
    assert_eq!(
        (state("labor-law"), state("tea-brewing"), state("router-faq")),
        ("damaged".into(), "damaged".into(), "fresh".into())
    );

    let out = run(dir, &["search", ROUTER_Q]);
    names_both(&stderr(&out));
    let result = json(dir, &["search", ROUTER_Q]);
    assert_sane(&result);
    assert!(result["hits"].as_array().unwrap().iter().all(|h| h["skill"] == "router-faq"), "{result}");
    let notices: Vec<String> =
        result["skills"].as_array().unwrap().iter().filter_map(|s| s["notice"].as_str().map(str::to_string)).collect();
    names_both(&notices.join("\n"));

    let out = skillrag(dir, &["ask", ROUTER_Q, "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    names_both(&stderr(&out));
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["route"]["skills"][0], "router-faq", "{answer}");
    assert!(answer["refusal"].is_null(), "{answer}");

    // The server and MCP skip the damaged skills the same way, and say so in their skill lists.
    {
        let server = crate::server::Server::start(dir, "127.0.0.1:0", &[]);
        let (status, body) = server.post_json("/v1/ask", &[], &serde_json::json!({"query": ROUTER_Q}).to_string());
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["route"]["skills"][0], "router-faq", "{answer}");
        let (status, body) = server.send("GET", "/v1/skills", &[], "");
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("damaged") && body.contains("tea-brewing"), "{body}");
    }
    let mcp = [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "ask", "arguments": {"query": ROUTER_Q}}}),
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "list_skills", "arguments": {}}}),
    ];
    let input: String = mcp.iter().map(|m| format!("{m}\n")).collect();
    let (answers, out) = common::json_lines(skillrag(dir, &["mcp"]), &input);
    let by_id = |id: u64| answers.iter().find(|a| a["id"] == id).map(|a| a["result"].to_string()).unwrap_or_default();
    assert!(
        by_id(2).contains("router-faq") && !by_id(2).contains("\"isError\":true"),
        "{}\n{}",
        by_id(2),
        stderr(&out)
    );
    assert!(by_id(3).contains("damaged"), "{}", by_id(3));

    // And one rebuild repairs both.
    run(dir, &["index", "--rebuild"]);
    let result = json(dir, &["search", LABOR_Q]);
    assert_sane(&result);
    assert!(result["skills"].as_array().unwrap().iter().all(|s| s["notice"].is_null()), "{result}");
}
