//! End-to-end tests of the real `skillrag` binary on real files with the real embedding model
//! (all-MiniLM-L6-v2, installed by `scripts/setup-model`; `scripts/test` runs it first).

mod common;

on_both_stores!(
    quick_start_on_the_bundled_example,
    filters_and_modes,
    incremental_index_and_model_change,
    passages_the_model_cannot_see_are_not_embedded,
    killed_index_leaves_previous_generation_searchable,
);

use common::{demo, demo_indexed, demo_on, json, run, skillrag, stderr, Backend, TestProject};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn quick_start_on_the_bundled_example(backend: Backend) {
    let tmp = demo_on(backend);
    let dir = tmp.path();
    assert!(dir.join("skillrag.toml").is_file());
    assert!(dir.join("skills/labor-law/SKILL.md").is_file());

    let lint = run(dir, &["lint"]);
    assert!(stderr(&lint).contains("3 skill(s) loaded; 0 error(s)"), "{}", stderr(&lint));

    let report = json(dir, &["index"]);
    let skills = report["skills"].as_array().unwrap();
    assert_eq!(skills.len(), 3);
    for s in skills {
        assert!(s["chunks"].as_u64().unwrap() > 0, "{s}");
        assert_eq!(s["generation"], 1);
    }

    // Chinese question → the labour-law statute on probation (第十九条).
    let result = json(dir, &["search", "劳动合同期限两年的，试用期最长多久？", "--skill", "labor-law", "-k", "3"]);
    let top = &result["hits"][0];
    assert_eq!(top["skill"], "labor-law");
    assert!(top["text"].as_str().unwrap().contains("第十九条"), "{top}");
    for field in ["source", "heading", "ordinal", "text"] {
        assert!(!top[field].is_null(), "hit lacks {field}: {top}");
    }
    let scores = &top["scores"];
    assert!(scores["bm25"].is_number() && scores["fused"].is_number() && scores["rerank"].is_null(), "{scores}");

    // English question → the router FAQ, with both lists fused.
    let result = json(dir, &["search", "How do I factory reset the router?", "--skill", "router-faq", "-k", "3"]);
    let top = &result["hits"][0];
    assert!(top["heading"].as_str().unwrap().ends_with("Factory reset"), "{top}");
    let hits = result["hits"].as_array().unwrap();
    assert!(hits.iter().any(|h| h["text"].as_str().unwrap().contains("reset pin")), "{result}");
    assert!(hits.iter().any(|h| h["scores"]["dense"].is_number()), "English should use the dense signal: {result}");
    assert_eq!(result["skills"][0]["dense_used"], true);

    // The GBK file of the headings-only skill was decoded.
    let sources = json(dir, &["sources", "tea-brewing"]);
    let gbk = sources.as_array().unwrap().iter().find(|s| s["source"] == "references/pu-erh.txt").unwrap();
    assert_eq!(gbk["encoding"], "GBK");
    let result = json(dir, &["search", "普洱熟茶 洗茶", "--skill", "tea-brewing", "--mode", "bm25", "-k", "1"]);
    assert_eq!(result["hits"][0]["source"], "references/pu-erh.txt");

    let skills = json(dir, &["skills"]);
    assert!(skills.as_array().unwrap().iter().all(|s| s["index"]["state"] == "fresh"), "{skills}");

    // Human output prints the score breakdown.
    let out = run(dir, &["search", "试用期工资", "--skill", "labor-law", "-k", "2"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("fused") && text.contains("bm25"), "{text}");
}

fn filters_and_modes(backend: Backend) {
    let tmp = demo_on(backend);
    let dir = tmp.path();
    run(dir, &["index"]);
    let result = json(dir, &["search", "warranty", "--skill", "router-faq", "--dir", "knowledge/rules"]);
    let hits = result["hits"].as_array().unwrap();
    assert!(!hits.is_empty());
    assert!(hits.iter().all(|h| h["source"].as_str().unwrap().starts_with("knowledge/rules/")), "{result}");
    assert!(hits.iter().all(|h| h["tier"] == "rules"));

    let result = json(dir, &["search", "LED colours", "--skill", "router-faq", "--source", "knowledge/t*.md"]);
    assert!(
        result["hits"].as_array().unwrap().iter().all(|h| h["source"] == "knowledge/troubleshooting.md"),
        "{result}"
    );

    let dense = json(dir, &["search", "LED colours", "--skill", "router-faq", "--mode", "dense"]);
    assert!(dense["hits"].as_array().unwrap().iter().all(|h| h["scores"]["bm25"].is_null()));
    let bm25 = json(dir, &["search", "LED colours", "--skill", "router-faq", "--mode", "bm25"]);
    assert!(bm25["hits"].as_array().unwrap().iter().all(|h| h["scores"]["dense"].is_null()));
}

fn incremental_index_and_model_change(backend: Backend) {
    let tmp = demo_on(backend);
    let dir = tmp.path();
    run(dir, &["index"]);
    let again = json(dir, &["index"]);
    assert!(again["skills"].as_array().unwrap().iter().all(|s| s["generation"].is_null()), "nothing changed: {again}");

    std::fs::write(
        dir.join("skills/router-faq/knowledge/faq.md"),
        "# FAQ\n\n## Does it support Wi-Fi 7?\n\nNo. The Nimbus AX3000 supports Wi-Fi 6 (802.11ax).\n",
    )
    .unwrap();
    let report = json(dir, &["index", "--skill", "router-faq"]);
    let s = &report["skills"][0];
    assert_eq!((s["files_changed"].as_u64(), s["files_unchanged"].as_u64()), (Some(1), Some(4)), "{s}");
    assert_eq!(s["embedded"], 1);

    // Switching to BM25 only is a settings change: reported stale, then rebuilt with the reason.
    let out = skillrag(dir, &["skills", "--json"]).env("SKILLRAG_EMBED_MODEL", "none").output().unwrap();
    let skills: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(skills[0]["index"]["reason"].as_str().unwrap().contains("embedding model changed"), "{skills}");
    let out = skillrag(dir, &["index"]).env("SKILLRAG_EMBED_MODEL", "none").output().unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("rebuilding, embedding model changed"), "{err}");
    assert_eq!(err.matches("no embedding model configured").count(), 1, "said once: {err}");
}

/// all-MiniLM-L6-v2 sees almost none of a Chinese passage: such passages are stored without a
/// vector, never sent to the model, and the reports say how many and why. Lowering the
/// threshold is a settings change that embeds them.
fn passages_the_model_cannot_see_are_not_embedded(backend: Backend) {
    let tmp = demo_on(backend);
    let dir = tmp.path();
    let report = json(dir, &["index"]);
    let skill = |report: &Value, id: &str| {
        report["skills"].as_array().unwrap().iter().find(|s| s["skill"] == id).cloned().unwrap()
    };
    let labor = skill(&report, "labor-law");
    let (chunks, vectorless) = (labor["chunks"].as_u64().unwrap(), labor["vectorless"].as_u64().unwrap());
    assert!(vectorless * 2 > chunks, "most of a Chinese skill: {labor}");
    assert_eq!(labor["embedded"].as_u64(), Some(chunks - vectorless), "{labor}");
    let faq = skill(&report, "router-faq");
    assert_eq!(faq["vectorless"], 0, "{faq}");
    assert!(faq["embedded"].as_u64().unwrap() > 0);

    let listed = json(dir, &["skills"]);
    let listed_labor = listed.as_array().unwrap().iter().find(|s| s["skill"] == "labor-law").unwrap();
    assert_eq!(listed_labor["vectorless"].as_u64(), Some(vectorless));
    let out = run(dir, &["skills"]);
    assert!(stderr(&out).contains("have no vector (the embedding model cannot see them"), "{}", stderr(&out));
    let sources = json(dir, &["sources", "labor-law"]);
    let per_document: u64 = sources.as_array().unwrap().iter().map(|s| s["vectorless"].as_u64().unwrap()).sum();
    assert_eq!(per_document, vectorless, "{sources}");
    // BM25 still finds them.
    let hits = json(dir, &["search", "试用期", "--skill", "labor-law"]);
    assert!(!hits["hits"].as_array().unwrap().is_empty(), "{hits}");

    // Wanting vectors for them is a settings change: stale with the reason, then embedded.
    let lowered = |args: &[&str]| {
        let mut cmd = skillrag(dir, args);
        cmd.env("SKILLRAG_RETRIEVAL_MIN_VISIBILITY", "0");
        cmd.output().unwrap()
    };
    let out = lowered(&["skills", "--json"]);
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reason = listed.as_array().unwrap().iter().find(|s| s["skill"] == "labor-law").unwrap()["index"].to_string();
    assert!(reason.contains("min_visibility was lowered"), "{reason}");
    let out = lowered(&["index", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let labor = skill(&report, "labor-law");
    assert_eq!((labor["vectorless"].as_u64(), labor["embedded"].as_u64()), (Some(0), Some(vectorless)), "{labor}");
    assert_eq!(skill(&report, "router-faq")["embedded"], 0, "its vectors came from the cache");
}

#[test]
fn lint_reports_file_and_line_and_fails() {
    let tmp = demo();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("skills/broken")).unwrap();
    std::fs::write(dir.join("skills/broken/SKILL.md"), "---\nname: broken\ndescription: [oops\n---\n").unwrap();
    let out = skillrag(dir, &["lint"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("skills/broken/SKILL.md:3: error: malformed YAML frontmatter"), "{text}");
    // The broken skill does not stop the others from indexing.
    let report = json(dir, &["index"]);
    assert_eq!(report["skills"].as_array().unwrap().len(), 3);
}

#[test]
fn clear_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let out = skillrag(tmp.path(), &["search", "x"]).output().unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("is not a skillrag project"), "{}", stderr(&out));

    let tmp = demo();
    let out = skillrag(tmp.path(), &["search", "x", "--skill", "labor-law"]).output().unwrap();
    assert!(stderr(&out).contains("run `skillrag index --skill labor-law`"), "{}", stderr(&out));
    let out = skillrag(tmp.path(), &["search", "x", "--skill", "nope"]).output().unwrap();
    assert!(stderr(&out).contains("unknown skill `nope`"), "{}", stderr(&out));
    let out = skillrag(tmp.path(), &["index"]).env("SKILLRAG_INDEX_CHUNK_SIZE", "lots").output().unwrap();
    assert!(stderr(&out).contains("SKILLRAG_INDEX_CHUNK_SIZE=lots"), "{}", stderr(&out));
    let out = skillrag(tmp.path(), &["index"]).env("SKILLRAG_EMBED_MODEL", "/no/such/model").output().unwrap();
    assert!(stderr(&out).contains("/no/such/model"), "{}", stderr(&out));
}

/// Into a pipe, `index` says when each skill starts and how many files it holds, the total of
/// its progress known up front (issue 46 item 6), before the skill's summary.
#[test]
fn piped_index_prints_a_line_per_skill() {
    let project = demo();
    let out = common::lexical(project.path(), &["index"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    for skill in ["labor-law", "router-faq", "tea-brewing"] {
        let lines: Vec<&str> = err.lines().map(str::trim).collect();
        let start = lines.iter().position(|l| l.starts_with(&format!("{skill} 0/")) && l.ends_with(" files"));
        let summary = lines.iter().position(|l| l.starts_with(&format!("{skill} ")) && l.contains(" chunks, "));
        assert!(start.is_some() && start < summary, "{skill}: a start line before the summary:\n{err}");
    }
}

/// The test servers' setup scripts name a port another process holds, before installing or
/// starting anything (issue 46 item 27): they used to start the server anyway and say only
/// "the server exited".
#[test]
fn setup_scripts_say_when_their_port_is_taken() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts");
    let rundir = tempfile::tempdir().unwrap();
    for (script, arg, var) in [("setup-llm", "start", "SKILLRAG_LLM_PORT"), ("setup-e5", "test", "SKILLRAG_E5_PORT")] {
        let out = std::process::Command::new(scripts.join(script))
            .arg(arg)
            .env(var, &port)
            .env("SKILLRAG_LLM_DIR", rundir.path())
            .output()
            .unwrap();
        assert!(!out.status.success(), "{script}: {}", stderr(&out));
        let expected = format!("port {port} is taken by another process; set {var}");
        assert!(stderr(&out).contains(&expected), "{script}:\n{}", stderr(&out));
    }
}

fn repo_file(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(path)).unwrap()
}

/// The README says how to put `skillrag` on PATH, and the quick start ends by saying it
/// (issue 46 item 26): the build leaves it in target/release.
#[test]
fn the_readme_and_the_quick_start_say_how_to_put_skillrag_on_path() {
    let readme = repo_file("README.md");
    assert!(readme.contains("cargo install --path crates/cli"), "README: cargo install");
    assert!(readme.contains("export PATH=\"$PWD/target/release:$PATH\""), "README: a PATH line");
    let quickstart = repo_file("scripts/quickstart");
    let last = quickstart.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    assert!(last.contains("cargo install --path crates/cli") && last.contains("export PATH="), "{last}");
}

/// The README lists what `scripts/test` needs beyond Rust and Python (issue 46 item 27).
#[test]
fn the_readme_lists_what_the_tests_need() {
    let readme = repo_file("README.md");
    for needed in ["Node.js", "npm", "apt-get", "Chromium", "Tesseract", "poppler", "`jq`", "10 GB", "skillrag-pg"] {
        assert!(readme.contains(needed), "README does not say the tests need {needed}");
    }
    for port in ["18080", "18083", "55432", "port N is taken by another process"] {
        assert!(readme.contains(port), "README does not name {port}");
    }
}

/// `init` writes the model the environment names (issue 46 item 7), not its own cached copy;
/// `--embed-model` still wins over the environment.
#[test]
fn init_writes_the_model_the_environment_names() {
    let model_line = |dir: &Path| {
        let text = std::fs::read_to_string(dir.join("skillrag.toml")).unwrap();
        text.lines().find(|l| l.starts_with("model = ")).unwrap_or_default().to_string()
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = skillrag(tmp.path(), &["init"]).env("SKILLRAG_EMBED_MODEL", "/opt/models/my-model").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(model_line(tmp.path()), r#"model = "/opt/models/my-model""#);
    assert!(stderr(&out).contains("/opt/models/my-model (SKILLRAG_EMBED_MODEL)"), "{}", stderr(&out));

    let tmp = tempfile::tempdir().unwrap();
    let out = skillrag(tmp.path(), &["init"]).env("SKILLRAG_EMBED_MODEL", "none").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(model_line(tmp.path()), r#"model = "none""#);

    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = skillrag(tmp.path(), &["init", "--embed-model", "/opt/models/flag"]);
    let out = cmd.env("SKILLRAG_EMBED_MODEL", "/opt/models/env").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(model_line(tmp.path()), r#"model = "/opt/models/flag""#);
}

/// Issue 46 item 29: the scaffold has no errors, but lint warns, line by line, while its
/// placeholder text is there; the hint after `-C DIR new` keeps `-C DIR`.
#[test]
fn new_skill_scaffold_lints_with_placeholder_warnings() {
    let tmp = demo();
    let dir = tmp.path();
    let out = run(dir, &["new", "hr-policies", "--description", "Company HR policies."]);
    let hint = stderr(&out);
    assert!(hint.contains(&format!("skillrag -C {} index --skill hr-policies", dir.display())), "{hint}");
    let out = run(dir, &["lint", "hr-policies"]);
    let (said, listed) = (stderr(&out), String::from_utf8_lossy(&out.stdout).to_string());
    assert!(said.contains("0 error(s)"), "{said}");
    assert!(listed.contains("SKILL.md:5:") && listed.contains("placeholder text"), "{listed}");
    assert_eq!(listed.matches("placeholder text").count(), 4, "the description was given: {listed}");
    // Filled in, it lints without a placeholder warning.
    let file = dir.join("skills/hr-policies/SKILL.md");
    let text = std::fs::read_to_string(&file).unwrap();
    let filled = text
        .replace("first keyword, second keyword", "leave, holiday")
        .replace("the questions this knowledge answers.", "leave and holidays.")
        .replace("what it must refuse.", "payroll.")
        .replace("A question this skill should answer?", "How many days of leave do I get?");
    std::fs::write(&file, filled).unwrap();
    let out = run(dir, &["lint", "hr-policies"]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("placeholder"), "{}", String::from_utf8_lossy(&out.stdout));
    let bad = skillrag(dir, &["new", "HR Policies"]).output().unwrap();
    assert!(!bad.status.success());
}

/// Writes `n` English documents of about 2 KB each under `skills/big/knowledge/`.
fn big_skill(dir: &Path, first: usize, n: usize) {
    let k = dir.join("skills/big/knowledge");
    std::fs::create_dir_all(&k).unwrap();
    std::fs::write(
        dir.join("skills/big/SKILL.md"),
        "---\nname: big\ndescription: Many generated reports.\n---\n# Big\n",
    )
    .unwrap();
    for i in first..first + n {
        let body: String = (0..12)
            .map(|j| {
                format!(
                    "Report station{i:04} paragraph {j}: the station measured {} millimetres of rain and {} hours of sunshine.\n\n",
                    i * 7 + j,
                    j * 3 + i % 5
                )
            })
            .collect();
        std::fs::write(k.join(format!("report-{i:04}.md")), format!("# Weather report {i}\n\n{body}")).unwrap();
    }
}

/// `kill -9` of a real `skillrag index` at several moments never leaves the project without a
/// searchable index: the previous generation keeps serving, and the next run completes.
fn killed_index_leaves_previous_generation_searchable(backend: Backend) {
    let tmp = TestProject::new(backend);
    let dir = tmp.path();
    std::fs::write(dir.join("skillrag.toml"), "skills = [\"skills\"]\n").unwrap();
    big_skill(dir, 0, 2);
    run(dir, &["index"]);
    let search = |dir: &Path| json(dir, &["search", "station0001", "--skill", "big", "--mode", "bm25", "-k", "1"]);
    assert_eq!(search(dir)["hits"][0]["source"], "knowledge/report-0001.md");

    // Enough new text to keep the model busy for many seconds.
    big_skill(dir, 2, 60);
    let gen2 = dir.join(".skillrag/index/big/gen-00000002");
    let cache_bytes = || -> u64 {
        std::fs::read_dir(dir.join(".skillrag/cache/embeddings"))
            .map(|d| d.flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum())
            .unwrap_or(0)
    };
    // Each kill waits for an event, never for a fixed time, so a slow machine moves the kill
    // points with it: at once, once the new generation is being written, and once one and
    // then three batches of embeddings are in the cache (which the run after the kills reuses).
    enum KillPoint {
        AtStart,
        NewGeneration,
        CachedBatches(usize),
    }
    let mut cached_before_a_kill = false;
    for kill_point in
        [KillPoint::AtStart, KillPoint::NewGeneration, KillPoint::CachedBatches(1), KillPoint::CachedBatches(3)]
    {
        let when = match kill_point {
            KillPoint::AtStart => "at start".to_string(),
            KillPoint::NewGeneration => "once the new generation exists".to_string(),
            KillPoint::CachedBatches(n) => format!("once {n} batch(es) are cached"),
        };
        let before = cache_bytes();
        let (mut last_size, mut growths) = (before, 0);
        let mut child = skillrag(dir, &["index"]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let started = Instant::now();
        let finished_early = loop {
            let size = cache_bytes();
            if size > last_size {
                (last_size, growths) = (size, growths + 1);
            }
            let reached = match kill_point {
                KillPoint::AtStart => true,
                KillPoint::NewGeneration => backend != Backend::Embedded || gen2.exists(),
                KillPoint::CachedBatches(n) => growths >= n,
            };
            if reached {
                break false;
            }
            if child.try_wait().unwrap().is_some() {
                break true;
            }
            assert!(started.elapsed() < Duration::from_secs(300), "index never got to the kill point {when}");
            std::thread::sleep(Duration::from_millis(2));
        };
        child.kill().ok(); // SIGKILL
        child.wait().unwrap();
        assert!(!finished_early, "index finished before the kill {when}; make the test data bigger");
        cached_before_a_kill |= cache_bytes() > before;
        // The last good generation still answers.
        let result = search(dir);
        assert_eq!(result["hits"][0]["source"], "knowledge/report-0001.md", "after the kill {when}: {result}");
        let skills = json(dir, &["skills"]);
        assert_eq!(skills[0]["generation"], 1, "{skills}");
    }
    assert!(cached_before_a_kill, "no kill came after a batch was cached");
    // A complete run afterwards publishes the new generation (embeddings done before the kills are reused).
    let report = json(dir, &["index"]);
    assert_eq!(report["skills"][0]["generation"], 2, "{report}");
    assert!(report["skills"][0]["cache_hits"].as_u64().unwrap() > 0, "{report}");
    let result = json(dir, &["search", "station0040", "--skill", "big", "--mode", "bm25", "-k", "1"]);
    assert_eq!(result["hits"][0]["source"], "knowledge/report-0040.md");
    if backend == Backend::Embedded {
        let leftovers: Vec<_> = std::fs::read_dir(dir.join(".skillrag/index/big"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("gen-"))
            .collect();
        assert!(leftovers.len() <= 2, "old generations are cleaned up: {leftovers:?}");
    }
}

/// `migrate` copies every skill's generation to PostgreSQL and back without re-embedding; the
/// copies answer like the original.
#[test]
fn migrate_copies_indexes_both_ways() {
    if Backend::postgres_server().is_none() {
        return;
    }
    let src = common::demo_indexed();
    let pg = TestProject::new(Backend::Postgres);
    let url = pg.store_url().unwrap();
    let copied = json(src.path(), &["migrate", "--to", &url]);
    let copied = copied.as_array().unwrap();
    assert_eq!(copied.len(), 3, "{copied:?}");
    assert!(copied.iter().all(|c| c["chunks"].as_u64().unwrap() > 0 && c["generation"] == 1), "{copied:?}");

    let ask = |dir: &Path, store: Option<&str>, q: &str| -> Value {
        let mut cmd = skillrag(dir, &["ask", q, "--json"]);
        if let Some(s) = store {
            cmd.env("SKILLRAG_STORE", s);
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        common::comparable(serde_json::from_slice(&out.stdout).unwrap())
    };
    let questions =
        ["劳动合同期限两年的，试用期最长多久？", "How do I factory reset the router?", "普洱熟茶要洗茶吗？"];
    for q in questions {
        let (a, b) = (ask(src.path(), None, q), ask(src.path(), Some(&url), q));
        // BM25 scores differ in the last digits (tantivy stores document lengths quantized).
        let same = |v: &Value| (v["answer"].clone(), v["citations"].clone(), v["route"]["skills"].clone());
        assert_eq!(same(&a), same(&b), "{q}");
    }

    // And back, into a fresh copy of the project with no index of its own.
    let back = tempfile::tempdir().unwrap();
    common::copy_dir(src.path(), back.path());
    std::fs::remove_dir_all(back.path().join(".skillrag")).unwrap();
    let out = run(back.path(), &["migrate", "--from", &url, "--to", "embedded"]);
    assert!(stderr(&out).contains("copied 3 skill(s)"), "{}", stderr(&out));
    for q in questions {
        assert_eq!(ask(src.path(), None, q), ask(back.path(), None, q), "{q}");
    }
    let skills = json(back.path(), &["skills"]);
    assert!(skills.as_array().unwrap().iter().all(|s| s["index"]["state"] == "fresh"), "{skills}");

    let out = skillrag(src.path(), &["migrate", "--to", "embedded"]).output().unwrap();
    assert!(!out.status.success() && stderr(&out).contains("same store"), "{}", stderr(&out));
}

/// `skillrag … | head`: when the reader closes the pipe, the command ends quietly, as Unix tools
/// do, instead of panicking on the next write.
#[test]
fn a_closed_pipe_ends_a_command_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("long.md");
    std::fs::write(&file, format!("# Long\n\n{}", "A line of text that goes on for a while.\n".repeat(20_000)))
        .unwrap();
    let mut child =
        skillrag(tmp.path(), &["extract"]).arg(&file).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take()); // the reader goes away, as `head` does
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(out.status.code(), Some(101), "{err}");
}

/// The server presets of docs/llm.md and docs/rerank.md can run side by side with `skillrag
/// serve` (default :8080): different servers on different ports; and their commands are today's
/// (TEI's binary is `text-embeddings-router`, vLLM embeds with `--runner pooling`).
#[test]
fn documented_presets_do_not_clash() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    // (port, server kind, line): a table row's kind is its first cell, a command's its program.
    let mut servers: Vec<(String, String, String)> = Vec::new();
    for file in ["llm.md", "rerank.md"] {
        let text = std::fs::read_to_string(docs.join(file)).unwrap();
        let mut in_code = false;
        for line in text.lines() {
            if line.starts_with("```") {
                in_code = !in_code;
                continue;
            }
            let kind = if line.starts_with('|') {
                line.trim_start_matches('|').split('|').next().unwrap_or("").trim().to_lowercase()
            } else if in_code && !line.contains(" = ") {
                line.split_whitespace().next().unwrap_or("").to_string()
            } else {
                continue;
            };
            for marker in ["127.0.0.1:", "--port "] {
                for (i, _) in line.match_indices(marker) {
                    let port: String = line[i + marker.len()..].chars().take_while(char::is_ascii_digit).collect();
                    if !port.is_empty() {
                        servers.push((port, kind.clone(), line.to_string()));
                    }
                }
            }
        }
        assert!(!text.contains("text-embeddings-inference --"), "{file}: TEI's binary is text-embeddings-router");
        assert!(
            text.lines().filter(|l| l.contains("--task embed")).all(|l| l.contains("--runner pooling")),
            "{file}: vLLM's current flag is --runner pooling"
        );
    }
    assert!(servers.len() >= 8, "{servers:?}");
    for (port, kind, line) in &servers {
        assert_ne!(port, "8080", "a preset on skillrag serve's default port: {line}");
        let clash = servers.iter().find(|(p, k, _)| p == port && k != kind);
        assert!(clash.is_none(), "port {port}: `{line}` and `{}`", clash.map_or("", |c| c.2.as_str()));
    }
}

/// Issue 46 item 30: every question the quick start (`scripts/quickstart`) searches or asks
/// without the reader is answered right, and each search shows the chunk that holds the answer.
/// A question added to the script needs its right answer in [`common::QUICKSTART_RIGHT`]; its
/// `with_reader` lines are checked with the reader (tests/reader.rs).
#[test]
fn quickstart_shows_only_right_answers_and_the_chunks_that_hold_them() {
    let tmp = demo_indexed();
    let mut checked = 0;
    for (line, args, right) in common::quickstart_questions("run ") {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(tmp.path(), &args);
        let shown = String::from_utf8_lossy(&out.stdout);
        assert!(shown.contains(right), "{line}: shows no \"{right}\":\n{shown}");
        checked += 1;
    }
    assert!(checked >= 4, "the quick start searches and asks: {checked} line(s) checked");
}
