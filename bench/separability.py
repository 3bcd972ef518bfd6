#!/usr/bin/env python3
"""How well each routing signal separates the kinds of questions the refusal decisions must tell apart.

Reads the `answers.jsonl` that `skillrag eval` wrote (every answer carries every candidate skill's
signals) and the benchmark's `queries.jsonl`, and prints, per gold skill, the ROC AUC of each signal
of that skill for three separations:

- fact vs unanswerable: the evidence check (answer, or refuse `not_found`);
- unanswerable vs out_of_scope: a question of the skill's domain whose answer is missing, against a
  question of a neighbouring domain (refuse `not_found`, or `out_of_scope`);
- fact vs out_of_scope: routing proper.

AUC 1.0 = some threshold separates the two perfectly; 0.5 = the signal cannot tell them apart. No
threshold, however fitted, does better than the AUC allows, so this shows where a lexical signal
has reached its limit.

usage: bench/separability.py ANSWERS_JSONL [BENCH_DIR] > report.md
"""
import json
import sys
from pathlib import Path

SIGNALS = ["score", "knowledge", "vocabulary", "profile", "knowledge_dense", "dense"]


def auc(positives, negatives):
    """Probability that a random positive scores above a random negative (ties count half)."""
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def main():
    answers_path = Path(sys.argv[1])
    bench = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).resolve().parents[2] / "shared/bench/dev"
    queries = {}
    for line in (bench / "queries.jsonl").open(encoding="utf-8"):
        q = json.loads(line)
        queries[q["id"]] = q
    # (query row, {skill: its candidate signals}) per answered question
    rows = []
    for line in answers_path.open(encoding="utf-8"):
        a = json.loads(line)
        q = queries.get(a["id"])
        if q is None:
            continue
        candidates = {c["skill"]: c for c in (a.get("route") or {}).get("candidates") or []}
        rows.append((q, candidates))
    skills = sorted({q["skill"] for q, _ in rows if q.get("skill")})

    def values(skill, kind, signal, own=True):
        out = []
        for q, candidates in rows:
            if q["type"] != kind or (own and q.get("skill") != skill):
                continue
            c = candidates.get(skill)
            if c is None:
                continue
            v = c.get(signal)
            if v is None:
                continue
            out.append(float(v))
        return out

    separations = [
        ("fact vs unanswerable", ("fact", True), ("unanswerable", True)),
        ("unanswerable vs out_of_scope", ("unanswerable", True), ("out_of_scope", False)),
        ("fact vs out_of_scope", ("fact", True), ("out_of_scope", False)),
    ]
    print(f"## Signal separability on `{bench.name}` (`{answers_path}`)\n")
    print("ROC AUC of each signal of the question's gold skill (out_of_scope rows: that skill's signals).")
    print("`score` is the router's calibrated confidence; `–` where the signal is absent.\n")
    print("| skill | separation | n | " + " | ".join(SIGNALS) + " |")
    print("|---|---|---|" + "---|" * len(SIGNALS))
    for skill in skills:
        for name, (pos_kind, pos_own), (neg_kind, neg_own) in separations:
            cells = []
            n = None
            for signal in SIGNALS:
                pos = values(skill, pos_kind, signal, pos_own)
                neg = values(skill, neg_kind, signal, neg_own)
                a = auc(pos, neg)
                if a is not None and n is None:
                    n = f"{len(pos)}/{len(neg)}"
                cells.append("–" if a is None else f"{a:.3f}")
            print(f"| {skill} | {name} | {n or '–'} | " + " | ".join(cells) + " |")

    # The decision the router actually faces after weak evidence: the top skill's confidence of a
    # question whose answer is missing against that of a neighbouring-domain question.
    def top_chinese(kind):
        out = []
        for q, candidates in rows:
            if q["type"] != kind or not candidates:
                continue
            if not any("\u4e00" <= ch <= "\u9fff" for ch in q["query"]):
                continue
            out.append(max(c.get("score") or 0.0 for c in candidates.values()))
        return out

    unanswerable, out_of_scope = top_chinese("unanswerable"), top_chinese("out_of_scope")
    pooled = auc(unanswerable, out_of_scope)
    if pooled is not None:
        print(
            f"\nTop-skill confidence, Chinese unanswerable vs out_of_scope: AUC {pooled:.3f} "
            f"({len(unanswerable)}/{len(out_of_scope)} questions)."
        )


if __name__ == "__main__":
    main()
