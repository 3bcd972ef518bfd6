#!/usr/bin/env python3
"""Answer quality per skill from two `skillrag eval` runs (answers.jsonl), before and after:
answer contains gold (fact rows), hit@1/hit@5 as eval counts them (a gold source among the hits),
answers with a question sentence, and statute answers naming the gold article when its source was
retrieved. `skillrag eval` itself reports the full readable-answer check; this script compares two
runs of possibly different binaries on the same rows.
    bench/answer_quality.py BENCH/queries.jsonl BEFORE/answers.jsonl AFTER/answers.jsonl"""
import collections, json, re, sys

ARTICLE = re.compile(r"^(第[零〇一二三四五六七八九十百千两0-9]+条(之[一二三四五六七八九十]+)?|Article \d+)$")

def load(path):
    return {r["id"]: r for r in map(json.loads, open(path, encoding="utf-8")) if r}

def tally(queries, answers):
    out = collections.defaultdict(collections.Counter)
    for qid, a in answers.items():
        q = queries[qid]
        if q["type"] != "fact":
            continue
        refused = a.get("refusal") is not None
        gold = {s.lstrip("./") for s in q["gold_sources"]}
        rank = next((i + 1 for i, h in enumerate(a["hits"]) if h["source"].lstrip("./") in gold), None)
        contains = not refused and any(x and x in a["answer"] for x in q["answers"])
        question = not refused and bool(re.search(r"[?？](\[\d+\])*\s*($|\n)", a["answer"]))
        statute = all(ARTICLE.match(x) for x in q["answers"]) and rank is not None
        for s in (out[q["skill"]], out["all"]):
            s["fact"] += 1
            s["contains"] += contains
            s["hit1"] += rank == 1
            s["hit5"] += rank is not None and rank <= 5
            s["question"] += question
            s["statute"] += statute
            s["names"] += statute and contains
    return out

def main():
    queries = load(sys.argv[1])
    before, after = (tally(queries, load(p)) for p in sys.argv[2:4])
    pct = lambda a, b: f"{a / b:.3f}" if b else "–"
    print("| skill | fact | hit@1 | hit@5 | contains gold before → after | ratio | answers ending a sentence with a question before → after | statute: names the gold article (retrieved) before → after |")
    print("|---|---|---|---|---|---|---|---|")
    for skill in sorted(after, key=lambda s: (s == "all", s)):
        b, a = before[skill], after[skill]
        ratio = f"{a['contains'] / b['contains']:.2f}×" if b["contains"] else "–"
        print(f"| {skill} | {a['fact']} | {pct(a['hit1'], a['fact'])} | {pct(a['hit5'], a['fact'])} | "
              f"{pct(b['contains'], b['fact'])} → {pct(a['contains'], a['fact'])} | {ratio} | "
              f"{b['question']} → {a['question']} | {pct(b['names'], b['statute'])} → {pct(a['names'], a['statute'])} |")

main()
