#!/usr/bin/env bash
# Index-path numbers in one run (docs/design.md §3, issue 19), written to bench/results/index-<bench>.md:
#   - the benchmark folder (default ../shared/bench/dev) cold with all-MiniLM-L6-v2, then one
#     changed file, nothing changed, and BM25 only; index and cache size on disk;
#   - the same cold index by the seed pipeline (bench/peer/seed_pipeline.py --index-only:
#     LangChain splitter 500/80 + sentence-transformers + Chroma), when PEER_PYTHON (default
#     bench/peer/.venv/bin/python) has bench/peer/requirements.txt installed;
#   - an English-only skill (ENGLISH_SKILL, default coronavirus-research: every passage visible
#     to MiniLM), cold, by both;
#   - BASE_BIN (a skillrag binary of another commit), when set, on the same cold runs: before/after;
#   - the embedding backends: the default (`auto`: ONNX Runtime, scripts/setup-onnx) against candle
#     and the int8 graph, on the English skill (and int8 on the whole benchmark);
#   - 300 small skills (bench/many_skills.py), BM25 only: the fixed cost per skill;
#   - the release binary's size.
# chunks/s = chunks produced / wall time of the whole process (model load and imports included),
# for every system alike. Peak RSS from /usr/bin/time.
#   bench/index.sh [BENCH_DIR]
#   BASE_BIN=/tmp/skillrag-old PEER_PYTHON=/opt/peer/bin/python bench/index.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bench="$(cd "${1:-../shared/bench/dev}" && pwd)"
name="$(basename "$bench")"
english="${ENGLISH_SKILL:-coronavirus-research}"
peer_python="${PEER_PYTHON:-bench/peer/.venv/bin/python}"
model="$(./scripts/setup-onnx)"
cargo build --release --locked -q
bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag"
# Kept after the run (raw reports and timings), replaced by the next one.
work="$PWD/target/bench-state/index"
rm -rf "$work"
mkdir -p "$work"
cp -r "$bench/skills" "$work/skills"
chmod -R u+w "$work/skills"
mkdir -p "$work/english/skills"
cp -r "$bench/skills/$english" "$work/english/skills/"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

# measure LABEL PROJECT MODEL BIN [VAR=VALUE…]: one `skillrag index --json`, timed.
measure() {
  local label="$1" project="$2" m="$3" b="$4"
  shift 4
  env "$@" SKILLRAG_EMBED_MODEL="$m" /usr/bin/time -f '%e %M' -o "$work/$label.time" "$b" -C "$project" index --json \
    > "$work/$label.json" 2> "$work/$label.err"
}
# peer LABEL BENCH_DIR: the seed pipeline's indexing, timed.
peer() {
  HF_HUB_OFFLINE=1 /usr/bin/time -f '%e %M' -o "$work/$1.time" "$peer_python" bench/peer/seed_pipeline.py \
    --index-only "$2" "$model" > "$work/$1.json" 2> "$work/$1.err"
}

if [ -n "${BASE_BIN:-}" ]; then
  measure base_cold "$work" "$model" "$BASE_BIN"
  measure base_english "$work/english" "$model" "$BASE_BIN"
  rm -rf "$work/.skillrag" "$work/english/.skillrag"
fi
if [ -x "$peer_python" ]; then
  peer peer_cold "$work"
  peer peer_english "$work/english"
else
  echo "no peer venv at $peer_python: the seed pipeline is left out" >&2
fi
measure english "$work/english" "$model" "$bin"
rm -rf "$work/english/.skillrag"
measure english_candle "$work/english" "$model" "$bin" SKILLRAG_EMBED_BACKEND=candle
rm -rf "$work/english/.skillrag"
measure english_int8 "$work/english" "$model" "$bin" SKILLRAG_EMBED_ONNX_GRAPH=onnx/model_qint8.onnx
measure cold_int8 "$work" "$model" "$bin" SKILLRAG_EMBED_ONNX_GRAPH=onnx/model_qint8.onnx
rm -rf "$work/.skillrag"
# With the model: cold (no index, no embedding cache), then one changed file, then nothing.
measure cold "$work" "$model" "$bin"
size_model=$(du -sb "$work/.skillrag/index" | cut -f1)
cache_size=$(du -sb "$work/.skillrag/cache" | cut -f1)
# (awk reads the whole list: `head` would close the pipe early, and pipefail would fail the run.)
one=$(find "$work/skills" -path '*/knowledge/*.md' | sort | awk 'NR == 1')
printf '\n\n（基准测试追加的一句话，用于测量增量索引。）\n' >> "$one"
measure incremental "$work" "$model" "$bin"
measure unchanged "$work" "$model" "$bin"
rm -rf "$work/.skillrag"
measure bm25_cold "$work" none "$bin"
size_bm25=$(du -sb "$work/.skillrag/index" | cut -f1)
# 300 small skills, BM25 only.
python3 bench/many_skills.py "$bench" "$work/many" 300 > /dev/null
mkdir -p "$work/many-project"
cp -r "$work/many/skills" "$work/many-project/skills"
measure many_bm25 "$work/many-project" none "$bin"
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
binary_size=$(stat -c %s "$bin")

python3 - "$work" "$name" "$english" "$size_model" "$size_bm25" "$cache_size" "$model" "$binary_size" \
  "$load_before" "$load_after" "$(nproc)" "${BASE_BIN:-}" > "bench/results/index-$name.md" <<'PY'
import json, sys, pathlib
(work, name, english, size_model, size_bm25, cache_size, model, binary_size,
 load_before, load_after, cores, base_bin) = sys.argv[1:13]
work = pathlib.Path(work)

def timing(label):
    secs, rss_kb = (work / f"{label}.time").read_text().split()
    return float(secs), int(rss_kb) / 1024

def ours(label):
    path = work / f"{label}.json"
    if not path.exists():
        return None
    report = json.loads(path.read_text())
    secs, rss = timing(label)
    skills = report["skills"]
    total = lambda key: sum(s.get(key, 0) for s in skills)
    return dict(secs=secs, rss=rss, chunks=total("chunks"), new=total("chunks_new"), embedded=total("embedded"),
                vectorless=total("vectorless"), files=total("files"), skills=len(skills))

def peer(label):
    path = work / f"{label}.json"
    if not path.exists() or not path.read_text().strip():
        return None
    secs, rss = timing(label)
    return dict(secs=secs, rss=rss, chunks=json.loads(path.read_text())["chunks"], new=None, embedded=None, vectorless=None)

rate = lambda r: (r["new"] if r.get("new") is not None else r["chunks"]) / r["secs"] if r["secs"] > 0 else 0.0
cell = lambda v: "–" if v is None else str(v)
cold, english_run = ours("cold"), ours("english")
print(f"## Indexing `{name}` ({cold['files']} files, {cold['skills']} skills)\n")
print(f"One run of `bench/index.sh` on {cores} cores; load average {load_before} before, {load_after} after.")
print(f"Model: all-MiniLM-L6-v2 (`{model}`). Wall time of the whole process (model load and imports included);")
print("chunks/s = chunks produced / wall time, for every system alike.\n")
print("| run | system | wall s | chunks | embedded | stored without a vector | chunks/s | peak RSS MB |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
rows = [
    (f"`{name}` cold", "skillrag (this tree)", cold),
    (f"`{name}` cold", "skillrag (BASE_BIN)", ours("base_cold")),
    (f"`{name}` cold", "seed pipeline", peer("peer_cold")),
    (f"`{name}` cold", "skillrag, int8 graph", ours("cold_int8")),
    (f"`{english}` only, cold", "skillrag (this tree)", english_run),
    (f"`{english}` only, cold", "skillrag, candle backend", ours("english_candle")),
    (f"`{english}` only, cold", "skillrag, int8 graph", ours("english_int8")),
    (f"`{english}` only, cold", "skillrag (BASE_BIN)", ours("base_english")),
    (f"`{english}` only, cold", "seed pipeline", peer("peer_english")),
    (f"`{name}`, one file changed", "skillrag (this tree)", ours("incremental")),
    (f"`{name}`, nothing changed", "skillrag (this tree)", ours("unchanged")),
    (f"`{name}` cold, BM25 only", "skillrag (this tree)", ours("bm25_cold")),
    ("300 small skills, BM25 only", "skillrag (this tree)", ours("many_bm25")),
]
for label, system, r in rows:
    if r is None:
        continue
    print(f"| {label} | {system} | {r['secs']:.1f} | {r['chunks']} | {cell(r['embedded'])} | {cell(r['vectorless'])} "
          f"| {rate(r):.1f} | {r['rss']:.0f} |")
print()
print("Rows marked \"this tree\" use the default backend (`auto`: ONNX Runtime with the f32 graph).\n")
for label, ours_label, peer_label in [(f"`{name}`", "cold", "peer_cold"), (f"`{english}` only", "english", "peer_english")]:
    a, p = ours(ours_label), peer(peer_label)
    if p:
        print(f"- {label}: chunks/s {rate(a) / rate(p):.2f}× the seed pipeline's; peak RSS {a['rss'] / p['rss']:.2f}× its.")
    b = ours("base_" + ours_label)
    if b:
        print(f"- {label}: chunks/s {rate(a) / rate(b):.2f}× BASE_BIN's ({base_bin}).")
for label, variant in [("candle backend", "english_candle"), ("int8 graph", "english_int8")]:
    v, p = ours(variant), peer("peer_english")
    if v:
        print(f"- `{english}` only, {label}: chunks/s {rate(v) / rate(english_run):.2f}× the default's"
              + (f", {rate(v) / rate(p):.2f}× the seed pipeline's" if p else "") + f"; peak RSS {v['rss']:.0f} MB.")
v, p = ours("cold_int8"), peer("peer_cold")
if v and p:
    print(f"- `{name}`, int8 graph: chunks/s {rate(v) / rate(p):.2f}× the seed pipeline's; peak RSS {v['rss'] / p['rss']:.2f}× its.")
print(f"\nIndex size on disk: {int(size_model)/1e6:.1f} MB with vectors, {int(size_bm25)/1e6:.1f} MB BM25 only; "
      f"embedding cache {int(cache_size)/1e6:.1f} MB. Release binary: {int(binary_size)/1e6:.1f} MB.")
PY
cat "bench/results/index-$name.md"
