#!/usr/bin/env python3
"""Output evals of the demo skills (evals/evals.json), answered by a real LLM with and without
`compile_context`, graded PASS/FAIL by the evals' deterministic checks.

    bench/skill-evals.py SKILLRAG_BIN PROJECT_DIR OUT_DIR [--evals FILE] [--only 1,2,…] [--max-tokens N]
    bench/skill-evals.py --regrade OUT_DIR/skill-evals.json [--evals FILE]

For each eval the agent (an OpenAI-compatible chat API at SKILLRAG_TEST_LLM_BASE_URL, model
SKILLRAG_TEST_LLM_MODEL; `scripts/setup-llm` starts one) is run twice at temperature 0:
  without  system = a plain helpful-assistant prompt, user = the task;
  with     the same system prompt, user = `SKILLRAG_BIN -C PROJECT_DIR context TASK` (the rendered
           compiled context, the text the MCP tool `compile_context` returns) followed by
           "# Task" and the task — the form of the MCP prompt of a skill.
Every expectation's `check` is run on the answer; an eval passes when all its expectations pass.
Writes OUT_DIR/skill-evals.json (the contexts, every output and every grade) and prints Markdown:
pass rates with and without, per skill and per kind, the per-eval table and compile_context's time.
`--regrade` grades the outputs of an earlier run again with the checks of FILE (no LLM, no
skillrag), for when a check was wrong. Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

SYSTEM = "You are a helpful assistant."
REPO = Path(__file__).resolve().parent.parent


# --- grading -------------------------------------------------------------------------------------

def _patterns(value) -> list[str]:
    return value if isinstance(value, list) else [value]


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?。！？；;])\s+|(?<=[。！？；])|\n+", text) if s.strip()]


def _snippet(text: str, m: re.Match) -> str:
    return text[max(0, m.start() - 30): m.end() + 30].replace("\n", " ")


def run_check(check: dict, text: str) -> tuple[bool, str]:
    """Every key of `check` must hold. Returns (passed, evidence)."""
    low = text.lower()
    evidence: list[str] = []
    for key, value in check.items():
        if key == "unless":
            continue
        if key == "any":
            found = [s for s in value if s.lower() in low]
            if not found:
                return False, f"none of {value!r} found"
            evidence.append(f"found {found[0]!r}")
        elif key == "all":
            missing = [s for s in value if s.lower() not in low]
            if missing:
                return False, f"missing {missing!r}"
            evidence.append(f"found all of {value!r}")
        elif key == "none":
            found = [s for s in value if s.lower() in low]
            if found:
                return False, f"contains {found[0]!r}"
        elif key == "regex":
            for pattern in _patterns(value):
                m = re.search(pattern, text)
                if not m:
                    return False, f"no match for /{pattern[:60]}…/" if len(pattern) > 60 else f"no match for /{pattern}/"
                evidence.append(f"matched {m.group(0)!r} in “{_snippet(text, m)}”")
        elif key == "none_regex":
            unless = check.get("unless")
            for pattern in _patterns(value):
                if unless is None:
                    m = re.search(pattern, text)
                    if m:
                        return False, f"forbidden {m.group(0)!r} in “{_snippet(text, m)}”"
                else:
                    for sentence in _sentences(text):
                        m = re.search(pattern, sentence)
                        if m and not re.search(unless, sentence):
                            return False, f"forbidden {m.group(0)!r} in “{sentence.strip()[:160]}”"
        else:
            raise ValueError(f"unknown check key {key!r}")
    return True, "; ".join(evidence) or "nothing forbidden found"


def in_context(item: dict, rendered: str) -> str:
    """How many of the eval's positive expectations (facts to state) the compiled context itself
    satisfies: whether the facts reached the agent at all."""
    positive = [{k: v for k, v in e["check"].items() if k in ("any", "all", "regex")} for e in item["expectations"]]
    positive = [c for c in positive if c]
    return f"{sum(run_check(c, rendered)[0] for c in positive)}/{len(positive)}" if positive else "–"


def grade(item: dict, text: str) -> dict:
    results = []
    for expectation in item["expectations"]:
        passed, evidence = run_check(expectation["check"], text)
        results.append({"text": expectation["text"], "passed": passed, "evidence": evidence})
    return {"passed": all(r["passed"] for r in results), "expectations": results}


# --- the agent and the context -------------------------------------------------------------------

def chat(base_url: str, model: str, messages: list[dict], max_tokens: int) -> dict:
    body = json.dumps({"model": model, "messages": messages, "temperature": 0, "seed": 0,
                       "max_tokens": max_tokens, "stream": False}).encode()
    request = urllib.request.Request(base_url.rstrip("/") + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=1800) as response:
        reply = json.load(response)
    elapsed = time.perf_counter() - started
    choice = reply["choices"][0]
    return {"text": choice["message"].get("content") or "", "finish_reason": choice.get("finish_reason"),
            "usage": reply.get("usage"), "seconds": round(elapsed, 2)}


def compile_context(binary: str, project: str, task: str) -> dict:
    started = time.perf_counter()
    rendered = subprocess.run([binary, "-C", project, "context", task], capture_output=True, text=True)
    wall_ms = (time.perf_counter() - started) * 1000.0
    if rendered.returncode != 0:
        raise SystemExit(f"skillrag context failed ({rendered.returncode}) for {task!r}: {rendered.stderr}")
    as_json = subprocess.run([binary, "-C", project, "context", task, "--json"], capture_output=True, text=True)
    if as_json.returncode != 0:
        raise SystemExit(f"skillrag context --json failed for {task!r}: {as_json.stderr}")
    data = json.loads(as_json.stdout)
    route = data.get("route") or {}
    return {
        "rendered": rendered.stdout.rstrip("\n"),
        "summary": rendered.stderr.strip().splitlines()[-1] if rendered.stderr.strip() else "",
        "wall_ms": round(wall_ms, 1),
        "total_ms": round((data.get("timings_ms") or {}).get("total", 0.0), 2),
        "route": {"skills": route.get("skills"), "decision": route.get("decision"),
                  "confidence": route.get("confidence")},
        "refusal": data.get("refusal"),
        "pieces": [{"n": p["n"], "tier": p["tier"], "skill": p["skill"], "source": p["source"],
                    "heading": p.get("heading")} for p in (data.get("context") or {}).get("pieces", [])],
        "used": (data.get("context") or {}).get("used"),
        "unit": (data.get("context") or {}).get("unit"),
    }


# --- the report ----------------------------------------------------------------------------------

def rate(rows: list[dict], arm: str) -> str:
    passed = sum(r[arm]["grade"]["passed"] for r in rows)
    return f"{passed}/{len(rows)} ({100.0 * passed / len(rows):.0f}%)" if rows else "–"


def expectation_rate(rows: list[dict], arm: str) -> str:
    marks = [e["passed"] for r in rows for e in r[arm]["grade"]["expectations"]]
    return f"{sum(marks)}/{len(marks)} ({100.0 * sum(marks) / len(marks):.0f}%)"


def cell(result: dict) -> str:
    marks = result["grade"]["expectations"]
    word = "PASS" if result["grade"]["passed"] else "FAIL"
    return f"{word} {sum(e['passed'] for e in marks)}/{len(marks)}"


def context_cell(ctx: dict) -> str:
    if ctx["refusal"]:
        return f"refused `{ctx['refusal']['kind']}`"
    if not ctx["pieces"]:
        return "no pieces (" + (ctx["summary"].split(";")[0].lstrip("— ") or "empty") + ")"
    n = len(ctx["pieces"])
    return f"{n} piece{'s' if n != 1 else ''}, {ctx['used']} {ctx['unit']}"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def report(run: dict) -> str:
    rows = run["results"]
    out = []
    out.append(f"| | without compile_context | with compile_context |")
    out.append("|---|---|---|")
    out.append(f"| evals passed (all expectations) | {rate(rows, 'without')} | {rate(rows, 'with')} |")
    out.append(f"| expectations passed | {expectation_rate(rows, 'without')} | {expectation_rate(rows, 'with')} |")
    for skill in sorted({r["skill"] for r in rows}):
        sub = [r for r in rows if r["skill"] == skill]
        out.append(f"| {skill} ({len(sub)} evals) | {rate(sub, 'without')} | {rate(sub, 'with')} |")
    for kind in ("fact", "rule", "boundary"):
        sub = [r for r in rows if r["kind"] == kind]
        if sub:
            out.append(f"| kind {kind} ({len(sub)} evals) | {rate(sub, 'without')} | {rate(sub, 'with')} |")
    out.append("")
    out.append("| id | skill | kind | task | context compiled | facts in context | without | with | failed expectations (without / with) |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        task = r["prompt"].replace("|", "\\|")
        task = task if len(task) <= 60 else task[:57] + "…"

        def failed(arm: str) -> str:
            idx = [str(i + 1) for i, e in enumerate(r[arm]["grade"]["expectations"]) if not e["passed"]]
            return ",".join(idx) or "–"

        facts = in_context(r, r["context"]["rendered"])
        out.append(f"| {r['id']} | {r['skill']} | {r['kind']} | {task} | {context_cell(r['context'])} | {facts} | "
                   f"{cell(r['without'])} | {cell(r['with'])} | {failed('without')} / {failed('with')} |")
    out.append("")
    totals = [r["context"]["total_ms"] for r in rows]
    walls = [r["context"]["wall_ms"] for r in rows]
    out.append(f"compile_context (`skillrag context`, one process per task): in-process `timings_ms.total` "
               f"p50 {percentile(totals, 0.5):.1f} ms, p95 {percentile(totals, 0.95):.1f} ms, max {max(totals):.1f} ms; "
               f"CLI wall time (process start, index open and embedding model load included) "
               f"p50 {percentile(walls, 0.5):.0f} ms, p95 {percentile(walls, 0.95):.0f} ms.")
    for arm in ("without", "with"):
        secs = [r[arm]["seconds"] for r in rows]
        prompt = [((r[arm].get("usage") or {}).get("prompt_tokens") or 0) for r in rows]
        completion = [((r[arm].get("usage") or {}).get("completion_tokens") or 0) for r in rows]
        cut = sum(r[arm].get("finish_reason") == "length" for r in rows)
        out.append(f"LLM {arm}: prompt tokens p50 {statistics.median(prompt):.0f} (max {max(prompt)}), "
                   f"completion tokens p50 {statistics.median(completion):.0f}, {cut} answer(s) cut at max_tokens, "
                   f"{sum(secs):.0f} s in all.")
    return "\n".join(out)


def load_evals(path: Path, only: set[int] | None) -> dict:
    doc = json.loads(path.read_text(encoding="utf-8"))
    if only:
        doc["evals"] = [e for e in doc["evals"] if e["id"] in only]
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", nargs="?", help="the skillrag binary")
    parser.add_argument("project", nargs="?", help="the project folder (`skillrag init`'s example, indexed)")
    parser.add_argument("out", nargs="?", help="output folder")
    parser.add_argument("--evals", default=str(REPO / "evals" / "evals.json"))
    parser.add_argument("--only", help="comma-separated eval ids")
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--regrade", help="a skill-evals.json to grade again with the checks of --evals")
    args = parser.parse_args()
    only = {int(x) for x in args.only.split(",")} if args.only else None

    if args.regrade:
        run = json.loads(Path(args.regrade).read_text(encoding="utf-8"))
        evals = {e["id"]: e for e in load_evals(Path(args.evals), only)["evals"]}
        for r in run["results"]:
            item = evals[r["id"]]
            r["expectations"] = item["expectations"]
            for arm in ("without", "with"):
                r[arm]["grade"] = grade(item, r[arm]["text"])
        run["regraded"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        Path(args.regrade).write_text(json.dumps(run, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        print(report(run))
        return

    if not (args.binary and args.project and args.out):
        parser.error("SKILLRAG_BIN PROJECT_DIR OUT_DIR are required (or --regrade FILE)")
    base_url = os.environ.get("SKILLRAG_TEST_LLM_BASE_URL")
    model = os.environ.get("SKILLRAG_TEST_LLM_MODEL", "local")
    if not base_url:
        raise SystemExit("SKILLRAG_TEST_LLM_BASE_URL is not set (eval \"$(scripts/setup-llm)\")")
    doc = load_evals(Path(args.evals), only)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    run = {"started": datetime.now(timezone.utc).isoformat(timespec="seconds"), "model": model,
           "base_url": base_url, "binary": args.binary, "project": args.project, "evals": args.evals,
           "system_prompt": SYSTEM, "temperature": 0, "seed": 0, "max_tokens": args.max_tokens, "results": []}
    started = time.perf_counter()
    for item in doc["evals"]:
        task = item["prompt"]
        ctx = compile_context(args.binary, args.project, task)
        without = chat(base_url, model, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": task}],
                       args.max_tokens)
        with_ctx = chat(base_url, model, [{"role": "system", "content": SYSTEM},
                                          {"role": "user", "content": f"{ctx['rendered']}\n\n# Task\n{task}"}],
                        args.max_tokens)
        without["grade"] = grade(item, without["text"])
        with_ctx["grade"] = grade(item, with_ctx["text"])
        row = {"id": item["id"], "skill": item.get("skill"), "kind": item.get("kind"), "prompt": task,
               "expected_output": item.get("expected_output"), "expectations": item["expectations"],
               "context": ctx, "without": without, "with": with_ctx}
        run["results"].append(row)
        print(f"eval {item['id']:>2} {item.get('skill')}: without {cell(without)}, with {cell(with_ctx)} "
              f"({without['seconds'] + with_ctx['seconds']:.0f} s)", file=sys.stderr, flush=True)
        (out / "skill-evals.json").write_text(json.dumps(run, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    run["seconds"] = round(time.perf_counter() - started, 1)
    (out / "skill-evals.json").write_text(json.dumps(run, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(report(run))


if __name__ == "__main__":
    main()
