#!/usr/bin/env bash
# What a change does to routing and answers on dev v2, a baseline binary against this tree's, in
# one run: dev v2 with all six skills and a copy without skills/everyday-knowledge (its rows left
# out), each with its leave-gold-out variant (`eval --leave-gold-out`, default share and seed).
# BM25 only, no LLM, no reader; each binary in its own project. Per skill: routing and false
# refusals (eval's report), what a user gets (../shared/tools/outcomes.py: answered with the
# fact / refused / answered without it; unanswerable answered), the readable-answer check, and how
# many answers differ (bench/compare-answers.py).
#
#   bench/before-after.sh BASELINE_BINARY [OUT.md]      (default OUT: bench/results/before-after.md)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
base="${1:?usage: bench/before-after.sh BASELINE_BINARY [OUT.md]}"
out="${2:-$here/bench/results/before-after.md}"
shared="${SKILLRAG_SHARED:-$here/../shared}"
new="${CARGO_TARGET_DIR:-$here/target}/release/skillrag"
work="${BEFORE_AFTER_DIR:-/tmp/skillrag-before-after}"
rm -rf "$work" && mkdir -p "$work/without-everyday"
cp -r "$shared/bench/dev/skills" "$work/without-everyday/skills"
rm -rf "$work/without-everyday/skills/everyday-knowledge"
python3 - "$shared/bench/dev/queries.jsonl" "$work/without-everyday/queries.jsonl" <<'PY'
import json, sys
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for l in open(sys.argv[1], encoding="utf-8"):
        r = json.loads(l)
        if r.get("skill") != "everyday-knowledge" and not any("everyday-knowledge" in g for g in r.get("gold_sources", [])):
            out.write(l)
PY
for bench in "$shared/bench/dev" "$work/without-everyday"; do
  name="$(basename "$bench")"
  for which in baseline new; do
    bin="$base"
    [ "$which" = new ] && bin="$new"
    echo "before-after: $name, $which" >&2
    mkdir -p "$work/project-$name-$which"
    "$bin" -C "$work/project-$name-$which" eval "$bench" --embed-model none --no-llm --no-reader --leave-gold-out \
      --out "$work/eval-$name-$which" >"$work/eval-$name-$which.log" 2>&1
  done
done
python3 - "$work" "$shared" "$here" "$base" "$(git -C "$here" rev-parse --short HEAD)" >"$out" <<'PY'
import json, subprocess, sys
work, shared, here, base, head = sys.argv[1:]
benches = [("dev", f"{shared}/bench/dev/queries.jsonl", "all six skills"), ("without-everyday", f"{work}/without-everyday/queries.jsonl", "without everyday-knowledge")]
def outcomes(answers, queries):
    run = subprocess.run(["python3", f"{shared}/tools/outcomes.py", answers, queries, "--json"], capture_output=True, text=True, check=True)
    return json.loads(run.stdout)
def differ(a, b):
    run = subprocess.run(["python3", f"{here}/bench/compare-answers.py", a, b], capture_output=True, text=True)
    return run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr.strip()
f = lambda x: "–" if x is None else f"{x:.3f}"
pair = lambda a, b: f"{f(a)} → {f(b)}"
print("# dev v2 before/after: routing, refusals and what a user gets\n")
print(f"`bench/before-after.sh {base}`: baseline `{base}` against this tree ({head}), one run; BM25 only, no LLM, no reader,")
print("`eval --leave-gold-out` (default share and seed), each binary in its own project.\n")
for name, queries, title in benches:
    ev = {w: json.load(open(f"{work}/eval-{name}-{w}/report.json"))["report"] for w in ("baseline", "new")}
    oc = {w: outcomes(f"{work}/eval-{name}-{w}/answers.jsonl", queries) for w in ("baseline", "new")}
    lgo_q = next(p for p in subprocess.run(["find", f"{work}/project-{name}-new/.skillrag/eval", "-name", "queries.jsonl"], capture_output=True, text=True).stdout.split())
    lo = {w: outcomes(f"{work}/eval-{name}-{w}/answers-leave-gold-out.jsonl", lgo_q) for w in ("baseline", "new")}
    print(f"## {title}: baseline → this tree\n")
    print("| skill | routing | false refusals | answered with the fact | refused | answered without it | unanswerable answered | leave-gold-out answered | readable |")
    print("|---|---|---|---|---|---|---|---|---|")
    skills = ["overall"] + sorted(s for s in ev["new"]["per_skill"] if s != "(none)")
    for s in skills:
        r = {w: ev[w]["overall"] if s == "overall" else ev[w]["per_skill"].get(s, {}) for w in ev}
        o = {w: oc[w] if s == "overall" else oc[w]["per_skill"].get(s, {}) for w in oc}
        l = {w: lo[w] if s == "overall" else lo[w]["per_skill"].get(s, {}) for w in lo}
        wrong = {w: None if o[w].get("fact_right") is None else 1 - o[w]["fact_right"] - o[w]["fact_refused"] for w in o}
        print(f"| {s} | {pair(r['baseline'].get('routing_accuracy'), r['new'].get('routing_accuracy'))} "
              f"| {pair(r['baseline'].get('false_refusals'), r['new'].get('false_refusals'))} "
              f"| {pair(o['baseline'].get('fact_right'), o['new'].get('fact_right'))} "
              f"| {pair(o['baseline'].get('fact_refused'), o['new'].get('fact_refused'))} "
              f"| {pair(wrong['baseline'], wrong['new'])} "
              f"| {pair(o['baseline'].get('unans_answered'), o['new'].get('unans_answered'))} "
              f"| {pair(l['baseline'].get('unans_answered'), l['new'].get('unans_answered'))} "
              f"| {pair(r['baseline'].get('readable_answers'), r['new'].get('readable_answers'))} |")
    print(f"\nOut of scope answered: {pair(oc['baseline']['oos_answered'], oc['new']['oos_answered'])}.")
    print(f"Answers compared (`bench/compare-answers.py`): dev {differ(f'{work}/eval-{name}-baseline/answers.jsonl', f'{work}/eval-{name}-new/answers.jsonl')};")
    print(f"leave-gold-out {differ(f'{work}/eval-{name}-baseline/answers-leave-gold-out.jsonl', f'{work}/eval-{name}-new/answers-leave-gold-out.jsonl')}.\n")
PY
cat "$out"
