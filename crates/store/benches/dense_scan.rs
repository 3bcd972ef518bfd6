//! Exact dense scan latency of the embedded store at 10k and 50k chunks × 384 dimensions,
//! through the public `SkillIndex::dense` path (random unit vectors; the scan does not care).
//!   cargo bench -p skillrag-store --bench dense_scan

use skillrag_core::{Chunk, DocType, Filter, Tier};
use skillrag_store::{EmbeddedStore, IndexMeta, Manifest, NewChunk, Store};
use std::time::Instant;

fn random_unit(seed: &mut u64, dim: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            *seed ^= *seed << 13;
            *seed ^= *seed >> 7;
            *seed ^= *seed << 17;
            (*seed % 10_000) as f32 / 5_000.0 - 1.0
        })
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

fn main() {
    let dim = 384;
    for n in [10_000usize, 50_000] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let store = EmbeddedStore::new(tmp.path());
        let mut writer =
            store.begin("s", IndexMeta::new("s", Some("random".into()), dim, "bench".into())).expect("begin");
        let mut seed = 0x9E3779B97F4A7C15u64;
        let chunks = (0..n)
            .map(|i| NewChunk {
                chunk: Chunk {
                    id: 0,
                    skill: "s".into(),
                    source: format!("doc-{}.md", i / 10),
                    title: String::new(),
                    heading: vec![],
                    ordinal: (i % 10) as u32,
                    span: (0, 1),
                    doc_type: DocType::General,
                    tier: Tier::References,
                    mtime: 0,
                    content_hash: String::new(),
                    text: format!("chunk {i}"),
                    pages: None,
                    summary: None,
                    table_header: None,
                    ocr_confidence: None,
                    keywords: Vec::new(),
                    questions: Vec::new(),
                },
                vector: Some(random_unit(&mut seed, dim)),
                visibility: 1.0,
            })
            .collect();
        writer.add(chunks).expect("add");
        writer.commit(Manifest::default()).expect("commit");
        let index = store.open("s").expect("open").expect("index");
        let queries: Vec<Vec<f32>> = (0..50).map(|_| random_unit(&mut seed, dim)).collect();
        let mut times = Vec::new();
        for q in &queries {
            let t = Instant::now();
            let top = index.dense(q, 50, &Filter::none()).expect("dense");
            times.push(t.elapsed().as_secs_f64() * 1000.0);
            assert_eq!(top.len(), 50);
        }
        times.sort_by(f64::total_cmp);
        println!("dense scan {n} × {dim}: p50 {:.2} ms, p95 {:.2} ms (top 50)", times[25], times[47]);
    }
}
