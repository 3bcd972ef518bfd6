#!/usr/bin/env python3
"""Would the reader confirming a weak route help (issue 44, job 4: CRAG's evaluator applied to the
route)? On the 1000-skill run of bench/thousand-skills.sh, takes the questions no skill accepted
whose best candidate's confidence is at least BAND x the fitted `accept`, asks each of that
candidate with the reader (`batch` with the skill forced, the reader's usual decision), and counts
what a user would get: a fact row answered with the fact, answered without it, or refused; an
out-of-scope row answered or refused.

  bench/reader_route_band.py [WORK_DIR] [SIZE] [BAND]   (defaults: /tmp/skillrag-thousand-skills 1000 0.25)

Needs the reader's server (eval "$(scripts/setup-reader)"; SKILLRAG_READER) and this tree's
release binary. Prints a Markdown report.
"""
import collections, json, os, re, subprocess, sys, unicodedata

work = sys.argv[1] if len(sys.argv) > 1 else "/tmp/skillrag-thousand-skills"
size = sys.argv[2] if len(sys.argv) > 2 else "1000"
band = float(sys.argv[3]) if len(sys.argv) > 3 else 0.25
here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(here, "target")), "release", "skillrag")
project = f"{work}/project-{size}-new"
norm = lambda s: re.sub(r"\s+", "", unicodedata.normalize("NFKC", s or "")).lower()

rows = {r["id"]: r for r in map(json.loads, open(f"{work}/bench-{size}/queries.jsonl", encoding="utf-8"))}
router = next(
    os.path.join(d, f) for d, _, fs in os.walk(f"{project}/.skillrag/eval") for f in fs if f == "router.json"
)
accept = json.load(open(router))["model"]["accept"]
asked = []
for a in map(json.loads, open(f"{work}/eval-{size}-new/answers.jsonl", encoding="utf-8")):
    if a["route"]["decision"] != "none" or not a["route"]["candidates"]:
        continue
    top = max(a["route"]["candidates"], key=lambda c: c["score"])
    if top["score"] >= band * accept:
        asked.append({"id": a["id"], "query": a["query"], "skill": top["skill"]})
env = dict(os.environ, SKILLRAG_EMBED_MODEL="none")
lines = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in asked)
done = subprocess.run([binary, "-C", project, "batch"], input=lines, capture_output=True, text=True, env=env, check=True)
counts = collections.Counter()
calls = 0
for a in map(json.loads, done.stdout.splitlines()):
    r, forced = rows[a["id"]], next(q["skill"] for q in asked if q["id"] == a["id"])
    answered = a.get("refusal") is None
    calls += len((a.get("reader") or {}).get("verdicts", []))
    if r["type"] == "fact":
        holds = answered and any(norm(g) in norm(a.get("answer")) for g in r["answers"])
        which = "its own skill" if forced == r["skill"] else "another skill"
        counts[("fact", which, "answered with the fact" if holds else "answered without it" if answered else "refused")] += 1
    else:
        counts[("out of scope", "", "answered" if answered else "refused")] += 1
print(f"# The reader confirming a weak route ({size} one-file skills, band {band} x accept {accept})\n")
print(f"`bench/reader_route_band.py {work} {size} {band}`: {len(asked)} questions no skill accepted, asked of")
print(f"their best candidate with the reader ({calls} reader calls).\n")
print("| rows | best candidate | with the reader |\n|---|---|---:|")
for (kind, which, outcome), n in sorted(counts.items()):
    print(f"| {kind} | {which or '–'} | {outcome}: {n} |")
