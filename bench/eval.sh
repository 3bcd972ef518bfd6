#!/usr/bin/env bash
# `skillrag eval` on a benchmark folder (default ../shared/bench/dev) side by side with the seed
# articles' own pipeline (bench/peer/seed_pipeline.py: MiniLM + Chroma, cosine dispatcher, dense
# top-3, threshold 0.35), in the same run. The peer needs a Python venv with
# bench/peer/requirements.txt: set PEER_PYTHON (default bench/peer/.venv/bin/python).
# Writes bench/results/eval-<bench>.md and the report folder bench/results/eval-<bench>/.
set -euo pipefail
cd "$(dirname "$0")/.."
bench="$(cd "${1:-../shared/bench/dev}" && pwd)"
name="$(basename "$bench")"
model="$(./scripts/setup-model)"
peer_python="${PEER_PYTHON:-bench/peer/.venv/bin/python}"
cargo build --release --locked -q
out="$PWD/bench/results/eval-$name"
mkdir -p "$out"
compare=()
if [ -x "$peer_python" ]; then
  HF_HUB_OFFLINE=1 "$peer_python" bench/peer/seed_pipeline.py "$bench" "$out/peer-answers.jsonl" "$model"
  compare=(--compare "$out/peer-answers.jsonl=seed pipeline (MiniLM+Chroma)")
else
  echo "no peer venv at $peer_python: skipping the baseline" >&2
fi
# The project folder (indexes, embedding cache, fitted router) persists between runs, so a re-run
# indexes incrementally; `rm -rf` it for a cold run.
work="$PWD/target/bench-state/eval-$name"
mkdir -p "$work"
SKILLRAG_EMBED_MODEL="$model" "$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag" -C "$work" eval "$bench" --out "$out" "${compare[@]}" > "bench/results/eval-$name.md"
cat "bench/results/eval-$name.md"
