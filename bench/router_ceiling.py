#!/usr/bin/env python3
"""How far can today's routing signals go? A diagnostic, never a fit the product uses.

Reads an eval run's answers (each carries every candidate skill's signals) and the router the
run used, rebuilds the router's features exactly (checked against its scores), then fits the same
kind of model — a logistic regression over the features, optionally with each signal's lead over
the best other skill — *on the benchmark itself*, with 5-fold cross-validation, and reports routing
accuracy (top candidate above `accept` equals the gold skill; none for out-of-scope rows). If
even a model fitted on the benchmark's own questions cannot beat the shipped router, better
fitting will not reach the target: the signals themselves are the limit.

  python3 bench/router_ceiling.py ANSWERS.jsonl ROUTER.json QUERIES.jsonl   (needs numpy)
"""
import json
import math
import random
import sys

import numpy as np


def features(c, cands, leads):
    others = [x for x in cands if x["skill"] != c["skill"]]
    def lead(key, value=None):
        value = value or (lambda x: x[key])
        return value(c) - max(value(x) for x in others) if others else 0.0

    dense, kd = c["dense"], c["knowledge_dense"]
    row = [1 - 0.5 ** len(c["keyword_hits"]), c["profile"], dense or 0.0, float(dense is not None),
           c["specificity"], c["knowledge"], kd or 0.0, float(kd is not None), float(c["language_match"]),
           max(-1.0, min(1.0, lead("specificity")))]
    if leads:
        row += [lead("knowledge"), lead("profile"), lead("triggers", lambda x: len(x["keyword_hits"]))]
    return row


def fit(items, l2=0.1, steps=4000, rate=0.5):
    X = np.vstack([x for _, _, x, _ in items])
    y = np.concatenate([t for _, _, _, t in items])
    w, b = np.zeros(X.shape[1]), 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(X @ w + b)))
        w -= rate * (X.T @ (p - y) + l2 * w) / len(y)
        b -= rate * (p - y).mean()
    return w, b


def routed_right(items, w, b, accept):
    right = 0
    for gold, skills, X, _ in items:
        p = 1 / (1 + np.exp(-(X @ w + b)))
        i = int(p.argmax())
        right += (skills[i] if p[i] >= accept else None) == gold
    return right


def main():
    answers, router, queries = sys.argv[1:4]
    model = json.load(open(router, encoding="utf-8"))["model"]
    gold = {}
    for line in open(queries, encoding="utf-8"):
        if line.strip():
            r = json.loads(line)
            gold[r["id"]] = r
    rows = [json.loads(l) for l in open(answers, encoding="utf-8") if l.strip()]
    worst = 0.0
    for r in rows:
        cands = r["route"]["candidates"]
        for c in cands:
            z = sum(a * x for a, x in zip(model["weights"], features(c, cands, False))) + model["bias"]
            worst = max(worst, abs(1 / (1 + math.exp(-z)) - c["score"]))
    print(f"features rebuilt from the answers: largest difference from the router's scores {worst:.1e}")
    for leads in (False, True):
        items = []
        for r in rows:
            g = gold[r["id"]]
            cands = r["route"]["candidates"]
            if g["type"] == "chitchat" or not cands:
                continue
            X = np.array([features(c, cands, leads) for c in cands])
            items.append((g["skill"], [c["skill"] for c in cands], X, np.array([float(c["skill"] == g["skill"]) for c in cands])))
        shipped = routed_right(items, np.array(model["weights"] + ([0.0] * 3 if leads else [])), model["bias"], model["accept"])
        order = list(range(len(items)))
        random.Random(1).shuffle(order)
        best = 0.0
        for accept in (0.4, 0.5, 0.6):
            right = 0
            for k in range(5):
                test = set(order[k::5])
                w, b = fit([items[i] for i in order if i not in test])
                right += routed_right([items[i] for i in test], w, b, accept)
            best = max(best, right / len(items))
        name = "features + leads of knowledge, profile, triggers" if leads else "the router's own features"
        print(f"{name}: shipped router {shipped / len(items):.3f}; fitted on the benchmark (5-fold CV, best accept) {best:.3f}; {len(items)} rows")


if __name__ == "__main__":
    main()
