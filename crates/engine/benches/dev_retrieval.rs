//! Retrieval quality and latency on a benchmark folder (`../shared/bench/dev` by default):
//! hit@1, hit@5 and MRR@10 of `fact` rows with search restricted to the gold skill, for BM25
//! only, dense only and hybrid, per skill; and in-process `search` latency over every query.
//!
//! A hit is a retrieved chunk from a gold source that contains one of the answer strings.
//!
//! ```text
//! cargo bench -p skillrag-engine --bench dev_retrieval -- [BENCH_DIR] [--model DIR|none] [--state DIR] [--out FILE.json]
//! ```
//! The index is built (incrementally) under `--state` (default `target/bench-state/<bench name>`).
//! `SKILLRAG_*` settings in the environment apply (e.g. `SKILLRAG_INDEX_PRESET=general`).

use serde::Deserialize;
use skillrag_core::Mode;
use skillrag_engine::{Engine, IndexOptions, Project, SearchOptions, SilentProgress};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

// The same allocator as the skillrag binary, so latencies match what users get.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Deserialize)]
struct Row {
    id: String,
    query: String,
    skill: Option<String>,
    #[serde(default)]
    answers: Vec<String>,
    #[serde(default)]
    gold_sources: Vec<String>,
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Default, Clone, serde::Serialize)]
struct Scores {
    n: usize,
    hit1: f64,
    hit5: f64,
    mrr10: f64,
}

impl Scores {
    fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(r) = rank {
            self.hit1 += (r == 1) as u8 as f64;
            self.hit5 += (r <= 5) as u8 as f64;
            self.mrr10 += if r <= 10 { 1.0 / r as f64 } else { 0.0 };
        }
    }
    fn mean(&self) -> Scores {
        let n = self.n.max(1) as f64;
        Scores { n: self.n, hit1: self.hit1 / n, hit5: self.hit5 / n, mrr10: self.mrr10 / n }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--bench").collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let positional: Vec<&String> = {
        let mut out = Vec::new();
        let mut skip = false;
        for a in &args {
            if skip {
                skip = false;
            } else if a.starts_with("--") {
                skip = true;
            } else {
                out.push(a);
            }
        }
        out
    };
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bench = positional.first().map(PathBuf::from).unwrap_or_else(|| workspace.join("../shared/bench/dev"));
    let bench = bench.canonicalize()?;
    let name = bench.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "bench".into());
    let state = flag("--state").map(PathBuf::from).unwrap_or_else(|| workspace.join("target/bench-state").join(&name));
    let model = flag("--model")
        .or_else(|| skillrag_embed::installed_minilm().map(|p| p.display().to_string()))
        .unwrap_or_else(|| "none".into());

    // Settings from the environment (e.g. SKILLRAG_INDEX_PRESET=general) apply, except where
    // the bench sets its own.
    let mut env: BTreeMap<String, String> = std::env::vars().filter(|(k, _)| k.starts_with("SKILLRAG_")).collect();
    env.insert("SKILLRAG_SKILLS".to_string(), bench.join("skills").display().to_string());
    env.insert("SKILLRAG_INDEX_DIR".to_string(), state.display().to_string());
    env.insert("SKILLRAG_EMBED_MODEL".to_string(), model.clone());
    std::fs::create_dir_all(&state)?;
    let project = Project::open(&state, &env)?;
    let engine = Engine::open(project)?;
    // The same index searched without the blind-dense-signal gate, to show what the gate does.
    env.insert("SKILLRAG_RETRIEVAL_MIN_VISIBILITY".to_string(), "0".to_string());
    let ungated = Engine::open(Project::open(&state, &env)?)?;
    let started = Instant::now();
    let report = engine.index(&IndexOptions::default(), &SilentProgress)?;
    eprintln!(
        "index ready in {:.1} s ({} chunks; model {})",
        started.elapsed().as_secs_f64(),
        report.skills.iter().map(|s| s.chunks).sum::<usize>(),
        engine.model().map_or("none", |m| m.id.as_str())
    );

    let rows: Vec<Row> = std::fs::read_to_string(bench.join("queries.jsonl"))?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;

    let modes = [("bm25", Mode::Lexical), ("dense", Mode::Dense), ("hybrid", Mode::Hybrid), ("ungated", Mode::Hybrid)];
    let mut per: BTreeMap<(String, &str), Scores> = BTreeMap::new();
    let mut latencies = Vec::new();
    let mut embed_ms = Vec::new();
    let mut retrieve_ms = Vec::new();
    let mut dense_dropped: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut dump = Vec::new();
    // Warm up: load the model and open every index once.
    engine.search("warm up", &SearchOptions::default())?;
    for row in &rows {
        if row.kind == "fact" {
            let skill = row.skill.clone().unwrap_or_default();
            for (label, mode) in modes {
                let options = SearchOptions { skills: vec![skill.clone()], k: Some(10), mode, ..Default::default() };
                let searcher = if label == "ungated" { &ungated } else { &engine };
                let result = searcher.search(&row.query, &options)?;
                let rank = result
                    .hits
                    .iter()
                    .position(|h| {
                        row.gold_sources.contains(&h.source) && row.answers.iter().any(|a| h.text.contains(a.as_str()))
                    })
                    .map(|p| p + 1);
                per.entry((skill.clone(), label)).or_default().add(rank);
                if flag("--dump").is_some() {
                    let wide = SearchOptions { skills: vec![skill.clone()], k: Some(50), mode, ..Default::default() };
                    let list: Vec<serde_json::Value> = engine
                        .search(&row.query, &wide)?
                        .hits
                        .iter()
                        .map(|h| {
                            let gold = row.gold_sources.contains(&h.source)
                                && row.answers.iter().any(|a| h.text.contains(a.as_str()));
                            serde_json::json!({"id": h.chunk_id, "gold": gold, "bm25": h.scores.bm25, "dense": h.scores.dense})
                        })
                        .collect();
                    dump.push(serde_json::json!({"id": row.id, "skill": skill, "mode": label, "hits": list}));
                }
                per.entry(("(all)".to_string(), label)).or_default().add(rank);
                if label == "hybrid" {
                    let d = dense_dropped.entry(skill.clone()).or_default();
                    d.1 += 1;
                    if !result.skills[0].dense_used {
                        d.0 += 1;
                    }
                }
            }
        }
        // Latency: the default search (every skill, hybrid) for every query of the benchmark.
        let t = Instant::now();
        let result = engine.search(&row.query, &SearchOptions::default())?;
        latencies.push(t.elapsed().as_secs_f64() * 1000.0);
        embed_ms.push(result.timings_ms.embed);
        retrieve_ms.push(result.timings_ms.retrieve);
        let _ = &row.id;
    }
    for v in [&mut latencies, &mut embed_ms, &mut retrieve_ms] {
        v.sort_by(f64::total_cmp);
    }
    let at = |v: &[f64], p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize];
    let pct = |p: f64| at(&latencies, p);

    println!("## Retrieval on `{name}` (fact rows, search restricted to the gold skill)\n");
    println!("model: {}\n", engine.model().map_or("none", |m| m.id.as_str()));
    println!("| skill | n | BM25 hit@5 | dense hit@5 | hybrid hit@5 | hybrid hit@1 | hybrid MRR@10 | dense dropped by the gate | hybrid hit@5 without the gate |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let skills: Vec<String> =
        per.keys().map(|(s, _)| s.clone()).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
    let mut json = BTreeMap::new();
    for skill in &skills {
        let get = |m: &str| per.get(&(skill.clone(), m)).map(Scores::mean).unwrap_or_default();
        let (b, d, h, u) = (get("bm25"), get("dense"), get("hybrid"), get("ungated"));
        let dropped = dense_dropped.get(skill).map_or(String::new(), |(x, n)| format!("{x}/{n}"));
        println!(
            "| {skill} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {dropped} | {:.3} |",
            h.n, b.hit5, d.hit5, h.hit5, h.hit1, h.mrr10, u.hit5
        );
        json.insert(skill.clone(), serde_json::json!({"bm25": b, "dense": d, "hybrid": h, "hybrid_ungated": u}));
    }
    println!(
        "\n`search` latency over all {} queries (in-process, every skill, hybrid): p50 {:.2} ms, p95 {:.2} ms \
         (query embedding p50 {:.2} ms, retrieval p50 {:.2} ms)",
        latencies.len(),
        pct(0.5),
        pct(0.95),
        at(&embed_ms, 0.5),
        at(&retrieve_ms, 0.5)
    );
    if let Some(path) = flag("--dump") {
        std::fs::write(path, serde_json::to_string(&dump)?)?;
    }
    if let Some(out) = flag("--out") {
        let value = serde_json::json!({
            "bench": name,
            "model": engine.model().map(|m| m.id.clone()),
            "retrieval": json,
            "latency_ms": {"p50": pct(0.5), "p95": pct(0.95), "queries": latencies.len()},
        });
        std::fs::write(out, serde_json::to_string_pretty(&value)? + "\n")?;
    }
    Ok(())
}
