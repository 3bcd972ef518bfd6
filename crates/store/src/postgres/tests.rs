//! Against a real PostgreSQL with pgvector: `SKILLRAG_TEST_POSTGRES` (and
//! `SKILLRAG_TEST_POSTGRES_STANDBY` for a hot standby of it), as `scripts/setup-postgres`
//! starts them. Each test works in a schema of its own, dropped at the end.

use super::*;
use crate::conformance::{self, first_generation, manifest, meta, new, terms};
use crate::{EmbeddedStore, NewChunk, SkillIndex};
use skillrag_core::{DocType, Filter};
use std::sync::Arc;

/// The server to test against. Without one the tests are skipped, unless
/// `SKILLRAG_TEST_REQUIRE_POSTGRES` is set (`scripts/test` sets it), which makes that a failure.
fn server(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("SKILLRAG_TEST_REQUIRE_POSTGRES").is_some() => {
            panic!("{var} is not set: run scripts/test, which starts PostgreSQL (scripts/setup-postgres)")
        }
        _ => {
            eprintln!("skipped: {var} is not set (scripts/setup-postgres starts a server)");
            None
        }
    }
}

/// A schema of one test's own on the test server.
pub(crate) struct Scratch {
    base: String,
    schema: String,
}

impl Scratch {
    pub(crate) fn new(name: &str) -> Option<Scratch> {
        let base = server("SKILLRAG_TEST_POSTGRES")?;
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let schema = format!("t_{name}_{}_{n}", std::process::id()).to_lowercase();
        Some(Scratch { base, schema })
    }

    /// `base` with this schema first in `search_path` (pgvector's types stay in `public`).
    pub(crate) fn url_on(&self, base: &str) -> String {
        let sep = if base.contains('?') { '&' } else { '?' };
        format!("{base}{sep}options=-c%20search_path%3D{}%2Cpublic", self.schema)
    }

    pub(crate) fn url(&self) -> String {
        self.url_on(&self.base)
    }

    pub(crate) fn store(&self) -> PostgresStore {
        PostgresStore::connect(&self.url()).unwrap_or_else(|e| panic!("{}: {e}", redact(&self.base)))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Ok(mut c) = Client::connect(&self.base, NoTls) {
            let _ = c.batch_execute(&format!("DROP SCHEMA IF EXISTS {} CASCADE", quote_ident(&self.schema)));
        }
    }
}

crate::conformance_tests!(|name: &str| {
    let scratch = Scratch::new(name)?;
    let store: Box<dyn Store> = Box::new(scratch.store());
    Some((scratch, store))
}, phrases: false);

/// A skill's index on PostgreSQL and in the embedded store.
type Pair = (Arc<dyn SkillIndex>, Arc<dyn SkillIndex>);

/// The same chunks (chunk `i` is the whole of source `d{i}.md`) published on PostgreSQL and in
/// an embedded store; the two opened indexes, with the scratch schema and folder they live in.
fn on_both(name: &str, model: Option<&str>, chunks: Vec<NewChunk>) -> Option<(Scratch, tempfile::TempDir, Pair)> {
    let scratch = Scratch::new(name)?;
    let pg = scratch.store();
    let tmp = tempfile::tempdir().unwrap();
    let embedded = EmbeddedStore::new(tmp.path());
    let sources: Vec<String> = (0..chunks.len()).map(|i| format!("d{i}.md")).collect();
    let refs: Vec<(&str, DocType)> = sources.iter().map(|s| (s.as_str(), DocType::General)).collect();
    for store in [&pg as &dyn Store, &embedded] {
        let mut w = store.begin("s", meta(model)).unwrap();
        w.add(chunks.clone()).unwrap();
        w.commit(manifest(&refs)).unwrap();
    }
    let (a, b) = (pg.open("s").unwrap().unwrap(), embedded.open("s").unwrap().unwrap());
    Some((scratch, tmp, (a, b)))
}

/// The same corpus in both stores gives the same BM25 ranking with the same scores, and the
/// same dense ranking.
#[test]
fn bm25_and_dense_agree_with_the_embedded_store() {
    let texts = [
        "用人单位自用工之日起即与劳动者建立劳动关系，应当订立书面劳动合同。",
        "劳动合同期限三个月以上不满一年的，试用期不得超过一个月。",
        "劳动者在试用期内提前三日通知用人单位，可以解除劳动合同。",
        "The incubation period of the virus is five days on average.",
        "Wash your hands often; the virus spreads by droplets and by hands.",
        "How do I reset my password? Open settings, then security, then reset the password.",
    ];
    let chunks = texts
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let angle = i as f32 * 0.3;
            new(&format!("d{i}.md"), 0, t, [angle.cos(), angle.sin()])
        })
        .collect();
    let Some((_scratch, _tmp, (a, b))) = on_both("parity", Some("m@1"), chunks) else { return };
    for q in ["试用期 解除劳动合同", "劳动关系", "virus hands", "reset password settings", "nothing matches this"]
    {
        let (x, y) =
            (a.lexical(&terms(q), 10, &Filter::none()).unwrap(), b.lexical(&terms(q), 10, &Filter::none()).unwrap());
        assert_eq!(x.iter().map(|s| s.id).collect::<Vec<_>>(), y.iter().map(|s| s.id).collect::<Vec<_>>(), "{q}");
        for (s, t) in x.iter().zip(&y) {
            assert!((s.score - t.score).abs() <= 0.01 * t.score.abs().max(1.0), "{q}: {} vs {}", s.score, t.score);
        }
        assert_eq!(a.doc_freqs(&terms(q)).unwrap(), b.doc_freqs(&terms(q)).unwrap(), "{q}");
    }
    let (x, y) = (a.dense(&[0.8, 0.6], 4, &Filter::none()).unwrap(), b.dense(&[0.8, 0.6], 4, &Filter::none()).unwrap());
    assert_eq!(x.iter().map(|s| s.id).collect::<Vec<_>>(), y.iter().map(|s| s.id).collect::<Vec<_>>());
    assert_eq!(x.iter().map(|s| s.score).collect::<Vec<_>>(), y.iter().map(|s| s.score).collect::<Vec<_>>());
}

/// A reader keeps its generation while newer ones are published, as far back as the
/// generation before the current one.
#[test]
fn pinned_reader_sees_its_generation() {
    let Some(scratch) = Scratch::new("pinned") else { return };
    let store = scratch.store();
    first_generation(&store);
    let g1 = store.open("s").unwrap().unwrap();
    let mut w = store.begin("s", meta(Some("m@1"))).unwrap();
    w.add(vec![new("a.md", 0, "completely new text about contracts", [1.0, 0.0])]).unwrap();
    w.commit(manifest(&[("a.md", DocType::General)])).unwrap();
    assert_eq!(store.open("s").unwrap().unwrap().len(), 1);
    assert_eq!(g1.len(), 3);
    assert_eq!(conformance::sources(g1.as_ref(), "incubation"), vec!["b.md"]);
    assert_eq!(g1.chunks_of("faq.md").len(), 1);
}

#[test]
fn standby_serves_reads_and_refuses_writes() {
    let Some(scratch) = Scratch::new("standby") else { return };
    let Some(standby) = server("SKILLRAG_TEST_POSTGRES_STANDBY") else { return };
    let primary = scratch.store();
    first_generation(&primary);
    let replica = PostgresStore::connect(&scratch.url_on(&standby)).unwrap();
    assert!(replica.is_read_only());
    // Replication is asynchronous: wait for the commit to arrive.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while replica.generation("s").unwrap() != Some(1) {
        assert!(std::time::Instant::now() < deadline, "the standby never saw generation 1");
        std::thread::sleep(Duration::from_millis(50));
    }
    let index = replica.open("s").unwrap().unwrap();
    assert_eq!(conformance::sources(index.as_ref(), "incubation"), vec!["b.md"]);
    assert_eq!(index.dense(&[0.0, 1.0], 1, &Filter::none()).unwrap().len(), 1);
    let err = replica.begin("s", meta(Some("m@1"))).err().expect("a write on a standby must fail");
    assert!(matches!(err, StoreError::ReadOnly(_)), "{err}");
    assert!(err.to_string().contains("read-only replica"), "{err}");
    assert!(matches!(replica.remove("s"), Err(StoreError::ReadOnly(_))));
}

#[test]
fn schema_version_mismatch_is_explained() {
    let Some(scratch) = Scratch::new("version") else { return };
    drop(scratch.store());
    let mut c = Client::connect(&scratch.url(), NoTls).unwrap();
    c.batch_execute("UPDATE skillrag_schema SET version = 99").unwrap();
    let err = PostgresStore::connect(&scratch.url()).expect_err("a newer schema must be refused");
    assert!(matches!(err, StoreError::SchemaVersion { found: 99, expected: SCHEMA_VERSION, .. }), "{err}");
    assert!(err.to_string().contains("migrate"), "{err}");
}

#[test]
fn unreachable_database_is_a_clear_error() {
    // A port nothing listens on: connecting fails fast with the (password-free) address.
    let url = "postgres://someone:secret@127.0.0.1:9/nothing";
    let options = PoolOptions { wait: Duration::from_secs(2), ..PoolOptions::default() };
    let err = PostgresStore::connect_with(url, options).expect_err("must fail");
    assert!(matches!(err, StoreError::Unavailable(_)), "{err}");
    let text = err.to_string();
    assert!(text.contains("127.0.0.1:9") && !text.contains("secret"), "{text}");
    assert!(matches!(PostgresStore::connect("postgres://h/db?sslmode=sometimes"), Err(StoreError::Invalid(_))));
}

#[test]
fn an_exhausted_pool_fails_in_time_instead_of_hanging() {
    let Some(scratch) = Scratch::new("pool") else { return };
    let options = PoolOptions { max_size: 1, wait: Duration::from_millis(300), ..PoolOptions::default() };
    let store = PostgresStore::connect_with(&scratch.url(), options).unwrap();
    let held = store.conn().unwrap();
    let started = std::time::Instant::now();
    let err = store.skills().expect_err("no connection is free");
    assert!(matches!(err, StoreError::Unavailable(_)), "{err}");
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(held);
    assert!(store.skills().is_ok());
}

#[test]
fn redacts_passwords() {
    assert_eq!(redact("postgres://u:pw@h:5432/db"), "postgres://u:***@h:5432/db");
    assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
    assert_eq!(
        redact("postgres://u@h/db?password=pw&sslmode=require"),
        "postgres://u@h/db?password=***&sslmode=require"
    );
    assert!(is_postgres_url("postgresql://h/db") && !is_postgres_url("embedded"));
}

#[test]
fn lengths_round_like_tantivy() {
    use super::writer::quantized_length;
    assert_eq!((0..=40).map(quantized_length).collect::<Vec<_>>(), (0..=40).collect::<Vec<_>>());
    assert!((1..5000).all(|n| quantized_length(n) <= n && quantized_length(n) >= quantized_length(n - 1)));
}

/// BM25 with MaxScore pruning (common terms scored, but rows holding only them skipped when
/// they cannot reach the top k) ranks exactly like the embedded store's full evaluation.
#[test]
fn pruned_bm25_matches_the_embedded_store() {
    let text = |i: usize| {
        let mut t = format!("common words everywhere, report {i}, station weather rain.");
        if i.is_multiple_of(40) {
            t.push_str(" A rare eclipse was seen.");
        }
        if i.is_multiple_of(5) {
            t.push_str(" Rain rain rain and more rain.");
        }
        t
    };
    let chunks = (0..120)
        .map(|i| NewChunk {
            chunk: conformance::chunk(&format!("d{i}.md"), 0, &text(i)),
            vector: None,
            visibility: 0.0,
        })
        .collect();
    let Some((_scratch, _tmp, (a, b))) = on_both("pruning", None, chunks) else { return };
    for q in ["rare eclipse rain", "eclipse weather", "rain station", "eclipse"] {
        for k in [1, 3, 10, 200] {
            let (x, y) =
                (a.lexical(&terms(q), k, &Filter::none()).unwrap(), b.lexical(&terms(q), k, &Filter::none()).unwrap());
            let ids = |v: &[skillrag_core::Scored]| v.iter().map(|s| s.id).collect::<Vec<_>>();
            // Equal scores may come in either order; compare score lists, then the id sets per score.
            let scores =
                |v: &[skillrag_core::Scored]| v.iter().map(|s| (s.score * 1e4).round() as i64).collect::<Vec<_>>();
            assert_eq!(scores(&x), scores(&y), "{q} k={k}");
            if k >= 200 {
                let (mut p, mut e) = (ids(&x), ids(&y));
                p.sort();
                e.sort();
                assert_eq!(p, e, "{q}");
            }
        }
    }
}

/// Connections the server drops (restart, failover, `pg_terminate_backend`) are replaced: the
/// next query after the loss succeeds on a fresh connection.
#[test]
fn a_lost_connection_is_replaced() {
    let Some(scratch) = Scratch::new("lost") else { return };
    let url = format!("{}&application_name=skillrag_lost_test", scratch.url());
    let store = PostgresStore::connect(&url).unwrap();
    first_generation(&store);
    let index = store.open("s").unwrap().unwrap();
    let mut admin = Client::connect(&scratch.base, NoTls).unwrap();
    let killed: i64 = admin
        .query_one(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'skillrag_lost_test'",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(killed >= 1);
    assert_eq!(conformance::sources(index.as_ref(), "incubation"), vec!["b.md"]);
    assert_eq!(store.generation("s").unwrap(), Some(1));
}
