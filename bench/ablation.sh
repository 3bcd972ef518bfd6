#!/usr/bin/env bash
# Robustness of routing and answers to the skill mix: `skillrag eval` on a benchmark (default
# ../shared/bench/dev) with all its skills and with SKILL removed, per skill, in one run. The
# removed skill's questions become out_of_scope rows (no remaining skill should take them). With
# BASE_BIN set to a skillrag binary built from another commit (the baseline), both binaries run
# on both mixes, so a change is judged before and after in the same run.
# Writes bench/results/ablation-<bench>-<skill>.md (tables from bench/per_skill.py).
#   bench/ablation.sh everyday-knowledge
#   BASE_BIN=/tmp/skillrag-ce3096a bench/ablation.sh everyday-knowledge
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/skill-bench.sh

# The benchmark without the skill: its folders copied, its questions relabelled out_of_scope.
root="$PWD/target/bench-state/ablation"
without="$root/$name-without-$skill"
rm -rf "$without"
mkdir -p "$without/skills"
for s in "$bench"/skills/*/; do
  [ "$(basename "$s")" = "$skill" ] || cp -r "$s" "$without/skills/"
done
python3 - "$bench/queries.jsonl" "$without/queries.jsonl" "$skill" <<'PY'
import json, sys
source, target, removed = sys.argv[1:]
with open(source, encoding="utf-8") as f, open(target, "w", encoding="utf-8") as out:
    for line in f:
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("skill") == removed:
            row.update(skill=None, type="out_of_scope", answers=[], gold_sources=[])
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
PY

# One project for every run: the indexes are shared (the mix without the skill starts from the
# full mix's, so only the router is new); the router is refitted by each binary.
work="$root/project"
mkdir -p "$work/.skillrag/eval"
if [ -d "$work/.skillrag/eval/$name" ] && [ ! -d "$work/.skillrag/eval/$(basename "$without")" ]; then
  cp -a "$work/.skillrag/eval/$name" "$work/.skillrag/eval/$(basename "$without")"
fi
eval_mixes "$root" "all skills=$bench=$work" "without $skill=$without=$work"
result="bench/results/ablation-$name-$skill.md"
{
  echo "# \`$name\` with and without \`$skill\`"
  echo
  echo "\`bench/ablation.sh $skill\`${BASE_BIN:+ (before = BASE_BIN, after = this tree)}. Runs \"without $skill\" have the"
  echo "skill removed and its questions relabelled out_of_scope. Columns from \`bench/per_skill.py\`."
  echo
  python3 bench/per_skill.py "${runs[@]}"
} > "$result"
cat "$result"
