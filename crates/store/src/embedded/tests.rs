use super::*;
use crate::conformance;
use skillrag_core::{DocType, Filter};

crate::conformance_tests!(|_name: &str| {
    let tmp = tempfile::tempdir().unwrap();
    let store: Box<dyn Store> = Box::new(EmbeddedStore::new(tmp.path()));
    Some((tmp, store))
}, phrases: true);

#[test]
fn rejects_unsafe_skill_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::new(tmp.path());
    for bad in ["..", "a/b", "", "/etc"] {
        assert!(store.open(bad).is_err(), "{bad}");
    }
}

/// A store with skill `a` indexed once (two chunks with vectors), and the skill's folder.
fn indexed() -> (tempfile::TempDir, EmbeddedStore, std::path::PathBuf) {
    indexed_with(&[("one.md", "alpha beta", [1.0, 0.0]), ("two.md", "gamma delta", [0.0, 1.0])])
}

/// A store with skill `a` indexed once, one chunk per (source, text, vector), and its folder.
fn indexed_with(files: &[(&str, &str, [f32; 2])]) -> (tempfile::TempDir, EmbeddedStore, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::new(tmp.path().join("index"));
    let mut w = store.begin("a", conformance::meta(Some("m"))).unwrap();
    w.add(files.iter().map(|(source, text, vector)| conformance::new(source, 0, text, *vector)).collect()).unwrap();
    let sources: Vec<(&str, DocType)> = files.iter().map(|(source, ..)| (*source, DocType::General)).collect();
    w.commit(conformance::manifest(&sources)).unwrap();
    let dir = store.root().join("a");
    (tmp, store, dir)
}

fn assert_corrupt(result: Result<impl Sized, StoreError>, wanted: &str) {
    match result {
        Err(StoreError::Corrupt { skill, detail }) => {
            assert_eq!(skill, "a");
            assert!(detail.contains(wanted), "{detail}");
        }
        Err(e) => panic!("not Corrupt: {e}"),
        Ok(_) => panic!("not refused ({wanted})"),
    }
}

/// Rebuilds `a` after [`Store::repair`] and checks that it serves again.
fn rebuild_serves(store: &EmbeddedStore) -> Vec<String> {
    let done = store.repair("a").unwrap();
    let mut w = store.begin("a", conformance::meta(Some("m"))).unwrap();
    w.add(vec![conformance::new("one.md", 0, "alpha beta", [1.0, 0.0])]).unwrap();
    w.commit(conformance::manifest(&[("one.md", DocType::General)])).unwrap();
    let index = store.open("a").unwrap().expect("indexed");
    assert_eq!(index.dense(&[1.0, 0.0], 5, &Filter::none()).unwrap()[0].score, 1.0);
    assert!(store.check("a").unwrap().unwrap().checksummed);
    done
}

#[test]
fn a_flipped_vector_byte_is_reported_and_quarantined() {
    let (_tmp, store, dir) = indexed();
    let check = store.check("a").unwrap().unwrap();
    assert!(check.checksummed && check.files >= 6, "{check:?}");
    let vectors = dir.join("gen-00000001/vectors.f32");
    let mut bytes = std::fs::read(&vectors).unwrap();
    bytes[2] ^= 0x40; // still finite: only the checksum can tell
    std::fs::write(&vectors, &bytes).unwrap();

    assert_corrupt(store.open("a"), "gen-00000001: vectors.f32 does not match its checksum");
    assert_corrupt(store.check("a"), "vectors.f32");
    let done = rebuild_serves(&store);
    assert!(done[0].contains("moved gen-00000001 aside"), "{done:?}");
    let names: Vec<String> =
        std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().any(|n| n.starts_with("gen-00000001.corrupt-")), "{names:?}");
}

#[test]
fn a_flipped_tantivy_or_chunks_byte_is_reported() {
    for file in ["chunks.jsonl", "meta.json"] {
        let (_tmp, store, dir) = indexed();
        let path = dir.join("gen-00000001").join(file);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 3;
        bytes[last] ^= 0x01;
        std::fs::write(&path, &bytes).unwrap();
        assert_corrupt(store.open("a"), file);
    }
    let (_tmp, store, dir) = indexed();
    let tantivy = std::fs::read_dir(dir.join("gen-00000001/tantivy"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "idx"))
        .unwrap();
    let mut bytes = std::fs::read(&tantivy).unwrap();
    bytes[0] ^= 0x01;
    std::fs::write(&tantivy, &bytes).unwrap();
    assert_corrupt(store.open("a"), "tantivy/");
}

#[test]
fn a_generation_without_checksums_still_opens() {
    let (_tmp, store, dir) = indexed();
    std::fs::remove_file(dir.join("gen-00000001/checksums.json")).unwrap();
    assert!(store.open("a").unwrap().is_some());
    let check = store.check("a").unwrap().unwrap();
    assert!(!check.checksummed);
}

/// Damages a project (or store) folder in one way.
type Damage = fn(&std::path::Path);

#[test]
fn every_bad_current_is_corrupt_and_repaired_by_a_rebuild() {
    let cases: [(&str, Damage); 7] = [
        ("empty", |d| std::fs::write(d.join("CURRENT"), "").unwrap()),
        ("garbage", |d| std::fs::write(d.join("CURRENT"), [0xff, 0xfe, b'\n', 7]).unwrap()),
        ("escape", |d| std::fs::write(d.join("CURRENT"), "../../../../etc").unwrap()),
        ("other skill", |d| std::fs::write(d.join("CURRENT"), "../b/gen-00000001").unwrap()),
        ("missing generation", |d| std::fs::write(d.join("CURRENT"), "gen-00000042\n").unwrap()),
        ("folder", |d| {
            std::fs::remove_file(d.join("CURRENT")).unwrap();
            std::fs::create_dir(d.join("CURRENT")).unwrap();
        }),
        ("huge", |d| std::fs::write(d.join("CURRENT"), "gen-1".repeat(100)).unwrap()),
    ];
    for (name, damage) in cases {
        let (_tmp, store, dir) = indexed();
        damage(&dir);
        assert!(matches!(store.open("a"), Err(StoreError::Corrupt { .. })), "{name}: {:?}", store.open("a").err());
        assert!(matches!(store.generation("a"), Err(StoreError::Corrupt { .. })), "{name}");
        assert!(store.skills().unwrap().contains(&"a".to_string()), "{name}: still listed, to repair or remove");
        let done = rebuild_serves(&store);
        assert!(done.iter().any(|d| d.contains("CURRENT")), "{name}: {done:?}");
    }
}

/// `CURRENT` is read in one open that neither follows a symlink (which could name any file) nor
/// waits on a FIFO (which would hang every question).
#[cfg(unix)]
#[test]
fn a_current_that_is_a_symlink_or_a_pipe_is_corrupt_at_once() {
    let cases: [(&str, Damage); 2] = [
        ("symlink", |d| {
            std::fs::write(d.join("elsewhere"), "gen-00000001\n").unwrap();
            std::fs::remove_file(d.join("CURRENT")).unwrap();
            std::os::unix::fs::symlink(d.join("elsewhere"), d.join("CURRENT")).unwrap();
        }),
        ("fifo", |d| {
            std::fs::remove_file(d.join("CURRENT")).unwrap();
            assert!(std::process::Command::new("mkfifo").arg(d.join("CURRENT")).status().unwrap().success());
        }),
    ];
    for (name, damage) in cases {
        let (_tmp, store, dir) = indexed();
        damage(&dir);
        assert!(matches!(store.generation("a"), Err(StoreError::Corrupt { .. })), "{name}");
        assert!(matches!(store.open("a"), Err(StoreError::Corrupt { .. })), "{name}");
        let done = rebuild_serves(&store);
        assert!(done.iter().any(|d| d.contains("CURRENT")), "{name}: {done:?}");
    }
}

#[test]
fn a_file_in_place_of_a_folder_is_moved_aside() {
    // The whole index folder is a file.
    let (_tmp, store, _) = indexed();
    std::fs::remove_dir_all(store.root()).unwrap();
    std::fs::write(store.root(), "oops").unwrap();
    assert_corrupt(store.open("a"), "is a file, not a folder");
    let done = rebuild_serves(&store);
    assert!(done[0].contains("moved it aside"), "{done:?}");
    // The skill's folder is a file.
    let (_tmp, store, dir) = indexed();
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::write(&dir, "oops").unwrap();
    assert_corrupt(store.generation("a"), "is a file, not a folder");
    rebuild_serves(&store);
    // Even without repair, a writer replaces a bad CURRENT.
    let (_tmp, store, dir) = indexed();
    std::fs::write(dir.join("CURRENT"), "../../../../etc").unwrap();
    let mut w = store.begin("a", conformance::meta(Some("m"))).unwrap();
    w.add(vec![conformance::new("one.md", 0, "alpha beta", [1.0, 0.0])]).unwrap();
    w.commit(conformance::manifest(&[("one.md", DocType::General)])).unwrap();
    assert!(store.open("a").unwrap().is_some());
    // Numbered past the generation it replaced: a reader that cached 1 sees a new one.
    assert_eq!(store.generation("a").unwrap(), Some(2));
}

#[test]
fn phrase_counts_need_the_words_side_by_side_in_that_order() {
    let (_tmp, store, _) = indexed_with(&[
        ("one.md", "劳动关系自用工之日起建立", [1.0, 0.0]),
        ("two.md", "夫妻关系与劳动收入", [0.0, 1.0]),
        ("three.md", "the labour relationship ends", [0.0, 1.0]),
    ]);
    let index = store.open("a").unwrap().expect("indexed");
    let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
    let english = skillrag_text::analyze("labour relationship");
    let counts = index
        .phrase_doc_freqs(&[
            pair("劳动", "关系"),
            pair("关系", "劳动"),
            pair(&english[0], &english[1]),
            pair(&english[1], &english[0]),
            pair("夫妻", "收入"),
        ])
        .unwrap()
        .expect("the embedded store keeps positions");
    // Both Chinese chunks hold 劳动 and 关系; only the first holds the phrase 劳动关系.
    assert_eq!(index.doc_freqs(&["劳动".into(), "关系".into()]).unwrap(), [2, 2]);
    assert_eq!(counts, [1, 0, 1, 0, 0]);
}
