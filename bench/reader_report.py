#!/usr/bin/env python3
"""bench/reader.sh's report: outcomes per skill without and with the reader, reader calls per
question, and ask latency p50/p95 (from each answer's timings_ms.total). usage: reader_report.py WORK"""
import json, os, sys

work = sys.argv[1]
every = int(sys.argv[2]) if len(sys.argv) > 2 else 1
def load(name):
    o = json.load(open(os.path.join(work, f"{name}.outcomes.json")))
    answers = [json.loads(l) for l in open(os.path.join(work, name, "answers.jsonl"), encoding="utf-8")]
    return o, answers
def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0
f = lambda x: "–" if x is None else f"{x:.3f}"

print("# The reader on dev v2 and its leave-gold-out variant\n")
print("`bench/reader.sh`: BM25 only (`SKILLRAG_EMBED_MODEL=none`), the reader Qwen2.5-Coder-1.5B-Instruct Q4_K_M")
print("served by llama.cpp (`scripts/setup-reader`), both arms in one run on the same machine.")
if every > 1:
    print(f"A systematic sample: every {every}th question of each bench (`READER_BENCH_EVERY={every}`).")

print()
print("| measure | dev, no reader | dev, reader | leave-gold-out, no reader | leave-gold-out, reader |")
print("|---|---:|---:|---:|---:|")
runs = {n: load(n) for n in ["dev-no", "dev-yes", "lgo-no", "lgo-yes"]}
rows = [("answerable: answered with the fact", "fact_right"), ("answerable: refused", "fact_refused"),
        ("answerable: answered without the fact", "fact_wrong"), ("unanswerable: answered anyway", "unans_answered"),
        ("out of scope: answered anyway", "oos_answered")]
for label, key in rows:
    print(f"| {label} | " + " | ".join(f(runs[n][0][key]) for n in runs) + " |")
for n in runs:
    answers = runs[n][1]
    calls = [len((a.get("reader") or {}).get("verdicts") or []) for a in answers]
    called = sum(1 for c in calls if c)
    totals = [a.get("timings_ms", {}).get("total", 0.0) / 1000 for a in answers]
    runs[n] = runs[n] + ({"called": called / max(1, len(answers)), "calls": sum(calls) / max(1, called),
                           "p50": pct(totals, 0.5), "p95": pct(totals, 0.95)},)
print("| questions that call the reader | " + " | ".join(f"{runs[n][2]['called']:.2f}" for n in runs) + " |")
print("| reader calls per calling question | " + " | ".join(f"{runs[n][2]['calls']:.2f}" for n in runs) + " |")
print("| ask p50 / p95 (s) | " + " | ".join(f"{runs[n][2]['p50']:.2f} / {runs[n][2]['p95']:.2f}" for n in runs) + " |")
print("\n## Per skill (answered with the fact · refused · unanswerable answered anyway)\n")
print("| skill | dev, no reader | dev, reader | leave-gold-out answered anyway, no reader → reader |")
print("|---|---|---|---|")
skills = sorted(set(runs["dev-no"][0]["per_skill"]) | set(runs["lgo-no"][0]["per_skill"]))
for s in skills:
    cell = lambda n: (lambda d: f"{f(d['fact_right'])} · {f(d['fact_refused'])} · {f(d['unans_answered'])}")(runs[n][0]["per_skill"].get(s, {"fact_right": None, "fact_refused": None, "unans_answered": None}))
    lg = lambda n: f(runs[n][0]["per_skill"].get(s, {}).get("unans_answered"))
    print(f"| {s} | {cell('dev-no')} | {cell('dev-yes')} | {lg('lgo-no')} → {lg('lgo-yes')} |")
