#!/usr/bin/env bash
# Output evals (evals/evals.json) on `skillrag init`'s demo: each task answered by the local LLM
# (Qwen2.5-Coder-0.5B-Instruct on llama.cpp's server, scripts/setup-llm) without and with the
# compiled context of `skillrag context`, graded PASS/FAIL by bench/skill-evals.py.
#
#   bench/skill-evals.sh [OUT_DIR]          (default: bench/results)
#
# BIN=… uses that binary instead of building this tree (cargo build --release).
# Writes OUT_DIR/skill-evals.json (every context, output and grade) and prints the Markdown report.
# Stops the LLM server afterwards only when this script started it.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-bench/results}"

if [ -n "${BIN:-}" ]; then
  bin="$(realpath "$BIN")"
else
  cargo build --release --locked -q
  bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag"
fi

model="$(./scripts/setup-model)"
work="$(mktemp -d -t skillrag-evals.XXXXXX)"
"$bin" init "$work/demo" >&2
SKILLRAG_EMBED_MODEL="$model" "$bin" -C "$work/demo" index >&2

port="${SKILLRAG_LLM_PORT:-18080}"
started_llm=0
if ! curl -sf -m 2 "http://127.0.0.1:$port/health" >/dev/null 2>&1; then
  started_llm=1
fi
cleanup() {
  if [ "$started_llm" = 1 ]; then ./scripts/setup-llm stop >&2 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
eval "$(./scripts/setup-llm)"

echo "skill-evals: $bin, project $work/demo, model $SKILLRAG_TEST_LLM_MODEL, $(date -u +%Y-%m-%dT%H:%MZ)" >&2
SKILLRAG_EMBED_MODEL="$model" python3 bench/skill-evals.py "$bin" "$work/demo" "$out"
