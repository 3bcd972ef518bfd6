//! Embedding throughput of a local model: `cargo run --release -p skillrag-embed --example embed_speed -- MODEL_DIR [N] [WORDS]`
use skillrag_embed::{BertEmbedder, EmbedKind, Embedder};
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = args
        .get(1)
        .cloned()
        .or_else(|| skillrag_embed::installed_minilm().map(|p| p.display().to_string()))
        .expect("model dir");
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(64);
    let words: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(120);
    let t = Instant::now();
    let e = BertEmbedder::open(std::path::Path::new(&dir), None, None).expect("load");
    eprintln!("load {:.0} ms", t.elapsed().as_secs_f64() * 1000.0);
    let texts: Vec<String> =
        (0..n).map(|i| (0..words).map(|w| format!("word{} ", (i * 7 + w) % 50)).collect()).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    for round in 0..2 {
        let t = Instant::now();
        e.embed(&refs, EmbedKind::Passage).expect("embed");
        let s = t.elapsed().as_secs_f64();
        eprintln!("round {round}: {n} texts × ~{words} words in {s:.2} s = {:.1} texts/s", n as f64 / s);
    }
}
