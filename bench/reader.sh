#!/usr/bin/env bash
# The reader (docs/design.md §4.9) measured by outcome, as a user sees it: dev v2 and its
# leave-gold-out variant (../shared/tools/leave-gold-out.py, default share and seed), each asked
# without the reader, with the reader as shipped (the extractive candidates only: [reader]
# passages = 0), and with the first one or two retrieved passages judged too (passages = 1, 2),
# in one run,
# BM25 only (the issue's baseline), scored per skill by ../shared/tools/outcomes.py; plus reader
# calls per question and ask p50/p95.
#
#   bench/reader.sh [SKILLRAG_BINARY]       (the reader server: scripts/setup-reader)
#
# READER_BENCH_EVERY=N asks every Nth question of each bench only (a systematic sample, the same
# rows in both arms): on 2 busy cores a reader call takes 1–5 s.
#
# Writes bench/results/reader.md.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-${CARGO_TARGET_DIR:-$here/target}/release/skillrag}"
shared="${SKILLRAG_SHARED:-$here/../shared}"
work="${READER_BENCH_DIR:-/tmp/skillrag-reader-bench}"
eval "$("$here/scripts/setup-reader")"
mkdir -p "$work"
python3 "$shared/tools/leave-gold-out.py" "$shared/bench/dev" "$work/lgo"
every="${READER_BENCH_EVERY:-1}"
. "$here/bench/sample.sh"
sample "$shared/bench/dev" "$work/dev-bench" "$every"
sample "$work/lgo" "$work/lgo-bench" "$every"
run() { # NAME BENCH ARM(no|candidates|passages1|passages2)
  local name="$1" bench="$2" flag=() env=(SKILLRAG_EMBED_MODEL=none SKILLRAG_READER="$SKILLRAG_READER")
  case "$3" in
    no) flag=(--no-reader) ;;
    candidates) env+=(SKILLRAG_READER_PASSAGES=0) ;;
    passages1) env+=(SKILLRAG_READER_PASSAGES=1) ;;
    passages2) env+=(SKILLRAG_READER_PASSAGES=2) ;;
  esac
  mkdir -p "$work/project"
  echo "reader.sh: $name" >&2
  env "${env[@]}" "$bin" -C "$work/project" eval "$bench" --out "$work/$name" "${flag[@]}" >/dev/null 2>"$work/$name.log"
  python3 "$shared/tools/outcomes.py" "$work/$name/answers.jsonl" "$bench/queries.jsonl" --json >"$work/$name.outcomes.json"
}
for arm in no candidates passages1 passages2; do
  run "dev-$arm" "$work/dev-bench" "$arm"
  run "lgo-$arm" "$work/lgo-bench" "$arm"
done
python3 "$here/bench/reader_report.py" "$work" "$every" >"$here/bench/results/reader.md"
cat "$here/bench/results/reader.md"
