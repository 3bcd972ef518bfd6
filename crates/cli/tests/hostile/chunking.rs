//! Hostile inputs to the chunker (issue 46 item 16): one long paragraph of short sentences was
//! quadratic (1.1 s at 1 MB, 4.1 s at 2 MB, 14.9 s at 4 MB), and the chunk limit was checked
//! only after the whole file had been chunked.

use crate::common::{demo, diagnostic_for, lexical, run_bounded, stderr};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// One line of short sentences, `mb` MiB long.
fn one_line(mb: usize) -> String {
    let sentence = "The cat sat on the mat. ";
    sentence.repeat(mb * 1024 * 1024 / sentence.len())
}

fn index_bounded(dir: &Path, time: Duration) -> Value {
    let (out, _) = run_bounded(lexical(dir, &["index", "--json"]), time, 1500);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// 4 MB on one line indexes in seconds (it took 15 s in a release build before, about 20 s in a
/// debug one), with every chunk.
#[test]
fn a_four_megabyte_line_of_sentences_chunks_in_linear_time() {
    let project = demo();
    std::fs::write(project.path().join("skills/router-faq/knowledge/long-line.md"), one_line(4)).unwrap();
    let report = index_bounded(project.path(), Duration::from_secs(12));
    let router = report["skills"].as_array().and_then(|s| s.iter().find(|r| r["skill"] == "router-faq"));
    let chunks = router.and_then(|r| r["chunks"].as_u64()).unwrap_or(0);
    assert!(chunks > 10_000, "the long line is indexed whole: {report}");
}

/// Over the chunk limit, the file is refused as soon as the limit is passed, not after
/// chunking all of it: 12 MB on one line (about 32 000 chunks) against a limit of 1000.
#[test]
fn a_file_over_the_chunk_limit_is_refused_while_chunking() {
    let project = demo();
    let config = project.path().join("skillrag.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replacen("[index]\n", "[index]\nmax_chunks_per_file = 1000\n", 1)).unwrap();
    std::fs::write(project.path().join("skills/router-faq/knowledge/huge-line.md"), one_line(12)).unwrap();
    let report = index_bounded(project.path(), Duration::from_secs(30));
    let message = diagnostic_for(&report, "huge-line.md");
    assert!(message.contains("over the limit of 1000"), "{report}");
}
