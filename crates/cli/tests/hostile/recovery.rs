//! Recovery: what is left behind by a crash, a full disk or a damaged file is picked up again,
//! or named with what to do about it. A server killed during an upload's re-index, a log line
//! that is not UTF-8, a disk that fills up during a re-index job, a damaged index asked, a
//! `knowledge` that is a file and an `index.lock` that is a folder.

use crate::common::server::Server;
use crate::common::{demo, demo_indexed, lexical, peak_rss_mib, run_bounded, skillrag, stderr};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const MINUTE: Duration = Duration::from_secs(60);

/// The statuses of a skill's documents, by name, as the server lists them.
fn statuses(server: &Server, skill: &str) -> Vec<(String, String)> {
    let (status, list) = server.get_json(&format!("/v1/skills/{skill}/documents"));
    assert_eq!(status, 200, "{list}");
    list["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["name"].as_str().unwrap().to_string(), d["status"].as_str().unwrap().to_string()))
        .collect()
}

/// Eighteen uploads, each a few pages of text, so the re-index has something to chew on.
fn uploads() -> Vec<(String, Vec<u8>)> {
    (0..18)
        .map(|i| {
            let body: String = (0..60)
                .map(|p| format!("Paragraph {p} of note {i}: the router keeps setting {i}-{p} after a restart.\n\n"))
                .collect();
            (format!("crash-note-{i:02}.md"), format!("# Crash note {i}\n\n{body}").into_bytes())
        })
        .collect()
}

/// Item 18: the server is killed (`kill -9`) right after accepting an upload, during its
/// re-index. Every accepted file is on disk; the next `serve` resumes the re-index on its own.
#[test]
fn an_upload_accepted_before_a_crash_is_indexed_when_serve_starts_again() {
    let project = demo_indexed();
    let dir = project.path();
    let files = uploads();
    {
        let mut server = Server::start(dir, &["--allow-writes"], &[]);
        let parts: Vec<(&str, &[u8])> = files.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
        let (status, body) = server.upload("/v1/skills/router-faq/documents", &parts);
        assert_eq!(status, 202, "{body}");
        // SIGKILL, as `kill -9`: nothing is flushed or finished.
        server.child.kill().unwrap();
        server.child.wait().unwrap();
    }
    for (name, bytes) in &files {
        let on_disk = std::fs::read(dir.join("skills/router-faq/knowledge").join(name)).unwrap();
        assert_eq!(&on_disk, bytes, "{name} was accepted, so it is on disk intact");
    }

    let server = Server::start(dir, &["--allow-writes"], &[]);
    let restarted = Instant::now();
    // Generous for a loaded 2-core machine: the re-index itself takes a few seconds.
    let deadline = restarted + 3 * MINUTE;
    loop {
        let listed = statuses(&server, "router-faq");
        let pending: Vec<&(String, String)> =
            listed.iter().filter(|(n, _)| n.contains("crash-note-")).filter(|(_, s)| s != "indexed").collect();
        let found = listed.iter().filter(|(n, _)| n.contains("crash-note-")).count();
        if found == files.len() && pending.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "3 minutes after the restart, {} of {} accepted uploads are still not indexed: {pending:?}",
            pending.len(),
            files.len()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    eprintln!("measured: all {} accepted uploads indexed {:?} after the restart", files.len(), restarted.elapsed());
    let (status, body) = server.post_json(
        "/v1/search",
        serde_json::json!({"query": "setting 7-12 after a restart", "skills": ["router-faq"], "k": 3}),
    );
    assert_eq!(status, 200, "{body}");
    assert!(body.to_string().contains("crash-note-07.md"), "the resumed index answers: {body}");
    let peak = peak_rss_mib(server.child.id()).unwrap_or(0);
    eprintln!("measured: the restarted server peaked at {peak} MiB");
    assert!(peak < 1500, "the restarted server peaked at {peak} MiB");
}

/// A gaps record and a feedback record, as the ask path writes them.
const GAP: &str =
    r#"{"time": 1700000000, "skill": "router-faq", "kind": "not_found", "query": "How do I flash the firmware?"}"#;
const GAP_2: &str = r#"{"time": 1700000100, "skill": null, "kind": "out_of_scope", "query": "明天天气怎么样？"}"#;
const FEEDBACK: &str = r#"{"id": "f-1", "time": 1700000000, "query": "How do I factory reset the router?", "rating": "up", "routed": ["router-faq"]}"#;

/// `good`, a line that is not UTF-8, then `good_2`: the log a crash or a stray editor leaves.
fn log_with_bad_line(path: &Path, good: &str, good_2: &str) {
    let mut bytes = format!("{good}\n").into_bytes();
    bytes.extend_from_slice(b"{\"query\": \"caf\xe9 \xff\xfe\"}\n");
    bytes.extend_from_slice(format!("{good_2}\n").as_bytes());
    std::fs::write(path, bytes).unwrap();
}

/// Item 19: one line that is not UTF-8 in the gaps or feedback log is skipped with a warning
/// that names it; `gaps`, `GET /v1/gaps` and `tune` read every other line.
#[test]
fn a_log_line_that_is_not_utf8_is_skipped_and_named() {
    let project = demo_indexed();
    let dir = project.path();
    log_with_bad_line(&dir.join(".skillrag/gaps.jsonl"), GAP, GAP_2);
    log_with_bad_line(&dir.join(".skillrag/feedback.jsonl"), FEEDBACK, FEEDBACK);

    let (out, _) = run_bounded(lexical(dir, &["gaps", "--json"]), MINUTE, 500);
    let err = stderr(&out);
    assert!(out.status.success(), "gaps failed: {err}");
    let gaps: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(gaps["gaps"].as_array().map(Vec::len), Some(2), "both readable gaps: {gaps}");
    for log in ["gaps.jsonl", "feedback.jsonl"] {
        assert!(
            err.lines().any(|l| l.contains(log) && l.contains("line 2 (not valid UTF-8)")),
            "the warning names {log}'s line: {err}"
        );
    }

    let (out, _) = run_bounded(skillrag(dir, &["tune"]), Duration::from_secs(300), 1500);
    let err = stderr(&out);
    assert!(out.status.success(), "tune failed: {err}");
    assert!(err.contains("feedback.jsonl") && err.contains("line 2 (not valid UTF-8)"), "{err}");

    let server = Server::start(dir, &[], &[("SKILLRAG_EMBED_MODEL", "none")]);
    let (status, body) = server.get_json("/v1/gaps");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["gaps"].as_array().map(Vec::len), Some(2), "{body}");
    let peak = peak_rss_mib(server.child.id()).unwrap_or(0);
    assert!(peak < 1000, "the server peaked at {peak} MiB");
}

/// `skillrag serve` run by `script` (which ends by exec'ing it), as a [`Server`].
fn server_from(mut cmd: Command) -> Server {
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start skillrag serve");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("[serve] {line}");
            if let Some(url) = line.split_whitespace().find(|w| w.starts_with("http://")) {
                let _ = tx.send(url.to_string());
            }
        }
    });
    let base = rx.recv_timeout(MINUTE).expect("skillrag serve did not report its address");
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(120)))
        .build()
        .into();
    Server { child, base, agent }
}

/// Item 21: the disk fills up during an upload's re-index (a 4 MB tmpfs holding the index, in a
/// private mount namespace, as in settings.rs). The job says `failed`, and its message says why.
#[test]
fn a_reindex_job_on_a_full_disk_says_it_failed_and_why() {
    if !Command::new("unshare").args(["-rm", "true"]).status().is_ok_and(|s| s.success()) {
        eprintln!("skipped: `unshare -rm` (a private mount namespace) is not available here");
        return;
    }
    let project = demo();
    let dir = project.path();
    let (out, _) = run_bounded(lexical(dir, &["index"]), MINUTE, 500);
    assert!(out.status.success(), "{}", stderr(&out));
    let saved = tempfile::tempdir().unwrap();
    let script = format!(
        "set -e; cp -a {state}/. {saved}/; mount -t tmpfs -o size=4m tmpfs {state}; cp -a {saved}/. {state}/; \
         dd if=/dev/zero of={state}/filler bs=4k 2>/dev/null || true; \
         exec {binary} -C {dir} serve --addr 127.0.0.1:0 --allow-writes",
        state = dir.join(".skillrag").display(),
        saved = saved.path().display(),
        dir = dir.display(),
        binary = env!("CARGO_BIN_EXE_skillrag"),
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["-rm", "sh", "-c", &script]);
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("SKILLRAG_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("SKILLRAG_EMBED_MODEL", "none");
    let server = server_from(cmd);
    let note = "# Disk\n\nThe router has four LAN ports and one WAN port.\n";
    let (status, body) = server.upload("/v1/skills/router-faq/documents", &[("full-disk.md", note.as_bytes())]);
    assert_eq!(status, 202, "the file itself fits (the knowledge folder is not on the full disk): {body}");
    let job = server.wait_for_job(body["job"]["id"].as_u64().unwrap());
    let message = job["message"].as_str().unwrap_or_default();
    assert_eq!(job["state"], "failed", "a job whose skill was not indexed failed: {job}");
    assert!(message.contains("no space left on device") && message.contains("router-faq"), "{job}");
    let peak = peak_rss_mib(server.child.id()).unwrap_or(0);
    assert!(peak < 1000, "the server peaked at {peak} MiB");
}

/// Item 24, first bullet: `ask` on a skill whose index is damaged says it is damaged and how to
/// repair it, not "has no index yet".
#[test]
fn asking_a_damaged_skill_names_the_damage_and_the_repair() {
    let project = demo_indexed();
    let dir = project.path();
    let current = dir.join(".skillrag/index/router-faq/CURRENT");
    std::fs::write(&current, "../../../../etc").unwrap();
    let (out, _) = run_bounded(
        skillrag(dir, &["ask", "How do I factory reset the router?", "--skill", "router-faq"]),
        MINUTE,
        1500,
    );
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    let error = err.lines().find(|l| l.starts_with("error:")).unwrap_or_default();
    assert!(!error.contains("no index yet"), "the index is damaged, not missing: {err}");
    assert!(error.contains("router-faq") && error.contains("corrupt"), "{err}");
    assert!(error.contains("index --skill router-faq --rebuild"), "it says how to repair it: {err}");
}

/// Item 24, third bullet: a skill whose `knowledge` is a file, not a folder, is told so by
/// `lint` and `index` (before, it indexed nothing and said nothing).
#[test]
fn a_knowledge_file_where_the_folder_belongs_is_diagnosed() {
    let project = demo();
    let dir = project.path();
    let knowledge = dir.join("skills/router-faq/knowledge");
    std::fs::remove_dir_all(&knowledge).unwrap();
    std::fs::write(&knowledge, "The router has four LAN ports.\n").unwrap();
    for args in [&["lint"][..], &["index"][..]] {
        let (out, _) = run_bounded(lexical(dir, args), MINUTE, 500);
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert!(
            said.lines().any(|l| l.contains("router-faq") && l.contains("`knowledge` is a file, not a folder")),
            "{args:?} names the file and the problem: {said}"
        );
    }
}

/// Item 24, fourth bullet: `index.lock` replaced by a folder is moved aside, named, and the
/// index runs (before: only "Is a directory").
#[test]
fn an_index_lock_that_is_a_folder_is_named_and_moved_aside() {
    let project = demo();
    let dir = project.path();
    let lock = dir.join(".skillrag/index.lock");
    std::fs::create_dir_all(lock.join("inside")).unwrap();
    let (out, _) = run_bounded(lexical(dir, &["index"]), MINUTE, 500);
    let err = stderr(&out);
    assert!(out.status.success(), "index failed: {err}");
    assert!(err.contains(&lock.display().to_string()) && err.contains("moved it aside"), "{err}");
    assert!(lock.is_file(), "the lock is a file again");
}
