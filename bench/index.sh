#!/usr/bin/env bash
# Index-path numbers on a benchmark folder (default ../shared/bench/dev): cold and incremental
# (one changed file) index time and chunks/s, index size on disk, peak RSS — with the embedding
# model and BM25-only. Writes bench/results/index-<bench>.md.
#   bench/index.sh [BENCH_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bench="$(cd "${1:-../shared/bench/dev}" && pwd)"
name="$(basename "$bench")"
model="$(./scripts/setup-model)"
cargo build --release --locked -q
bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp -r "$bench/skills" "$work/skills"
chmod -R u+w "$work/skills"

measure() { # label, model, extra env...
  local label="$1" m="$2"
  SKILLRAG_EMBED_MODEL="$m" /usr/bin/time -f '%e %M' -o "$work/$label.time" "$bin" -C "$work" index --json > "$work/$label.json" 2> "$work/$label.err"
}

# With the model: cold (no index, no embedding cache), then one changed file.
measure cold "$model"
size_model=$(du -sb "$work/.skillrag/index" | cut -f1)
cache_size=$(du -sb "$work/.skillrag/cache" | cut -f1)
one=$(find "$work/skills" -path '*/knowledge/*.md' | sort | head -n 1)
printf '\n\n（基准测试追加的一句话，用于测量增量索引。）\n' >> "$one"
measure incremental "$model"
measure unchanged "$model"
# BM25 only, cold.
rm -rf "$work/.skillrag"
measure bm25_cold none
size_bm25=$(du -sb "$work/.skillrag/index" | cut -f1)

python3 - "$work" "$name" "$size_model" "$size_bm25" "$cache_size" "$model" > "bench/results/index-$name.md" <<'PY'
import json, sys, pathlib
work, name, size_model, size_bm25, cache_size, model = sys.argv[1:7]
work = pathlib.Path(work)
def load(label):
    report = json.loads((work / f"{label}.json").read_text())
    secs, rss_kb = (work / f"{label}.time").read_text().split()
    chunks = sum(s["chunks"] for s in report["skills"])
    new = sum(s["chunks_new"] for s in report["skills"])
    embedded = sum(s["embedded"] for s in report["skills"])
    files = sum(s["files"] for s in report["skills"])
    return dict(secs=float(secs), rss_mb=int(rss_kb) / 1024, chunks=chunks, new=new, embedded=embedded, files=files)
rows = [("cold, all-MiniLM-L6-v2", load("cold")), ("incremental: one file changed", load("incremental")),
        ("nothing changed", load("unchanged")), ("cold, BM25 only (`SKILLRAG_EMBED_MODEL=none`)", load("bm25_cold"))]
print(f"## Indexing `{name}` ({rows[0][1]['files']} files, {rows[0][1]['chunks']} chunks)\n")
print(f"Model folder: `{model}`; release build; wall time of the whole `skillrag index` process (model load included).\n")
print("| run | wall s | chunks (re)chunked | chunks embedded | chunks/s | peak RSS MB |")
print("|---|---|---|---|---|---|")
for label, r in rows:
    rate = r["new"] / r["secs"] if r["secs"] > 0 else 0
    print(f"| {label} | {r['secs']:.2f} | {r['new']} | {r['embedded']} | {rate:.0f} | {r['rss_mb']:.0f} |")
print(f"\nIndex size on disk: {int(size_model)/1e6:.1f} MB with vectors, {int(size_bm25)/1e6:.1f} MB BM25 only; "
      f"embedding cache {int(cache_size)/1e6:.1f} MB.")
PY
cat "bench/results/index-$name.md"
