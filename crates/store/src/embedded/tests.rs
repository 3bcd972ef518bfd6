use super::*;
use crate::{FileEntry, Filter, Manifest, NewChunk};
use skillrag_core::{Chunk, DocType, Tier};

fn chunk(source: &str, ordinal: u32, text: &str) -> Chunk {
    Chunk {
        id: 0,
        skill: String::new(),
        source: source.into(),
        title: source.trim_end_matches(".md").into(),
        heading: vec![],
        ordinal,
        span: (0, text.chars().count()),
        doc_type: if source.starts_with("faq") { DocType::Faq } else { DocType::General },
        tier: Tier::References,
        mtime: 0,
        content_hash: format!("hash-{source}"),
        text: text.into(),
        pages: None,
        summary: None,
    }
}

fn new(source: &str, ordinal: u32, text: &str, vector: [f32; 2]) -> NewChunk {
    NewChunk { chunk: chunk(source, ordinal, text), vector: Some(vector.to_vec()), visibility: 1.0 }
}

fn manifest(sources: &[(&str, DocType)]) -> Manifest {
    let mut m = Manifest::default();
    for (s, d) in sources {
        m.files.insert(
            s.to_string(),
            FileEntry {
                content_hash: format!("hash-{s}"),
                mtime: 0,
                size: 1,
                chunks: 1,
                title: s.to_string(),
                doc_type: *d,
                tier: Tier::References,
                encoding: "UTF-8".into(),
                questions: vec![],
            },
        );
    }
    m
}

fn meta(model: Option<&str>) -> IndexMeta {
    IndexMeta::new("s", model.map(str::to_string), 2, "500/80".into())
}

fn terms(q: &str) -> Vec<String> {
    skillrag_text::analyze(q)
}

fn sources(index: &dyn SkillIndex, q: &str) -> Vec<String> {
    index.lexical(&terms(q), 10, &Filter::none()).unwrap().iter().map(|s| index.chunk(s.id).unwrap().source).collect()
}

fn first_generation(store: &EmbeddedStore) {
    let mut w = store.begin("s", meta(Some("m@1"))).unwrap();
    w.add(vec![
        new("a.md", 0, "用人单位自用工之日起即与劳动者建立劳动关系。", [1.0, 0.0]),
        new("b.md", 0, "The incubation period of the virus is five days.", [0.0, 1.0]),
        new("faq.md", 0, "How do I reset my password? Open settings.", [0.6, 0.8]),
    ])
    .unwrap();
    let m = w
        .commit(manifest(&[("a.md", DocType::General), ("b.md", DocType::General), ("faq.md", DocType::Faq)]))
        .unwrap();
    assert_eq!(m.generation, 1);
    assert_eq!(m.chunks, 3);
}

#[test]
fn writes_and_searches_a_generation() {
    let tmp = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::new(tmp.path());
    assert!(store.open("s").unwrap().is_none());
    first_generation(&store);
    let index = store.open("s").unwrap().unwrap();
    assert_eq!(index.len(), 3);
    assert_eq!(sources(index.as_ref(), "劳动关系"), vec!["a.md"]);
    assert_eq!(sources(index.as_ref(), "incubation periods"), vec!["b.md"]);
    let dense = index.dense(&[0.0, 1.0], 2, &Filter::none()).unwrap();
    assert_eq!(index.chunk(dense[0].id).unwrap().source, "b.md");
    assert_eq!(index.mean_visibility(), Some(1.0));
    assert_eq!(store.skills().unwrap(), vec!["s"]);
    assert!(store.size_on_disk("s").unwrap() > 0);
}

#[test]
fn filters_apply_to_both_lists() {
    let tmp = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::new(tmp.path());
    first_generation(&store);
    let index = store.open("s").unwrap().unwrap();
    let faq_only = Filter::none().with_doc_types(vec![DocType::Faq]);
    assert!(index.lexical(&terms("incubation password"), 10, &faq_only).unwrap().len() == 1);
    let dense = index.dense(&[0.0, 1.0], 10, &faq_only).unwrap();
    assert_eq!(dense.len(), 1);
    assert_eq!(index.chunk(dense[0].id).unwrap().source, "faq.md");
    // The filter does not change BM25 scores.
    let all = index.lexical(&terms("password"), 10, &Filter::none()).unwrap();
    let filtered = index.lexical(&terms("password"), 10, &faq_only).unwrap();
    assert_eq!(all, filtered);
}

#[test]
fn incremental_generation_keeps_changes_and_deletes() {
    let tmp = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::new(tmp.path());
    first_generation(&store);
    let before = store.open("s").unwrap().unwrap();
    let a_id = before.chunks_of("a.md")[0].id;

    let mut w = store.begin("s", meta(Some("m@1"))).unwrap();
    assert_eq!(w.keep("a.md").unwrap(), 1);
    w.add(vec![new("b.md", 0, "The incubation period was revised to seven days.", [0.0, 1.0])]).unwrap();
    // faq.md was deleted: neither kept nor added.
    let m = w.commit(manifest(&[("a.md", DocType::General), ("b.md", DocType::General)])).unwrap();
    assert_eq!(m.generation, 2);

    let after = store.open("s").unwrap().unwrap();
    assert_eq!(after.len(), 2);
    assert_eq!(after.chunks_of("a.md")[0].id, a_id, "kept chunk keeps its id");
    assert_eq!(sources(after.as_ref(), "劳动关系"), vec!["a.md"]);
    let b = after.chunks_of("b.md");
    assert!(b[0].text.contains("seven"));
    assert_eq!(sources(after.as_ref(), "incubation"), vec!["b.md"], "old b.md chunk must be gone");
    assert!(sources(after.as_ref(), "password").is_empty(), "deleted file must be gone");
    assert!(after.vector(b[0].id).is_some());
    // The old generation object still answers from its own files.
    assert_eq!(sources(before.as_ref(), "password"), vec!["faq.md"]);
}

#[test]
fn abandoned_writer_leaves_current_generation_serving() {
    let tmp = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::new(tmp.path());
    first_generation(&store);
    {
        let mut w = store.begin("s", meta(Some("m@1"))).unwrap();
        w.add(vec![new("z.md", 0, "half written", [1.0, 0.0])]).unwrap();
        // dropped without commit, like a crash
    }
    let index = store.open("s").unwrap().unwrap();
    assert_eq!(index.meta().generation, 1);
    assert!(sources(index.as_ref(), "half").is_empty());
    // The next writer cleans up and continues.
    let mut w = store.begin("s", meta(Some("m@1"))).unwrap();
    w.keep("a.md").unwrap();
    let m = w.commit(manifest(&[("a.md", DocType::General)])).unwrap();
    assert_eq!(m.generation, 2);
}

#[test]
fn changed_settings_start_fresh() {
    let tmp = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::new(tmp.path());
    first_generation(&store);
    let mut w = store.begin("s", meta(None)).unwrap();
    assert!(w.keep("a.md").is_err(), "cannot keep across a model change");
    w.add(vec![NewChunk { chunk: chunk("a.md", 0, "lexical only now"), vector: None, visibility: 0.0 }]).unwrap();
    w.commit(manifest(&[("a.md", DocType::General)])).unwrap();
    let index = store.open("s").unwrap().unwrap();
    assert_eq!(index.len(), 1);
    assert!(index.mean_visibility().is_none());
    assert!(index.dense(&[1.0, 0.0], 5, &Filter::none()).unwrap().is_empty());
    assert!(index.chunks_of("a.md")[0].id >= 3, "ids are never reused");
}

#[test]
fn one_writer_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::new(tmp.path());
    let _w = store.begin("s", meta(None)).unwrap();
    assert!(matches!(store.begin("s", meta(None)), Err(StoreError::Locked(_))));
}

#[test]
fn rejects_unsafe_skill_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::new(tmp.path());
    for bad in ["..", "a/b", "", "/etc"] {
        assert!(store.open(bad).is_err(), "{bad}");
    }
}
