//! Real-world documents through the real binary: PDF, DOCX, HTML and FAQ tables indexed next to
//! broken files that are reported one by one; statute text chunked by article; FAQ questions as
//! routing examples; and `index --watch`.

mod common;

use common::*;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/documents").join(name)
}

fn skill(dir: &Path, name: &str, metadata: &str) -> PathBuf {
    let skill = dir.join("skills").join(name);
    std::fs::create_dir_all(skill.join("knowledge")).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Test documents of every format.\n{metadata}---\n# {name}\n"),
    )
    .unwrap();
    skill.join("knowledge")
}

fn project() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("skillrag.toml"), "skills = [\"skills\"]\n").unwrap();
    tmp
}

fn hits(result: &Value) -> Vec<Value> {
    result["hits"].as_array().cloned().unwrap_or_default()
}

#[test]
fn rich_documents_are_indexed_and_broken_ones_reported_one_by_one() {
    let tmp = project();
    // Without OCR, whether or not this machine has Tesseract (tests/ocr.rs reads scans).
    std::fs::write(tmp.path().join("skillrag.toml"), "skills = [\"skills\"]\n[index]\nocr = false\n").unwrap();
    let knowledge = skill(tmp.path(), "docs", "");
    for name in [
        "manual.pdf",
        "two-column.pdf",
        "guide.docx",
        "policy.html",
        "faq.csv",
        "faq.jsonl",
        "encrypted.pdf",
        "truncated.pdf",
        "scanned.pdf",
        "zip-bomb.docx",
        "ragged.csv",
    ] {
        std::fs::copy(testdata(name), knowledge.join(name)).unwrap();
    }
    // An HTML page whose inline script is 10 MB.
    let script = "var x = 'tracking pixel payload';\n".repeat(10 * 1024 * 1024 / 33);
    std::fs::write(
        knowledge.join("heavy.html"),
        format!("<html><head><script>{script}</script></head><body><main><h1>Returns</h1><p>Refunds take fourteen days.</p></main></body></html>"),
    )
    .unwrap();

    let report = lexical_json(tmp.path(), &["index"]);
    let message = |file: &str| diagnostic_for(&report, file);
    assert!(message("encrypted.pdf").contains("encrypted"));
    assert!(message("truncated.pdf").contains("truncated"));
    assert!(message("scanned.pdf").contains("no text layer"));
    assert!(message("scanned.pdf").contains("OCR is not available: OCR is turned off (`[index] ocr = false`)"));
    assert!(message("zip-bomb.docx").contains("zip bomb"));
    assert!(message("ragged.csv").contains("expected"));
    let skill = &report["skills"][0];
    assert_eq!(skill["files_failed"], 5, "{report}");
    assert_eq!(skill["files"], 12);

    // Every good format is searchable, PDF hits carry their page.
    let pdf = lexical_json(tmp.path(), &["search", "绿茶 水温", "--skill", "docs"]);
    let hit = hits(&pdf).into_iter().find(|h| h["source"] == "knowledge/manual.pdf").expect("a manual.pdf hit");
    assert!(hit["pages"][0].as_u64().is_some_and(|p| p >= 1), "{hit}");
    let faq = lexical_json(tmp.path(), &["search", "reset the router", "--skill", "docs"]);
    let top = &hits(&faq)[0];
    assert!(top["source"].as_str().unwrap().starts_with("knowledge/faq."), "{top}");
    assert!(top["text"].as_str().unwrap().starts_with("Q: How do I reset the router?"), "{top}");
    assert_eq!(top["doc_type"], "faq");
    let html = lexical_json(tmp.path(), &["search", "refunds fourteen days", "--skill", "docs"]);
    assert_eq!(hits(&html)[0]["source"], "knowledge/heavy.html");
    let script = lexical_json(tmp.path(), &["search", "tracking pixel payload analytics", "--skill", "docs"]);
    assert!(
        hits(&script).iter().all(|h| !h["text"].as_str().unwrap().contains("tracking pixel")),
        "script text was indexed: {script}"
    );
    let docx = lexical_json(tmp.path(), &["sources", "docs"]);
    let guide = docx.as_array().unwrap().iter().find(|s| s["source"] == "knowledge/guide.docx").expect("guide.docx");
    assert!(guide["chunks"].as_u64().unwrap() > 0);

    // Citations name the page.
    let out = lexical(tmp.path(), &["ask", "绿茶的水温是多少？", "--skill", "docs"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("manual.pdf p."), "{text}");
}

#[test]
fn statute_text_is_chunked_by_article_with_the_chapter_in_the_heading() {
    let tmp = project();
    let knowledge = skill(tmp.path(), "law", "");
    std::fs::write(
        knowledge.join("contract-law.txt"),
        "中华人民共和国劳动合同法\n\n第一章 总则\n\n第一条 为了完善劳动合同制度，明确劳动合同双方当事人的权利和义务，制定本法。\n\n第二条 中华人民共和国境内的企业与劳动者建立劳动关系，适用本法。\n\n第二章 劳动合同的订立\n\n第十九条 劳动合同期限三个月以上不满一年的，试用期不得超过一个月。\n\n同一用人单位与同一劳动者只能约定一次试用期。\n\n第二十条 劳动者在试用期的工资不得低于本单位相同岗位最低档工资的百分之八十。\n",
    )
    .unwrap();
    lexical(tmp.path(), &["index"]).output().unwrap();
    let sources = lexical_json(tmp.path(), &["sources", "law"]);
    assert_eq!(sources[0]["doc_type"], "legal", "detected from the text: {sources}");
    let result = lexical_json(tmp.path(), &["search", "试用期", "--skill", "law"]);
    let hits = hits(&result);
    assert!(!hits.is_empty());
    for hit in &hits {
        let text = hit["text"].as_str().unwrap();
        assert!(text.starts_with("第"), "a chunk starts at an article: {text}");
        assert!(!text.contains("第二条") || !text.contains("第十九条"), "chapters mixed: {text}");
    }
    assert_eq!(hits[0]["heading"], "中华人民共和国劳动合同法 > 第二章 劳动合同的订立");
}

#[test]
fn faq_questions_become_routing_examples_when_the_skill_opts_in() {
    let tmp = project();
    let plain = skill(tmp.path(), "plain-faq", "");
    let opted = skill(tmp.path(), "router-faq", "metadata:\n  faq_examples: \"true\"\n");
    std::fs::copy(testdata("faq.csv"), plain.join("faq.csv")).unwrap();
    std::fs::copy(testdata("faq.csv"), opted.join("faq.csv")).unwrap();
    lexical(tmp.path(), &["index"]).output().unwrap();
    let status = lexical_json(tmp.path(), &["skills"]);
    let examples = |name: &str| {
        status.as_array().unwrap().iter().find(|s| s["skill"] == name).map(|s| s["examples"].as_u64().unwrap())
    };
    assert_eq!(examples("plain-faq"), Some(0));
    assert!(examples("router-faq").unwrap() >= 4, "{status}");
}

/// Reads the child's stderr on a thread and returns lines as they come.
fn lines_of(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

fn found(dir: &Path, query: &str, source: &str) -> bool {
    let result = lexical_json(dir, &["search", query, "--skill", "notes"]);
    hits(&result).iter().any(|h| h["source"] == source)
}

/// Polls until `found(..)` equals `want`, for at most `limit`; returns the time it took.
fn wait_until(dir: &Path, query: &str, source: &str, want: bool, limit: Duration) -> Option<Duration> {
    let started = Instant::now();
    while started.elapsed() < limit {
        if found(dir, query, source) == want {
            return Some(started.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

#[test]
fn index_watch_reindexes_changed_files_quickly() {
    let tmp = project();
    // Its knowledge includes a folder of the project other skills could share: watched too.
    let knowledge = skill(tmp.path(), "notes", "metadata:\n  knowledge: \"knowledge, /shared/glossary/**\"\n");
    let shared = tmp.path().join("shared/glossary");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(knowledge.join("a.md"), "# A\n\nThe first note is about gardening.\n").unwrap();
    let mut child = lexical(tmp.path(), &["index", "--watch", "--debounce-ms", "200"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = lines_of(&mut child);
    let ready = (0..1800)
        .find_map(|_| lines.recv_timeout(Duration::from_millis(100)).ok().filter(|l| l.starts_with("watching")));
    assert!(ready.is_some(), "the watcher never started");

    std::fs::write(knowledge.join("b.md"), "# B\n\nQuokkas live on Rottnest Island.\n").unwrap();
    let added = wait_until(tmp.path(), "quokkas rottnest", "knowledge/b.md", true, Duration::from_secs(180));
    std::fs::remove_file(knowledge.join("b.md")).unwrap();
    let removed = wait_until(tmp.path(), "quokkas rottnest", "knowledge/b.md", false, Duration::from_secs(180));
    std::fs::write(shared.join("c.md"), "# C\n\nA numbat eats termites.\n").unwrap();
    let shared_added =
        wait_until(tmp.path(), "numbat termites", "/shared/glossary/c.md", true, Duration::from_secs(180));
    let _ = child.kill();
    let _ = child.wait();
    let added = added.expect("a new file was not indexed within 180 s");
    removed.expect("a deleted file stayed in the index");
    shared_added.expect("a new file in a shared folder was not indexed within 180 s");
    eprintln!("watch: new file searchable after {added:?}");
    // Searching during the re-index never failed (lexical_json asserts success on each poll).
}
