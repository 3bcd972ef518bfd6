#!/usr/bin/env bash
# `skillrag eval` on a benchmark folder (default ../shared/bench/dev) side by side with the seed
# articles' own pipeline (bench/peer/seed_pipeline.py: MiniLM + Chroma, cosine dispatcher, dense
# top-3, threshold 0.35), in the same run. The peer needs a Python venv with
# bench/peer/requirements.txt: set PEER_PYTHON (default bench/peer/.venv/bin/python).
# Writes bench/results/eval-<bench>.md and the report folder bench/results/eval-<bench>/.
# With E5=1, skillrag embeds with multilingual-e5-small (scripts/setup-e5) instead of the bundled
# all-MiniLM-L6-v2, and the results go to eval-<bench>-e5.md and eval-<bench>-e5/.
set -euo pipefail
cd "$(dirname "$0")/.."
bench="$(cd "${1:-../shared/bench/dev}" && pwd)"
name="$(basename "$bench")"
model="$(./scripts/setup-model)"
embed_model="$model"
suffix=""
if [ "${E5:-0}" = 1 ]; then
  eval "$(./scripts/setup-e5)"
  embed_model="$SKILLRAG_EMBED_MODEL"
  suffix="-e5"
fi
peer_python="${PEER_PYTHON:-bench/peer/.venv/bin/python}"
cargo build --release --locked -q
out="$PWD/bench/results/eval-$name$suffix"
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
work="$PWD/target/bench-state/eval-$name$suffix"
mkdir -p "$work"
SKILLRAG_EMBED_MODEL="$embed_model" "$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag" \
  -C "$work" eval "$bench" --out "$out" "${compare[@]}" > "bench/results/eval-$name$suffix.md"
cat "bench/results/eval-$name$suffix.md"
