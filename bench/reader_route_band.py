#!/usr/bin/env python3
"""Would the reader confirming a weak route help (issue 44, job 4: CRAG's evaluator applied to the
route)? On an `eval` run (its project and answers), takes the questions no skill accepted
whose best candidate's confidence is at least BAND x the fitted `accept`, asks each of that
candidate with the reader (`batch` with the skill forced, the reader's usual decision), and counts
what a user would get: a fact row answered with the fact, answered without it, or refused; an
unanswerable or out-of-scope row answered or refused.

  bench/reader_route_band.py PROJECT ANSWERS QUERIES [BAND]      (BAND default 0.25)

e.g. after bench/thousand-skills.sh: W=/tmp/skillrag-thousand-skills;
  bench/reader_route_band.py $W/project-1000-new $W/eval-1000-new/answers.jsonl $W/bench-1000/queries.jsonl

Needs the reader's server (eval "$(scripts/setup-reader)"; SKILLRAG_READER) and this tree's
release binary. Prints a Markdown report.
"""
import collections, json, os, re, subprocess, sys, unicodedata

project, answers, queries = sys.argv[1:4]
band = float(sys.argv[4]) if len(sys.argv) > 4 else 0.25
here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(here, "target")), "release", "skillrag")
norm = lambda s: re.sub(r"\s+", "", unicodedata.normalize("NFKC", s or "")).lower()

rows = {r["id"]: r for r in map(json.loads, open(queries, encoding="utf-8"))}
router = next(
    os.path.join(d, f) for d, _, fs in os.walk(f"{project}/.skillrag") for f in fs if f == "router.json"
)
accept = json.load(open(router))["model"]["accept"]
asked = []
for a in map(json.loads, open(answers, encoding="utf-8")):
    if a["route"]["decision"] != "none" or not a["route"]["candidates"]:
        continue
    top = max(a["route"]["candidates"], key=lambda c: c["score"])
    if top["score"] >= band * accept:
        asked.append({"id": a["id"], "query": a["query"], "skill": top["skill"]})
forced_skill = {q["id"]: q["skill"] for q in asked}
env = dict(os.environ, SKILLRAG_EMBED_MODEL="none")
lines = "".join(json.dumps(q, ensure_ascii=False) + "\n" for q in asked)
done = subprocess.run([binary, "-C", project, "batch"], input=lines, capture_output=True, text=True, env=env, check=True)
counts = collections.Counter()
calls = 0
for a in map(json.loads, done.stdout.splitlines()):
    r, forced = rows[a["id"]], forced_skill[a["id"]]
    answered = a.get("refusal") is None
    calls += len((a.get("reader") or {}).get("verdicts", []))
    if r["type"] == "fact":
        holds = answered and any(norm(g) in norm(a.get("answer")) for g in r["answers"])
        which = "its own skill" if forced == r["skill"] else "another skill"
        counts[("fact", which, "answered with the fact" if holds else "answered without it" if answered else "refused")] += 1
    else:
        counts[(r["type"].replace("_", " "), "", "answered" if answered else "refused")] += 1
print(f"## The reader confirming a weak route: {os.path.basename(os.path.dirname(queries))} (band {band} x accept {accept})\n")
print(f"`bench/reader_route_band.py {' '.join(sys.argv[1:])}`: {len(asked)} questions no skill accepted, asked of")
print(f"their best candidate with the reader ({calls} reader calls).\n")
print("| rows | best candidate | with the reader |\n|---|---|---:|")
for (kind, which, outcome), n in sorted(counts.items()):
    print(f"| {kind} | {which or '–'} | {outcome}: {n} |")
