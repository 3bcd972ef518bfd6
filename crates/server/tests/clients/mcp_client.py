#!/usr/bin/env python3
"""Checks the MCP server of skillrag with the official `mcp` Python SDK.

    eval "$(scripts/setup-test-clients)"
    "$SKILLRAG_TEST_PYTHON" crates/server/tests/clients/mcp_client.py stdio target/release/skillrag /tmp/demo
    "$SKILLRAG_TEST_PYTHON" crates/server/tests/clients/mcp_client.py http http://127.0.0.1:18080/mcp

stdio runs `SKILLRAG_BIN -C PROJECT_DIR mcp`; http talks MCP streamable HTTP to `skillrag serve`
(SKILLRAG_API_TOKEN, when set, is sent as the bearer token). The project must be the example of
`skillrag init` (labor-law, router-faq, tea-brewing), indexed. Prints one line per check; exits 1
if any check failed. Works with mcp 1.x and 2.x.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import re
import sys
import traceback

import mcp
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

try:  # mcp >= 1.24 / 2.x
    from mcp.client.streamable_http import streamable_http_client as _http_client
except ImportError:  # older mcp 1.x
    from mcp.client.streamable_http import streamablehttp_client as _http_client

TOOLS = {"list_skills", "get_skill", "compile_context", "search_knowledge_base", "ask", "list_sources"}
# A task whose evidence includes router-faq's support policy (a `rules` file).
RULES_TASK = "Write a reply to a customer who asks whether a factory reset voids the warranty"
SOURCE_RE = re.compile(r"[\w./-]+\.(?:md|txt|pdf|docx|html?|csv|tsv|jsonl?)\b")
TIMEOUT = 180.0

failures: list[str] = []
checks = 0


class CheckFailed(Exception):
    pass


def expect(cond: bool, message: str) -> None:
    if not cond:
        raise CheckFailed(message)


def field(obj, *names, default=None):
    """A result attribute under its 2.x (snake_case) or 1.x (camelCase) name."""
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    return default


def texts(result) -> str:
    return "\n".join(getattr(c, "text", "") for c in (result.content or []) if getattr(c, "type", "") == "text")


def structured(result):
    return field(result, "structured_content", "structuredContent")


def is_error(result) -> bool:
    return bool(field(result, "is_error", "isError", default=False))


async def run_check(name: str, coro_fn) -> None:
    global checks
    checks += 1
    try:
        detail = await coro_fn()
        print(f"ok   {name}" + (f": {detail}" if detail else ""), flush=True)
    except CheckFailed as e:
        print(f"FAIL {name}: {e}", flush=True)
        failures.append(name)
    except Exception as e:  # noqa: BLE001 - any client error fails the check
        print(f"FAIL {name}: {type(e).__name__}: {e}", flush=True)
        traceback.print_exc(file=sys.stderr)
        failures.append(name)


async def call(session: ClientSession, tool: str, args: dict):
    result = await session.call_tool(tool, args)
    return result


async def checks_on(session: ClientSession) -> None:
    init = await session.initialize()
    server = field(init, "server_info", "serverInfo")
    version = field(init, "protocol_version", "protocolVersion")
    print(f"connected: {getattr(server, 'name', '?')} {getattr(server, 'version', '')}, protocol {version}", flush=True)

    async def list_tools():
        tools = (await session.list_tools()).tools
        names = {t.name for t in tools}
        expect(names == TOOLS, f"tools are {sorted(names)}, expected {sorted(TOOLS)}")
        for t in tools:
            expect(t.description, f"tool {t.name} has no description")
            schema = field(t, "input_schema", "inputSchema")
            expect(isinstance(schema, dict) and schema.get("type") == "object", f"tool {t.name} input schema {schema!r}")
            expect(schema.get("additionalProperties") is False, f"tool {t.name} accepts unknown arguments: {schema!r}")
            output = field(t, "output_schema", "outputSchema")
            expect(isinstance(output, dict) and output.get("type") == "object", f"tool {t.name} output schema {output!r}")
            hints = t.annotations
            read_only = field(hints, "read_only_hint", "readOnlyHint") if hints is not None else None
            expect(read_only is True, f"tool {t.name} is not marked readOnlyHint: {hints!r}")
        return ", ".join(sorted(names)) + "; all read-only, with input and output schemas"

    async def list_skills():
        r = await call(session, "list_skills", {})
        expect(not is_error(r), f"isError: {texts(r)[:200]}")
        text = texts(r)
        expect("router-faq" in text, f"text does not mention router-faq: {text[:300]!r}")
        data = structured(r)
        if data is not None:
            dumped = json.dumps(data, ensure_ascii=False)
            for s in ("labor-law", "router-faq", "tea-brewing"):
                expect(s in dumped, f"structuredContent lacks {s}: {dumped[:300]}")
        return f"{len(text)} chars text" + (", structuredContent ok" if data is not None else ", no structuredContent")

    async def search():
        r = await call(session, "search_knowledge_base", {"query": "factory reset", "skill": "router-faq", "k": 3})
        expect(not is_error(r), f"isError: {texts(r)[:200]}")
        text = texts(r)
        m = SOURCE_RE.search(text)
        expect(m is not None, f"text names no source path: {text[:300]!r}")
        data = structured(r)
        detail = f"first source {m.group(0)}"
        if data is not None:
            hits = data.get("hits") if isinstance(data, dict) else data
            expect(isinstance(hits, list) and hits, f"structuredContent has no hits: {json.dumps(data)[:300]}")
            expect(len(hits) <= 3, f"k=3 but {len(hits)} hits")
            for h in hits:
                expect(h.get("skill") == "router-faq", f"hit from {h.get('skill')!r}")
                expect(h.get("source"), f"hit without source: {h!r}")
            detail += f", {len(hits)} structured hits"
        return detail

    async def ask():
        r = await call(session, "ask", {"query": "How do I factory reset the router?"})
        expect(not is_error(r), f"isError: {texts(r)[:200]}")
        text = texts(r)
        expect(re.search(r"\[\d+\]", text), f"no [n] citation marker in the answer: {text[:300]!r}")
        data = structured(r)
        detail = f"{len(text)} chars"
        if data is not None:
            expect(isinstance(data, dict), f"structuredContent is {type(data).__name__}")
            cits = data.get("citations")
            expect(isinstance(cits, list) and cits, f"structuredContent has no citations: {json.dumps(data, ensure_ascii=False)[:300]}")
            route = data.get("route") or {}
            expect(route.get("skills") == ["router-faq"], f"route.skills {route.get('skills')!r}")
            expect(data.get("refusal") is None, f"refused: {data.get('refusal')!r}")
            detail += f", {len(cits)} citations, route router-faq"
        return detail

    async def get_skill():
        r = await call(session, "get_skill", {"skill": "router-faq"})
        expect(not is_error(r), f"isError: {texts(r)[:200]}")
        text = texts(r)
        expect("## Instructions" in text and "Never ask the customer" in text, f"no instructions: {text[:400]!r}")
        expect("## Boundary" in text, f"no boundary: {text[:400]!r}")
        data = structured(r)
        expect(isinstance(data, dict) and data.get("skill") == "router-faq", f"structuredContent {data!r:.300}")
        tiers = data["knowledge"]["tiers"]
        expect(tiers.get("rules", 0) >= 1, f"knowledge tiers {tiers!r}")
        return f"tiers {tiers}"

    async def compile_context():
        r = await call(session, "compile_context", {"task": RULES_TASK, "budget": 4000})
        expect(not is_error(r), f"isError: {texts(r)[:200]}")
        text = texts(r)
        expect(text.index("## Instructions") < text.index("[1] rules ·"), f"instructions, then rules: {text[:600]!r}")
        data = structured(r)
        pieces = data["context"]["pieces"]
        expect(pieces and pieces[0]["tier"] == "rules", f"first piece {pieces[:1]!r}")
        expect([s["skill"] for s in data["skills"]] == ["router-faq"], f"skills {data['skills']!r}")
        refused = await call(session, "compile_context", {"task": "Who won the football world cup in 1998?"})
        expect(not is_error(refused), f"a refusal is a result, not an error: {texts(refused)[:200]}")
        expect(structured(refused)["refusal"]["kind"] == "out_of_scope", f"{structured(refused)!r:.300}")
        return f"{len(pieces)} pieces, first {pieces[0]['source']}; out-of-scope task refused"

    async def bad_arguments():
        cases = [
            ("search_knowledge_base", {"query": "reset", "k": 0}, "`k`"),
            ("search_knowledge_base", {"query": "reset", "k": "five"}, "`k`"),
            ("search_knowledge_base", {"query": "reset", "colour": "red"}, "colour"),
            ("ask", {"query": 42}, "`query`"),
            ("ask", {}, "query"),
            ("compile_context", {"task": "reset", "budget": 0}, "`budget`"),
            ("get_skill", {"skill": ["router-faq"]}, "`skill`"),
        ]
        for tool, args, needle in cases:
            try:
                r = await call(session, tool, args)
            except Exception as e:  # noqa: BLE001 - a client-side schema check is acceptable too
                message = str(e)
            else:
                expect(is_error(r), f"{tool} {args!r} was accepted: {texts(r)[:200]!r}")
                message = texts(r)
            expect(needle in message, f"{tool} {args!r}: the error does not name {needle}: {message[:200]!r}")
        return f"{len(cases)} bad calls refused, each naming its argument"

    async def numbers_as_strings():
        # What clients that fill arguments from text send (the MCP Inspector CLI 0.15: "k": "2").
        r = await call(session, "search_knowledge_base", {"query": "factory reset", "k": "2"})
        expect(not is_error(r), f"k='2' was refused: {texts(r)[:200]!r}")
        hits = (structured(r) or {}).get("hits", [])
        expect(0 < len(hits) <= 2, f"k='2' gave {len(hits)} hits")
        return f"k='2' read as 2: {len(hits)} hits"

    async def resources():
        listed = (await session.list_resources()).resources
        uris = {str(r.uri) for r in listed}
        expect("skill://router-faq/SKILL.md" in uris, f"no SKILL.md resource: {sorted(uris)[:10]}")
        faq = "skill://router-faq/knowledge/faq.md"
        expect(faq in uris, f"no resource for router-faq's faq.md: {sorted(uris)[:10]}")
        skill_md = (await session.read_resource("skill://router-faq/SKILL.md")).contents[0].text
        expect("name: router-faq" in skill_md, f"SKILL.md text: {skill_md[:200]!r}")
        document = (await session.read_resource(faq)).contents[0].text
        expect("Nimbus" in document, f"faq.md text: {document[:200]!r}")
        for bad in ("skill://router-faq/../../skillrag.toml", "skill://router-faq/knowledge/missing.md", "file:///etc/passwd"):
            try:
                r = await session.read_resource(bad)
            except Exception:  # noqa: BLE001 - an MCP error is the expected outcome
                continue
            raise CheckFailed(f"{bad} was served: {r.contents[0].text[:100]!r}")
        return f"{len(uris)} resources; SKILL.md and faq.md read; 3 bad URIs refused"

    async def prompts():
        listed = (await session.list_prompts()).prompts
        names = {p.name for p in listed}
        expect(names == {"labor-law", "router-faq", "tea-brewing"}, f"prompts {sorted(names)}")
        r = await session.get_prompt("router-faq", {"task": RULES_TASK})
        text = r.messages[0].content.text
        expect("## Instructions" in text and "[1] rules ·" in text, f"prompt text: {text[:400]!r}")
        expect(text.rstrip().endswith(RULES_TASK), f"the prompt does not end with the task: {text[-200:]!r}")
        try:
            await session.get_prompt("router-faq", {})
        except Exception as e:  # noqa: BLE001
            expect("task" in str(e), f"the error does not name `task`: {e}")
        else:
            raise CheckFailed("a prompt without its task was accepted")
        return f"{len(names)} prompts; router-faq's carries its rules and the task"

    async def list_sources():
        r = await call(session, "list_sources", {"skill": "router-faq"})
        expect(not is_error(r), f"isError: {texts(r)[:200]}")
        text = texts(r)
        expect(re.search(r"\.md\b", text), f"text mentions no .md file: {text[:300]!r}")
        data = structured(r)
        if data is not None:
            sources = data.get("sources") if isinstance(data, dict) else data
            expect(isinstance(sources, list) and sources, f"structuredContent has no sources: {json.dumps(data)[:300]}")
            expect(any(str(s.get("source", "")).endswith(".md") for s in sources), "no .md source in structuredContent")
            return f"{len(sources)} sources"
        return "text only"

    async def bad_skill():
        try:
            r = await call(session, "list_sources", {"skill": "../etc"})
        except Exception as e:  # an MCP protocol error is acceptable
            name = type(e).__name__
            expect("Error" in name or "MCP" in name, f"unexpected exception {name}: {e}")
            outcome = f"MCP error: {e}"
        else:
            expect(is_error(r), f"no isError for skill ../etc: {texts(r)[:300]!r}")
            outcome = f"isError: {texts(r)[:100]!r}"
        # The server is still alive and answering.
        r2 = await call(session, "list_skills", {})
        expect(not is_error(r2) and "router-faq" in texts(r2), "the server does not answer after the bad call")
        return outcome

    async def missing_query():
        try:
            r = await call(session, "ask", {})
        except Exception as e:  # noqa: BLE001
            return f"MCP error: {type(e).__name__}"
        expect(is_error(r), f"ask without query did not fail: {texts(r)[:200]!r}")
        return f"isError: {texts(r)[:100]!r}"

    await run_check("list_tools names the six tools", list_tools)
    await run_check("list_skills mentions router-faq", list_skills)
    await run_check("search_knowledge_base returns sources", search)
    await run_check("ask answers with [n] citations", ask)
    await run_check("list_sources router-faq lists .md files", list_sources)
    await run_check("get_skill router-faq has instructions, boundary and tiers", get_skill)
    await run_check("compile_context gives the rule tier first", compile_context)
    await run_check("arguments are checked against the schema", bad_arguments)
    await run_check("numbers sent as strings are read as numbers", numbers_as_strings)
    await run_check("skills are resources: SKILL.md and documents", resources)
    await run_check("one prompt per skill, with the task's context", prompts)
    await run_check("list_sources ../etc is an error, not a crash", bad_skill)
    await run_check("ask without query is an error", missing_query)


@contextlib.asynccontextmanager
async def http_transport(url: str):
    token = os.environ.get("SKILLRAG_API_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else None
    params = inspect.signature(_http_client).parameters
    if headers and "headers" in params:  # mcp 1.x
        ctx = _http_client(url, headers=headers)
        client = None
    elif headers:  # mcp 2.x: headers go on the HTTP client
        from mcp.shared._httpx_utils import create_mcp_http_client

        client = create_mcp_http_client(headers=headers)
        ctx = _http_client(url, http_client=client)
    else:
        ctx = _http_client(url)
        client = None
    async with contextlib.AsyncExitStack() as stack:
        if client is not None:
            await stack.enter_async_context(client)
        streams = await stack.enter_async_context(ctx)
        yield streams[0], streams[1]  # 1.x yields a third item (session id getter)


@contextlib.asynccontextmanager
async def stdio_transport(binary: str, project: str):
    # The whole environment (SKILLRAG_* settings included), less this harness's own variables,
    # which skillrag would warn about as unknown settings.
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLRAG_TEST_")}
    params = StdioServerParameters(command=binary, args=["-C", project, "mcp"], env=env)
    async with stdio_client(params) as streams:
        yield streams[0], streams[1]


class WarningsSeen(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append(f"{record.name}: {record.getMessage()}")


async def amain(argv: list[str]) -> int:
    global checks
    if len(argv) == 3 and argv[0] == "stdio":
        transport = stdio_transport(argv[1], argv[2])
        where = f"stdio: {argv[1]} -C {argv[2]} mcp"
    elif len(argv) == 2 and argv[0] == "http":
        transport = http_transport(argv[1])
        where = f"streamable HTTP: {argv[1]}"
    else:
        print("usage: mcp_client.py stdio SKILLRAG_BIN PROJECT_DIR | http URL", file=sys.stderr)
        return 2
    version = getattr(mcp, "__version__", None)
    if version is None:
        from importlib.metadata import version as _v

        version = _v("mcp")
    print(f"mcp {version} over {where}", flush=True)
    # The SDK logs a failed session termination (`DELETE`) as a warning and goes on: collect its
    # warnings, so that a close the SDK does not accept fails the run.
    warnings = WarningsSeen()
    logging.getLogger("mcp").addHandler(warnings)
    try:
        async with transport as (read, write):
            timeout = TIMEOUT
            if str(version).startswith("1."):  # mcp 1.x takes a timedelta
                from datetime import timedelta

                timeout = timedelta(seconds=TIMEOUT)
            async with ClientSession(read, write, read_timeout_seconds=timeout) as session:
                await checks_on(session)
    except Exception as e:  # noqa: BLE001 - a failed connection is a failure, not a traceback
        traceback.print_exc(file=sys.stderr)
        print(f"FAIL connection: {type(e).__name__}: {e}", flush=True)
        return 1
    checks += 1
    if warnings.seen:
        failures.append("the session closes without a warning")
        print(f"FAIL the session closes without a warning: {'; '.join(warnings.seen)}", flush=True)
    else:
        print("ok   the session closes without a warning", flush=True)
    if failures:
        print(f"FAILED {len(failures)} of {checks} checks: {', '.join(failures)}", flush=True)
        return 1
    print(f"PASS mcp client ({where}): {checks} checks", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(amain(sys.argv[1:])))
