#!/usr/bin/env python3
"""Where each answerable and unanswerable row of an `eval` run ended, as counts: its own skill
answered, its own skill refused it `not_found`, it was refused `out_of_scope` with its own skill
ranked first or not, or another skill took it; and for statute rows whose gold source was
retrieved but whose answer does not name the gold article, the rank of the gold source. The
failure classes say which stage to work on: acceptance (out_of_scope with the own skill first),
evidence (not_found), ranking between skills (another skill), or ranking inside the skill.

usage: bench/outcomes.py ANSWERS_JSONL [BENCH]
"""
import collections
import json
import re
import sys

answers_path = sys.argv[1]
bench = sys.argv[2] if len(sys.argv) > 2 else "../shared/bench/dev"
rows = {r["id"]: r for r in map(json.loads, open(f"{bench}/queries.jsonl", encoding="utf-8"))}
answers = [json.loads(line) for line in open(answers_path, encoding="utf-8")]
label = re.compile(r"^第[零〇一二三四五六七八九十百千两0-9]+条(之[一二三四五六七八九十]+)?$")

ends = collections.Counter()
article_misses = collections.Counter()
for a in answers:
    row = rows.get(a.get("id"))
    if not row or row["type"] not in ("fact", "unanswerable"):
        continue
    route = a["route"]
    refusal = (a.get("refusal") or {}).get("kind")
    first = route["skills"][0] if route["skills"] else None
    if first == row["skill"]:
        end = f"own skill, {refusal}" if refusal else "own skill, answered"
    elif first is None:
        top = route["candidates"][0]["skill"] if route["candidates"] else None
        end = f"{refusal}, own skill {'first' if top == row['skill'] else 'not first'}"
    else:
        end = f"another skill ({route['decision']})"
    ends[(row["type"], end)] += 1
    gold = row["answers"]
    if row["type"] == "fact" and gold and all(label.match(g.strip()) for g in gold):
        ranks = [i for i, h in enumerate(a["hits"]) if h["source"] in row["gold_sources"]]
        if ranks:
            named = refusal is None and any(g in a["answer"] for g in gold)
            article_misses["retrieved"] += 1
            if not named:
                article_misses["refused" if refusal else f"gold source at rank {ranks[0] + 1}"] += 1

print(f"## Row outcomes: `{answers_path}`\n")
print("| type | ended | rows |\n|---|---|---|")
for (kind, end), n in sorted(ends.items()):
    print(f"| {kind} | {end} | {n} |")
total = article_misses.pop("retrieved", 0)
print(f"\nStatute rows with the gold source retrieved: {total}; answers not naming the gold article:\n")
print("| where | rows |\n|---|---|")
for where, n in sorted(article_misses.items()):
    print(f"| {where} | {n} |")
