#!/usr/bin/env bash
# How far cheap evidence predictors can tell answerable questions from ones to refuse
# (bench/answerability.py): `skillrag eval` on a benchmark, then every question searched again in
# the skill it was routed to, through the real server, and the predictors' ROC AUCs printed.
# With MODEL=e5 the same runs with multilingual-e5-small in-process (scripts/setup-e5 local,
# int8 graph), so the dense signal is measured on Chinese too.
# Writes bench/results/answerability-<bench>-<model>.md. Needs PyPI (jieba, scikit-learn).
#   bench/answerability.sh [BENCH_DIR]
#   MODEL=e5 bench/answerability.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bench="$(cd "${1:-../shared/bench/dev}" && pwd)"
name="$(basename "$bench")"
model="${MODEL:-minilm}"
cargo build --release --locked -q
bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag"
case "$model" in
  minilm) export SKILLRAG_EMBED_MODEL="$(scripts/setup-model)" ;;
  e5)
    eval "$(scripts/setup-e5 local)"
    export SKILLRAG_EMBED_ONNX_GRAPH=onnx/model_qint8.onnx
    ;;
  *) echo "MODEL is minilm or e5" >&2; exit 2 ;;
esac
work="$PWD/target/bench-state/answerability/$model"
venv="$PWD/target/bench-state/answerability/venv"
[ -x "$venv/bin/python" ] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q jieba scikit-learn; }
mkdir -p "$work"
rm -f "$work/.skillrag/eval/$name/router.json"
"$bin" -C "$work" eval "$bench" --no-llm --out "$work/out" > /dev/null

# The server over the eval's own indexes.
serve="$work/serve"
mkdir -p "$serve"
cat > "$serve/skillrag.toml" <<EOF
skills = ["$bench/skills"]
[index]
dir = "$work/.skillrag/eval/$name"
EOF
port=$((20000 + RANDOM % 20000))
"$bin" -C "$serve" serve --addr "127.0.0.1:$port" --rate-limit 0 > "$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -sf "http://127.0.0.1:$port/healthz" > /dev/null && break
  sleep 1
done
out="bench/results/answerability-$name-$model.md"
"$venv/bin/python" bench/answerability.py "$work/out" "$bench" "$work/.skillrag/eval/$name/index" "http://127.0.0.1:$port" > "$out"
cat "$out"
