#!/usr/bin/env bash
# Retrieval quality (hit@1/hit@5/MRR@10 per skill for BM25, dense and hybrid, search restricted to
# the gold skill) and in-process search latency on a benchmark folder (default ../shared/bench/dev).
# Writes bench/results/retrieval-<bench>.{md,json}.   bench/retrieval.sh [BENCH_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bench="$(cd "${1:-../shared/bench/dev}" && pwd)"
name="$(basename "$bench")"
model="$(./scripts/setup-model)"
out="$PWD/bench/results/retrieval-$name"
cargo bench --locked -q -p skillrag-engine --bench dev_retrieval -- "$bench" --model "$model" --out "$out.json" > "$out.md"
cat "$out.md"
