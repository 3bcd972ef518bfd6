//! Index-path tests on real files. Embeddings come from a small deterministic embedder (hashed
//! bag of words) so the incremental and cache logic can be checked exactly; the real model is
//! exercised by the CLI integration tests.

use super::*;
use skillrag_embed::{EmbedError, EmbedKind, Embedding};
use std::fs;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Hashes words into a small vector; counts every text it embeds.
struct CountingEmbedder {
    id: String,
    calls: AtomicUsize,
}

impl CountingEmbedder {
    fn new(id: &str) -> Arc<Self> {
        Arc::new(CountingEmbedder { id: id.into(), calls: AtomicUsize::new(0) })
    }
}

impl Embedder for CountingEmbedder {
    fn model_id(&self) -> &str {
        &self.id
    }
    fn dim(&self) -> usize {
        16
    }
    fn embed(&self, texts: &[&str], _kind: EmbedKind) -> Result<Vec<Embedding>, EmbedError> {
        self.calls.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts
            .iter()
            .map(|t| {
                let mut v = vec![0.0f32; 16];
                for w in skillrag_text::analyze(t) {
                    let h = blake3::hash(w.as_bytes()).as_bytes()[0] as usize % 16;
                    v[h] += 1.0;
                }
                skillrag_embed::l2_normalize(&mut v);
                Embedding { vector: v, visibility: 1.0 }
            })
            .collect())
    }
}

fn write(path: &Path, text: impl AsRef<[u8]>) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A project with one good skill (`good`) holding two documents.
fn project() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    write(&root.join("skillrag.toml"), "[index]\nchunk_size = 200\nchunk_overlap = 40\n");
    write(
        &root.join("skills/good/SKILL.md"),
        "---\nname: good\ndescription: Labour law and product facts.\nmetadata:\n  triggers: 劳动合同, reset\n---\n# Good\n",
    );
    write(&root.join("skills/good/knowledge/law.md"), "# 劳动合同法\n\n第十条 建立劳动关系，应当订立书面劳动合同。\n");
    write(
        &root.join("skills/good/knowledge/faq.md"),
        "# FAQ\n\n## Reset\n\nHold the power button for ten seconds to reset the router.\n",
    );
    tmp
}

fn engine(root: &Path, embedder: Option<Arc<CountingEmbedder>>) -> Engine {
    let project = Project::open(root, &BTreeMap::new()).unwrap();
    let engine = Engine::open(project).unwrap();
    match embedder {
        Some(e) => engine.with_embedder(e),
        None => engine,
    }
}

fn top_source(engine: &Engine, skill: &str, query: &str) -> Option<String> {
    let options = SearchOptions { skills: vec![skill.into()], ..Default::default() };
    engine.search(query, &options).unwrap().hits.first().map(|h| h.source.clone())
}

fn index(engine: &Engine) -> IndexReport {
    engine.index(&IndexOptions::default(), &SilentProgress).unwrap()
}

#[test]
fn indexes_and_searches_both_languages() {
    let tmp = project();
    let e = engine(tmp.path(), Some(CountingEmbedder::new("m1")));
    let report = index(&e);
    assert_eq!(report.skills.len(), 1);
    assert_eq!(report.skills[0].files_changed, 2);
    assert_eq!(report.skills[0].chunks, 2);
    assert_eq!(top_source(&e, "good", "书面劳动合同").as_deref(), Some("knowledge/law.md"));
    assert_eq!(top_source(&e, "good", "how to reset the router").as_deref(), Some("knowledge/faq.md"));
    let result = e.search("reset", &SearchOptions { skills: vec!["good".into()], ..Default::default() }).unwrap();
    let hit = &result.hits[0];
    assert_eq!(hit.heading, "FAQ > Reset");
    assert!(hit.scores.bm25.is_some() && hit.scores.dense.is_some() && hit.scores.fused > 0.0);
    assert_eq!(hit.ranks.bm25, Some(1));
}

#[test]
fn traditional_and_simplified_chinese_find_each_other() {
    let tmp = project();
    write(
        &tmp.path().join("skills/good/knowledge/leave.md"),
        "# 年休假\n\n職工累計工作已滿1年不滿10年的，年休假5天。\n",
    );
    let e = engine(tmp.path(), None);
    index(&e);
    assert_eq!(top_source(&e, "good", "职工年休假几天").as_deref(), Some("knowledge/leave.md"));
    assert_eq!(top_source(&e, "good", "書面勞動合同").as_deref(), Some("knowledge/law.md"));
}

/// An embedder that cannot see Chinese, like all-MiniLM-L6-v2: it says so from "tokenizing".
struct BlindToChinese(Arc<CountingEmbedder>);

impl Embedder for BlindToChinese {
    fn model_id(&self) -> &str {
        self.0.model_id()
    }
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn embed(&self, texts: &[&str], kind: EmbedKind) -> Result<Vec<Embedding>, EmbedError> {
        self.0.embed(texts, kind)
    }
    fn visibility(&self, texts: &[&str], _kind: EmbedKind) -> Result<Vec<f32>, EmbedError> {
        let seen = |t: &str| {
            let letters: Vec<char> = t.chars().filter(|c| c.is_alphanumeric()).collect();
            letters.iter().filter(|c| c.is_ascii()).count() as f32 / letters.len().max(1) as f32
        };
        Ok(texts.iter().map(|t| seen(t)).collect())
    }
}

#[test]
fn passages_the_model_cannot_see_are_stored_without_a_vector() {
    let tmp = project();
    let counting = CountingEmbedder::new("m1");
    let e = engine(tmp.path(), None).with_embedder(Arc::new(BlindToChinese(counting.clone())));
    let r = index(&e);
    let s = &r.skills[0];
    assert_eq!((s.chunks, s.embedded, s.vectorless), (2, 1, 1), "{s:?}");
    assert_eq!(counting.calls.load(Ordering::SeqCst), 1, "the Chinese passage never reached the model");
    let sources = e.sources("good").unwrap();
    let law = sources.iter().find(|d| d.source == "knowledge/law.md").unwrap();
    assert_eq!((law.chunks, law.vectorless), (1, 1));
    assert_eq!(e.skill_status(&e.skills()[0]).unwrap().vectorless, 1);
    // Found by BM25; the dense list holds only what has a vector.
    assert_eq!(top_source(&e, "good", "书面劳动合同").as_deref(), Some("knowledge/law.md"));
    let dense = SearchOptions { mode: skillrag_core::Mode::Dense, ..Default::default() };
    let hits = e.search("劳动合同", &dense).unwrap().hits;
    assert!(hits.iter().all(|h| h.source == "knowledge/faq.md"), "{hits:?}");
    // Nothing changed: nothing is asked of the model again (the searches embedded their queries).
    let before = counting.calls.load(Ordering::SeqCst);
    let again = index(&e);
    assert_eq!((again.skills[0].generation, again.skills[0].vectorless), (None, 1));
    assert_eq!(counting.calls.load(Ordering::SeqCst), before);
}

#[test]
fn incremental_runs_touch_only_what_changed() {
    let tmp = project();
    let root = tmp.path();
    let embedder = CountingEmbedder::new("m1");
    let e = engine(root, Some(embedder.clone()));
    index(&e);
    assert_eq!(embedder.calls.load(Ordering::SeqCst), 2);

    // Nothing changed: no new generation, nothing embedded.
    let r = index(&e);
    assert_eq!(r.skills[0].generation, None);
    assert_eq!(embedder.calls.load(Ordering::SeqCst), 2);

    // One file changed: only its chunks are embedded.
    write(
        &root.join("skills/good/knowledge/faq.md"),
        "# FAQ\n\n## Reset\n\nUse the reset pin on the back of the router.\n",
    );
    let r = index(&e);
    let s = &r.skills[0];
    assert_eq!((s.files_changed, s.files_unchanged, s.embedded), (1, 1, 1));
    assert_eq!(embedder.calls.load(Ordering::SeqCst), 3);
    let hits = e.search("pin", &SearchOptions::default()).unwrap().hits;
    assert_eq!(hits[0].source, "knowledge/faq.md");
    // Dense retrieval always returns its nearest chunks, so check the old words with BM25 alone.
    let bm25 = SearchOptions { mode: skillrag_core::Mode::Lexical, ..Default::default() };
    assert!(e.search("power button", &bm25).unwrap().hits.is_empty(), "old text is gone");

    // Changing it back is served from the embedding cache.
    write(
        &root.join("skills/good/knowledge/faq.md"),
        "# FAQ\n\n## Reset\n\nHold the power button for ten seconds to reset the router.\n",
    );
    let r = index(&e);
    assert_eq!((r.skills[0].embedded, r.skills[0].cache_hits), (0, 1));

    // A deleted file disappears.
    fs::remove_file(root.join("skills/good/knowledge/faq.md")).unwrap();
    let r = index(&e);
    assert_eq!(r.skills[0].files_deleted, 1);
    assert!(e.search("router", &bm25).unwrap().hits.is_empty());
    assert_eq!(e.sources("good").unwrap().len(), 1);
}

#[test]
fn model_change_rebuilds_with_a_reason_and_status_says_stale() {
    let tmp = project();
    let e = engine(tmp.path(), Some(CountingEmbedder::new("m1")));
    index(&e);
    assert_eq!(e.status().unwrap()[0].index, Freshness::Fresh);

    let e2 = engine(tmp.path(), Some(CountingEmbedder::new("m2")));
    match &e2.status().unwrap()[0].index {
        Freshness::Stale(reason) => assert!(reason.contains("embedding model changed (m1 → m2)"), "{reason}"),
        other => panic!("expected stale, got {other:?}"),
    }
    // Searching with the other model still answers lexically and says why dense was skipped.
    let result = e2.search("router", &SearchOptions::default()).unwrap();
    assert_eq!(result.hits[0].source, "knowledge/faq.md");
    assert!(result.skills[0].notice.as_deref().unwrap_or("").contains("skillrag index"));
    assert_eq!(result.hits[0].scores.dense, None);

    let r = index(&e2);
    assert!(r.skills[0].rebuilt.as_deref().unwrap().contains("embedding model changed"));
    assert_eq!(e2.status().unwrap()[0].index, Freshness::Fresh);
}

#[test]
fn lexical_only_without_model() {
    let tmp = project();
    let e = engine(tmp.path(), None);
    index(&e);
    let result = e.search("劳动关系", &SearchOptions::default()).unwrap();
    assert_eq!(result.hits[0].source, "knowledge/law.md");
    assert_eq!(result.skills[0].dense_skipped.as_deref(), Some("no embedding model configured"));
}

#[test]
fn unindexed_and_unknown_skills() {
    let tmp = project();
    let e = engine(tmp.path(), None);
    let err = e.search("x", &SearchOptions { skills: vec!["good".into()], ..Default::default() }).unwrap_err();
    assert!(err.to_string().contains("run `skillrag index --skill good`"), "{err}");
    let err = e.search("x", &SearchOptions { skills: vec!["nope".into()], ..Default::default() }).unwrap_err();
    assert!(err.to_string().contains("unknown skill `nope` (skills: good)"), "{err}");
    let all = e.search("x", &SearchOptions::default()).unwrap();
    assert!(all.skills[0].notice.is_some());
}

#[test]
fn not_a_project() {
    let tmp = tempfile::tempdir().unwrap();
    let err = Project::open(tmp.path(), &BTreeMap::new()).unwrap_err();
    assert!(err.to_string().contains("skillrag init"), "{err}");
}

#[test]
fn removed_skill_loses_its_index() {
    let tmp = project();
    let root = tmp.path();
    write(&root.join("skills/other/SKILL.md"), "---\nname: other\ndescription: d\n---\n");
    write(&root.join("skills/other/references/a.md"), "Other text.");
    let e = engine(root, None);
    index(&e);
    fs::remove_dir_all(root.join("skills/other")).unwrap();
    let e = engine(root, None);
    let r = index(&e);
    assert_eq!(r.removed, vec!["other"]);
}

// ---- Bad input: each gets a message naming the file, and everything else still indexes. ----

/// Indexes the project and returns the diagnostics as text; the good skill must still answer.
fn index_with_bad_input(root: &Path) -> Vec<String> {
    let e = engine(root, None);
    let report = index(&e);
    assert!(report.skills.iter().any(|s| s.skill == "good"), "the good skill was not indexed");
    assert_eq!(top_source(&e, "good", "劳动关系").as_deref(), Some("knowledge/law.md"));
    report.diagnostics.iter().map(|d| d.to_string()).collect()
}

fn assert_reported(diags: &[String], file: &str, words: &str) {
    assert!(diags.iter().any(|d| d.contains(file) && d.contains(words)), "no `{words}` for {file} in {diags:#?}");
}

#[test]
fn bad_malformed_yaml() {
    let tmp = project();
    write(&tmp.path().join("skills/broken/SKILL.md"), "---\nname: broken\ndescription: [oops\n---\n");
    let d = index_with_bad_input(tmp.path());
    assert_reported(&d, "broken/SKILL.md:", "malformed YAML");
}

#[test]
fn bad_skill_folder_without_skill_md() {
    let tmp = project();
    write(&tmp.path().join("skills/no-skill-file/knowledge/a.md"), "text");
    let d = index_with_bad_input(tmp.path());
    assert_reported(&d, "no-skill-file", "no SKILL.md");
}

#[test]
fn bad_name_not_folder() {
    let tmp = project();
    write(&tmp.path().join("skills/folder-name/SKILL.md"), "---\nname: other-name\ndescription: d\n---\n");
    let d = index_with_bad_input(tmp.path());
    assert_reported(&d, "folder-name/SKILL.md:2", "does not match the folder name");
}

#[test]
fn bad_empty_knowledge_folder() {
    let tmp = project();
    write(&tmp.path().join("skills/empty/SKILL.md"), "---\nname: empty\ndescription: d\n---\n");
    fs::create_dir_all(tmp.path().join("skills/empty/knowledge")).unwrap();
    let d = index_with_bad_input(tmp.path());
    assert_reported(&d, "empty/SKILL.md", "has no knowledge files");
}

#[test]
fn bad_gbk_file_is_decoded() {
    let tmp = project();
    let (gbk, _, _) = encoding_rs::GBK.encode("第九条 用人单位招用劳动者，不得扣押劳动者的居民身份证和其他证件。");
    write(&tmp.path().join("skills/good/knowledge/gbk.txt"), &gbk);
    let e = engine(tmp.path(), None);
    index(&e);
    assert_eq!(top_source(&e, "good", "居民身份证").as_deref(), Some("knowledge/gbk.txt"));
    let sources = e.sources("good").unwrap();
    let gbk = sources.iter().find(|s| s.source == "knowledge/gbk.txt").unwrap();
    assert!(gbk.encoding == "GBK" || gbk.encoding == "gb18030", "{}", gbk.encoding);
}

#[test]
fn bad_binary_file() {
    let tmp = project();
    write(&tmp.path().join("skills/good/knowledge/image.txt"), [0x89, b'P', b'N', b'G', 0, 0, 0, 13, 0xff, 0x00]);
    let d = index_with_bad_input(tmp.path());
    assert_reported(&d, "knowledge/image.txt", "binary file");
}

#[test]
fn bad_50_mb_single_line_file() {
    let tmp = project();
    let path = tmp.path().join("skills/good/knowledge/huge.txt");
    write(&path, "");
    let f = fs::File::create(&path).unwrap();
    f.set_len(50 * 1024 * 1024).unwrap(); // sparse: 50 MB on one "line" without writing it
    let d = index_with_bad_input(tmp.path());
    assert_reported(&d, "knowledge/huge.txt", "above the 32 MB limit");
}

#[cfg(unix)]
#[test]
fn bad_symlink_loop() {
    let tmp = project();
    let k = tmp.path().join("skills/good/knowledge");
    fs::create_dir_all(k.join("sub")).unwrap();
    std::os::unix::fs::symlink(&k, k.join("sub/loop")).unwrap();
    let d = index_with_bad_input(tmp.path());
    assert_reported(&d, "knowledge/sub/loop", "symlink loop");
}

#[cfg(unix)]
#[test]
fn bad_unreadable_file() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = project();
    let path = tmp.path().join("skills/good/knowledge/secret.md");
    write(&path, "secret");
    fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
    let readable_anyway = fs::read(&path).is_ok(); // root ignores permissions
                                                   // A dangling link is unreadable for everyone, root included.
    std::os::unix::fs::symlink(tmp.path().join("missing.md"), tmp.path().join("skills/good/knowledge/dangling.md"))
        .unwrap();
    let d = index_with_bad_input(tmp.path());
    assert_reported(&d, "knowledge/dangling.md", "broken symlink");
    if !readable_anyway {
        assert_reported(&d, "knowledge/secret.md", "Permission denied");
    }
}

#[cfg(target_os = "linux")]
#[test]
fn bad_non_utf8_file_name() {
    use std::os::unix::ffi::OsStrExt;
    let tmp = project();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.md");
    write(&tmp.path().join("skills/good/knowledge").join(name), "text");
    let d = index_with_bad_input(tmp.path());
    assert_reported(&d, "knowledge/caf", "not valid UTF-8");
}

#[test]
fn bad_two_skills_with_the_same_name() {
    let tmp = project();
    write(
        &tmp.path().join("skillrag.toml"),
        "skills = [\"skills\", \"more-skills\"]\n[index]\nchunk_size = 200\nchunk_overlap = 40\n",
    );
    write(&tmp.path().join("more-skills/good/SKILL.md"), "---\nname: good\ndescription: duplicate\n---\n");
    let d = index_with_bad_input(tmp.path());
    assert_reported(&d, "more-skills/good/SKILL.md", "already defined");
}

#[test]
fn a_broken_file_keeps_its_previous_version() {
    let tmp = project();
    let e = engine(tmp.path(), None);
    index(&e);
    write(&tmp.path().join("skills/good/knowledge/faq.md"), [0u8, 159, 146, 150, 0, 1]);
    let r = index(&e);
    assert_eq!(r.skills[0].files_failed, 1);
    assert!(r.diagnostics.iter().any(|d| d.message.contains("previously indexed version stays searchable")));
    assert_eq!(top_source(&e, "good", "router").as_deref(), Some("knowledge/faq.md"));
}

/// A new knowledge file that answers "quarantine mode" (no other file does).
fn add_quarantine_note(root: &Path) {
    write(&root.join("skills/good/knowledge/new.md"), "# New\n\nThe quarantine mode ends after thirty seconds.\n");
}

#[test]
fn pinned_engine_keeps_its_generation_until_reopened() {
    let tmp = project();
    let writer = engine(tmp.path(), None);
    index(&writer);
    let served = engine(tmp.path(), None).pin_generations().unwrap();
    let unpinned = engine(tmp.path(), None);
    let first = served.served_generations();
    assert_eq!(first["good"], Some(1));

    add_quarantine_note(tmp.path());
    index(&writer);
    assert_eq!(served.published_generations().unwrap()["good"], Some(2));
    assert_eq!(served.served_generations(), first, "a pinned engine does not switch by itself");
    assert_eq!(top_source(&served, "good", "quarantine mode"), None, "it answers from its own generation");
    assert_eq!(top_source(&unpinned, "good", "quarantine mode").as_deref(), Some("knowledge/new.md"));
    let reopened = engine(tmp.path(), None).pin_generations().unwrap();
    assert_eq!(reopened.served_generations()["good"], Some(2));
}

#[test]
fn unpinned_engine_serves_another_writers_generation_after_the_refresh_interval() {
    let tmp = project();
    let writer = engine(tmp.path(), None);
    index(&writer);
    let reader = engine(tmp.path(), None);
    assert_eq!(top_source(&reader, "good", "quarantine mode"), None);
    add_quarantine_note(tmp.path());
    index(&writer);
    // Its own index is served at once; another engine's within the refresh interval.
    assert_eq!(top_source(&writer, "good", "quarantine mode").as_deref(), Some("knowledge/new.md"));
    std::thread::sleep(REFRESH_INTERVAL + std::time::Duration::from_millis(50));
    assert_eq!(top_source(&reader, "good", "quarantine mode").as_deref(), Some("knowledge/new.md"));
    assert_eq!(reader.served_generations()["good"], Some(2));
}

#[test]
fn pinned_engine_waits_for_reopening_to_serve_a_new_index() {
    let tmp = project();
    let served = engine(tmp.path(), None).pin_generations().unwrap();
    index(&engine(tmp.path(), None));
    assert_eq!(served.published_generations().unwrap()["good"], Some(1));
    assert!(served.index_of("good").unwrap().is_none(), "not indexed when pinned: served after reopening");
    assert_eq!(served.served_generations()["good"], None);
}

/// A lock released a moment after indexing starts (as one a forked child holds until its exec)
/// is waited for; one held on is `Busy`.
#[test]
fn a_briefly_held_index_lock_is_waited_for_and_a_held_one_is_busy() {
    let tmp = project();
    let lock_path = tmp.path().join(".skillrag/index.lock");
    fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    let hold = |for_ms: u64| {
        let file = fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path).unwrap();
        file.try_lock().unwrap();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(for_ms));
            drop(file);
        })
    };
    let released = hold(300);
    assert!(index(&engine(tmp.path(), None)).skills.iter().all(|s| s.error.is_none()));
    released.join().unwrap();
    let held = hold(4000);
    let error = engine(tmp.path(), None).index(&IndexOptions::default(), &SilentProgress).unwrap_err();
    assert!(matches!(error, EngineError::Busy(_)), "{error}");
    held.join().unwrap();
}

// ---- Integrity: damaged caches and indexes are detected, skipped and repaired. ----

fn rebuild(engine: &Engine) -> IndexReport {
    engine.index(&IndexOptions { rebuild: true, ..Default::default() }, &SilentProgress).unwrap()
}

/// Flips bytes in the middle of a file.
fn flip(path: &Path, at: usize, len: usize) {
    let mut bytes = fs::read(path).unwrap();
    let at = at.min(bytes.len() - len);
    for b in &mut bytes[at..at + len] {
        *b ^= 0xa5;
    }
    fs::write(path, bytes).unwrap();
}

/// The project with a second skill, `other`.
fn two_skills() -> tempfile::TempDir {
    let tmp = project();
    write(
        &tmp.path().join("skills/other/SKILL.md"),
        "---\nname: other\ndescription: Gardening notes.\nmetadata:\n  triggers: tomato\n---\n# Other\n",
    );
    write(&tmp.path().join("skills/other/knowledge/garden.md"), "# Garden\n\nWater the tomato plants every morning.\n");
    tmp
}

#[test]
fn damaged_cache_records_are_dropped_counted_and_recomputed() {
    let tmp = project();
    let embedder = CountingEmbedder::new("m1");
    index(&engine(tmp.path(), Some(embedder.clone())));
    let cache = tmp.path().join(".skillrag/cache/embeddings/m1.bin");
    // Header 12 bytes, records of 16 + 4 + 64 + 8: damage the second record's vector.
    flip(&cache, 12 + 92 + 30, 8);
    let before = embedder.calls.load(Ordering::SeqCst);
    let e = engine(tmp.path(), Some(embedder.clone()));
    let report = rebuild(&e);
    assert_eq!(report.cache_dropped, 1);
    assert_eq!(report.skills[0].cache_hits, 1);
    assert_eq!(embedder.calls.load(Ordering::SeqCst) - before, 1, "only the damaged record is embedded again");
    let result = e.search("reset the router", &SearchOptions::default()).unwrap();
    assert!(result.hits.iter().all(|h| h.scores.dense.is_none_or(|d| d.is_finite() && d.abs() <= 1.001)));
    // Reported once: the file was rewritten without it.
    assert_eq!(rebuild(&engine(tmp.path(), Some(embedder))).cache_dropped, 0);
}

#[test]
fn damaged_vectors_are_reported_by_doctor_and_rebuilt_by_index() {
    let tmp = project();
    let e = engine(tmp.path(), Some(CountingEmbedder::new("m1")));
    index(&e);
    assert_eq!(e.doctor().unwrap().problems, 0);
    let generation = tmp.path().join(".skillrag/index/good/gen-00000001");
    flip(&generation.join("vectors.f32"), 20, 2);

    let e = engine(tmp.path(), Some(CountingEmbedder::new("m1")));
    let found = e.doctor().unwrap();
    assert_eq!((found.problems, found.skills[0].state), (1, "damaged"));
    assert!(found.skills[0].problem.as_deref().unwrap().contains("vectors.f32"), "{found:?}");
    // Plain `index` does not call it up to date: it quarantines and rebuilds.
    let report = index(&e);
    let skill = &report.skills[0];
    assert!(skill.rebuilt.as_deref().unwrap().contains("damaged"), "{skill:?}");
    assert_eq!(skill.generation, Some(2));
    assert!(skill.repaired[0].contains("moved gen-00000001 aside"), "{skill:?}");
    assert!(!generation.exists());
    let after = e.doctor().unwrap();
    assert_eq!(after.problems, 0);
    // The damaged generation is listed for the user to delete, with its size.
    let set_aside = &after.skills[0].set_aside;
    assert_eq!(set_aside.len(), 1, "{after:?}");
    assert!(set_aside[0].path.contains("gen-00000001.corrupt-") && set_aside[0].bytes > 0, "{set_aside:?}");
    assert_eq!(top_source(&e, "good", "how to reset the router").as_deref(), Some("knowledge/faq.md"));
}

#[test]
fn doctor_repair_rebuilds_damaged_skills_and_cache() {
    let tmp = project();
    let e = engine(tmp.path(), Some(CountingEmbedder::new("m1")));
    index(&e);
    flip(&tmp.path().join(".skillrag/index/good/gen-00000001/chunks.jsonl"), 10, 1);
    flip(&tmp.path().join(".skillrag/cache/embeddings/m1.bin"), 40, 1);
    let e = engine(tmp.path(), Some(CountingEmbedder::new("m1")));
    let found = e.doctor().unwrap();
    assert_eq!(found.problems, 2, "{found:?}");
    let after = e.doctor_repair(&found, &SilentProgress).unwrap();
    assert_eq!(after.problems, 0, "{after:?}");
    assert!(after.repaired.iter().any(|r| r.contains("rebuilt as generation")), "{:?}", after.repaired);
    assert!(after.repaired.iter().any(|r| r.contains("dropped 1 damaged record")), "{:?}", after.repaired);
}

/// Damages a project (or store) folder in one way.
type Damage = fn(&std::path::Path);

#[test]
fn every_bad_current_and_file_in_the_way_is_repaired_by_rebuild() {
    const CURRENT: &str = ".skillrag/index/good/CURRENT";
    let cases: [(&str, Damage); 8] = [
        ("empty", |r| write(&r.join(CURRENT), "")),
        ("garbage", |r| write(&r.join(CURRENT), [0u8, 0xff, 0x13, b'x'])),
        ("escape", |r| write(&r.join(CURRENT), "../../../../etc")),
        ("other skill", |r| write(&r.join(CURRENT), "../other/gen-00000001")),
        ("folder", |r| {
            fs::remove_file(r.join(CURRENT)).unwrap();
            fs::create_dir(r.join(CURRENT)).unwrap();
        }),
        ("index is a file", |r| {
            fs::remove_dir_all(r.join(".skillrag/index")).unwrap();
            write(&r.join(".skillrag/index"), "x");
        }),
        ("skill folder is a file", |r| {
            fs::remove_dir_all(r.join(".skillrag/index/good")).unwrap();
            write(&r.join(".skillrag/index/good"), "x");
        }),
        ("state is a file", |r| {
            fs::remove_dir_all(r.join(".skillrag")).unwrap();
            write(&r.join(".skillrag"), "x");
        }),
    ];
    for (name, damage) in cases {
        let tmp = two_skills();
        index(&engine(tmp.path(), None));
        damage(tmp.path());
        let e = engine(tmp.path(), None);
        let report = rebuild(&e);
        let repaired: Vec<&String> =
            report.repaired.iter().chain(report.skills.iter().flat_map(|s| &s.repaired)).collect();
        assert!(!repaired.is_empty(), "{name}: a notice says what was moved aside");
        assert_eq!(top_source(&e, "good", "how to reset the router").as_deref(), Some("knowledge/faq.md"), "{name}");
        assert_eq!(e.doctor().unwrap().problems, 0, "{name}");
    }
}

#[test]
fn a_damaged_skill_is_skipped_and_the_others_answer() {
    let tmp = two_skills();
    index(&engine(tmp.path(), None));
    write(&tmp.path().join(".skillrag/index/good/CURRENT"), "../../../../etc");

    let e = engine(tmp.path(), None);
    let result = e.search("tomato", &SearchOptions::default()).unwrap();
    assert_eq!(result.hits[0].skill, "other");
    let notice = result.skills.iter().find(|s| s.skill == "good").and_then(|s| s.notice.clone()).unwrap();
    assert!(notice.contains("skill `good` is corrupt") && notice.contains("index --skill good --rebuild"), "{notice}");
    let status = e.status().unwrap();
    assert!(matches!(&status[0].index, Freshness::Damaged(m) if m.contains("CURRENT")), "{:?}", status[0].index);
    assert_eq!(status[1].index, Freshness::Fresh);
    assert_eq!(e.damaged_skills().unwrap().len(), 1);
    // Asked for by name, it is an error that says how to repair it.
    let err = e.search("reset", &SearchOptions { skills: vec!["good".into()], ..Default::default() }).unwrap_err();
    assert!(err.to_string().contains("--rebuild"), "{err}");
    // A server pins the others and does not reload in a loop.
    let served = engine(tmp.path(), None).pin_generations().unwrap();
    assert_eq!(served.published_generations().unwrap(), served.served_generations());
    assert_eq!(served.served_generations()["other"], Some(1));
}
