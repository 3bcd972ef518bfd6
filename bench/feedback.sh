#!/usr/bin/env bash
# Learning from feedback (issue 20): does `skillrag tune` route *new* questions better after
# users judged earlier answers? The benchmark's questions are split in two halves by id. Half A
# is asked first; each answer is judged the way a user would on the web page, from the gold
# label: 👍 when the question went to its skill (or was refused as out of scope when no skill
# covers it), 👎 naming the right skill when it went elsewhere or was refused, 👎 with "no skill
# covers it" when an out-of-scope question was answered. `tune` then fits on those judgements (in their own
# cross-validation fold) and half B — questions the router never saw — is evaluated before and
# after, in one run. Nothing here is shipped: the product's router fits on the skills alone until
# users give feedback.
# Writes bench/results/feedback-<bench>.md.
#   bench/feedback.sh [BENCH]
set -euo pipefail
cd "$(dirname "$0")/.."
bench="$(cd "${1:-../shared/bench/dev}" && pwd)"
name="$(basename "$bench")"
model="$(./scripts/setup-model)"
cargo build --release --locked -q
bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag"
export SKILLRAG_EMBED_MODEL="$model"

root="$PWD/target/bench-state/feedback"
rm -rf "$root"
mkdir -p "$root/project" "$root/tune"
# The two halves share the skills (one folder) and, copied, one index.
for half in A B; do
  mkdir -p "$root/$name-$half"
  ln -s "$bench/skills" "$root/$name-$half/skills"
done
python3 - "$bench/queries.jsonl" "$root/$name-A/queries.jsonl" "$root/$name-B/queries.jsonl" <<'PY'
import json, sys
source, a, b = sys.argv[1:]
rows = [json.loads(l) for l in open(source, encoding="utf-8") if l.strip()]
with open(a, "w", encoding="utf-8") as fa, open(b, "w", encoding="utf-8") as fb:
    for i, row in enumerate(rows):
        (fa if i % 2 == 0 else fb).write(json.dumps(row, ensure_ascii=False) + "\n")
PY
state="$root/project/.skillrag/eval"
mkdir -p "$state"
# Start from bench/ablation.sh's index of the same benchmark when there is one (no re-embedding).
previous="$PWD/target/bench-state/ablation/project/.skillrag/eval/$name"
if [ -d "$previous/index" ]; then
  mkdir -p "$state/$name-A"
  cp -a "$previous/index" "$previous/cache" "$state/$name-A/"
fi
"$bin" -C "$root/project" eval "$root/$name-A" --out "$root/out-A" > /dev/null
cp -a "$state/$name-A" "$state/$name-B"
rm -f "$state/$name-B/router.json"

# Half A judged from the gold labels, as FeedbackRecord lines in half B's state folder.
python3 - "$root/$name-A/queries.jsonl" "$root/out-A/answers.jsonl" "$state/$name-B/feedback.jsonl" <<'PY'
import json, sys, time
queries, answers, out = sys.argv[1:]
gold = {}
for line in open(queries, encoding="utf-8"):
    row = json.loads(line)
    gold[row["id"]] = row
counts = {"up": 0, "down, skill named": 0, "down, no skill covers it": 0, "not judged": 0}
with open(out, "w", encoding="utf-8") as f:
    for n, line in enumerate(open(answers, encoding="utf-8")):
        a = json.loads(line)
        row = gold[a["id"]]
        if row["type"] == "chitchat":
            counts["not judged"] += 1
            continue
        route = a["route"]
        refusal = (a.get("refusal") or {}).get("kind")
        routed = route.get("skills") or []
        rating, skill, no_skill = None, None, False
        if row["skill"] is None:
            rating = "up" if refusal == "out_of_scope" else "down"
            no_skill = rating == "down"
        elif routed == [row["skill"]] and refusal in (None, "not_found"):
            rating = "up"
        else:
            rating, skill = "down", row["skill"]
        counts["up" if rating == "up" else ("down, skill named" if skill else "down, no skill covers it")] += 1
        record = {
            "id": f"f-{n:016x}", "time": int(time.time()), "query": a["query"], "answer_id": a.get("answer_id") or None,
            "rating": rating, "routed": routed, "decision": route.get("decision"),
            "forced": bool(route.get("forced")), "refusal": refusal,
            "hits": [{"skill": h["skill"], "source": h["source"], "chunk_id": h.get("chunk_id", 0)} for h in a.get("hits", [])],
            "answer": a.get("answer", ""),
        }
        if skill:
            record["skill"] = skill
        if no_skill:
            record["no_skill"] = True
        f.write(json.dumps({k: v for k, v in record.items() if v is not None}, ensure_ascii=False) + "\n")
print("judgements of half A:", ", ".join(f"{k} {v}" for k, v in counts.items()), file=sys.stderr)
PY

# Half B before: the router fitted on the skills alone.
"$bin" -C "$root/project" eval "$root/$name-B" --out "$root/out-B-before" > /dev/null
# tune in a project over the same skills and the same state folder, so it reads the feedback
# and writes the router half B's eval then loads.
cat > "$root/tune/skillrag.toml" <<EOF
skills = ["$root/$name-B/skills"]
[index]
dir = "$state/$name-B"
EOF
start=$(date +%s.%N)
"$bin" -C "$root/tune" tune | tee "$root/tune.txt"
tune_s=$(echo "$(date +%s.%N) - $start" | bc)
"$bin" -C "$root/project" eval "$root/$name-B" --out "$root/out-B-after" > /dev/null
# Half A asked again with the tuned router: are the judged questions remembered?
cp "$state/$name-B/router.json" "$state/$name-A/router.json"
"$bin" -C "$root/project" eval "$root/$name-A" --out "$root/out-A-after" > /dev/null

result="bench/results/feedback-$name.md"
{
  echo "# Learning from feedback on \`$name\`"
  echo
  echo "\`bench/feedback.sh\`: half A of the questions (even positions) asked and judged from the gold labels,"
  echo "\`skillrag tune\` fitted on the judgements (${tune_s%.*} s), half B (odd positions, never judged) evaluated"
  echo "before and after in the same run. Columns from \`bench/per_skill.py\`."
  echo
  echo '```'
  cat "$root/tune.txt"
  echo '```'
  echo
  python3 bench/per_skill.py "before (skills only)=$root/out-B-before" "after (with half A's feedback)=$root/out-B-after"
  echo
  echo "Overall: half B (never judged: generalisation) and half A asked again (judged: memory):"
  echo
  python3 - "$root/out-B-before/report.json" "$root/out-B-after/report.json" "$root/out-A/report.json" "$root/out-A-after/report.json" <<'PY'
import json, sys
b_before, b_after, a_before, a_after = (json.load(open(p))["report"]["overall"] for p in sys.argv[1:])
keys = ["routing_accuracy", "false_refusals", "hit_at_5", "answer_contains_gold", "unanswerable_not_found",
        "out_of_scope_rejected", "chitchat_without_retrieval"]
print("| metric | B before | B after | B after / before | A before | A again after |")
print("|---|---:|---:|---:|---:|---:|")
for k in keys:
    ratio = b_after[k] / b_before[k] if b_before[k] else float("nan")
    print(f"| {k} | {b_before[k]:.3f} | {b_after[k]:.3f} | {ratio:.2f}× | {a_before[k]:.3f} | {a_after[k]:.3f} |")
PY
} > "$result"
cat "$result"
