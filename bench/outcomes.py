#!/usr/bin/env python3
"""Where each answerable and unanswerable row of an `eval` run ended, as counts: its own skill
answered, its own skill refused it `not_found`, it was refused `out_of_scope` with its own skill
ranked first or not, or another skill took it; and for statute rows whose answer does not name the
gold article (eval's own check, `names_gold_article` in report.json), the rank of the first hit
from the gold source. The classes say which stage to work on: acceptance (`out_of_scope` with the
own skill first), evidence (`not_found`), ranking between skills (another skill), or ranking
inside the skill.

usage: bench/outcomes.py EVAL_DIR [BENCH]    (EVAL_DIR: an `eval --out` folder)
"""
import collections
import json
import sys

folder = sys.argv[1]
bench = sys.argv[2] if len(sys.argv) > 2 else "../shared/bench/dev"
gold_sources = {
    r["id"]: r["gold_sources"] for r in map(json.loads, open(f"{bench}/queries.jsonl", encoding="utf-8"))
}
rows = json.load(open(f"{folder}/report.json", encoding="utf-8"))["report"]["rows"]
answers = {a["id"]: a for a in map(json.loads, open(f"{folder}/answers.jsonl", encoding="utf-8"))}

def plain(source):
    return source.removeprefix("./")


ends = collections.Counter()
article_misses = collections.Counter()
article_rows = 0
for row in rows:
    if row["kind"] not in ("fact", "unanswerable"):
        continue
    answer = answers[row["id"]]
    own, refusal = row["expected_skill"], row["refusal"]
    if row["routed"][:1] == [own]:
        end = f"own skill, {refusal}" if refusal else "own skill, answered"
    elif not row["routed"]:
        candidates = answer["route"]["candidates"]
        first = candidates[0]["skill"] if candidates else None
        end = f"{refusal}, own skill {'first' if first == own else 'not first'}"
    else:
        end = f"another skill ({row['decision']})"
    ends[(row["kind"], end)] += 1
    if row.get("names_gold_article") is not None:
        article_rows += 1
        if not row["names_gold_article"]:
            golds = {plain(g) for g in gold_sources[row["id"]]}
            rank = next(i for i, h in enumerate(answer["hits"], 1) if plain(h["source"]) in golds)
            article_misses["refused" if refusal else f"gold source first at rank {rank}"] += 1

print(f"## Row outcomes: `{folder}`\n")
print("| type | ended | rows |\n|---|---|---|")
for (kind, end), n in sorted(ends.items()):
    print(f"| {kind} | {end} | {n} |")
print(f"\nStatute rows with the gold source retrieved: {article_rows}; answers not naming the gold article:\n")
print("| where | rows |\n|---|---|")
for where, n in sorted(article_misses.items()):
    print(f"| {where} | {n} |")
