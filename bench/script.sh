#!/usr/bin/env bash
# Robustness to the Chinese script: `skillrag eval` on a benchmark (default ../shared/bench/dev)
# as it is and with one skill rewritten in Traditional Chinese (its knowledge, SKILL.md, questions
# and gold answers, by OpenCC's s2twp: Taiwan characters and vocabulary), per skill, in one run.
# A deployment mixes the scripts (a Traditional encyclopedia beside Simplified statutes); the
# other skills' questions stay Simplified. With BASE_BIN set to a skillrag binary built from
# another commit (the baseline), both binaries run on both mixes.
# OpenCC comes from PyPI (opencc-python-reimplemented, pure Python), into target/bench-state.
# Writes bench/results/script-<bench>-<skill>.md (tables from bench/per_skill.py, plus the
# answers given where a refusal or another skill was due, from bench/wrong_answers.py).
#   bench/script.sh zh-encyclopedia
#   BASE_BIN=/tmp/skillrag-3f36f7b bench/script.sh zh-encyclopedia
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/skill-bench.sh

root="$PWD/target/bench-state/script"
opencc="$root/pypi/opencc-python-reimplemented-0.1.7"
if [ ! -d "$opencc/opencc" ]; then
  rm -rf "$opencc.partial"
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-deps \
    --target "$opencc.partial" opencc-python-reimplemented==0.1.7 >&2
  mv "$opencc.partial" "$opencc"
fi

# The benchmark with the skill in Traditional characters.
traditional="$root/$name-$skill-traditional"
PYTHONPATH="$opencc" python3 - "$bench" "$traditional" "$skill" <<'PY'
import json, os, shutil, sys
from opencc import OpenCC
source, target, skill = sys.argv[1:]
convert = OpenCC("s2twp").convert
shutil.rmtree(target, ignore_errors=True)
shutil.copytree(source, target)
folder = os.path.join(target, "skills", skill)
for root, _, files in os.walk(folder):
    for name in files:
        path = os.path.join(root, name)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        with open(path, "w", encoding="utf-8") as f:
            f.write(convert(text))
rows, lost = [], 0
with open(os.path.join(source, "queries.jsonl"), encoding="utf-8") as f:
    for line in f:
        if not line.strip():
            continue
        row = json.loads(line)
        if row.get("skill") == skill:
            row["query"] = convert(row["query"])
            row["answers"] = [convert(a) for a in row["answers"]]
            if row["type"] == "fact":
                gold = "".join(open(os.path.join(folder, g), encoding="utf-8").read() for g in row["gold_sources"])
                lost += not any(a in gold for a in row["answers"])
        rows.append(row)
with open(os.path.join(target, "queries.jsonl"), "w", encoding="utf-8") as out:
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
print(f"{skill} in Traditional characters: {lost} gold answers no longer verbatim in their file", file=sys.stderr)
PY

# One project per mix, shared by both binaries (each rebuilds what its analyzer needs and refits).
eval_mixes "$root" "Simplified=$bench=$root/project-$name" "$skill in Traditional=$traditional=$root/project-$(basename "$traditional")"
result="bench/results/script-$name-$skill.md"
{
  echo "# \`$name\` with \`$skill\` in Simplified and in Traditional characters"
  echo
  echo "\`bench/script.sh $skill\`${BASE_BIN:+ (before = BASE_BIN, after = this tree)}. In the Traditional mix the skill's"
  echo "knowledge, SKILL.md, questions and gold answers are OpenCC s2twp conversions; the other skills"
  echo "and their questions are unchanged. Columns from \`bench/per_skill.py\`."
  echo
  python3 bench/per_skill.py "${runs[@]}"
  echo
  python3 bench/wrong_answers.py "${wrong[@]}"
} > "$result"
cat "$result"
