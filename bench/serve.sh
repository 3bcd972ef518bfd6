#!/usr/bin/env bash
# Load test of `skillrag serve` on loopback with wrk (Debian package `wrk`): /v1/search and
# /v1/ask (extractive; answer cache off, then on and warm) at 1, 8 and 64 concurrent connections over the
# benchmark's questions, peak RSS, the error count, and the same load while a re-index runs.
# Usage: bench/serve.sh [BENCH_DIR] [SECONDS_PER_RUN]. Writes bench/results/serve-<bench>.md.
# wrk and the server share this machine's cores, so absolute numbers understate a real client.
set -euo pipefail
cd "$(dirname "$0")/.."
bench="$(cd "${1:-../shared/bench/dev}" && pwd)"
seconds="${2:-10}"
name="$(basename "$bench")"
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
model="$(./scripts/setup-model)"
cargo build --release --locked -q
bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag"
work="$PWD/target/bench-state/serve-$name"
mkdir -p "$work"
printf 'skills = ["%s/skills"]\n' "$bench" > "$work/skillrag.toml"
export SKILLRAG_EMBED_MODEL="$model"
"$bin" -C "$work" index >&2

python3 - "$bench/queries.jsonl" "$work" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
with open(f"{sys.argv[2]}/ask.jsonl", "w", encoding="utf-8") as f:
    for r in rows:
        f.write(json.dumps({"query": r["query"]}, ensure_ascii=False) + "\n")
with open(f"{sys.argv[2]}/search.jsonl", "w", encoding="utf-8") as f:
    for r in rows:
        f.write(json.dumps({"query": r["query"], "k": 5}, ensure_ascii=False) + "\n")
PY

port=18390
server_pid=""
rss_file="$work/rss.max"
start_server() { # $1 = answer cache entries
  SKILLRAG_SERVE_CACHE_ENTRIES="$1" "$bin" -C "$work" serve --addr "127.0.0.1:$port" 2> "$work/serve.log" &
  server_pid=$!
  for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  echo 0 > "$rss_file"
  ( while kill -0 "$server_pid" 2>/dev/null; do
      rss=$(awk '/VmRSS/ {print $2}' "/proc/$server_pid/status" 2>/dev/null || echo 0)
      [ "${rss:-0}" -gt "$(cat "$rss_file")" ] && echo "$rss" > "$rss_file"
      sleep 0.2
    done ) &
}
stop_server() { kill -TERM "$server_pid"; wait "$server_pid" 2>/dev/null || true; sleep 0.3; }
load() { # $1 = path, $2 = bodies, $3 = connections, $4 = seconds
  local threads=$(( $3 < 2 ? 1 : 2 ))
  WRK_PATH="$1" BODIES="$2" wrk -t"$threads" -c"$3" -d"${4}s" --timeout 30s -s bench/serve/wrk.lua \
    "http://127.0.0.1:$port" | tail -n 1
}

results="$work/results.jsonl"
: > "$results"
record() { # $1 = label, $2 = connections, $3 = wrk JSON
  python3 -c 'import json,sys; d=json.loads(sys.argv[3]); d.update(label=sys.argv[1], connections=int(sys.argv[2]), rss_mb=round(int(open(sys.argv[4]).read())/1024)); print(json.dumps(d))' \
    "$1" "$2" "$3" "$rss_file" >> "$results"
  echo "$1 c=$2: $3" >&2
}

start_server 0
for c in 1 8 64; do
  record "search" "$c" "$(load /v1/search "$work/search.jsonl" "$c" "$seconds")"
done
for c in 1 8 64; do
  record "ask (no cache)" "$c" "$(load /v1/ask "$work/ask.jsonl" "$c" "$seconds")"
done
# Under load while full re-indexes (re-chunking every file; vectors from the embedding cache)
# run back to back for the whole window, each switched in atomically when done.
reindex_seconds=$(( seconds * 3 ))
jobs_file="$work/reindex-jobs.jsonl"
: > "$jobs_file"
( end=$(( $(date +%s) + reindex_seconds - 1 ))
  while [ "$(date +%s)" -lt "$end" ]; do
    curl -sf -XPOST "http://127.0.0.1:$port/v1/index" -H 'content-type: application/json' -d '{"rebuild": true}' >/dev/null || true
    while curl -sf "http://127.0.0.1:$port/v1/index" | grep -q '"state":"running"'; do sleep 0.2; done
    curl -sf "http://127.0.0.1:$port/v1/index" >> "$jobs_file"; echo >> "$jobs_file"
  done ) &
reindexer=$!
record "ask (no cache) during re-index" 8 "$(load /v1/ask "$work/ask.jsonl" 8 "$reindex_seconds")"
wait "$reindexer"
job="$(python3 -c '
import json, sys
jobs = [json.loads(l)["job"] for l in open(sys.argv[1]) if l.strip()]
done = [j for j in jobs if j["state"] == "done"]
print(json.dumps({"job": {"state": "done" if len(done) == len(jobs) else "failed", "count": len(jobs),
    "message": f"{len(done)} of {len(jobs)} full re-indexes done back to back", "started": jobs[0]["started"] if jobs else 0,
    "finished": jobs[-1]["finished"] if jobs else 0}}))' "$jobs_file")"
echo "re-index jobs: $job" >&2
stop_server

start_server 1024
load /v1/ask "$work/ask.jsonl" 8 5 >/dev/null  # warm the cache: every question answered once
for c in 1 8 64; do
  record "ask (cache)" "$c" "$(load /v1/ask "$work/ask.jsonl" "$c" "$seconds")"
done
stop_server

python3 - "$results" "$job" "$name" "$seconds" > "bench/results/serve-$name.md" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
job = json.loads(sys.argv[2]).get("job") or {}
print(f"# skillrag serve under load — {sys.argv[3]}\n")
print(f"`bench/serve.sh` with wrk on loopback, {sys.argv[4]} s per run, the benchmark's questions in turn. "
      "wrk and the server share the machine's cores. Latency in ms; RSS is the server's peak so far.\n")
print("| endpoint | clients | req/s | p50 | p90 | p99 | max | errors | peak RSS MB |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    errors = sum(r["errors"].values())
    print(f"| {r['label']} | {r['connections']} | {r['rps']:.0f} | {r['p50_ms']:.2f} | {r['p90_ms']:.2f} | "
          f"{r['p99_ms']:.2f} | {r['max_ms']:.1f} | {errors} | {r['rss_mb']} |")
if job:
    dur = (job.get("finished") or 0) - (job.get("started") or 0)
    print(f"\nDuring the re-index row: {job.get('message')} (~{dur} s wall), every one published and switched in "
          "while the clients kept asking.")
PY
cat "bench/results/serve-$name.md"
