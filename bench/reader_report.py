#!/usr/bin/env python3
"""bench/reader.sh's report: outcomes per skill without the reader, with it judging the extractive
candidates only (as shipped), and with the first one or two retrieved passages judged too; reader
calls per question, ask latency p50/p95 (from each answer's timings_ms.total), and the rows each
arm moves against the candidates-only one. usage: reader_report.py WORK [EVERY]"""
import json, os, sys

from reader_calibration import norm  # outcomes.py's gold-string rule, kept in one place for the reader studies

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

ARMS = dict(a.split("=", 1) for a in sys.argv[3:]) or {
    "no": "no reader", "candidates": "reader, candidates (shipped)", "passages1": "reader, + 1 passage",
    "passages2": "reader, + 2 passages"}
print("# The reader on dev v2 and its leave-gold-out variant\n")
if sys.argv[3:]:
    print("The reader Qwen2.5-Coder-1.5B-Instruct Q4_K_M served by llama.cpp (`scripts/setup-reader`), all arms")
    print("on the same machine. Arms: " + "; ".join(ARMS.values()) + ".")
else:
    print("`bench/reader.sh`: BM25 only (`SKILLRAG_EMBED_MODEL=none`), the reader Qwen2.5-Coder-1.5B-Instruct Q4_K_M")
    print("served by llama.cpp (`scripts/setup-reader`), all arms on the same machine. Arms: no reader; the reader")
    print("judging the extractive candidates only (`[reader] passages = 0`, as shipped); the candidates, then")
    print("the first retrieved passage whole (`passages = 1`); then two passages (`passages = 2`).")
if every > 1:
    print(f"A systematic sample: one question in {every} of each bench (`READER_BENCH_EVERY={every}`).")

print()
names = [f"{b}-{a}" for b in ("dev", "lgo") for a in ARMS]
print("| measure | " + " | ".join(("dev" if n.startswith("dev") else "leave-gold-out") + ", " + ARMS[n[4:]] for n in names) + " |")
print("|---|" + "---:|" * len(names))
runs = {n: load(n) for n in names}
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
print("| skill | dev, " + " | dev, ".join(ARMS.values()) + " | leave-gold-out answered anyway, " + " → ".join(ARMS.values()) + " |")
print("|---|" + "---|" * (len(ARMS) + 1))
first = next(iter(ARMS))
skills = sorted(set(runs[f"dev-{first}"][0]["per_skill"]) | set(runs[f"lgo-{first}"][0]["per_skill"]))
for s in skills:
    cell = lambda n: (lambda d: f"{f(d['fact_right'])} · {f(d['fact_refused'])} · {f(d['unans_answered'])}")(runs[n][0]["per_skill"].get(s, {"fact_right": None, "fact_refused": None, "unans_answered": None}))
    lg = lambda n: f(runs[n][0]["per_skill"].get(s, {}).get("unans_answered"))
    print(f"| {s} | " + " | ".join(cell(f"dev-{a}") for a in ARMS) + " | " + " → ".join(lg(f"lgo-{a}") for a in ARMS) + " |")

# Paired: the same rows under two arms, so a change is counted row by row (McNemar's view) rather
# than read off two shares of a small sample.
def outcome(q, a):
    if a is None or a.get("refusal"):
        return "refused"
    if q["type"] == "fact":
        return "right" if any(norm(x) in norm(a.get("answer")) for x in q["answers"]) else "wrong"
    return "answered"


base = next(a for a in ARMS if not a.endswith("no"))
print(f"\n## Paired: rows whose outcome changes from {ARMS[base]}\n")
print("| arm | bench | fact rows now answered with the fact | fact rows no longer | unanswerable / out of scope rows now answered | no longer |")
print("|---|---|---:|---:|---:|---:|")
for arm in (a for a in ARMS if a != base and not a.endswith("no")):
    for bench in ("dev", "lgo"):
        queries = [json.loads(l) for l in open(os.path.join(work, f"{bench}-bench", "queries.jsonl"), encoding="utf-8")]
        by_id = {a: {x.get("id"): x for x in runs[f"{bench}-{a}"][1]} for a in (base, arm)}
        n = {"gain": 0, "loss": 0, "bad_gain": 0, "bad_loss": 0}
        for q in queries:
            if q["type"] == "chitchat":
                continue
            before, after = (outcome(q, by_id[a].get(q["id"])) for a in (base, arm))
            if q["type"] == "fact":
                n["gain"] += after == "right" and before != "right"
                n["loss"] += before == "right" and after != "right"
            else:
                n["bad_gain"] += after == "answered" and before != "answered"
                n["bad_loss"] += before == "answered" and after != "answered"
        label = "dev" if bench == "dev" else "leave-gold-out"
        print(f"| {ARMS[arm]} | {label} | {n['gain']} | {n['loss']} | {n['bad_gain']} | {n['bad_loss']} |")
