#!/usr/bin/env python3
"""Compares two `skillrag eval` runs answer by answer (their answers.jsonl), every field of the
JSON answer except the timings and the answer's own `answer_id` (new in every run): the check that
a refactor changed no behaviour.

    bench/compare-answers.py BASE/answers.jsonl NEW/answers.jsonl

Prints how many answers differ and, for the first few, which fields; exits 1 when any differ."""
import json
import sys


def load(path):
    answers = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                answer = json.loads(line)
                answer.pop("timings_ms", None)
                answer.pop("answer_id", None)
                answers[answer.get("id")] = answer
    return answers


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    base, new = load(sys.argv[1]), load(sys.argv[2])
    missing = sorted(set(base) ^ set(new), key=str)
    differing = []
    for qid in sorted(set(base) & set(new), key=str):
        fields = sorted(k for k in set(base[qid]) | set(new[qid]) if base[qid].get(k) != new[qid].get(k))
        if fields:
            differing.append((qid, fields))
    print(f"{len(base)} vs {len(new)} answers; {len(missing)} only in one run; {len(differing)} differ")
    for qid, fields in differing[:20]:
        print(f"  {qid}: {', '.join(fields)}")
    sys.exit(1 if missing or differing else 0)


if __name__ == "__main__":
    main()
