#!/usr/bin/env python3
"""Checks `skillrag serve` with the official `openai` Python client.

    eval "$(scripts/setup-test-clients)"
    "$SKILLRAG_TEST_PYTHON" crates/server/tests/clients/openai_client.py http://127.0.0.1:18080

The server must serve the example project of `skillrag init` (labor-law, router-faq,
tea-brewing). SKILLRAG_API_TOKEN, when set, is sent as the API key (bearer token).
Prints one line per check; exits 1 if any check failed.
"""

from __future__ import annotations

import os
import sys
import traceback

import openai
from openai import OpenAI

SKILLS = ["labor-law", "router-faq", "tea-brewing"]
ROUTER_Q = "How do I factory reset the router?"
LABOR_Q = "劳动合同期限三年，试用期最长多久？"
FOLLOW_UP = "那两年呢？"
TEA_Q = "绿茶用多少度的水冲泡？"
OUT_OF_SCOPE_Q = "今天天气怎么样，股票会涨吗？"

failures: list[str] = []
counted: list[str] = []


class CheckFailed(Exception):
    pass


def expect(cond: bool, message: str) -> None:
    if not cond:
        raise CheckFailed(message)


def check(name: str):
    """Runs the decorated function at once as a named check and prints its outcome."""

    def run(fn):
        counted.append(name)
        try:
            detail = fn()
            print(f"ok   {name}" + (f": {detail}" if detail else ""), flush=True)
            return True
        except CheckFailed as e:
            print(f"FAIL {name}: {e}", flush=True)
        except Exception as e:  # noqa: BLE001 - report any client error as a failed check
            print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
            traceback.print_exc(file=sys.stderr)
        failures.append(name)
        return False

    return run


def extra(obj, key):
    """A field outside the OpenAI schema (citations, skillrag)."""
    return (obj.model_extra or {}).get(key)


def route_skills(completion) -> list | None:
    sk = extra(completion, "skillrag") or {}
    route = sk.get("route") or {}
    return route.get("skills")


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: openai_client.py BASE_URL", file=sys.stderr)
        return 2
    base = sys.argv[1].rstrip("/")
    client = OpenAI(
        base_url=base + "/v1",
        api_key=os.environ.get("SKILLRAG_API_TOKEN", "none"),
        max_retries=0,
        timeout=120,
    )
    print(f"openai {openai.__version__} against {base}/v1", flush=True)
    state: dict = {}

    @check("models.list has skillrag/auto and one model per skill")
    def _():
        ids = [m.id for m in client.models.list()]
        for want in ["skillrag/auto"] + [f"skillrag/{s}" for s in SKILLS]:
            expect(want in ids, f"{want} missing from {ids}")
        return ", ".join(ids)

    def user(q):
        return [{"role": "user", "content": q}]

    @check("non-streaming answer with [n] markers of its citations, and route router-faq")
    def _():
        r = client.chat.completions.create(model="skillrag/auto", messages=user(ROUTER_Q))
        expect(r.object == "chat.completion", f"object is {r.object!r}")
        expect(len(r.choices) == 1, f"{len(r.choices)} choices")
        choice = r.choices[0]
        expect(choice.finish_reason == "stop", f"finish_reason {choice.finish_reason!r}")
        msg = choice.message
        expect(msg.role == "assistant", f"role {msg.role!r}")
        content = msg.content or ""
        expect(content.strip() != "", "empty content")
        cits = extra(r, "citations")
        expect(isinstance(cits, list) and cits, f"citations missing or empty: {cits!r}")
        for c in cits:
            expect(f"[{c['n']}]" in content, f"no [{c['n']}] marker for a citation in: {content[:300]!r}")
        for c in cits:
            expect(c.get("skill") and c.get("source"), f"citation without skill/source: {c!r}")
            expect("n" in c, f"citation without n: {c!r}")
        sk = extra(r, "skillrag")
        expect(isinstance(sk, dict), f"no skillrag extras: {sk!r}")
        expect(route_skills(r) == ["router-faq"], f"route.skills = {route_skills(r)!r}")
        expect(sk.get("refusal") is None, f"refused: {sk.get('refusal')!r}")
        state["content"] = content
        state["citations"] = cits
        return f"{len(content)} chars, {len(cits)} citations, first {cits[0]['skill']}/{cits[0]['source']}"

    @check("streaming answer equals the non-streaming one; last chunk carries citations")
    def _():
        expect("content" in state, "needs the non-streaming answer")
        stream = client.chat.completions.create(model="skillrag/auto", messages=user(ROUTER_Q), stream=True)
        chunks = list(stream)
        expect(len(chunks) >= 2, f"only {len(chunks)} chunks")
        first, last = chunks[0], chunks[-1]
        expect(first.object == "chat.completion.chunk", f"object {first.object!r}")
        expect(first.choices and first.choices[0].delta.role == "assistant", "first chunk has no delta.role assistant")
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        expect(text == state["content"], f"streamed content differs:\n  stream: {text[:200]!r}\n  plain:  {state['content'][:200]!r}")
        expect(last.choices and last.choices[0].finish_reason == "stop", "last chunk has no finish_reason stop")
        cits = extra(last, "citations")
        expect(isinstance(cits, list) and cits, f"last chunk citations: {cits!r}")
        expect(extra(last, "skillrag") is not None, "last chunk has no skillrag extras")
        expect(route_skills(last) == ["router-faq"], f"stream route.skills = {route_skills(last)!r}")
        pieces = sum(1 for c in chunks if c.choices and c.choices[0].delta.content)
        return f"{len(chunks)} chunks, {pieces} with content, {len(cits)} citations"

    @check("follow-up with history routes to labor-law")
    def _():
        first = client.chat.completions.create(model="skillrag/auto", messages=user(LABOR_Q))
        expect(route_skills(first) == ["labor-law"], f"first question routed to {route_skills(first)!r}")
        previous = first.choices[0].message.content or ""
        r = client.chat.completions.create(
            model="skillrag/auto",
            messages=[
                {"role": "user", "content": LABOR_Q},
                {"role": "assistant", "content": previous},
                {"role": "user", "content": FOLLOW_UP},
            ],
        )
        expect(route_skills(r) == ["labor-law"], f"{FOLLOW_UP!r} routed to {route_skills(r)!r}")
        refusal = (extra(r, "skillrag") or {}).get("refusal")
        return f"{FOLLOW_UP!r} → labor-law" + (f" (refused: {refusal.get('kind')})" if refusal else f", {len(r.choices[0].message.content or '')} chars")

    @check("model skillrag/tea-brewing forces the skill")
    def _():
        r = client.chat.completions.create(model="skillrag/tea-brewing", messages=user(TEA_Q))
        expect(route_skills(r) == ["tea-brewing"], f"route.skills = {route_skills(r)!r}")
        cits = extra(r, "citations") or []
        expect(all(c.get("skill") == "tea-brewing" for c in cits), f"citations from other skills: {cits!r}")
        expect(r.model == "skillrag/tea-brewing", f"response model {r.model!r}")
        # A router question forced onto tea-brewing stays in tea-brewing (and is refused there).
        r2 = client.chat.completions.create(model="skillrag/tea-brewing", messages=user(ROUTER_Q))
        expect(route_skills(r2) == ["tea-brewing"], f"forced router question route.skills = {route_skills(r2)!r}")
        cits2 = extra(r2, "citations") or []
        expect(all(c.get("skill") == "tea-brewing" for c in cits2), f"forced: citations from other skills: {cits2!r}")
        refusal2 = (extra(r2, "skillrag") or {}).get("refusal")
        return f"{len(cits)} tea citations; router question forced → " + (refusal2.get("kind") if refusal2 else "answered")

    @check("out-of-scope question is a normal message with refusal.kind out_of_scope")
    def _():
        r = client.chat.completions.create(model="skillrag/auto", messages=user(OUT_OF_SCOPE_Q))
        choice = r.choices[0]
        expect(choice.message.role == "assistant", f"role {choice.message.role!r}")
        expect((choice.message.content or "").strip() != "", "empty refusal message")
        expect(choice.finish_reason == "stop", f"finish_reason {choice.finish_reason!r}")
        refusal = (extra(r, "skillrag") or {}).get("refusal")
        expect(isinstance(refusal, dict), f"no skillrag.refusal: {extra(r, 'skillrag')!r}")
        expect(refusal.get("kind") == "out_of_scope", f"refusal kind {refusal.get('kind')!r}")
        expect(route_skills(r) == [], f"route.skills = {route_skills(r)!r}")
        return f"{choice.message.content.strip()[:80]!r}"

    @check("streaming refusal carries skillrag.refusal in the last chunk")
    def _():
        chunks = list(client.chat.completions.create(model="skillrag/auto", messages=user(OUT_OF_SCOPE_Q), stream=True))
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        expect(text.strip() != "", "empty streamed refusal")
        refusal = (extra(chunks[-1], "skillrag") or {}).get("refusal")
        expect(isinstance(refusal, dict) and refusal.get("kind") == "out_of_scope", f"last chunk refusal {refusal!r}")
        return refusal["kind"]

    @check("unknown model skillrag/nope raises NotFoundError")
    def _():
        try:
            client.chat.completions.create(model="skillrag/nope", messages=user(ROUTER_Q))
        except openai.NotFoundError as e:
            body = e.body if isinstance(e.body, dict) else {}
            # The client unwraps {"error": {...}} into body.
            err = body.get("error", body) if isinstance(body, dict) else {}
            expect(err.get("type") == "not_found", f"error body {e.body!r}")
            return f"404 {err.get('message', '')[:80]}"
        raise CheckFailed("no error raised")

    @check("a request without user message is rejected with a 4xx")
    def _():
        try:
            client.chat.completions.create(model="skillrag/auto", messages=[{"role": "system", "content": "hi"}])
        except openai.APIStatusError as e:
            expect(400 <= e.status_code < 500, f"status {e.status_code}")
            return f"{e.status_code}"
        raise CheckFailed("no error raised")

    total = len(counted)
    if failures:
        print(f"FAILED {len(failures)} of {total} checks: {', '.join(failures)}", flush=True)
        return 1
    print(f"PASS openai client: {total} checks", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
