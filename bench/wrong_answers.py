#!/usr/bin/env python3
"""Answers given where none was due, per run: what a user reads that routing accuracy hides.

    bench/wrong_answers.py LABEL=REPORT_DIR=QUERIES.jsonl [...]

Counts, over an `eval --out` folder's answers.jsonl, the answers (no refusal, a single or multi
route) to unanswerable and out-of-scope questions, and the answers to fact questions from a skill
other than the question's own. Routing accuracy counts a question sent to the wrong skill and one
refused as out of scope alike; only the first hands the user an answer from the wrong knowledge."""
import json
import sys


def counts(answers_path, queries_path):
    with open(queries_path, encoding="utf-8") as f:
        queries = {q["id"]: q for q in map(json.loads, filter(str.strip, f))}
    c = {"unanswerable": 0, "out_of_scope": 0, "fact from another skill": 0}
    with open(answers_path, encoding="utf-8") as f:
        for a in map(json.loads, filter(str.strip, f)):
            q = queries.get(a["id"])
            answered = a.get("refusal") is None and a["route"]["decision"] in ("single", "multi")
            if not q or not answered:
                continue
            if q["type"] in ("unanswerable", "out_of_scope"):
                c[q["type"]] += 1
            elif q["type"] == "fact" and q["skill"] not in a["route"]["skills"]:
                c["fact from another skill"] += 1
    return c


def main():
    print("| run | answered unanswerable | answered out of scope | fact answered from another skill | total |")
    print("|---|---:|---:|---:|---:|")
    for arg in sys.argv[1:]:
        label, folder, queries = arg.split("=", 2)
        c = counts(f"{folder}/answers.jsonl", queries)
        print(f"| {label} | {c['unanswerable']} | {c['out_of_scope']} | {c['fact from another skill']} | {sum(c.values())} |")


if __name__ == "__main__":
    main()
