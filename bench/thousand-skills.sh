#!/usr/bin/env bash
# Routing among hundreds to a thousand one-file skills (issue 44's target: routing >= 0.90 at 1000),
# a baseline binary against this tree's, in the same run. The bench is
# ../shared/tools/make-thousand-skills.py (one skill per file of dev v2's everyday-knowledge, a
# SKILL.md of a name and the file's title; its fact rows relabelled to their file's skill), plus
# out-of-scope rows: dev v2's own and every 5th fact row of its other skills, which no file covers.
# BM25 only, no LLM, no reader; each binary indexes and fits its own project.
#
#   bench/thousand-skills.sh BASELINE_BINARY [SIZE...]      (default sizes: 300 1000)
#
# Writes bench/results/thousand-skills.md.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
base="${1:?usage: bench/thousand-skills.sh BASELINE_BINARY [SIZE...]}"
shift
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(300 1000)
shared="${SKILLRAG_SHARED:-$here/../shared}"
new="${CARGO_TARGET_DIR:-$here/target}/release/skillrag"
work="${THOUSAND_BENCH_DIR:-/tmp/skillrag-thousand-skills}"
mkdir -p "$work"
out="$here/bench/results/thousand-skills.md"
{
  echo "# Routing among many one-file skills: baseline against this tree"
  echo
  echo "\`bench/thousand-skills.sh\` on $(nproc) cores, $(date -u +%Y-%m-%d); baseline \`$(basename "$base")\`, this tree $(git -C "$here" rev-parse --short HEAD)$(git -C "$here" diff --quiet || echo '+changes')."
  echo "Fact rows: routed to their file's skill (\`single\`); *gold shortlisted*: the skill is among the route's candidates."
  echo
  echo "| skills | binary | fact rows | fact routing | gold shortlisted | fact refused | out of scope rows | out of scope answered | p50 (ms) | p95 (ms) |"
  echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
} >"$out"
for n in "${sizes[@]}"; do
  bench="$work/bench-$n"
  python3 "$shared/tools/make-thousand-skills.py" "$shared/bench/dev" "$bench" --max "$n" >/dev/null
  python3 - "$shared/bench/dev/queries.jsonl" "$bench/queries.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8") if l.strip()]
with open(sys.argv[2], "a", encoding="utf-8") as out:
    for i, r in enumerate(rows):
        if r["type"] == "out_of_scope" or (r["type"] == "fact" and r["skill"] != "everyday-knowledge" and i % 5 == 0):
            r = dict(r, skill=None, answers=[], gold_sources=[], type="out_of_scope")
            out.write(json.dumps(r, ensure_ascii=False) + "\n")
PY
  for which in baseline new; do
    bin="$base"
    [ "$which" = new ] && bin="$new"
    project="$work/project-$n-$which"
    rm -rf "$project" && mkdir -p "$project" && cp -r "$bench/skills" "$project/skills"
    echo "thousand-skills: $n skills, $which" >&2
    SKILLRAG_EMBED_MODEL=none "$bin" -C "$project" index >"$work/index-$n-$which.log" 2>&1
    SKILLRAG_EMBED_MODEL=none "$bin" -C "$project" eval "$bench" --embed-model none --no-llm --no-reader \
      --out "$work/eval-$n-$which" >"$work/eval-$n-$which.log" 2>&1
    python3 - "$bench/queries.jsonl" "$work/eval-$n-$which/answers.jsonl" "$n" "$which" >>"$out" <<'PY'
import json, sys
queries, answers, n, which = sys.argv[1:]
rows = {r["id"]: r for r in (json.loads(l) for l in open(queries, encoding="utf-8") if l.strip())}
facts = right = listed = refused = oos = answered = 0
latency = []
for l in open(answers, encoding="utf-8"):
    a = json.loads(l)
    r = rows[a["id"]]
    latency.append(a["timings_ms"]["total"])
    route = a["route"]
    if r["type"] == "fact":
        facts += 1
        right += route["decision"] == "single" and route["skills"] == [r["skill"]]
        listed += any(c["skill"] == r["skill"] for c in route.get("candidates", []))
        refused += a.get("refusal") is not None
    else:
        oos += 1
        answered += a.get("refusal") is None
latency.sort()
pct = lambda p: latency[min(len(latency) - 1, int(p * len(latency)))]
print(f"| {n} | {which} | {facts} | {right / facts:.3f} | {listed / facts:.3f} | {refused / facts:.3f} | {oos} | {answered / oos:.3f} | {pct(0.5):.1f} | {pct(0.95):.1f} |")
PY
  done
done
cat "$out"
