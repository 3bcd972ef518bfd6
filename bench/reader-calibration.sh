#!/usr/bin/env bash
# Whether the reader's verdict, fitted together with the lexical evidence, moves the trade-off
# (issue 44, job 1): dev v2 and its leave-gold-out variant (../shared/tools/leave-gold-out.py,
# default share and seed), BM25 only, each asked without the reader and with the reader judging
# every routed question that has evidence (SKILLRAG_READER_BAND=0, SKILLRAG_READER_THRESHOLD=0:
# the answer is the candidate it rates highest); bench/reader_calibration.py then decides offline
# under each policy (lexical, reader alone, zero-shot as shipped, joint logistic cross-validated
# by skill).
#
#   bench/reader-calibration.sh [SKILLRAG_BINARY]      (the reader server: scripts/setup-reader)
#
# Writes bench/results/reader-calibration.md.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-${CARGO_TARGET_DIR:-$here/target}/release/skillrag}"
shared="${SKILLRAG_SHARED:-$here/../shared}"
work="${READER_BENCH_DIR:-/tmp/skillrag-reader-calibration}"
eval "$("$here/scripts/setup-reader")"
mkdir -p "$work"
[ -d "$work/lgo" ] || python3 "$shared/tools/leave-gold-out.py" "$shared/bench/dev" "$work/lgo" >/dev/null
run() { # NAME BENCH READER(plain|judged)
  local name="$1" bench="$2" env=(SKILLRAG_EMBED_MODEL=none SKILLRAG_READER="$SKILLRAG_READER" SKILLRAG_READER_TIMEOUT_SECS=120) flag=()
  if [ "$3" = plain ]; then flag=(--no-reader); else env+=(SKILLRAG_READER_BAND=0 SKILLRAG_READER_THRESHOLD=0); fi
  mkdir -p "$work/project"
  echo "reader-calibration: $name" >&2
  env "${env[@]}" "$bin" -C "$work/project" eval "$bench" --out "$work/$name" "${flag[@]}" >/dev/null 2>"$work/$name.log"
}
run dev-plain "$shared/bench/dev" plain
run lgo-plain "$work/lgo" plain
run dev-judged "$shared/bench/dev" judged
run lgo-judged "$work/lgo" judged
# The evidence threshold tune fitted for dev v2 (the lexical decision the reader is set beside).
router="$(find "$work/project" -path '*/eval/dev/router.json' | head -1)"
evidence="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["model"]["evidence"])' "$router")"
python3 "$here/bench/reader_calibration.py" "$work" "$shared/bench/dev/queries.jsonl" "$work/lgo/queries.jsonl" "$evidence" \
  >"$here/bench/results/reader-calibration.md"
cat "$here/bench/results/reader-calibration.md"
