//! The knowledge-base workbench (issue 20) over real HTTP and the real CLI: documents uploaded,
//! listed with their parse status and chunks, deleted (each followed by the same incremental
//! re-index), saved conversations, feedback on answers and what `tune` and `gaps` make of it,
//! the retrieval-testing controls, and the small things real clients hit.

mod common;

use common::server::Server;
use common::{demo_indexed, json_lines, run, skillrag};
use serde_json::{json, Value};
use std::path::Path;

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/documents").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn document<'a>(list: &'a Value, name: &str) -> Option<&'a Value> {
    list["documents"].as_array().unwrap().iter().find(|d| d["name"] == name)
}

fn search_sources(server: &Server, query: &str, skill: &str) -> Vec<String> {
    let (status, body) = server.post_json("/v1/search", json!({"query": query, "skills": [skill], "k": 5}));
    assert_eq!(status, 200, "{body}");
    body["hits"].as_array().unwrap().iter().map(|h| h["source"].as_str().unwrap().to_string()).collect()
}

#[test]
fn documents_are_uploaded_listed_and_deleted_with_a_reindex() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &["--allow-writes"], &[]);
    let (status, list) = server.get_json("/v1/skills/tea-brewing/documents");
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["writable"], true);
    let before = list["documents"].as_array().unwrap().len();
    let first_indexed: Vec<(Value, Value)> =
        list["documents"].as_array().unwrap().iter().map(|d| (d["name"].clone(), d["indexed_at"].clone())).collect();
    assert!(before > 0 && list["documents"].as_array().unwrap().iter().all(|d| d["status"] == "indexed"), "{list}");

    // A DOCX and a PDF in one upload; the re-index job starts at once.
    let (manual, guide) = (fixture("manual.pdf"), fixture("guide.docx"));
    let (status, body) = server
        .upload("/v1/skills/tea-brewing/documents", &[("C:\\fakepath\\manual.pdf", &manual), ("guide.docx", &guide)]);
    assert_eq!(status, 202, "{body}");
    let names: Vec<&str> = body["documents"].as_array().unwrap().iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["knowledge/manual.pdf", "knowledge/guide.docx"]);
    assert!(project.path().join("skills/tea-brewing/knowledge/manual.pdf").is_file());
    let job = server.wait_for_job(body["job"]["id"].as_u64().unwrap());
    assert_eq!(job["state"], "done", "{job}");
    assert_eq!(job["report"]["skills"][0]["files_changed"], 2, "{job}");

    let (_, list) = server.get_json("/v1/skills/tea-brewing/documents");
    let pdf = document(&list, "knowledge/manual.pdf").unwrap_or_else(|| panic!("{list}"));
    assert_eq!(pdf["status"], "indexed", "{pdf}");
    assert_eq!(pdf["format"], "PDF");
    assert_eq!(pdf["pages"], 3, "{pdf}");
    assert!(pdf["encoding"].is_null(), "a PDF has no character encoding: {pdf}");
    // "last indexed" is each file's own: the files the upload did not change keep their time.
    for (name, at) in &first_indexed {
        let now = list["documents"].as_array().unwrap().iter().find(|d| &d["name"] == name).unwrap();
        assert_eq!(&now["indexed_at"], at, "{now}");
    }
    assert!(pdf["chunks"].as_u64().unwrap() > 0 && pdf["indexed_at"].as_i64().unwrap() > 0, "{pdf}");
    let docx = document(&list, "knowledge/guide.docx").unwrap();
    assert_eq!((docx["status"].as_str(), docx["format"].as_str()), (Some("indexed"), Some("DOCX")), "{docx}");

    // Its chunks, and the new knowledge answers searches.
    let (status, chunks) = server.get_json("/v1/skills/tea-brewing/documents/knowledge%2Fmanual.pdf/chunks");
    assert_eq!(status, 200, "{chunks}");
    assert!(chunks["chunks"][0]["pages"].is_array(), "{chunks}");
    assert!(search_sources(&server, "Tea Brewing Manual", "tea-brewing").contains(&"knowledge/manual.pdf".into()));

    // The same name again: refused unless replacing; nothing written meanwhile.
    let (status, body) = server.upload("/v1/skills/tea-brewing/documents", &[("manual.pdf", &manual)]);
    assert_eq!(status, 409, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("replace=true"), "{body}");
    let (status, body) = server.upload("/v1/skills/tea-brewing/documents?replace=true", &[("manual.pdf", &manual)]);
    assert_eq!(status, 202, "{body}");
    server.wait_for_job(body["job"]["id"].as_u64().unwrap());
    // The same bytes again: indexing finds nothing changed, and neither does the list.
    let (_, list) = server.get_json("/v1/skills/tea-brewing/documents");
    assert_eq!(document(&list, "knowledge/manual.pdf").unwrap()["status"], "indexed", "{list}");

    // Checked like any other input: name, type, content; nothing is written.
    for (name, bytes, code) in [
        (".env", &b"SECRET=1"[..], 422),
        ("tool.exe", &b"MZ"[..], 415),
        ("fake.pdf", &b"<html>not a pdf</html>"[..], 415),
        ("notes.md", &b"\x00\x01binary"[..], 415),
    ] {
        let (status, body) = server.upload("/v1/skills/tea-brewing/documents", &[(name, bytes)]);
        assert_eq!(status, code, "{name}: {body}");
        assert!(!project.path().join("skills/tea-brewing/knowledge").join(name).exists(), "{name} was written");
    }
    let (status, body) = server.upload("/v1/skills/no-such-skill/documents", &[("a.md", b"# A")]);
    assert_eq!(status, 404, "{body}");

    // A broken PDF is saved, then reported by the re-index: failed, with the reason.
    let broken = fixture("truncated.pdf");
    let (status, body) = server.upload("/v1/skills/tea-brewing/documents", &[("truncated.pdf", &broken)]);
    assert_eq!(status, 202, "{body}");
    let job = server.wait_for_job(body["job"]["id"].as_u64().unwrap());
    // Problems are named by their path in the project, not the server's filesystem.
    let paths: Vec<&str> =
        job["report"]["diagnostics"].as_array().unwrap().iter().map(|d| d["path"].as_str().unwrap()).collect();
    assert!(paths.contains(&"skills/tea-brewing/knowledge/truncated.pdf"), "{job}");
    let (_, list) = server.get_json("/v1/skills/tea-brewing/documents");
    let failed = document(&list, "knowledge/truncated.pdf").unwrap();
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(!failed["errors"].as_array().unwrap().is_empty(), "{failed}");
    assert!(!failed.to_string().contains(project.path().to_str().unwrap()), "{failed}");

    // Delete: gone from disk, from the list and from search after the re-index.
    let (status, body) = server.send("DELETE", "/v1/skills/tea-brewing/documents/knowledge%2Fmanual.pdf", None);
    assert_eq!(status, 202, "{body}");
    server.wait_for_job(body["job"]["id"].as_u64().unwrap());
    assert!(!project.path().join("skills/tea-brewing/knowledge/manual.pdf").exists());
    let (_, list) = server.get_json("/v1/skills/tea-brewing/documents");
    assert!(document(&list, "knowledge/manual.pdf").is_none(), "{list}");
    assert!(!search_sources(&server, "Tea Brewing Manual", "tea-brewing").contains(&"knowledge/manual.pdf".into()));
    let (status, _) = server.send("DELETE", "/v1/skills/tea-brewing/documents/knowledge%2Fmanual.pdf", None);
    assert_eq!(status, 404);
    let (status, _) = server.send("DELETE", "/v1/skills/tea-brewing/documents/..%2FSKILL.md", None);
    assert_eq!(status, 400);
    assert!(project.path().join("skills/tea-brewing/SKILL.md").is_file());
}

#[test]
fn skills_are_created_edited_and_deleted_through_the_api() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &["--allow-writes"], &[]);
    let skills_dir = project.path().join("skills");
    let form = json!({
        "name": "coffee-brewing",
        "description": "Brewing coffee at home: grind size, water temperature, ratios: espresso and pour-over.",
        "triggers": ["espresso", "pour-over", "grind size"],
        "boundary": "Supports: brewing coffee at home.\nDoes not support: buying machines.",
        "examples": ["What grind size is right for espresso?", "How hot should the water be for pour-over?"],
        "instructions": "Answer from the brewing guide and cite it.",
    });

    // A form that would not read back as asked is refused by field; nothing is written.
    for (change, field) in [
        (json!({"name": "Coffee Brewing"}), "name"),
        (json!({"triggers": ["espresso, latte"]}), "triggers"),
        (json!({"examples": ["one\ntwo"]}), "examples"),
        (json!({"description": " "}), "description"),
    ] {
        let mut body = form.clone();
        body.as_object_mut().unwrap().extend(change.as_object().unwrap().clone());
        let (status, reply) = server.post_json("/v1/skills", body);
        assert_eq!(status, 422, "{reply}");
        assert_eq!(reply["error"]["field"], field, "{reply}");
    }
    let (status, reply) = server.post_json("/v1/skills", json!({"name": "x", "description": "d", "colour": "red"}));
    assert_eq!(status, 422, "unknown fields are refused: {reply}");
    assert!(!skills_dir.join("coffee-brewing").exists());

    // Created whole, indexed, and served at once.
    let (status, created) = server.post_json("/v1/skills", form.clone());
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["path"], "skills/coffee-brewing/SKILL.md", "{created}");
    assert_eq!(server.wait_for_job(created["job"]["id"].as_u64().unwrap())["state"], "done");
    assert!(skills_dir.join("coffee-brewing/knowledge").is_dir());
    let (status, card) = server.get_json("/v1/skills/coffee-brewing");
    assert_eq!(status, 200, "{card}");
    let lint = run(project.path(), &["lint", "coffee-brewing"]);
    assert!(lint.status.success(), "{}", common::stderr(&lint));
    let (status, reply) = server.post_json("/v1/skills", form.clone());
    assert_eq!(status, 409, "{reply}");

    // Knowledge uploaded into it answers, cited.
    let guide =
        b"# Espresso\n\nFor espresso, grind the beans fine, like table salt, and pull 18 g in 25 to 30 seconds.\n";
    let (status, body) = server.upload("/v1/skills/coffee-brewing/documents", &[("espresso.md", guide)]);
    assert_eq!(status, 202, "{body}");
    server.wait_for_job(body["job"]["id"].as_u64().unwrap());
    let (status, answer) = server
        .post_json("/v1/ask", json!({"query": "What grind size is right for espresso?", "skill": "coffee-brewing"}));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["citations"][0]["source"], "knowledge/espresso.md", "{answer}");

    // SKILL.md read and written as text; a file lint finds an error in is refused with its lines.
    let (status, text, headers) = server.get("/v1/skills/coffee-brewing/skill-md");
    assert_eq!(status, 200);
    assert!(headers.iter().any(|(k, v)| k == "content-type" && v.starts_with("text/markdown")), "{headers:?}");
    assert!(text.contains("name: coffee-brewing") && text.contains("## Examples"), "{text}");
    let renamed = text.replace("name: coffee-brewing", "name: tea-time");
    let (status, reply) = server.put_text("/v1/skills/coffee-brewing/skill-md", &renamed);
    assert_eq!(status, 422, "{reply}");
    let diagnostics = reply["error"]["diagnostics"].as_array().unwrap();
    assert!(
        diagnostics.iter().any(|d| d["severity"] == "error" && d["message"].as_str().unwrap().contains("folder name")),
        "{reply}"
    );
    assert!(!reply.to_string().contains(project.path().to_str().unwrap()), "no server paths: {reply}");
    let (status, reply) = server.put_text("/v1/skills/coffee-brewing/skill-md", "---\nname: coffee-brewing\n");
    assert_eq!(status, 422, "{reply}");
    assert_eq!(reply["error"]["diagnostics"][0]["line"], 1, "{reply}");
    assert_eq!(std::fs::read_to_string(skills_dir.join("coffee-brewing/SKILL.md")).unwrap(), text, "unchanged");

    let edited = text.replace("Brewing coffee at home", "Brewing coffee and tea at home");
    let (status, reply) = server.put_text("/v1/skills/coffee-brewing/skill-md", &edited);
    assert_eq!(status, 200, "{reply}");
    server.wait_for_job(reply["job"]["id"].as_u64().unwrap());
    let (_, card) = server.get_json("/v1/skills/coffee-brewing");
    assert!(card.to_string().contains("Brewing coffee and tea at home"), "the edit is served: {card}");
    let (status, _) = server.put_text("/v1/skills/no-such-skill/skill-md", &edited);
    assert_eq!(status, 404);

    // Renamed: folder, SKILL.md and index follow; a bad or taken name is refused.
    let (status, reply) = server.send("PATCH", "/v1/skills/coffee-brewing", Some(json!({"name": "Home Coffee"})));
    assert_eq!((status, reply["error"]["field"].as_str()), (422, Some("name")), "{reply}");
    let (status, reply) = server.send("PATCH", "/v1/skills/coffee-brewing", Some(json!({"name": "tea-brewing"})));
    assert_eq!(status, 409, "{reply}");
    let (status, renamed) = server.send("PATCH", "/v1/skills/coffee-brewing", Some(json!({"name": "home-coffee"})));
    assert_eq!(status, 200, "{renamed}");
    assert_eq!(renamed["path"], "skills/home-coffee/SKILL.md", "{renamed}");
    server.wait_for_job(renamed["job"]["id"].as_u64().unwrap());
    assert!(
        !skills_dir.join("coffee-brewing").exists() && skills_dir.join("home-coffee/knowledge/espresso.md").is_file()
    );
    let text = std::fs::read_to_string(skills_dir.join("home-coffee/SKILL.md")).unwrap();
    assert!(text.contains("name: home-coffee") && text.contains("coffee and tea at home"), "{text}");
    assert!(!project.path().join(".skillrag/index/coffee-brewing").exists(), "the old index is dropped");
    let (status, _) = server.get_json("/v1/skills/coffee-brewing");
    assert_eq!(status, 404);
    let (status, answer) =
        server.post_json("/v1/ask", json!({"query": "What grind size is right for espresso?", "skill": "home-coffee"}));
    assert_eq!((status, answer["citations"][0]["source"].as_str()), (200, Some("knowledge/espresso.md")), "{answer}");

    // Deleted: moved to the trash, no longer served or indexed.
    let (status, deleted) = server.send("DELETE", "/v1/skills/home-coffee", None);
    assert_eq!(status, 200, "{deleted}");
    let trash = project.path().join(deleted["trash"].as_str().unwrap());
    assert!(trash.join("knowledge/espresso.md").is_file() && !skills_dir.join("home-coffee").exists());
    let (status, _) = server.get_json("/v1/skills/home-coffee");
    assert_eq!(status, 404);
    let (_, list) = server.get_json("/v1/skills");
    assert!(!list.to_string().contains("home-coffee"), "{list}");
    assert!(!project.path().join(".skillrag/index/home-coffee").exists(), "its index is dropped");
    let (status, _) = server.send("DELETE", "/v1/skills/home-coffee", None);
    assert_eq!(status, 404);
    let (status, _) = server.send("DELETE", "/v1/skills/..", None);
    assert_eq!(status, 400);
    let (status, answer) = server.post_json("/v1/ask", json!({"query": "绿茶用多少度的水？"}));
    assert_eq!((status, answer["route"]["skills"][0].as_str()), (200, Some("tea-brewing")), "{answer}");
}

#[test]
fn a_documents_preset_is_previewed_then_chosen_and_survives_reindexing() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &["--allow-writes"], &[]);
    let url = "/v1/skills/labor-law/documents/knowledge%2Flabor-contract-law-03.md";
    let doc_type = || {
        let (_, list) = server.get_json("/v1/skills/labor-law/documents");
        document(&list, "knowledge/labor-contract-law-03.md").unwrap()["doc_type"].as_str().unwrap().to_string()
    };
    assert_eq!(doc_type(), "legal", "detected as a statute");
    let (_, indexed) = server.get_json(&format!("{url}/chunks"));
    let indexed_count = indexed["chunks"].as_array().unwrap().len();

    // A preview cuts the document as asked and writes nothing.
    let (status, legal) = server.get_json(&format!("{url}/chunks?preset=auto"));
    assert_eq!(status, 200, "{legal}");
    assert_eq!((legal["preset"].as_str(), legal["chosen"].as_str()), (Some("legal"), None), "{legal}");
    assert_eq!(legal["chunks"].as_array().unwrap().len(), indexed_count, "auto is what the index holds");
    let (status, general) = server.get_json(&format!("{url}/chunks?preset=general"));
    assert_eq!((status, general["preset"].as_str()), (200, Some("general")), "{general}");
    let texts = |v: &Value| v["chunks"].as_array().unwrap().iter().map(|c| c["text"].to_string()).collect::<Vec<_>>();
    assert_ne!(texts(&general), texts(&legal), "another preset cuts other chunks");
    assert!(general["chunks"][0]["chars"].as_u64().unwrap() > 0);
    let (status, reply) = server.get_json(&format!("{url}/chunks?preset=poetry"));
    assert_eq!((status, reply["error"]["field"].as_str()), (422, Some("preset")), "{reply}");
    assert!(!project.path().join("skills/labor-law/chunk-edits.json").exists(), "a preview writes nothing");

    // Chosen: an edit of the old chunks is dropped with them, the document is chunked again, and
    // the choice holds across a re-index of everything.
    let chunk = indexed["chunks"][0]["chunk_id"].as_u64().unwrap();
    let (status, edited) =
        server.send("PATCH", &format!("/v1/skills/labor-law/chunks/{chunk}"), Some(json!({"keywords": ["probation"]})));
    assert_eq!(status, 202, "{edited}");
    server.wait_for_job(edited["job"]["id"].as_u64().unwrap());
    let (status, chosen) = server.send("PUT", &format!("{url}/preset"), Some(json!({"preset": "general"})));
    assert_eq!(status, 202, "{chosen}");
    assert_eq!((chosen["preset"].as_str(), chosen["dropped_edits"].as_u64()), (Some("general"), Some(1)), "{chosen}");
    assert_eq!(server.wait_for_job(chosen["job"]["id"].as_u64().unwrap())["state"], "done");
    assert_eq!(doc_type(), "general");
    let (_, now) = server.get_json(&format!("{url}/chunks"));
    let now_texts: Vec<String> = now["chunks"].as_array().unwrap().iter().map(|c| c["text"].to_string()).collect();
    assert_eq!(now_texts, texts(&general), "the index holds what the preview showed");
    let (_, job) = server.post_json("/v1/index", json!({"skills": ["labor-law"], "rebuild": true}));
    server.wait_for_job(job["job"]["id"].as_u64().unwrap());
    assert_eq!(doc_type(), "general", "the choice holds across a rebuild");
    let (_, back) = server.send("PUT", &format!("{url}/preset"), Some(json!({"preset": "auto"})));
    server.wait_for_job(back["job"]["id"].as_u64().unwrap());
    assert_eq!(doc_type(), "legal", "auto: back to detection");

    let (status, _) =
        server.send("PUT", "/v1/skills/labor-law/documents/nope.md/preset", Some(json!({"preset": "general"})));
    assert_eq!(status, 404);
    let (status, _) = server.send("PUT", &format!("{url}/preset"), Some(json!({"preset": "poetry"})));
    assert_eq!(status, 422);
}

#[test]
fn document_metadata_is_set_listed_and_filters_retrieval() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &["--allow-writes"], &[]);
    let url = |name: &str| format!("/v1/skills/router-faq/documents/{}/metadata", name.replace('/', "%2F"));
    let (status, set) =
        server.send("PUT", &url("knowledge/troubleshooting.md"), Some(json!({"metadata": {"team": " Support "}})));
    assert_eq!(status, 200, "{set}");
    assert_eq!(set["metadata"], json!({"team": "Support"}), "trimmed: {set}");
    let (_, list) = server.get_json("/v1/skills/router-faq/documents");
    assert_eq!(document(&list, "knowledge/troubleshooting.md").unwrap()["metadata"], json!({"team": "Support"}));
    assert!(document(&list, "knowledge/setup.md").unwrap().get("metadata").is_none(), "{list}");

    let search = |metadata: Value| {
        let body = json!({"query": "reset the router", "skills": ["router-faq"], "mode": "bm25", "metadata": metadata});
        server.post_json("/v1/search", body)
    };
    let (_, all) = search(json!({}));
    let sources = |v: &Value| v["hits"].as_array().unwrap().iter().map(|h| h["source"].to_string()).collect::<Vec<_>>();
    assert!(sources(&all).iter().any(|s| !s.contains("troubleshooting")), "unfiltered, other documents too: {all}");
    let (status, only) = search(json!({"team": "support"}));
    assert_eq!(status, 200, "{only}");
    assert!(!sources(&only).is_empty(), "{only}");
    assert!(
        sources(&only).iter().all(|s| s.contains("knowledge/troubleshooting.md")),
        "only the tagged document: {only}"
    );
    let (_, none) = search(json!({"team": "sales"}));
    assert!(none["hits"].as_array().unwrap().is_empty(), "no document matches: {none}");
    let (status, reply) = server.post_json(
        "/v1/search",
        json!({"query": "reset", "skills": ["router-faq", "tea-brewing"], "metadata": {"team": "support"}}),
    );
    assert_eq!(status, 422, "one skill only: {reply}");

    for bad in [json!({"bad key": "x"}), json!({"team": "two\nlines"}), json!({"team": ""})] {
        let (status, reply) = server.send("PUT", &url("knowledge/setup.md"), Some(json!({"metadata": bad})));
        assert_eq!((status, reply["error"]["field"].as_str()), (422, Some("metadata")), "{reply}");
    }
    let (status, _) = server.send("PUT", &url("knowledge/nope.md"), Some(json!({"metadata": {"team": "x"}})));
    assert_eq!(status, 404);
    let (status, cleared) = server.send("PUT", &url("knowledge/troubleshooting.md"), Some(json!({"metadata": {}})));
    assert_eq!((status, cleared["metadata"].clone()), (200, json!({})));
}

#[test]
fn a_disabled_skill_is_listed_kept_indexed_and_never_routed_to() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &["--allow-writes"], &[]);
    let tea = "绿茶用多少度的水？";
    let (_, answer) = server.post_json("/v1/ask", json!({"query": tea}));
    assert_eq!(answer["route"]["skills"][0], "tea-brewing", "{answer}");

    for bad in [json!({}), json!({"name": "x", "enabled": false}), json!({"enabled": "no"})] {
        let (status, reply) = server.send("PATCH", "/v1/skills/tea-brewing", Some(bad.clone()));
        assert_eq!(status, 422, "{bad} → {reply}");
    }
    let (status, reply) = server.send("PATCH", "/v1/skills/no-such-skill", Some(json!({"enabled": false})));
    assert_eq!(status, 404, "{reply}");

    let (status, off) = server.send("PATCH", "/v1/skills/tea-brewing", Some(json!({"enabled": false})));
    assert_eq!(status, 200, "{off}");
    assert_eq!((off["enabled"].as_bool(), off.get("job")), (Some(false), None), "{off}");
    assert!(project.path().join("skills/tea-brewing/.disabled").is_file());
    let (_, list) = server.get_json("/v1/skills");
    let row = list["skills"].as_array().unwrap().iter().find(|s| s["skill"] == "tea-brewing").cloned();
    assert_eq!(row.as_ref().map(|r| r["enabled"].clone()), Some(json!(false)), "still listed: {list}");
    let (status, answer) = server.post_json("/v1/ask", json!({"query": tea}));
    assert_eq!(status, 200);
    assert!(!answer.to_string().contains("tea-brewing/knowledge"), "not answered from it: {answer}");
    assert_ne!(answer["route"]["skills"][0], "tea-brewing", "{answer}");
    let (status, reply) = server.post_json("/v1/ask", json!({"query": tea, "skill": "tea-brewing"}));
    assert_eq!(status, 409, "{reply}");
    assert!(reply["error"]["message"].as_str().unwrap().contains("disabled"), "{reply}");
    let (status, _, _) = server.get("/v1/skills/tea-brewing/skill-md");
    assert_eq!(status, 200, "its SKILL.md can still be read");
    let index = run(project.path(), &["index"]);
    assert!(index.status.success(), "{}", common::stderr(&index));
    assert!(project.path().join(".skillrag/index/tea-brewing").is_dir(), "a full index keeps its index");

    let (status, on) = server.send("PATCH", "/v1/skills/tea-brewing", Some(json!({"enabled": true})));
    assert_eq!(status, 200, "{on}");
    assert_eq!(server.wait_for_job(on["job"]["id"].as_u64().unwrap())["state"], "done", "{on}");
    assert!(!project.path().join("skills/tea-brewing/.disabled").exists());
    let (_, answer) = server.post_json("/v1/ask", json!({"query": tea}));
    assert_eq!(answer["route"]["skills"][0], "tea-brewing", "answers again: {answer}");

    // The CLI does the same, and says what it did.
    let off = run(project.path(), &["skills", "--disable", "tea-brewing"]);
    assert!(off.status.success() && common::stderr(&off).contains("disabled"), "{}", common::stderr(&off));
    let listed = run(project.path(), &["skills"]);
    assert!(String::from_utf8_lossy(&listed.stdout).contains("disabled ·"), "{listed:?}");
    let asked = common::skillrag(project.path(), &["ask", tea, "--skill", "tea-brewing"]).output().unwrap();
    assert!(!asked.status.success() && common::stderr(&asked).contains("is disabled"), "{asked:?}");
    let on = run(project.path(), &["skills", "--enable", "tea-brewing"]);
    assert!(on.status.success(), "{}", common::stderr(&on));
    let unknown = common::skillrag(project.path(), &["skills", "--disable", "no-such-skill"]).output().unwrap();
    assert!(!unknown.status.success() && common::stderr(&unknown).contains("unknown skill"), "{unknown:?}");
}

/// The hits of `query` in router-faq as (source, ordinal, text).
fn hits(server: &Server, query: &str) -> Vec<(String, u64, String)> {
    let (status, body) = server.post_json("/v1/search", json!({"query": query, "skills": ["router-faq"], "k": 5}));
    assert_eq!(status, 200, "{body}");
    let hit = |h: &Value| {
        (h["source"].as_str().unwrap().into(), h["ordinal"].as_u64().unwrap(), h["text"].as_str().unwrap().into())
    };
    body["hits"].as_array().unwrap().iter().map(hit).collect()
}

#[test]
fn chunk_edits_hold_across_reindexing_until_their_document_changes() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &["--allow-writes"], &[]);
    let (status, listed) = server.get_json("/v1/skills/router-faq/documents/knowledge%2Ffaq.md/chunks");
    assert_eq!(status, 200, "{listed}");
    let chunks = listed["chunks"].as_array().unwrap().clone();
    assert!(chunks.len() >= 3 && chunks.iter().all(|c| c["enabled"] == true && c["edited"] == false), "{listed}");
    let (a, b, c) = (&chunks[0], &chunks[1], &chunks[2]);
    // A document chunked again (each edit does it) numbers its chunks anew: ids come from a
    // fresh listing, as the page takes them.
    let id = |c: &Value| {
        let (_, now) = server.get_json("/v1/skills/router-faq/documents/knowledge%2Ffaq.md/chunks");
        let found = now["chunks"].as_array().unwrap().iter().find(|n| n["ordinal"] == c["ordinal"]).cloned();
        found.unwrap_or_else(|| panic!("no chunk {} in {now}", c["ordinal"]))["chunk_id"].as_u64().unwrap()
    };
    let patch = |id: u64, body: Value| {
        let (status, reply) = server.send("PATCH", &format!("/v1/skills/router-faq/chunks/{id}"), Some(body));
        assert_eq!(status, 202, "{reply}");
        server.wait_for_job(reply["job"]["id"].as_u64().unwrap());
        reply
    };
    let at = |hits: &[(String, u64, String)], ordinal: &Value| {
        hits.iter().any(|h| h.0 == "knowledge/faq.md" && h.1 == ordinal.as_u64().unwrap())
    };

    // A text edit, a disabled chunk and keywords of its own, each applied by the re-index.
    let edited = "The guest network password is printed on the lid of the box.";
    let reply = patch(id(a), json!({"text": edited}));
    assert_eq!(reply["edit"]["text"], edited, "{reply}");
    let found = hits(&server, "guest network password printed lid box");
    assert!(found.first().is_some_and(|h| h.0 == "knowledge/faq.md" && h.2 == edited), "{found:?}");
    let b_text = b["text"].as_str().unwrap().to_string();
    assert!(at(&hits(&server, &b_text), &b["ordinal"]), "the chunk to disable is found by its own text first");
    patch(id(b), json!({"enabled": false}));
    assert!(!at(&hits(&server, &b_text), &b["ordinal"]), "a disabled chunk is not retrieved");
    patch(id(c), json!({"keywords": ["frobnicator"], "questions": ["Why does the frobnicator blink?"]}));
    assert!(at(&hits(&server, "frobnicator"), &c["ordinal"]), "its keyword finds the chunk");

    // Listed with what was done to each; the disabled one with the id it can be named by.
    let (_, listed) = server.get_json("/v1/skills/router-faq/documents/knowledge%2Ffaq.md/chunks");
    let by_ordinal =
        |o: &Value| listed["chunks"].as_array().unwrap().iter().find(|c| &c["ordinal"] == o).unwrap().clone();
    assert_eq!(
        (by_ordinal(&a["ordinal"])["edited"].as_bool(), by_ordinal(&a["ordinal"])["text"].as_str()),
        (Some(true), Some(edited))
    );
    let disabled = by_ordinal(&b["ordinal"]);
    assert_eq!(
        (disabled["enabled"].as_bool(), disabled["text"].as_str()),
        (Some(false), Some(b_text.as_str())),
        "{listed}"
    );
    assert_eq!(by_ordinal(&c["ordinal"])["keywords"], json!(["frobnicator"]));
    assert!(project.path().join("skills/router-faq/chunk-edits.json").is_file(), "kept beside the skill's documents");

    // A full rebuild chunks the document again: the edits hold.
    let (status, job) = server.post_json("/v1/index", json!({"skills": ["router-faq"], "rebuild": true}));
    assert_eq!(status, 202, "{job}");
    server.wait_for_job(job["job"]["id"].as_u64().unwrap());
    assert!(hits(&server, "guest network password printed lid box").first().is_some_and(|h| h.2 == edited));
    assert!(!at(&hits(&server, &b_text), &b["ordinal"]));
    // Enabled again, by the id it is listed with.
    patch(disabled["chunk_id"].as_u64().unwrap(), json!({"enabled": true}));
    assert!(at(&hits(&server, &b_text), &b["ordinal"]), "re-enabled");

    // Refused with the field named; nothing recorded.
    let before = std::fs::read_to_string(project.path().join("skills/router-faq/chunk-edits.json")).unwrap();
    for (body, status, field) in [
        (json!({}), 422, Some("body")),
        (json!({"text": "  "}), 422, Some("text")),
        (json!({"keywords": ["x".repeat(201)]}), 422, Some("keywords")),
        (json!({"colour": "red"}), 422, None),
    ] {
        let (got, reply) = server.send("PATCH", &format!("/v1/skills/router-faq/chunks/{}", id(c)), Some(body.clone()));
        assert_eq!(got, status, "{body}: {reply}");
        if let Some(field) = field {
            assert_eq!(reply["error"]["field"], field, "{reply}");
        }
    }
    let (status, _) = server.send("PATCH", "/v1/skills/router-faq/chunks/abc", Some(json!({"enabled": false})));
    assert_eq!(status, 400);
    let (status, _) = server.send("PATCH", "/v1/skills/router-faq/chunks/999999", Some(json!({"enabled": false})));
    assert_eq!(status, 404);
    let (status, _) = server.send("PATCH", "/v1/skills/no-such-skill/chunks/1", Some(json!({"enabled": false})));
    assert_eq!(status, 404);
    assert_eq!(std::fs::read_to_string(project.path().join("skills/router-faq/chunk-edits.json")).unwrap(), before);

    // The document changes: its edits are not applied, and the re-index says so.
    let faq = project.path().join("skills/router-faq/knowledge/faq.md");
    let mut text = std::fs::read_to_string(&faq).unwrap();
    text.push_str("\n\n## A new question\n\nA new answer.\n");
    std::fs::write(&faq, text).unwrap();
    let (_, job) = server.post_json("/v1/index", json!({"skills": ["router-faq"]}));
    let job = server.wait_for_job(job["job"]["id"].as_u64().unwrap());
    let said = job["report"]["diagnostics"].to_string();
    assert!(said.contains("knowledge/faq.md") && said.contains("earlier version"), "{job}");
    assert!(!hits(&server, "guest network password printed lid box").iter().any(|h| h.2 == edited));
}

#[test]
fn gaps_become_drafts_that_are_approved_into_the_knowledge() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &["--allow-writes"], &[]);
    let price = "What is the price of the Nimbus AX3000 in euros?";
    let ask = |query: &str| server.post_json("/v1/ask", json!({"query": query, "skill": "router-faq"})).1;
    assert_eq!(ask(price)["refusal"]["kind"], "not_found", "the knowledge lacks it");
    let gap_of = |query: &str| {
        let (_, gaps) = server.get_json("/v1/gaps");
        gaps["gaps"].as_array().unwrap().iter().find(|g| g["query"] == query).cloned()
    };
    let gap = gap_of(price).expect("the refusal is a gap");
    let id = gap["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("g-"), "{gap}");

    // The draft: the question as asked, the best passage the skill has, for the owner to edit.
    let (status, drafted) = server.post_json(&format!("/v1/gaps/{id}/draft"), json!({}));
    assert_eq!(status, 201, "{drafted}");
    let draft = &drafted["draft"];
    assert_eq!(
        (draft["kind"].as_str(), draft["skill"].as_str(), draft["question"].as_str()),
        (Some("entry"), Some("router-faq"), Some(price))
    );
    assert!(!draft["answer"].as_str().unwrap().is_empty() && draft["sources"][0].is_string(), "{draft}");
    assert_eq!(draft["drafted_by"], "passage", "no LLM: the best passage: {draft}");
    let draft_id = draft["id"].as_str().unwrap();
    let (status, reply) = server.post_json(&format!("/v1/drafts/{draft_id}/approve"), json!({"answer": "  "}));
    assert_eq!((status, reply["error"]["field"].as_str()), (422, Some("answer")), "{reply}");

    // Approved with the owner's answer: written, indexed, the gap resolved, the question answered.
    let answer = "The Nimbus AX3000 costs 129 euros in the official store.";
    let (status, approved) = server.post_json(&format!("/v1/drafts/{draft_id}/approve"), json!({"answer": answer}));
    assert_eq!(status, 200, "{approved}");
    assert_eq!(approved["path"], "skills/router-faq/knowledge/answers-from-gaps.md", "{approved}");
    server.wait_for_job(approved["job"]["id"].as_u64().unwrap());
    let written =
        std::fs::read_to_string(project.path().join("skills/router-faq/knowledge/answers-from-gaps.md")).unwrap();
    assert!(written.contains(&format!("## {price}\n\n{answer}")), "{written}");
    assert!(gap_of(price).is_none(), "a resolved gap leaves the list");
    let again = ask(price);
    assert!(again["refusal"].is_null(), "{again}");
    assert_eq!(again["citations"][0]["source"], "knowledge/answers-from-gaps.md", "{again}");
    assert!(again["answer"].as_str().unwrap().contains("129 euros"), "{again}");
    let (status, _) = server.post_json(&format!("/v1/drafts/{draft_id}/approve"), json!({}));
    assert_eq!(status, 404, "an approved draft is gone");

    // A 👎 naming the right skill drafts a routing example for it, written into its SKILL.md.
    let tea = "How should I keep white tea fresh?";
    let (_, routed) = server.post_json("/v1/ask", json!({"query": tea, "skill": "router-faq"}));
    let (status, body) = server
        .post_json("/v1/feedback", json!({"answer_id": routed["answer_id"], "rating": "down", "skill": "tea-brewing"}));
    assert_eq!(status, 201, "{body}");
    let (_, gaps) = server.get_json("/v1/gaps");
    let routing =
        gaps["gaps"].as_array().unwrap().iter().find(|g| g["query"] == tea && g["cause"] == "routing").cloned();
    let routing = routing.unwrap_or_else(|| panic!("{gaps}"));
    let (_, drafted) = server.post_json(&format!("/v1/gaps/{}/draft", routing["id"].as_str().unwrap()), json!({}));
    assert_eq!(
        (drafted["draft"]["kind"].as_str(), drafted["draft"]["skill"].as_str()),
        (Some("example"), Some("tea-brewing")),
        "{drafted}"
    );
    let (status, approved) =
        server.post_json(&format!("/v1/drafts/{}/approve", drafted["draft"]["id"].as_str().unwrap()), json!({}));
    assert_eq!(status, 200, "{approved}");
    server.wait_for_job(approved["job"]["id"].as_u64().unwrap());
    let (_, card) = server.get_json("/v1/skills/tea-brewing");
    assert!(card["examples"].as_array().unwrap().iter().any(|e| e == tea), "the example is served: {card}");
    let lint = run(project.path(), &["lint", "tea-brewing"]);
    assert!(lint.status.success(), "{}", common::stderr(&lint));

    // An answer rated 👍 is listed as liked, and drafts an entry keeping it under the question
    // as asked, its markers gone; approved, it leaves the list.
    let reset = "how long do I hold the reset pin";
    let (_, answered) = server.post_json("/v1/ask", json!({"query": reset, "skill": "router-faq"}));
    assert!(answered["refusal"].is_null(), "{answered}");
    let (status, _) = server.post_json("/v1/feedback", json!({"answer_id": answered["answer_id"], "rating": "up"}));
    assert_eq!(status, 201);
    let liked_of = |query: &str| {
        let (_, gaps) = server.get_json("/v1/gaps");
        gaps["liked"].as_array().unwrap().iter().find(|l| l["query"] == query).cloned()
    };
    let liked = liked_of(reset).expect("the 👍 answer is listed");
    assert!(liked["id"].as_str().unwrap().starts_with("l-") && liked["skill"] == "router-faq", "{liked}");
    let (status, drafted) = server.post_json(&format!("/v1/gaps/{}/draft", liked["id"].as_str().unwrap()), json!({}));
    assert_eq!(status, 201, "{drafted}");
    let draft = &drafted["draft"];
    assert_eq!(
        (draft["drafted_by"].as_str(), draft["kind"].as_str()),
        (Some("rated_answer"), Some("entry")),
        "{draft}"
    );
    let kept = draft["answer"].as_str().unwrap();
    assert!(kept.contains("10 seconds") && !kept.contains("[1]"), "the rated answer without its markers: {draft}");
    let (status, approved) =
        server.post_json(&format!("/v1/drafts/{}/approve", draft["id"].as_str().unwrap()), json!({}));
    assert_eq!(status, 200, "{approved}");
    server.wait_for_job(approved["job"]["id"].as_u64().unwrap());
    assert!(liked_of(reset).is_none(), "kept, it leaves the list");
    let written =
        std::fs::read_to_string(project.path().join("skills/router-faq/knowledge/answers-from-gaps.md")).unwrap();
    assert!(written.contains(&format!("## {reset}\n\n")), "{written}");

    // Resolve without a draft; bad ids.
    assert_eq!(ask("Can the router brew coffee?")["refusal"]["kind"], "not_found");
    let coffee = gap_of("Can the router brew coffee?").unwrap();
    let (status, _) = server.post_json(&format!("/v1/gaps/{}/resolve", coffee["id"].as_str().unwrap()), json!({}));
    assert_eq!(status, 200);
    assert!(gap_of("Can the router brew coffee?").is_none());
    for (path, code) in [
        ("/v1/gaps/g-0123456789ab/draft", 404),
        ("/v1/gaps/g-0123456789ab/resolve", 404),
        ("/v1/gaps/l-0123456789ab/draft", 404),
        ("/v1/gaps/x-0123456789ab/draft", 400),
        ("/v1/drafts/d-0123456789ab/approve", 404),
        ("/v1/gaps/..%2F..%2Fx/draft", 400),
        ("/v1/drafts/router-faq/approve", 400),
    ] {
        let (status, reply) = server.post_json(path, json!({}));
        assert_eq!(status, code, "{path}: {reply}");
    }
}

#[test]
fn uploads_go_into_a_tier_and_documents_are_deleted_together() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &["--allow-writes"], &[]);
    let knowledge = project.path().join("skills/router-faq/knowledge");
    let (status, body) = server.upload(
        "/v1/skills/router-faq/documents?tier=rules",
        &[("no-refunds.md", b"# No refunds\n\nOpened routers are never refunded.\n")],
    );
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["documents"][0]["name"], "knowledge/rules/no-refunds.md", "{body}");
    server.wait_for_job(body["job"]["id"].as_u64().unwrap());
    let (status, body) = server
        .upload("/v1/skills/router-faq/documents?tier=examples", &[("sample.md", b"# Sample\n\nA good answer.\n")]);
    assert_eq!(status, 202, "{body}");
    server.wait_for_job(body["job"]["id"].as_u64().unwrap());
    let (_, sources) = server.get_json("/v1/skills/router-faq/sources");
    let tier_of = |name: &str| {
        sources["sources"].as_array().unwrap().iter().find(|s| s["source"] == name).map(|s| s["tier"].clone())
    };
    assert_eq!(tier_of("knowledge/rules/no-refunds.md"), Some(json!("rules")), "{sources}");
    assert_eq!(tier_of("knowledge/examples/sample.md"), Some(json!("examples")), "{sources}");
    let (status, body) = server.upload("/v1/skills/router-faq/documents?tier=secrets", &[("x.md", b"# X")]);
    assert_eq!(status, 422, "{body}");
    assert!(!knowledge.join("secrets").exists() && !knowledge.join("x.md").exists());

    // Several at once, one re-index; a name that is not there deletes nothing.
    let (status, body) = server.send(
        "DELETE",
        "/v1/skills/router-faq/documents",
        Some(json!({"names": ["knowledge/rules/no-refunds.md", "no-such.md"]})),
    );
    assert_eq!(status, 404, "{body}");
    assert!(knowledge.join("rules/no-refunds.md").is_file(), "nothing deleted");
    let (status, body) = server.send(
        "DELETE",
        "/v1/skills/router-faq/documents",
        Some(json!({"names": ["knowledge/rules/no-refunds.md", "sample.md"]})),
    );
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["deleted"], json!(["knowledge/rules/no-refunds.md", "knowledge/examples/sample.md"]), "{body}");
    server.wait_for_job(body["job"]["id"].as_u64().unwrap());
    assert!(!knowledge.join("rules/no-refunds.md").exists() && !knowledge.join("examples/sample.md").exists());
    let (_, list) = server.get_json("/v1/skills/router-faq/documents");
    assert!(!list.to_string().contains("no-refunds.md") && !list.to_string().contains("sample.md"), "{list}");
    for names in [json!([]), json!(["../SKILL.md"])] {
        let (status, body) = server.send("DELETE", "/v1/skills/router-faq/documents", Some(json!({"names": names})));
        assert!(status == 422 || status == 400, "{names}: {status} {body}");
    }
    assert!(project.path().join("skills/router-faq/SKILL.md").is_file());
}

/// A loopback HTTP server that answers each request with `body` as `content_type`; its URL.
fn page_server(body: &'static [u8], content_type: &'static str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut stream in listener.incoming().flatten() {
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).is_ok_and(|n| n == 1) {
                head.push(byte[0]);
            }
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes()).and_then(|_| stream.write_all(body));
        }
    });
    url
}

#[test]
fn a_page_is_imported_from_a_url_as_an_upload_of_its_bytes() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &["--allow-writes"], &[]);
    let page = page_server(
        b"<html><head><title>Warranty terms</title></head><body><h1>Warranty terms</h1>\
          <p>In the EU the Nimbus AX3000 carries a warranty of three years.</p></body></html>",
        "text/html; charset=utf-8",
    );
    let (status, body) =
        server.post_json("/v1/skills/router-faq/import", json!({"url": format!("{page}/legal/warranty")}));
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["documents"][0]["name"], "knowledge/warranty.html", "{body}");
    server.wait_for_job(body["job"]["id"].as_u64().unwrap());
    let found = hits(&server, "warranty of three years in the EU");
    assert!(found.first().is_some_and(|h| h.0 == "knowledge/warranty.html"), "{found:?}");
    // The same name again: refused as an upload would be; with replace, taken.
    let (status, _) =
        server.post_json("/v1/skills/router-faq/import", json!({"url": format!("{page}/legal/warranty")}));
    assert_eq!(status, 409);

    // Refused with a reason; nothing written.
    let zip = page_server(b"PK\x03\x04", "application/zip");
    for (request, code) in [
        (json!({"url": "ftp://example.com/a.md"}), 422),
        (json!({"url": format!("{zip}/bundle")}), 415),
        (json!({"url": "http://127.0.0.1:9/nothing.md"}), 502),
        (json!({"url": format!("{page}/x"), "tier": "secrets"}), 422),
    ] {
        let (status, reply) = server.post_json("/v1/skills/router-faq/import", request.clone());
        assert_eq!(status, code, "{request}: {reply}");
    }
    let knowledge = project.path().join("skills/router-faq/knowledge");
    assert!(!knowledge.join("bundle.zip").exists() && !knowledge.join("bundle").exists());
    // A name is checked as an upload's: its folders are dropped, so it stays in the knowledge folder.
    let (status, body) =
        server.post_json("/v1/skills/router-faq/import", json!({"url": format!("{page}/x"), "name": "../escape.html"}));
    assert_eq!((status, body["documents"][0]["name"].as_str()), (202, Some("knowledge/escape.html")), "{body}");
    assert!(!project.path().join("skills/router-faq/escape.html").exists());
    server.wait_for_job(body["job"]["id"].as_u64().unwrap());
}

#[test]
fn writes_are_off_unless_allowed() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &[], &[]);
    let (_, list) = server.get_json("/v1/skills/router-faq/documents");
    assert_eq!(list["writable"], false);
    let (status, body) = server.upload("/v1/skills/router-faq/documents", &[("a.md", b"# A\n\ntext")]);
    assert_eq!(status, 403, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("--allow-writes"), "{body}");
    let name = document(&list, "knowledge/faq.md").map_or_else(
        || list["documents"][0]["name"].as_str().unwrap().to_string(),
        |d| d["name"].as_str().unwrap().to_string(),
    );
    let encoded = name.replace('/', "%2F");
    let (status, _) = server.send("DELETE", &format!("/v1/skills/router-faq/documents/{encoded}"), None);
    assert_eq!(status, 403);
    let (status, _) = server.post_json("/v1/skills", json!({"name": "new-one", "description": "A new skill."}));
    assert_eq!(status, 403);
    let (status, _) = server.put_text("/v1/skills/router-faq/skill-md", "---\nname: router-faq\ndescription: d\n---\n");
    assert_eq!(status, 403);
    let (status, _) = server.send("DELETE", "/v1/skills/router-faq", None);
    assert_eq!(status, 403);
    let (status, _) = server.send("PATCH", "/v1/skills/router-faq", Some(json!({"name": "renamed"})));
    assert_eq!(status, 403);
    let (status, _) = server.send("PATCH", "/v1/skills/router-faq", Some(json!({"enabled": false})));
    assert_eq!(status, 403);
    let (status, _) =
        server.send("PUT", "/v1/skills/router-faq/documents/faq.md/preset", Some(json!({"preset": "general"})));
    assert_eq!(status, 403);
    let (status, _) =
        server.send("PUT", "/v1/skills/router-faq/documents/faq.md/metadata", Some(json!({"metadata": {"a": "b"}})));
    assert_eq!(status, 403);
    let (status, _) = server.post_json("/v1/skills/router-faq/import", json!({"url": "http://127.0.0.1:9/a.md"}));
    assert_eq!(status, 403);
    let (status, _) = server.send("PATCH", "/v1/skills/router-faq/chunks/1", Some(json!({"enabled": false})));
    assert_eq!(status, 403);
    let (status, _) = server.post_json("/v1/gaps/g-0123456789ab/draft", json!({}));
    assert_eq!(status, 403);
    let (status, _) = server.post_json("/v1/drafts/d-0123456789ab/approve", json!({}));
    assert_eq!(status, 403);
    assert!(!project.path().join("skills/router-faq/chunk-edits.json").exists());
    assert!(!project.path().join("skills/router-faq/.disabled").exists());
    assert!(
        project.path().join("skills/router-faq/SKILL.md").is_file() && !project.path().join("skills/new-one").exists()
    );
    assert!(project.path().join("skills/router-faq").join(&name).is_file());
}

#[test]
fn conversations_are_kept_and_feedback_reaches_gaps() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &[], &[]);
    let (status, body) = server.send("POST", "/v1/conversations", None);
    assert_eq!(status, 201, "{body}");
    let id = body["conversation"]["id"].as_str().unwrap().to_string();

    let ask = |query: &str| {
        let (status, answer) = server.post_json("/v1/ask", json!({"query": query, "conversation_id": id}));
        assert_eq!(status, 200, "{answer}");
        assert!(answer["answer_id"].as_str().unwrap().starts_with("a-"), "{answer}");
        answer
    };
    let first = ask("劳动合同期限三年，试用期最长可以约定多久？");
    let second = ask("How do I reset the router?");
    let (status, saved) = server.get_json(&format!("/v1/conversations/{id}"));
    assert_eq!(status, 200, "{saved}");
    let turns = saved["conversation"]["turns"].as_array().unwrap();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["answer"]["answer_id"], first["answer_id"]);
    assert_eq!(saved["conversation"]["title"], "劳动合同期限三年，试用期最长可以约定多久？");
    let (_, listed) = server.get_json("/v1/conversations");
    assert_eq!(listed["conversations"][0]["id"], id.as_str());
    assert_eq!(listed["conversations"][0]["turns"], 2);
    let (status, renamed) = server.send("PATCH", &format!("/v1/conversations/{id}"), Some(json!({"title": "试用期"})));
    assert_eq!((status, renamed["conversation"]["title"].as_str()), (200, Some("试用期")), "{renamed}");

    // Feedback: a confirmed answer, and a misroute corrected.
    let (status, up) = server
        .post_json("/v1/feedback", json!({"query": first["query"], "answer_id": first["answer_id"], "rating": "up"}));
    assert_eq!(status, 201, "{up}");
    assert_eq!(up["feedback"]["routed"], json!(["labor-law"]), "stored with the route: {up}");
    assert!(!up["feedback"]["hits"].as_array().unwrap().is_empty(), "{up}");
    let down = json!({"answer_id": second["answer_id"], "rating": "down", "skill": "tea-brewing", "comment": "wrong"});
    let (status, body) = server.post_json("/v1/feedback", down);
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["feedback"]["query"], "How do I reset the router?", "the answer's question: {body}");
    let both = json!({"query": "x", "rating": "down", "skill": "tea-brewing", "no_skill": true});
    let (status, body) = server.post_json("/v1/feedback", both);
    assert_eq!(status, 422, "{body}");
    let (status, body) = server.post_json("/v1/feedback", json!({"query": "x", "rating": "meh"}));
    assert_eq!(status, 422, "{body}");
    let (status, body) = server.post_json("/v1/feedback", json!({"query": "x", "rating": "up", "skill": "nope"}));
    assert_eq!(status, 404, "{body}");
    let (status, body) = server.post_json("/v1/feedback", json!({"answer_id": "a-0000000000000000", "rating": "up"}));
    assert_eq!(status, 400, "{body}");

    let log = std::fs::read_to_string(project.path().join(".skillrag/feedback.jsonl")).unwrap();
    assert_eq!(log.lines().count(), 2, "{log}");
    let (_, gaps) = server.get_json("/v1/gaps");
    let routing: Vec<&Value> = gaps["gaps"].as_array().unwrap().iter().filter(|g| g["cause"] == "routing").collect();
    assert_eq!(routing.len(), 1, "{gaps}");
    assert_eq!(
        (routing[0]["skill"].as_str(), routing[0]["comments"][0].as_str()),
        (Some("tea-brewing"), Some("wrong"))
    );

    let (status, _) = server.send("DELETE", &format!("/v1/conversations/{id}"), None);
    assert_eq!(status, 204);
    let (status, body) = server.get_json(&format!("/v1/conversations/{id}"));
    assert_eq!(status, 404, "{body}");
    let (status, body) = server.post_json("/v1/ask", json!({"query": "试用期多久？", "conversation_id": id}));
    assert_eq!(status, 404, "an answer to a deleted conversation is refused: {body}");
    let (status, _) = server.get_json("/v1/conversations/..%2F..%2Fskillrag.toml");
    assert!(status == 404 || status == 400, "{status}");
}

#[test]
fn retrieval_testing_filters_weights_and_threshold() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &[], &[]);
    let query = json!({"query": "试用期最长多久", "skills": ["labor-law"], "k": 5, "mode": "bm25"});
    let (status, all) = server.post_json("/v1/search", query.clone());
    assert_eq!(status, 200, "{all}");
    let hits = all["hits"].as_array().unwrap().len();
    assert!(hits > 0);
    let mut strict = query.clone();
    strict["min_score"] = json!(1e9);
    let (_, none) = server.post_json("/v1/search", strict);
    assert_eq!((none["hits"].as_array().unwrap().len(), none["filtered"].as_u64()), (0, Some(hits as u64)), "{none}");
    let mut glob = query.clone();
    glob["source"] = json!("knowledge/no-such-*.md");
    let (_, empty) = server.post_json("/v1/search", glob);
    assert!(empty["hits"].as_array().unwrap().is_empty(), "{empty}");
    let mut weighted = query.clone();
    weighted["mode"] = json!("hybrid");
    weighted["bm25_weight"] = json!(2.0);
    weighted["dense_weight"] = json!(0.5);
    weighted["doc_types"] = json!(["legal", "general", "faq", "technical"]);
    let (status, body) = server.post_json("/v1/search", weighted);
    assert_eq!(status, 200, "{body}");
    for (field, value) in [("doc_types", json!(["poems"])), ("bm25_weight", json!(-1.0)), ("source", json!("[oops"))] {
        let mut bad = query.clone();
        bad[field] = value;
        let (status, body) = server.post_json("/v1/search", bad);
        assert_eq!(status, 422, "{field}: {body}");
    }
}

#[test]
fn openai_clients_get_models_by_id_and_clear_refusals() {
    let project = demo_indexed();
    let server = Server::start(project.path(), &["--port", "0"], &[]);
    assert!(server.base.starts_with("http://127.0.0.1:"), "--port listens on loopback: {}", server.base);
    let (status, model) = server.get_json("/v1/models/skillrag/labor-law");
    assert_eq!((status, model["id"].as_str()), (200, Some("skillrag/labor-law")), "{model}");
    let (status, _) = server.get_json("/v1/models/skillrag/nope");
    assert_eq!(status, 404);
    let messages = json!([{"role": "user", "content": "试用期多久？"}]);
    let tools = json!([{"type": "function", "function": {"name": "f", "parameters": {}}}]);
    let (status, body) = server
        .post_json("/v1/chat/completions", json!({"model": "skillrag/auto", "messages": messages, "tools": tools}));
    assert_eq!(status, 400, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("tools"), "{body}");
    let json_mode = json!({"model": "skillrag/auto", "messages": messages, "response_format": {"type": "json_object"}});
    let (status, body) = server.post_json("/v1/chat/completions", json_mode);
    assert_eq!(status, 400, "{body}");
    let text_mode = json!({"model": "skillrag/auto", "messages": messages, "response_format": {"type": "text"}});
    let (status, body) = server.post_json("/v1/chat/completions", text_mode);
    assert_eq!(status, 200, "{body}");
}

#[test]
fn chat_saves_resumes_and_learns_from_feedback() {
    let project = demo_indexed();
    let dir = project.path();
    let chat = skillrag(dir, &["chat", "--json"]);
    let input = "劳动合同期限三年，试用期最长可以约定多久？\n/good\nHow do I reset the router?\n/bad tea-brewing not about tea\n\
                 花呗怎么开通？\n/bad none\n";
    let (answers, out) = json_lines(chat, input);
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(answers.len(), 3);
    let saved: Vec<_> = std::fs::read_dir(dir.join(".skillrag/conversations")).unwrap().flatten().collect();
    assert_eq!(saved.len(), 1);
    let id = saved[0].file_name().to_string_lossy().trim_end_matches(".json").to_string();
    let feedback = std::fs::read_to_string(dir.join(".skillrag/feedback.jsonl")).unwrap();
    let records: Vec<Value> = feedback.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records.len(), 3, "{feedback}");
    assert_eq!(records[2]["no_skill"], true, "{feedback}");
    assert_eq!(
        (records[0]["rating"].as_str(), records[0]["answer_id"].clone()),
        (Some("up"), answers[0]["answer_id"].clone())
    );
    assert_eq!(
        (records[1]["skill"].as_str(), records[1]["comment"].as_str()),
        (Some("tea-brewing"), Some("not about tea"))
    );

    // Resumed: the follow-up is read against the saved turns and saved with them.
    let resumed = skillrag(dir, &["chat", "--json", "--resume", &id]);
    let (more, out) = json_lines(resumed, "那工资呢？\n");
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(more.len(), 1);
    let conversation: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(format!(".skillrag/conversations/{id}.json"))).unwrap())
            .unwrap();
    assert_eq!(conversation["turns"].as_array().unwrap().len(), 4);
    let unknown = skillrag(dir, &["chat", "--resume", "c-0000000000000000"]);
    let (_, out) = json_lines(unknown, "");
    assert!(!out.status.success());
    assert!(common::stderr(&out).contains("no conversation"), "{}", common::stderr(&out));

    // tune takes both judgements as labelled questions in a fold of their own, and says so; the
    // corrected question joins the named skill's routing profile.
    let profile_of = |skill: &str| {
        let route = common::json(dir, &["route", "How do I reset the router?"]);
        let candidates = route["candidates"].as_array().unwrap().clone();
        candidates.iter().find(|c| c["skill"] == skill).unwrap()["profile"].as_f64().unwrap()
    };
    assert_eq!(profile_of("tea-brewing"), 0.0);
    let tune = run(dir, &["tune"]);
    let said = String::from_utf8_lossy(&tune.stdout);
    assert!(said.contains("feedback: 3 question(s)"), "{said}");
    let router: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join(".skillrag/router.json")).unwrap()).unwrap();
    let labelled: Vec<&Value> =
        router["labelled"].as_array().unwrap().iter().filter(|l| l["feedback"] == true).collect();
    assert_eq!(labelled.len(), 3, "{router}");
    assert!(labelled.iter().any(|l| l["skill"].is_null()), "no skill covers the 花呗 question: {router}");
    assert!(profile_of("tea-brewing") > 0.5, "the corrected question is in tea-brewing's profile");
    let no_feedback = run(dir, &["tune", "--no-feedback"]);
    assert!(!String::from_utf8_lossy(&no_feedback.stdout).contains("feedback:"));

    // gaps: the misroute under its cause.
    let gaps = run(dir, &["gaps"]);
    let said = String::from_utf8_lossy(&gaps.stdout);
    assert!(said.contains("Wrong skill") && said.contains("How do I reset the router?"), "{said}");
}
