//! Files built to cost far more to read than their size: each is refused within a bounded
//! time, with a message naming the file and the limit, and the rest of the skill is indexed.

use crate::common::{demo, skillrag, stderr};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// A one-page PDF whose page content is `content`, stored FlateDecode-compressed, with a
/// correct cross-reference table.
fn pdf_with_content(content: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(content).unwrap();
    let stream = encoder.finish().unwrap();
    let mut pdf = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    let objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R \
           /Resources << /Font << /F1 5 0 R >> >> >>"
            .to_vec(),
        [format!("<< /Length {} /Filter /FlateDecode >>\nstream\n", stream.len()).as_bytes(), &stream, b"\nendstream"]
            .concat(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
    ];
    for (i, body) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        pdf.extend_from_slice(body);
        pdf.extend_from_slice(b"\nendobj\n");
    }
    let xref = pdf.len();
    pdf.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes());
    for offset in offsets {
        pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).as_bytes(),
    );
    pdf
}

/// Runs `index` in `dir` and fails the test if it takes more than `limit`.
fn index_within(dir: &Path, limit: Duration) -> (serde_json::Value, Duration) {
    let started = Instant::now();
    let mut child = skillrag(dir, &["index", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("index ran past {limit:?} on a hostile file");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("output");
    let took = started.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    (serde_json::from_slice(&out.stdout).expect("index --json"), took)
}

/// The diagnostic of `index --json` for the file whose path ends with `file`.
fn refusal_of<'a>(report: &'a serde_json::Value, file: &str) -> &'a serde_json::Value {
    report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["path"].as_str().is_some_and(|p| p.ends_with(file)))
        .unwrap_or_else(|| panic!("the refusal names the file: {}", report["diagnostics"]))
}

#[test]
fn a_pdf_content_bomb_is_refused_quickly_and_the_rest_is_indexed() {
    let project = demo();
    let knowledge = project.path().join("skills/router-faq/knowledge");
    // About 50 MB of drawing commands, as in the audit, in a file of a few hundred KB.
    let bomb = pdf_with_content(&b"BT /F1 12 Tf 72 720 Td (bomb) Tj ET\n".repeat(50 * 1024 * 1024 / 36));
    assert!(bomb.len() < 400 * 1024, "{}", bomb.len());
    std::fs::write(knowledge.join("bomb.pdf"), &bomb).unwrap();
    let (report, took) = index_within(project.path(), Duration::from_secs(300));
    let refusal = refusal_of(&report, "knowledge/bomb.pdf");
    let message = refusal["message"].as_str().unwrap();
    assert!(message.contains("page 1") && message.contains("max_page_content_mb"), "and the limit: {message}");
    let router = report["skills"].as_array().unwrap().iter().find(|s| s["skill"] == "router-faq").unwrap();
    assert!(router["chunks"].as_u64().unwrap() > 0, "the other files are indexed: {router}");
    eprintln!("a 50 MB content bomb ({} KB) refused; index took {took:?}", bomb.len() / 1024);
}

#[test]
fn a_huge_file_a_single_5_mb_line_and_20000_tiny_files_are_refused_or_indexed() {
    let project = demo();
    // A 50 MB text file: over `index.max_file_mb`, refused by name before it is read.
    let paragraph = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor.\n\n";
    let huge = paragraph.repeat(50 * 1024 * 1024 / paragraph.len() + 1);
    std::fs::write(project.path().join("skills/router-faq/knowledge/huge.txt"), huge).unwrap();
    // A skill of one 5 MB line (no paragraph or sentence break to split at) and 20 000 tiny files.
    let skill = project.path().join("skills/sizes");
    std::fs::create_dir_all(skill.join("knowledge/tiny")).unwrap();
    std::fs::write(skill.join("SKILL.md"), "---\nname: sizes\ndescription: Files of hostile sizes.\n---\n# sizes\n")
        .unwrap();
    let words: String = (0..5 * 1024 * 1024 / 8).map(|i| format!("w{:05} ", i % 99_991)).collect();
    std::fs::write(skill.join("knowledge/one-line.txt"), format!("{words}zebracorn")).unwrap();
    for i in 0..20_000 {
        std::fs::write(skill.join(format!("knowledge/tiny/note-{i:05}.md")), format!("# Note {i}\n\nquokka{i}\n"))
            .unwrap();
    }
    // BM25 only: what is measured here is loading, chunking and writing (bench/index.sh times
    // the model on such files).
    let started = Instant::now();
    let out = skillrag(project.path(), &["index", "--json"]).env("SKILLRAG_EMBED_MODEL", "none").output().unwrap();
    let took = started.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(took < Duration::from_secs(180), "took {took:?}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let refusal = refusal_of(&report, "knowledge/huge.txt");
    assert!(refusal["message"].as_str().unwrap().contains("max_file_mb"), "{refusal}");
    let sizes = report["skills"].as_array().unwrap().iter().find(|s| s["skill"] == "sizes").unwrap();
    assert_eq!(sizes["files"], 20_001, "{sizes}");
    assert!(sizes["chunks"].as_u64().unwrap() > 20_000 + 1_000, "the line is split too: {sizes}");
    for (query, file) in [("zebracorn", "one-line.txt"), ("quokka12345", "note-12345.md")] {
        let out = skillrag(project.path(), &["search", query, "--skill", "sizes", "--json"])
            .env("SKILLRAG_EMBED_MODEL", "none")
            .output()
            .unwrap();
        let result: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(result["hits"][0]["source"].as_str().unwrap_or("").ends_with(file), "{query}: {result}");
    }
    eprintln!("50 MB file refused; 5 MB line + 20 000 files indexed in {took:?}");
}
