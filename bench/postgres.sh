#!/usr/bin/env bash
# Embedded store vs PostgreSQL + pgvector, same machine, same data, same run:
#   1. the dev benchmark: `skillrag index --rebuild` chunks/s (vectors from the embedding cache,
#      so this measures chunking + writing, not the model), and `skillrag eval` (hit@5 and the
#      rest, ask latency) on each store;
#   2. synthetic scale (crates/store/benches/store_scale.rs): ingest chunks/s, BM25 and dense
#      search p50/p99, HNSW recall@10 against the exact scan, at each size in SIZES;
#   3. `skillrag serve` throughput on PostgreSQL: one replica, then two replicas on the same
#      database (wrk on /v1/ask, answer cache off), over the dev benchmark's questions.
# Usage: SIZES="100000 1000000" bench/postgres.sh [BENCH_DIR]. Writes bench/results/postgres.md.
# PostgreSQL comes from scripts/setup-postgres (PG 18 + pgvector 0.8 from PyPI, on loopback).
set -euo pipefail
cd "$(dirname "$0")/.."
bench="$(cd "${1:-../shared/bench/dev}" && pwd)"
sizes="${SIZES:-100000}"
seconds="${SECONDS_PER_RUN:-10}"
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }
model="$(./scripts/setup-model)"
eval "$(./scripts/setup-postgres)"
export SKILLRAG_EMBED_MODEL="$model"
cargo build --release --locked -q
bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag"
psql() { "$SKILLRAG_PG_BIN/psql" -qAt "$SKILLRAG_TEST_POSTGRES" "$@"; }
out="bench/results/postgres.md"
work="$PWD/target/bench-state/postgres"
mkdir -p "$work"
pg_url="$SKILLRAG_TEST_POSTGRES?options=-c%20search_path%3Dbench_dev%2Cpublic"

{
echo "# Embedded store vs PostgreSQL + pgvector"
echo
echo "\`bench/postgres.sh\` on $(date -u +%F), $(nproc) cores, PostgreSQL $(psql -c 'show server_version') with pgvector $(psql -c "select extversion from pg_extension where extname = 'vector'") on loopback (scripts/setup-postgres), all-MiniLM-L6-v2 (384 dims)."
echo "Both stores run on the same machine in the same run; ratios are PostgreSQL / embedded."
echo
} > "$out"

# --- 1. the dev benchmark ------------------------------------------------------------------
project="$work/dev"
mkdir -p "$project"
printf 'skills = ["%s/skills"]\n' "$bench" > "$project/skillrag.toml"
"$bin" -C "$project" index >&2  # fills the embedding cache once
psql -c "DROP SCHEMA IF EXISTS bench_dev CASCADE"
rate() { python3 -c 'import json,sys; r=json.load(sys.stdin); c=sum(s["chunks"] for s in r["skills"]); print(c, round(c / r["seconds"]))'; }
read -r chunks embedded_rate < <("$bin" -C "$project" index --rebuild --json | rate)
read -r _ pg_rate < <(SKILLRAG_STORE="$pg_url" "$bin" -C "$project" index --rebuild --json | rate)

"$bin" -C "$project" eval "$bench" --out "$work/eval-embedded" > "$work/eval-embedded.md"
SKILLRAG_STORE="$pg_url" "$bin" -C "$project" eval "$bench" --out "$work/eval-postgres" > "$work/eval-postgres.md"
{
echo "## Dev benchmark ($(basename "$bench"), $chunks chunks)"
echo
echo "| metric | embedded | PostgreSQL |"
echo "|---|---:|---:|"
echo "| index --rebuild, chunks/s (vectors from the cache) | $embedded_rate | $pg_rate |"
for m in "routing accuracy" "hit@1 (fact)" "hit@5 (fact)" "MRR@10 (fact)" "false refusals (fact)" "unanswerable → not_found" "out_of_scope rejected" "latency total p50 / p95 (ms)" "latency route p50 / p95 (ms)"; do
  echo "| $m | $(grep -F "| $m |" "$work/eval-embedded.md" | head -1 | cut -d'|' -f3 | xargs) | $(grep -F "| $m |" "$work/eval-postgres.md" | head -1 | cut -d'|' -f3 | xargs) |"
done
echo
} >> "$out"

# --- 2. synthetic scale ---------------------------------------------------------------------
{
echo "## Synthetic scale (crates/store/benches/store_scale.rs)"
echo
echo "60-token chunks from a 20 000-word Zipf-skewed vocabulary; 384-dim vectors around 2 000 random topic centres; queries are 3 words and the noisy vector of random chunks; 300 queries, k = 50; HNSW m = 16, ef_construction = 64, ef_search = 100."
echo
echo "| chunks | dims | measure | embedded | PostgreSQL | ratio |"
echo "|---:|---:|---|---:|---:|---:|"
} >> "$out"
for n in $sizes; do
  cargo bench -q -p skillrag-store --bench store_scale -- --chunks "$n" --queries 300 2>/dev/null | grep '^|' >> "$out"
  psql -c "DROP SCHEMA IF EXISTS bench_scale_$n CASCADE"
done
echo >> "$out"

# --- 3. serve: one replica vs two on the same database ---------------------------------------
python3 - "$bench/queries.jsonl" "$work/ask.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w", encoding="utf-8") as f:
    for l in open(sys.argv[1], encoding="utf-8"):
        if l.strip():
            f.write(json.dumps({"query": json.loads(l)["query"]}, ensure_ascii=False) + "\n")
PY
replica() { # $1 = project copy, $2 = port
  # stdout to a file: the caller reads this function's output with $(...), which would wait forever
  # for a background process holding the pipe.
  SKILLRAG_STORE="$pg_url" SKILLRAG_SERVE_CACHE_ENTRIES=0 "$bin" -C "$1" serve --addr "127.0.0.1:$2" >/dev/null 2>>"$work/serve.log" &
  echo $!
  for _ in $(seq 1 600); do curl -sf "http://127.0.0.1:$2/healthz" >/dev/null && return; sleep 0.1; done
}
load() { # $1 = port, $2 = connections → wrk JSON line
  WRK_PATH=/v1/ask BODIES="$work/ask.jsonl" wrk -t2 -c"$2" -d"${seconds}s" --timeout 30s -s bench/serve/wrk.lua \
    "http://127.0.0.1:$1" | tail -n 1
}
rm -rf "$work/dev2" && cp -r "$project" "$work/dev2"
one=$(replica "$project" 18401)
single=$(load 18401 16)
two=$(replica "$work/dev2" 18402)
load 18401 8 > "$work/a.json" &
first=$!
load 18402 8 > "$work/b.json"
wait "$first"
kill -TERM "$one" "$two"; wait "$one" "$two" 2>/dev/null || true
python3 - "$single" "$work/a.json" "$work/b.json" "$seconds" >> "$out" <<'PY'
import json, sys
one = json.loads(sys.argv[1])
a, b = (json.loads(open(p).read().strip().splitlines()[-1]) for p in sys.argv[2:4])
errors = lambda r: sum(r["errors"].values())
print("## `skillrag serve` on PostgreSQL: one replica vs two\n")
print(f"wrk on loopback, /v1/ask with the answer cache off, {sys.argv[4]} s, 16 connections in all "
      "(two replicas: 8 each, run at the same time). Clients, servers and PostgreSQL share the machine's cores.\n")
print("| setup | req/s | p50 ms | p99 ms | errors |")
print("|---|---:|---:|---:|---:|")
print(f"| one replica | {one['rps']:.0f} | {one['p50_ms']:.1f} | {one['p99_ms']:.1f} | {errors(one)} |")
print(f"| two replicas, same database | {a['rps'] + b['rps']:.0f} | {max(a['p50_ms'], b['p50_ms']):.1f} | "
      f"{max(a['p99_ms'], b['p99_ms']):.1f} | {errors(a) + errors(b)} |")
print(f"\nTwo replicas / one: {(a['rps'] + b['rps']) / one['rps']:.2f}×.")
PY
cat "$out"
