#!/usr/bin/env bash
# Latency of compile_context, ask and get_skill through a real MCP client (the official `mcp`
# Python SDK, installed by scripts/setup-test-clients) over stdio, on `skillrag init`'s example
# with the default offline model and no LLM. Usage: bench/mcp-context.sh [ROUNDS].
# Writes bench/results/mcp-context.md.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-50}"
model="$(./scripts/setup-onnx)"
eval "$(./scripts/setup-test-clients)"
cargo build --release --locked -q
bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag"
work="$PWD/target/bench-state/mcp-context"
rm -rf "$work"
"$bin" init "$work" >&2
export SKILLRAG_EMBED_MODEL="$model"
"$bin" -C "$work" index >&2
{
  echo "# MCP tools for agents: latency (\`bench/mcp-context.sh\`, $(date -u +%Y-%m-%d))"
  echo
  echo "$(nproc) cores, release build of $(git rev-parse --short HEAD), all-MiniLM-L6-v2 (ONNX Runtime), no LLM."
  echo
  SKILLRAG_EMBED_MODEL="$model" "$SKILLRAG_TEST_PYTHON" bench/mcp_context.py "$bin" "$work" "$rounds"
} | tee bench/results/mcp-context.md
