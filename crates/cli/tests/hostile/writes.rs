//! Hostile inputs: the server's document writes (`serve --allow-writes`). Names a client means
//! but the API did not know, deletes through a folder link into another skill, a link planted
//! under the upload's temporary name, racing writes, too many parts, big bodies sent only to be
//! refused, and names that display as something else or twin another.

use crate::common::server::Server;
use crate::common::{demo, demo_indexed, peak_rss_mib};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// What the server may peak at in these tests (the model, the index, a re-index of a demo skill).
const SERVER_MIB: u64 = 1500;

fn writable(dir: &Path) -> Server {
    Server::start(dir, &["--allow-writes"], &[])
}

/// Fails when the server passed its memory bound at any time so far.
fn assert_bounded(server: &Server) {
    let peak = peak_rss_mib(server.child.id()).unwrap_or(0);
    assert!(peak < SERVER_MIB, "the server peaked at {peak} MiB (limit {SERVER_MIB} MiB)");
}

/// Waits (at most 120 s) until no re-index is running.
fn wait_idle(server: &Server) {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (_, body) = server.get_json("/v1/index");
        if body["job"]["state"] != "running" {
            return;
        }
        assert!(Instant::now() < deadline, "the re-index did not end: {body}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn message(body: &Value) -> String {
    body["error"]["message"].as_str().unwrap_or_default().to_string()
}

fn knowledge(project: &Path, skill: &str) -> std::path::PathBuf {
    project.join("skills").join(skill).join("knowledge")
}

#[test]
fn documents_are_found_by_their_bare_file_name_when_it_is_unambiguous() {
    let project = demo_indexed();
    let dir = knowledge(project.path(), "router-faq");
    std::fs::create_dir_all(dir.join("a")).unwrap();
    std::fs::create_dir_all(dir.join("b")).unwrap();
    std::fs::write(dir.join("a/twin.md"), "# Twin A\n\ntext").unwrap();
    std::fs::write(dir.join("b/twin.md"), "# Twin B\n\ntext").unwrap();
    let server = writable(project.path());

    // The name the client uploaded, not the path inside the skill.
    let (status, body) = server.get_json("/v1/skills/router-faq/documents/faq.md/chunks");
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["document"], "knowledge/faq.md", "{body}");
    assert!(!body["chunks"].as_array().unwrap().is_empty(), "{body}");

    // Two files of that name: neither is touched, and the answer names both.
    let (status, body) = server.send("DELETE", "/v1/skills/router-faq/documents/twin.md", None);
    assert_eq!(status, 409, "{body}");
    let said = message(&body);
    assert!(said.contains("knowledge/a/twin.md") && said.contains("knowledge/b/twin.md"), "{said}");
    assert!(dir.join("a/twin.md").is_file() && dir.join("b/twin.md").is_file());

    let (status, body) = server.send("DELETE", "/v1/skills/router-faq/documents/setup.md", None);
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["deleted"], "knowledge/setup.md", "{body}");
    assert!(!dir.join("setup.md").exists());
    wait_idle(&server);
    let (status, body) = server.send("DELETE", "/v1/skills/router-faq/documents/no-such.md", None);
    assert_eq!(status, 404, "{body}");
    assert_bounded(&server);
}

#[cfg(unix)]
#[test]
fn delete_does_not_follow_a_folder_link_into_another_skill() {
    let project = demo();
    let borrowed = knowledge(project.path(), "router-faq").join("borrowed");
    std::os::unix::fs::symlink("../../labor-law/knowledge", &borrowed).unwrap();
    let victim = knowledge(project.path(), "labor-law").join("labor-contract-law-03.md");
    assert!(borrowed.join("labor-contract-law-03.md").is_file(), "the link reads as the loader reads it");
    let server = writable(project.path());

    for name in ["knowledge%2Fborrowed%2Flabor-contract-law-03.md", "labor-contract-law-03.md"] {
        let (status, body) = server.send("DELETE", &format!("/v1/skills/router-faq/documents/{name}"), None);
        assert_eq!(status, 403, "{name}: {body}");
        assert!(message(&body).contains("link"), "{body}");
        assert!(victim.is_file(), "{name}: the other skill's file was deleted");
    }
    assert_bounded(&server);
}

#[cfg(unix)]
#[test]
fn a_link_planted_under_the_upload_temporary_name_is_not_followed() {
    let project = demo();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim.md");
    std::fs::write(&victim, "untouched").unwrap();
    let server = writable(project.path());
    let dir = knowledge(project.path(), "router-faq");
    // The name the server used: `.NAME.upload-<pid>.tmp`.
    let planted = dir.join(format!(".planted.md.upload-{}.tmp", server.child.id()));
    std::os::unix::fs::symlink(&victim, &planted).unwrap();

    let (status, body) = server.upload("/v1/skills/router-faq/documents", &[("planted.md", b"# Planted\n\nwritten")]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched", "the upload wrote through the link: {body}");
    assert_eq!(status, 202, "{body}");
    assert_eq!(std::fs::read_to_string(dir.join("planted.md")).unwrap(), "# Planted\n\nwritten");
    assert!(std::fs::symlink_metadata(&planted).unwrap().file_type().is_symlink(), "the planted link is left alone");
    assert_bounded(&server);
}

/// One round of racing writes: every answer says what happened on disk.
fn race_round(server: &Server, dir: &Path, round: usize) {
    let shared = format!("shared-{round}.md");
    std::fs::write(dir.join(&shared), "# Shared\n\nbefore").unwrap();
    let barrier = std::sync::Barrier::new(6);
    let answers: Vec<(String, u16, Value)> = std::thread::scope(|s| {
        let mut threads = Vec::new();
        for i in 0..4 {
            let (barrier, name) = (&barrier, format!("new-{round}-{i}.md"));
            threads.push(s.spawn(move || {
                let bytes = format!("# New {i}\n\nuploaded");
                barrier.wait();
                let (status, body) = server.upload("/v1/skills/router-faq/documents", &[(&name, bytes.as_bytes())]);
                (format!("upload {name}"), status, body)
            }));
        }
        let barrier = &barrier;
        let name = shared.clone();
        threads.push(s.spawn(move || {
            barrier.wait();
            let path = "/v1/skills/router-faq/documents?replace=true";
            let (status, body) = server.upload(path, &[(&name, b"# Shared\n\nreplaced")]);
            (format!("replace {name}"), status, body)
        }));
        let name = shared.clone();
        threads.push(s.spawn(move || {
            barrier.wait();
            let (status, body) =
                server.send("DELETE", &format!("/v1/skills/router-faq/documents/knowledge%2F{name}"), None);
            (format!("delete {name}"), status, body)
        }));
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for (what, status, body) in &answers {
        let said = message(body);
        assert!(*status == 202 || *status == 409, "{what}: {status} {body}");
        assert!(!said.contains(", but"), "{what}: half done and said so: {said}");
        let (verb, name) = what.split_once(' ').unwrap();
        let on_disk = std::fs::read_to_string(dir.join(name)).ok();
        match (verb, *status == 202) {
            ("upload", done) => assert_eq!(on_disk.is_some(), done, "{what}: {status} {body}"),
            ("replace", true) => assert_eq!(on_disk.as_deref(), Some("# Shared\n\nreplaced"), "{what}: {body}"),
            ("delete", true) => assert!(on_disk.is_none(), "{what}: {body}"),
            _ => {}
        }
    }
    let replaced = answers.iter().any(|(w, s, _)| w.starts_with("replace") && *s == 202);
    let deleted = answers.iter().any(|(w, s, _)| w.starts_with("delete") && *s == 202);
    assert!(!(replaced && deleted), "both the replace and the delete of {shared} say they happened: {answers:?}");
    if !replaced && !deleted {
        assert_eq!(std::fs::read_to_string(dir.join(&shared)).unwrap(), "# Shared\n\nbefore");
    }
}

#[test]
fn racing_uploads_and_deletes_report_what_happened() {
    let project = demo();
    let server = writable(project.path());
    let dir = knowledge(project.path(), "router-faq");
    for round in 0..3 {
        wait_idle(&server);
        race_round(&server, &dir, round);
    }
    assert_bounded(&server);
}

/// A multipart upload of one part, written on its own thread while the answer is read, so an
/// answer given before the body is read (and the connection closed) is still seen; 0 when the
/// connection closed unanswered.
fn raw_upload(server: &Server, path: &str, name: &str, size: usize) -> u16 {
    let addr = server.base.trim_start_matches("http://").to_string();
    let boundary = "hostile-writes-boundary";
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut writer = s.try_clone().unwrap();
    let head = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\"\r\n\
         Content-Type: text/markdown\r\n\r\n"
    );
    let tail = format!("\r\n--{boundary}--\r\n");
    let length = head.len() + size + tail.len();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {length}\r\n\r\n"
    );
    let sending = std::thread::spawn(move || {
        let chunk = vec![b'x'; 1 << 20];
        let mut go = || -> std::io::Result<()> {
            writer.write_all(request.as_bytes())?;
            writer.write_all(head.as_bytes())?;
            let mut left = size;
            while left > 0 {
                let n = left.min(chunk.len());
                writer.write_all(&chunk[..n])?;
                left -= n;
            }
            writer.write_all(tail.as_bytes())
        };
        let _ = go();
    });
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let _ = sending.join();
    let out = String::from_utf8_lossy(&out);
    out.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

#[test]
fn uploads_are_capped_in_files_and_refused_before_their_bodies_are_held() {
    let project = demo();
    let server = writable(project.path());
    let dir = knowledge(project.path(), "router-faq");

    // Too many parts: refused at once, nothing written.
    let names: Vec<String> = (0..1001).map(|i| format!("many-{i}.md")).collect();
    let files: Vec<(&str, &[u8])> = names.iter().map(|n| (n.as_str(), &b"# Many\n\nx"[..])).collect();
    let started = Instant::now();
    let (status, body) = server.upload("/v1/skills/router-faq/documents", &files);
    assert_eq!(status, 413, "{}", &body.to_string()[..body.to_string().len().min(300)]);
    assert!(message(&body).contains("files"), "{body}");
    assert!(started.elapsed() < Duration::from_secs(30), "took {:?}", started.elapsed());
    assert!(!dir.join("many-0.md").exists(), "a part of a refused upload was written");

    // Six 30 MB uploads of a name that exists (no `?replace=true`): refused without holding them.
    let before = peak_rss_mib(server.child.id()).unwrap();
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let threads: Vec<_> = (0..6)
            .map(|_| s.spawn(|| raw_upload(&server, "/v1/skills/router-faq/documents", "faq.md", 30 << 20)))
            .collect();
        threads.into_iter().map(|t| t.join().unwrap()).collect()
    });
    let after = peak_rss_mib(server.child.id()).unwrap();
    eprintln!("six refused 30 MB uploads: peak {before} -> {after} MiB, answers {statuses:?}");
    assert!(statuses.iter().all(|s| *s == 409 || *s == 0), "{statuses:?}");
    assert!(after - before < 100, "six refused 30 MB uploads took the server from {before} to {after} MiB");
    assert!(std::fs::read_to_string(dir.join("faq.md")).unwrap().starts_with('#'), "faq.md was replaced");

    // Feedback's `answer_id` is bounded like its `query`.
    let long = "a".repeat(10_000);
    let (status, body) =
        server.post_json("/v1/feedback", json!({"query": "reset?", "rating": "up", "answer_id": long}));
    assert_eq!(status, 422, "{body}");
    assert!(message(&body).contains("answer_id"), "{body}");
    assert_bounded(&server);
}

#[test]
fn upload_names_that_display_as_another_or_twin_one_are_refused() {
    let project = demo();
    let dir = knowledge(project.path(), "router-faq");
    std::fs::write(dir.join("caf\u{e9}.md"), "# Café\n\nNFC").unwrap();
    // A skill whose knowledge pattern names one file, which does not exist yet.
    let single = project.path().join("skills/single");
    std::fs::create_dir_all(&single).unwrap();
    std::fs::write(
        single.join("SKILL.md"),
        "---\nname: single\ndescription: One file of knowledge.\nmetadata:\n  knowledge: \"notes.md\"\n---\n# single\n",
    )
    .unwrap();
    let server = writable(project.path());

    for name in ["pwn11\u{202e}dm.txt", "a\u{200b}b.md", "\u{feff}bom.md", "x\u{2066}y.md", "soft\u{ad}hyphen.md"] {
        let (status, body) = server.upload("/v1/skills/router-faq/documents", &[(name, b"# X\n\ny")]);
        assert_eq!(status, 422, "{name:?}: {body}");
        assert!(!dir.join(name).exists(), "{name:?} was written");
    }

    // The NFD spelling of an existing NFC name is that document.
    let nfd = "cafe\u{301}.md";
    let (status, body) = server.upload("/v1/skills/router-faq/documents", &[(nfd, b"# Cafe\n\nNFD")]);
    assert_eq!(status, 409, "{body}");
    assert!(message(&body).contains("replace=true"), "{body}");
    let (status, body) = server.upload("/v1/skills/router-faq/documents?replace=true", &[(nfd, b"# Cafe\n\nNFD")]);
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["documents"][0]["name"], "knowledge/caf\u{e9}.md", "{body}");
    assert!(!dir.join(nfd).exists(), "an NFD twin was written");
    assert_eq!(std::fs::read_to_string(dir.join("caf\u{e9}.md")).unwrap(), "# Cafe\n\nNFD");

    // A pattern that names a file is no folder to upload into.
    wait_idle(&server);
    let (status, body) = server.upload("/v1/skills/single/documents", &[("more.md", b"# More\n\nz")]);
    assert_eq!(status, 422, "{body}");
    assert!(!single.join("notes.md").exists(), "a folder was made of the file the pattern names");
    assert_bounded(&server);
}
