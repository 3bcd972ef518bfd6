//! Settings and resources that one skill gets wrong: a chunk size that cannot work, a file
//! that yields more chunks than allowed, a disk that fills up while writing. Each is reported
//! once with the file or skill it belongs to, and every other skill is still indexed.

use crate::common::{demo, json, run, skillrag, stderr};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `index --json` with BM25 only (small and fast: the point is what happens around it).
fn index_json(dir: &Path) -> (Value, std::process::Output) {
    let out = skillrag(dir, &["index", "--json"]).env("SKILLRAG_EMBED_MODEL", "none").output().expect("index");
    let report = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (report, out)
}

fn skill_report<'a>(report: &'a Value, skill: &str) -> &'a Value {
    report["skills"].as_array().and_then(|s| s.iter().find(|r| r["skill"] == skill)).unwrap_or(&Value::Null)
}

fn set_metadata(project: &Path, skill: &str, line: &str) {
    let path = project.join("skills").join(skill).join("SKILL.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let text = text.replacen("metadata:\n", &format!("metadata:\n  {line}\n"), 1);
    assert!(text.contains(line), "{skill}'s SKILL.md has no metadata block");
    std::fs::write(path, text).unwrap();
}

#[test]
fn a_chunk_size_that_cannot_work_is_linted_and_the_skill_still_indexes() {
    let project = demo();
    set_metadata(project.path(), "labor-law", "chunk_size: \"1\"");
    let lint = run(project.path(), &["lint"]);
    let said = format!("{}{}", String::from_utf8_lossy(&lint.stdout), stderr(&lint));
    assert!(
        said.lines().any(|l| l.contains("labor-law/SKILL.md") && l.contains("`chunk_size` must be at least 16")),
        "lint names the file and the setting:\n{said}"
    );
    let (report, out) = index_json(project.path());
    assert!(out.status.success(), "{}", stderr(&out));
    for skill in ["labor-law", "router-faq", "tea-brewing"] {
        assert!(skill_report(&report, skill)["chunks"].as_u64().unwrap_or(0) > 0, "{skill}: {report}");
    }
    let skills = json(project.path(), &["skills"]);
    assert_eq!(skills.as_array().map(Vec::len), Some(3), "{skills}");
}

#[test]
fn a_file_with_too_many_chunks_is_refused_and_the_rest_indexed() {
    let project = demo();
    let config = project.path().join("skillrag.toml");
    let text =
        std::fs::read_to_string(&config).unwrap().replacen("[index]\n", "[index]\nmax_chunks_per_file = 40\n", 1);
    std::fs::write(&config, text).unwrap();
    let many: String = (0..400).map(|i| format!("Paragraph {i} says something about item {i}.\n\n")).collect();
    std::fs::write(project.path().join("skills/router-faq/knowledge/runaway.md"), many).unwrap();
    let (report, out) = index_json(project.path());
    assert!(out.status.success(), "{}", stderr(&out));
    let refusal =
        report["diagnostics"].as_array().unwrap().iter().find(|d| d["path"].as_str().unwrap().ends_with("runaway.md"));
    let message = refusal.map(|d| d["message"].as_str().unwrap().to_string()).unwrap_or_default();
    assert!(message.contains("over the limit of 40") && message.contains("max_chunks_per_file"), "{report}");
    let router = skill_report(&report, "router-faq");
    assert_eq!(router["files_failed"], 1, "{router}");
    assert!(router["chunks"].as_u64().unwrap() > 0, "{router}");
}

/// A full disk while writing two skills: each says so once, in plain words, the run goes on
/// to the next skill, and the previous generations still answer. The disk is a 4 MB tmpfs in
/// a private mount namespace (`unshare`), filled up before the run.
#[test]
fn a_full_disk_is_said_once_per_skill_and_the_previous_index_serves() {
    if !Command::new("unshare").args(["-rm", "true"]).status().is_ok_and(|s| s.success()) {
        eprintln!("skipped: `unshare -rm` (a private mount namespace) is not available here");
        return;
    }
    let project = demo();
    let dir = project.path();
    let (_, out) = index_json(dir);
    assert!(out.status.success(), "{}", stderr(&out));
    for (file, extra) in [
        ("skills/labor-law/knowledge/extra.md", "# 补充\n\n用人单位应当按月支付工资。\n"),
        ("skills/router-faq/knowledge/extra.md", "# Extra\n\nThe router has four LAN ports.\n"),
    ] {
        std::fs::write(dir.join(file), extra).unwrap();
    }
    let saved = tempfile::tempdir().unwrap();
    let binary = env!("CARGO_BIN_EXE_skillrag");
    // The index is copied onto the small tmpfs, the rest of it filled, then indexed.
    let script = format!(
        "set -e; cp -a {state}/. {saved}/; mount -t tmpfs -o size=4m tmpfs {state}; cp -a {saved}/. {state}/; \
         dd if=/dev/zero of={state}/filler bs=4k 2>/dev/null || true; \
         SKILLRAG_EMBED_MODEL=none {binary} -C {dir} index --json > {saved}/report.json 2> {saved}/stderr.txt || echo $? > {saved}/rc; \
         SKILLRAG_EMBED_MODEL=none {binary} -C {dir} search 'factory reset' --json > {saved}/search.json",
        state = dir.join(".skillrag").display(),
        saved = saved.path().display(),
        dir = dir.display(),
    );
    let status = Command::new("unshare").args(["-rm", "sh", "-c", &script]).status().expect("unshare");
    assert!(status.success(), "the namespace script failed");
    let read = |name: &str| std::fs::read_to_string(saved.path().join(name)).unwrap_or_default();
    let report: Value = serde_json::from_str(&read("report.json")).unwrap_or(Value::Null);
    let said = format!("{report}\n{}", read("stderr.txt"));
    assert_eq!(read("rc").trim(), "1", "a skill that was not indexed fails the run: {said}");
    for skill in ["labor-law", "router-faq"] {
        let message =
            format!("no space left on device while writing skill `{skill}`; its previous index is still serving");
        assert_eq!(said.matches(&message).count(), 2, "once in the diagnostics and once as the skill's error: {said}");
        assert!(skill_report(&report, skill)["error"].is_string(), "{said}");
    }
    assert!(!said.contains("IoError"), "no raw error: {said}");
    let search: Value = serde_json::from_str(&read("search.json")).unwrap_or(Value::Null);
    assert!(search["hits"].as_array().is_some_and(|h| !h.is_empty()), "the previous index answers: {search}");
}
