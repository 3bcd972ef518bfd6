#!/usr/bin/env bash
# Routing with many skills: one skill per article of the dev benchmark's encyclopedia and paper
# collections (bench/many_skills.py), BM25 only, at 10, 100 and 300 skills (or the sizes given).
# Per size: `index` wall time, `tune` wall time, then `eval`: fact routing accuracy, out-of-scope
# rejection and the latency per question (p50/p95, no LLM; routing probes included).
# Writes bench/results/many-skills.md.
#   bench/many-skills.sh            # 10 100 300
#   bench/many-skills.sh 10 50
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10 100 300)
source_bench="$(cd "${SOURCE_BENCH:-../shared/bench/dev}" && pwd)"
cargo build --release --locked -q
# BIN: another skillrag binary (a baseline) instead of this tree's.
bin="${BIN:-$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag}"
root="$PWD/target/bench-state/many-skills"
mkdir -p "$root" bench/results
out_md="bench/results/many-skills.md"
{
  echo "# Routing with many skills (one skill per article, BM25 only)"
  echo
  echo "\`bench/many-skills.sh ${sizes[*]}\` on $(nproc) cores, $(date -u +%Y-%m-%d). Each SKILL.md is a name and"
  echo "the article's title; questions are the dev benchmark's fact rows whose gold is one article,"
  echo "plus its out-of-scope rows. Latency is per question without an LLM (gate, probes, route,"
  echo "retrieval, extractive answer)."
  echo
  echo "| skills | questions | index (s) | chunks | tune (s) | fact routing | hit@5 | out_of_scope rejected | p50 (ms) | p95 (ms) |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
} > "$out_md"
for n in "${sizes[@]}"; do
  bench="$root/bench-$n"
  python3 bench/many_skills.py "$source_bench" "$bench" "$n"
  project="$root/project-$n"
  rm -rf "$project"
  mkdir -p "$project"
  cp -r "$bench/skills" "$project/skills"
  start=$(date +%s.%N)
  SKILLRAG_EMBED_MODEL=none "$bin" -C "$project" index > "$root/index-$n.log" 2>&1
  index_s=$(echo "$(date +%s.%N) - $start" | bc)
  start=$(date +%s.%N)
  SKILLRAG_EMBED_MODEL=none "$bin" -C "$project" tune > "$root/tune-$n.log" 2>&1
  tune_s=$(echo "$(date +%s.%N) - $start" | bc)
  # Only id and query: a row's "skill" would force that skill in `batch`.
  python3 -c 'import json, sys
for l in open(sys.argv[1], encoding="utf-8"):
    if l.strip():
        r = json.loads(l)
        print(json.dumps({"id": r["id"], "query": r["query"]}, ensure_ascii=False))' "$bench/queries.jsonl" |
    SKILLRAG_EMBED_MODEL=none "$bin" -C "$project" batch > "$root/answers-$n.jsonl" 2> "$root/batch-$n.log"
  python3 - "$bench/queries.jsonl" "$root/answers-$n.jsonl" "$n" "$index_s" "$tune_s" "$root/index-$n.log" >> "$out_md" <<'PY'
import json, re, sys
queries, answers, n, index_s, tune_s, index_log = sys.argv[1:]
rows = {}
for l in open(queries, encoding="utf-8"):
    if l.strip():
        r = json.loads(l)
        rows[r["query"]] = r
facts = right = hit5 = oos = rejected = 0
latency = []
for l in open(answers, encoding="utf-8"):
    if not l.strip():
        continue
    a = json.loads(l)
    r = rows.get(a.get("query"))
    if r is None:
        continue
    latency.append(a["timings_ms"]["total"])
    route = a["route"]
    if r["type"] == "fact":
        facts += 1
        right += route["decision"] == "single" and route["skills"] == [r["skill"]]
        gold = set(r["gold_sources"])
        hit5 += any(h.get("skill") == r["skill"] and h.get("source") in gold for h in a.get("hits", [])[:5])
    else:
        oos += 1
        rejected += route["decision"] == "none" or (a.get("refusal") or {}).get("kind") in ("out_of_scope", "boundary")
latency.sort()
pct = lambda p: latency[min(len(latency) - 1, int(p * len(latency)))] if latency else float("nan")
chunks = re.findall(r"skill\(s\): (\d+) chunks", open(index_log, encoding="utf-8").read())
print(f"| {n} | {facts + oos} | {float(index_s):.1f} | {chunks[-1] if chunks else '?'} | {float(tune_s):.1f} | "
      f"{right / max(facts, 1):.3f} | {hit5 / max(facts, 1):.3f} | {rejected / max(oos, 1):.3f} | {pct(0.5):.1f} | {pct(0.95):.1f} |")
PY
  tail -1 "$out_md"
done
echo "wrote $out_md"
