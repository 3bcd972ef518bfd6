//! The store conformance suite: every test runs against each `Store` implementation, the
//! embedded one always and PostgreSQL when `SKILLRAG_TEST_POSTGRES` names a server
//! (`scripts/test` starts one). Public behind the `testkit` feature, so that a store written
//! elsewhere runs the same suite: `skillrag_store::conformance_tests!(open, phrases: true)`.

use crate::{FileEntry, IndexMeta, Manifest, NewChunk, SkillIndex, Store, StoreError};

/// One `#[test]` per conformance test. `$open` makes a fresh store for a test name and returns
/// it with whatever must live as long as it (a temp folder, a database schema), or `None` to
/// skip (no server to test against). `phrases` says whether the store keeps term positions
/// and so counts [`SkillIndex::phrase_doc_freqs`].
#[macro_export]
macro_rules! conformance_tests {
    ($open:expr, phrases: $phrases:expr) => {
        $crate::conformance_tests!(
            @each $open;
            writes_and_searches_a_generation,
            filters_apply_to_both_lists,
            incremental_generation_keeps_changes_and_deletes,
            abandoned_writer_leaves_current_generation_serving,
            changed_settings_start_fresh,
            passages_the_model_cannot_see_have_no_vector,
            one_writer_at_a_time,
            import_keeps_ids,
            remove_forgets_a_skill,
            reimport_replaces_the_generation,
            doc_freqs_count_chunks,
        );
        #[test]
        fn phrase_doc_freqs_count_neighbours() {
            let Some((_alive, store)) = ($open)("phrase_doc_freqs_count_neighbours") else { return };
            $crate::conformance::phrase_doc_freqs_count_neighbours(store.as_ref(), $phrases);
        }
    };
    (@each $open:expr; $($name:ident),* $(,)?) => {$(
        #[test]
        fn $name() {
            let Some((_alive, store)) = ($open)(stringify!($name)) else { return };
            $crate::conformance::$name(store.as_ref());
        }
    )*};
}
use skillrag_core::{Chunk, DocType, Filter, Tier};

pub fn chunk(source: &str, ordinal: u32, text: &str) -> Chunk {
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
        table_header: None,
        ocr_confidence: None,
        keywords: Vec::new(),
        questions: Vec::new(),
    }
}

pub fn new(source: &str, ordinal: u32, text: &str, vector: [f32; 2]) -> NewChunk {
    NewChunk { chunk: chunk(source, ordinal, text), vector: Some(vector.to_vec()), visibility: 1.0 }
}

pub fn manifest(sources: &[(&str, DocType)]) -> Manifest {
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
                vectorless: 0,
                ocr_pages: Vec::new(),
                image: None,
                edits: None,
                indexed_at: None,
            },
        );
    }
    m
}

pub fn meta(model: Option<&str>) -> IndexMeta {
    IndexMeta::new("s", model.map(str::to_string), 2, "500/80".into())
}

pub fn terms(q: &str) -> Vec<String> {
    skillrag_text::analyze(q)
}

pub fn sources(index: &dyn SkillIndex, q: &str) -> Vec<String> {
    index.lexical(&terms(q), 10, &Filter::none()).unwrap().iter().map(|s| index.chunk(s.id).unwrap().source).collect()
}

pub fn first_generation(store: &dyn Store) {
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

pub fn writes_and_searches_a_generation(store: &dyn Store) {
    assert!(store.open("s").unwrap().is_none());
    first_generation(store);
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

pub fn filters_apply_to_both_lists(store: &dyn Store) {
    first_generation(store);
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

pub fn incremental_generation_keeps_changes_and_deletes(store: &dyn Store) {
    first_generation(store);
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
    assert!(after.vector(b[0].id).and_then(|(v, _)| v).is_some());
    // The old generation object still answers from its own files.
    assert_eq!(sources(before.as_ref(), "password"), vec!["faq.md"]);
}

pub fn abandoned_writer_leaves_current_generation_serving(store: &dyn Store) {
    first_generation(store);
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

pub fn changed_settings_start_fresh(store: &dyn Store) {
    first_generation(store);
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

/// A passage the model could not see is stored without a vector: searched lexically, never
/// densely, counted in the mean visibility and in `vectorless`, and kept or copied as it is.
pub fn passages_the_model_cannot_see_have_no_vector(store: &dyn Store) {
    let mut w = store.begin("s", meta(Some("m@1"))).unwrap();
    let unseen = NewChunk { chunk: chunk("zh.md", 0, "劳动合同 unseen passage"), vector: None, visibility: 0.2 };
    w.add(vec![new("a.md", 0, "a seen passage", [1.0, 0.0]), unseen]).unwrap();
    let m = w.commit(manifest(&[("a.md", DocType::General), ("zh.md", DocType::General)])).unwrap();
    assert_eq!(m.vectorless, 1);
    let index = store.open("s").unwrap().unwrap();
    assert_eq!(index.len(), 2);
    assert!((index.mean_visibility().unwrap() - 0.6).abs() < 1e-6, "the unseen passage counts");
    let dense: Vec<_> = index.dense(&[0.0, 1.0], 5, &Filter::none()).unwrap();
    let zh = index.chunks_of("zh.md")[0].id;
    assert_eq!(dense.len(), 1, "only the passage with a vector is searched densely");
    assert_ne!(dense[0].id, zh);
    assert_eq!(sources(index.as_ref(), "劳动合同"), vec!["zh.md"], "still found lexically");
    assert_eq!(index.vector(zh), Some((None, 0.2)));
    assert_eq!(index.meta().vectorless, 1);
    // Kept into the next generation, and exported, as it is.
    let mut w = store.begin("s", meta(Some("m@1"))).unwrap();
    w.keep("zh.md").unwrap();
    let m = w.commit(manifest(&[("zh.md", DocType::General)])).unwrap();
    assert_eq!(m.vectorless, 1);
    let index = store.open("s").unwrap().unwrap();
    let exported = index.export("zh.md").unwrap();
    assert_eq!((exported[0].vector.clone(), exported[0].visibility), (None, 0.2));
}

pub fn one_writer_at_a_time(store: &dyn Store) {
    let _w = store.begin("s", meta(None)).unwrap();
    assert!(matches!(store.begin("s", meta(None)), Err(StoreError::Locked(_))));
}

pub fn import_keeps_ids(store: &dyn Store) {
    let mut w = store.begin("s", meta(Some("m@1"))).unwrap();
    let mut a = new("a.md", 0, "imported with its id", [1.0, 0.0]);
    a.chunk.id = 41;
    let mut b = new("b.md", 0, "another imported chunk", [0.0, 1.0]);
    b.chunk.id = 7;
    w.import(vec![a, b]).unwrap();
    let m = w.commit(manifest(&[("a.md", DocType::General), ("b.md", DocType::General)])).unwrap();
    assert_eq!(m.next_chunk_id, 42);
    let index = store.open("s").unwrap().unwrap();
    assert_eq!(index.chunk(41).unwrap().source, "a.md");
    assert_eq!(index.chunk(7).unwrap().source, "b.md");
    assert_eq!(index.vector(7).unwrap().0, Some(vec![0.0, 1.0]));
    // The sequence continues after the largest imported id.
    let mut w = store.begin("s", meta(Some("m@1"))).unwrap();
    w.keep("a.md").unwrap();
    w.add(vec![new("c.md", 0, "added after the import", [0.6, 0.8])]).unwrap();
    w.commit(manifest(&[("a.md", DocType::General), ("c.md", DocType::General)])).unwrap();
    let index = store.open("s").unwrap().unwrap();
    assert_eq!(index.chunks_of("c.md")[0].id, 42);
    assert!(index.chunks_of("b.md").is_empty());
    assert_eq!(index.len(), 2);
}

pub fn remove_forgets_a_skill(store: &dyn Store) {
    first_generation(store);
    assert_eq!(store.generation("s").unwrap(), Some(1));
    store.remove("s").unwrap();
    assert!(store.open("s").unwrap().is_none());
    assert_eq!(store.generation("s").unwrap(), None);
    assert!(store.skills().unwrap().is_empty());
    // Indexing again starts over.
    first_generation(store);
}

/// Importing the same ids again (a second `migrate` into the same store) replaces the generation.
pub fn reimport_replaces_the_generation(store: &dyn Store) {
    for text in ["first copy", "second copy"] {
        let mut w = store.begin("s", meta(Some("m@1"))).unwrap();
        let mut a = new("a.md", 0, text, [1.0, 0.0]);
        a.chunk.id = 3;
        w.import(vec![a]).unwrap();
        w.commit(manifest(&[("a.md", DocType::General)])).unwrap();
    }
    let index = store.open("s").unwrap().unwrap();
    assert_eq!(index.len(), 1);
    assert_eq!(index.chunk(3).unwrap().text, "second copy");
    assert_eq!(sources(index.as_ref(), "second"), vec!["a.md"]);
    assert!(sources(index.as_ref(), "first").is_empty());
}

/// The one analyzed term of `word`.
fn term(word: &str) -> String {
    let analyzed = terms(word);
    assert_eq!(analyzed.len(), 1, "`{word}` analyzes to one term: {analyzed:?}");
    analyzed[0].clone()
}

/// Three chunks in which alpha, beta and gamma occur in known numbers and orders.
fn counted_generation(store: &dyn Store) {
    let mut w = store.begin("s", meta(Some("m@1"))).unwrap();
    w.add(vec![
        new("a.md", 0, "alpha beta", [1.0, 0.0]),
        new("b.md", 0, "alpha gamma", [0.0, 1.0]),
        new("c.md", 0, "beta alpha", [0.6, 0.8]),
    ])
    .unwrap();
    w.commit(manifest(&[("a.md", DocType::General), ("b.md", DocType::General), ("c.md", DocType::General)])).unwrap();
}

/// Routing weighs terms by the number of chunks holding them, in the order asked, unknown
/// terms counting 0. After a generation that drops a chunk, the embedded store (tantivy
/// counts deleted documents until a merge) may still count it, the PostgreSQL store does not:
/// the count lies between the live chunks and the earlier count.
pub fn doc_freqs_count_chunks(store: &dyn Store) {
    counted_generation(store);
    let index = store.open("s").unwrap().unwrap();
    let asked = [term("alpha"), term("beta"), term("gamma"), term("delta"), term("alpha")];
    assert_eq!(index.doc_freqs(&asked).unwrap(), vec![3, 2, 1, 0, 3]);
    assert!(index.doc_freqs(&[]).unwrap().is_empty());

    let mut w = store.begin("s", meta(Some("m@1"))).unwrap();
    w.keep("a.md").unwrap();
    w.keep("b.md").unwrap();
    w.commit(manifest(&[("a.md", DocType::General), ("b.md", DocType::General)])).unwrap();
    let index = store.open("s").unwrap().unwrap();
    let after = index.doc_freqs(&asked).unwrap();
    for ((n, live), before) in after.iter().zip([2, 1, 1, 0, 2]).zip([3, 2, 1, 0, 3]) {
        assert!((live..=before).contains(n), "{after:?}");
    }
}

/// Routing reads how many chunks hold two terms side by side, in that order. A store that
/// keeps term positions must count them (`phrases`); one that keeps none says so with `None`,
/// and must be declared so here, since `None` silently drops that routing signal.
pub fn phrase_doc_freqs_count_neighbours(store: &dyn Store, phrases: bool) {
    counted_generation(store);
    let index = store.open("s").unwrap().unwrap();
    let (alpha, beta, gamma, delta) = (term("alpha"), term("beta"), term("gamma"), term("delta"));
    let pairs = [
        (alpha.clone(), beta.clone()),
        (beta.clone(), alpha.clone()),
        (alpha.clone(), gamma.clone()),
        (gamma, alpha),
        (beta, delta),
    ];
    let counted = index.phrase_doc_freqs(&pairs).unwrap();
    if phrases {
        assert_eq!(counted, Some(vec![1, 1, 1, 0, 0]));
        assert_eq!(index.phrase_doc_freqs(&[]).unwrap(), Some(Vec::new()));
    } else {
        assert_eq!(counted, None, "a store declared without term positions");
    }
}
