#!/usr/bin/env python3
"""Latency of the MCP tools an agent calls, through the official `mcp` Python SDK over stdio.

    bench/mcp_context.py SKILLRAG_BIN PROJECT_DIR [ROUNDS]

Starts `SKILLRAG_BIN -C PROJECT_DIR mcp`, calls each tool once to warm up, then ROUNDS times
(default 50) over a set of routed tasks: `compile_context` (the ask path stopped before
generation), `ask` (extractive, for comparison) and `get_skill`. Reports the client-side round
trip p50/p95 in ms (JSON-RPC over pipes included) and the server's own `timings_ms.total` for
`compile_context`. The project must be `skillrag init`'s example, indexed. Prints Markdown.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TASKS = [
    "Write a reply to a customer who asks whether a factory reset voids the warranty",
    "Draft the steps for updating the router firmware for a support article",
    "起草一段说明：劳动合同期限一年的，试用期最长可以约定多久",
    "写一段给员工的说明：工作满十年的年休假有几天",
    "做一张绿茶冲泡卡片：水温多少度，泡多久",
]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def structured(result):
    return getattr(result, "structured_content", None) or getattr(result, "structuredContent", None)


async def timed(session: ClientSession, tool: str, args: dict) -> tuple[float, object]:
    started = time.perf_counter()
    result = await session.call_tool(tool, args)
    elapsed = (time.perf_counter() - started) * 1000.0
    if getattr(result, "is_error", False) or getattr(result, "isError", False):
        raise SystemExit(f"{tool} {args!r} failed: {result.content}")
    return elapsed, result


async def main(binary: str, project: str, rounds: int) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLRAG_TEST_")}
    params = StdioServerParameters(command=binary, args=["-C", project, "mcp"], env=env)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()  # the SDK checks structuredContent against outputSchema from here on
            for task in TASKS:  # warm-up: the model, the indexes, the caches of the OS
                await timed(session, "compile_context", {"task": task})
                await timed(session, "ask", {"query": task})
            rows = {"compile_context": [], "ask": [], "get_skill": []}
            server_ms: list[float] = []
            routed = set()
            for i in range(rounds):
                task = TASKS[i % len(TASKS)]
                ms, result = await timed(session, "compile_context", {"task": task})
                rows["compile_context"].append(ms)
                data = structured(result)
                server_ms.append(data["timings_ms"]["total"])
                routed.add((task[:24], ",".join(data["route"]["skills"]) or data.get("refusal", {}).get("kind", "?")))
                ms, _ = await timed(session, "ask", {"query": task})
                rows["ask"].append(ms)
                ms, _ = await timed(session, "get_skill", {"skill": "router-faq"})
                rows["get_skill"].append(ms)
    print(f"{rounds} rounds over {len(TASKS)} tasks, `skillrag mcp` over stdio, mcp Python SDK client\n")
    print("| tool | p50 ms | p95 ms | mean ms |")
    print("|---|---:|---:|---:|")
    for tool, values in rows.items():
        print(f"| {tool} | {percentile(values, 0.5):.1f} | {percentile(values, 0.95):.1f} | {statistics.mean(values):.1f} |")
    print(f"| compile_context, server's own total | {percentile(server_ms, 0.5):.1f} | {percentile(server_ms, 0.95):.1f} | {statistics.mean(server_ms):.1f} |")
    print("\nRoutes: " + "; ".join(f"{t}… → {s}" for t, s in sorted(routed)))


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else 50))
