#!/usr/bin/env bash
# Extractive vs a local LLM vs the LLM with query rewriting vs the LLM with every retrieval and
# routing step (rewriting, multi-query, HyDE, routing vote), on the dev benchmark, in one run.
# The LLM is Qwen2.5-Coder-0.5B-Instruct served by llama.cpp's server (scripts/setup-llm).
#
#   bench/llm.sh [BENCH_DIR] [LIMIT]     (default ../shared/bench/dev, all questions)
#
# Writes bench/results/llm/{extractive,qwen,qwen-rewrite,qwen-assist}/report.{md,json} and a side-by-side
# bench/results/llm/report.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bench="${1:-../shared/bench/dev}"
limit=()
[ -n "${2:-}" ] && limit=(--limit "$2")
model="$(./scripts/setup-model)"
eval "$(./scripts/setup-llm)"
cargo build --release --locked
skillrag="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag"
out=bench/results/llm
mkdir -p "$out"
run() {
  local name=$1
  shift
  echo "== $name" >&2
  env "$@" "$skillrag" --embed-model "$model" eval "$bench" "${limit[@]}" --out "$out/$name" >&2
}
run extractive SKILLRAG_LLM_BASE_URL= SKILLRAG_LLM_GGUF=
run qwen SKILLRAG_LLM_BASE_URL="$SKILLRAG_TEST_LLM_BASE_URL" SKILLRAG_LLM_MODEL="$SKILLRAG_TEST_LLM_MODEL"
run qwen-rewrite SKILLRAG_LLM_BASE_URL="$SKILLRAG_TEST_LLM_BASE_URL" SKILLRAG_LLM_MODEL="$SKILLRAG_TEST_LLM_MODEL" \
  SKILLRAG_LLM_REWRITE=true
run qwen-assist SKILLRAG_LLM_BASE_URL="$SKILLRAG_TEST_LLM_BASE_URL" SKILLRAG_LLM_MODEL="$SKILLRAG_TEST_LLM_MODEL" \
  SKILLRAG_LLM_REWRITE=true SKILLRAG_LLM_MULTI_QUERY=2 SKILLRAG_LLM_HYDE=true SKILLRAG_LLM_ROUTE=true
"$skillrag" --embed-model "$model" eval "$bench" "${limit[@]}" --out "$out/side-by-side" \
  --compare "$out/qwen/answers.jsonl=qwen" --compare "$out/qwen-rewrite/answers.jsonl=qwen+rewrite" \
  --compare "$out/qwen-assist/answers.jsonl=qwen+rewrite+multi-query+HyDE+route" --no-llm >&2
cp "$out/side-by-side/report.md" "$out/report.md"
echo "wrote $out/report.md" >&2
