//! Embedded vs PostgreSQL at scale, same data, same run: ingest chunks/s, BM25 and dense
//! search p50/p99, and HNSW recall@10 against the embedded store's exact scan.
//!
//!   eval "$(scripts/setup-postgres)"
//!   cargo bench -p skillrag-store --bench store_scale -- --chunks 100000 [--queries 300] [--dim 384]
//!
//! The chunks are synthetic, made to look like a real corpus to both indexes:
//! - text: 60 tokens per chunk drawn from a 20 000-word vocabulary with a Zipf-like skew (a few
//!   very common words, a long tail), so BM25 sees realistic document frequencies;
//! - vectors: 384-dim unit vectors around 2 000 random topic centres (centre + noise), so the
//!   nearest neighbours are meaningful, unlike uniform random vectors.
//!
//! Queries are 3 words of a random chunk and that chunk's vector plus noise. Results are printed
//! as Markdown rows (`bench/postgres.sh` collects them into bench/results/postgres.md).

use skillrag_core::{Chunk, DocType, Filter, Tier};
use skillrag_store::{EmbeddedStore, FileEntry, IndexMeta, Manifest, NewChunk, PoolOptions, PostgresStore, Store};
use std::collections::HashSet;
use std::time::{Duration, Instant};

const VOCABULARY: usize = 20_000;
const TOPICS: usize = 2_000;
const TOKENS: usize = 60;
const BATCH: usize = 5_000;
const CHUNKS_PER_SOURCE: usize = 20;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    fn normal(&mut self) -> f32 {
        // Sum of uniforms: close enough to Gaussian for topic noise.
        (0..4).map(|_| self.unit()).sum::<f32>() - 2.0
    }
}

fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= n);
}

fn word(rng: &mut Rng) -> String {
    let u = rng.unit();
    format!("w{}", (u * u * u * VOCABULARY as f32) as usize)
}

struct Corpus {
    dim: usize,
    centres: Vec<Vec<f32>>,
}

impl Corpus {
    fn new(dim: usize, rng: &mut Rng) -> Corpus {
        let centres = (0..TOPICS)
            .map(|_| {
                let mut c: Vec<f32> = (0..dim).map(|_| rng.normal()).collect();
                normalize(&mut c);
                c
            })
            .collect();
        Corpus { dim, centres }
    }

    fn vector_near(&self, centre: &[f32], noise: f32, rng: &mut Rng) -> Vec<f32> {
        let mut v: Vec<f32> = centre.iter().map(|c| c + noise * rng.normal() / (self.dim as f32).sqrt()).collect();
        normalize(&mut v);
        v
    }

    fn chunk(&self, i: usize, rng: &mut Rng) -> NewChunk {
        let topic = &self.centres[(rng.next() % TOPICS as u64) as usize];
        let text: Vec<String> = (0..TOKENS).map(|_| word(rng)).collect();
        let text = text.join(" ");
        NewChunk {
            chunk: Chunk {
                id: 0,
                skill: "scale".into(),
                source: format!("doc-{:07}.md", i / CHUNKS_PER_SOURCE),
                title: String::new(),
                heading: vec![],
                ordinal: (i % CHUNKS_PER_SOURCE) as u32,
                span: (0, text.len()),
                doc_type: DocType::General,
                tier: Tier::References,
                mtime: 0,
                content_hash: String::new(),
                text,
                pages: None,
                summary: None,
                table_header: None,
                ocr_confidence: None,
                keywords: Vec::new(),
                questions: Vec::new(),
            },
            vector: Some(self.vector_near(topic, 1.0, rng)),
            visibility: 1.0,
        }
    }
}

fn manifest(chunks: usize) -> Manifest {
    let mut m = Manifest::default();
    for s in 0..chunks.div_ceil(CHUNKS_PER_SOURCE) {
        m.files.insert(
            format!("doc-{s:07}.md"),
            FileEntry {
                content_hash: String::new(),
                mtime: 0,
                size: 0,
                chunks: CHUNKS_PER_SOURCE,
                title: String::new(),
                doc_type: DocType::General,
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

/// Writes the corpus into `store` and returns chunks per second (commit included: for
/// PostgreSQL that is where the HNSW index is built).
fn ingest(store: &dyn Store, corpus: &Corpus, n: usize, seed: u64) -> f64 {
    let mut rng = Rng(seed);
    let meta = IndexMeta::new("scale", Some("synthetic".into()), corpus.dim, "bench".into());
    let started = Instant::now();
    let mut writer = store.begin("scale", meta).expect("begin");
    let mut i = 0;
    while i < n {
        let batch: Vec<NewChunk> = (i..(i + BATCH).min(n)).map(|j| corpus.chunk(j, &mut rng)).collect();
        i += batch.len();
        writer.add(batch).expect("add");
        eprint!("\r  {i}/{n}");
    }
    writer.commit(manifest(n)).expect("commit");
    eprintln!();
    n as f64 / started.elapsed().as_secs_f64()
}

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    let i = ((times.len() as f64 - 1.0) * p).round() as usize;
    times[i].as_secs_f64() * 1000.0
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let n = arg("--chunks", 100_000);
    let queries = arg("--queries", 300);
    let dim = arg("--dim", 384);
    let ef_search = arg("--ef-search", 100) as u32;
    let Ok(url) = std::env::var("SKILLRAG_TEST_POSTGRES") else {
        eprintln!("SKILLRAG_TEST_POSTGRES is not set: eval \"$(scripts/setup-postgres)\" first");
        std::process::exit(2);
    };
    let schema = format!("bench_scale_{n}");
    let pg_url = format!("{url}?options=-c%20search_path%3D{schema}%2Cpublic");
    if let Ok(mut c) = postgres::Client::connect(&url, postgres::NoTls) {
        c.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).expect("drop the old bench schema");
    }
    let options = PoolOptions { ef_search, ..PoolOptions::default() };
    let pg = PostgresStore::connect_with(&pg_url, options).expect("connect");
    let tmp = tempfile::tempdir().expect("tempdir");
    let embedded = EmbeddedStore::new(tmp.path());

    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let corpus = Corpus::new(dim, &mut rng);
    eprintln!("ingest {n} chunks into the embedded store");
    let ingest_embedded = ingest(&embedded, &corpus, n, 7);
    eprintln!("ingest {n} chunks into PostgreSQL");
    let ingest_pg = ingest(&pg, &corpus, n, 7);

    let (e, p) = (embedded.open("scale").unwrap().unwrap(), pg.open("scale").unwrap().unwrap());
    // Queries: 3 words and the noisy vector of random chunks (regenerated from the same seed).
    let mut qrng = Rng(0xD1B5_4A32_D192_ED03);
    let mut probe = Rng(7);
    let sample: Vec<NewChunk> = (0..n.min(50_000)).map(|j| corpus.chunk(j, &mut probe)).collect();
    let qs: Vec<(Vec<String>, Vec<f32>)> = (0..queries)
        .map(|_| {
            let c = &sample[(qrng.next() % sample.len() as u64) as usize];
            let words: Vec<&str> = c.chunk.text.split(' ').collect();
            let text = (0..3).map(|_| words[(qrng.next() % words.len() as u64) as usize]).collect::<Vec<_>>().join(" ");
            let v = corpus.vector_near(c.vector.as_ref().unwrap(), 0.5, &mut qrng);
            (skillrag_text::analyze(&text), v)
        })
        .collect();

    let none = Filter::none();
    let mut rows = Vec::new();
    let mut recall = 0.0;
    for (name, index) in [("embedded", &e), ("postgres", &p)] {
        // One warm-up pass (document frequencies cached, pages in memory), then the timed one.
        for (terms, v) in qs.iter().take(20) {
            index.lexical(terms, 50, &none).unwrap();
            index.dense(v, 50, &none).unwrap();
        }
        let (mut lexical, mut dense) = (Vec::new(), Vec::new());
        for (terms, v) in &qs {
            let t = Instant::now();
            index.lexical(terms, 50, &none).unwrap();
            lexical.push(t.elapsed());
            let t = Instant::now();
            index.dense(v, 50, &none).unwrap();
            dense.push(t.elapsed());
        }
        rows.push((
            name,
            percentile(&mut lexical, 0.5),
            percentile(&mut lexical, 0.99),
            percentile(&mut dense, 0.5),
            percentile(&mut dense, 0.99),
        ));
    }
    for (_, v) in &qs {
        let exact: HashSet<u64> = e.dense(v, 10, &none).unwrap().iter().map(|s| s.id).collect();
        let approx: HashSet<u64> = p.dense(v, 10, &none).unwrap().iter().map(|s| s.id).collect();
        recall += exact.intersection(&approx).count() as f64 / exact.len().max(1) as f64;
    }
    recall /= qs.len() as f64;
    let pg_bytes = pg.size_on_disk("scale").unwrap_or(0);
    let embedded_bytes = embedded.size_on_disk("scale").unwrap_or(0);

    println!(
        "| {n} | {dim} | ingest chunks/s | {ingest_embedded:.0} | {ingest_pg:.0} | {:.2}× |",
        ingest_pg / ingest_embedded
    );
    let (_, el50, el99, ed50, ed99) = rows[0];
    let (_, pl50, pl99, pd50, pd99) = rows[1];
    println!(
        "| {n} | {dim} | BM25 p50 / p99 ms | {el50:.2} / {el99:.2} | {pl50:.2} / {pl99:.2} | {:.2}× |",
        pl50 / el50
    );
    println!(
        "| {n} | {dim} | dense p50 / p99 ms (ef_search {ef_search}) | {ed50:.2} / {ed99:.2} | {pd50:.2} / {pd99:.2} | {:.2}× |",
        pd50 / ed50
    );
    println!("| {n} | {dim} | dense recall@10 vs exact | 1.000 | {recall:.3} | |");
    println!(
        "| {n} | {dim} | size on disk MB | {:.0} | {:.0} | {:.2}× |",
        embedded_bytes as f64 / 1e6,
        pg_bytes as f64 / 1e6,
        pg_bytes as f64 / embedded_bytes.max(1) as f64
    );
}
