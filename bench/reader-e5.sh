#!/usr/bin/env bash
# The reader with BM25 only against the reader with multilingual-e5-small beside BM25 (issue 44):
# dev v2 and its leave-gold-out variant (../shared/tools/leave-gold-out.py, default share and
# seed), each without and with the reader (as shipped: the extractive candidates), in one run;
# scored per skill by ../shared/tools/outcomes.py, with reader calls per question and ask p50/p95
# (bench/reader_report.py). The e5 model runs in-process (`scripts/setup-e5 local`); indexing both
# benches with it takes about 20 minutes on two cores, once per project.
#
#   bench/reader-e5.sh [SKILLRAG_BINARY]       (the reader server: scripts/setup-reader)
#
# READER_BENCH_EVERY=N asks every Nth question of each bench only (default 3: a reader call takes
# about 2 s on two cores). Writes bench/results/reader-e5.md.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-${CARGO_TARGET_DIR:-$here/target}/release/skillrag}"
shared="${SKILLRAG_SHARED:-$here/../shared}"
work="${READER_BENCH_DIR:-/tmp/skillrag-reader-e5}"
every="${READER_BENCH_EVERY:-3}"
eval "$("$here/scripts/setup-reader")"
e5="$(eval "$("$here/scripts/setup-e5" local)" && echo "$SKILLRAG_EMBED_MODEL")"
mkdir -p "$work"
[ -d "$work/lgo" ] || python3 "$shared/tools/leave-gold-out.py" "$shared/bench/dev" "$work/lgo" >/dev/null
. "$here/bench/sample.sh"
sample "$shared/bench/dev" "$work/dev-bench" "$every"
sample "$work/lgo" "$work/lgo-bench" "$every"
run() { # BENCH EMBEDDER(bm25|e5) READER(no|candidates)
  local name="$1-$2-$3" embed=none flag=()
  [ "$2" = e5 ] && embed="$e5"
  [ "$3" = no ] && flag=(--no-reader)
  mkdir -p "$work/project-$2"
  echo "reader-e5: $name" >&2
  SKILLRAG_EMBED_MODEL="$embed" SKILLRAG_READER="$SKILLRAG_READER" SKILLRAG_READER_TIMEOUT_SECS=120 \
    "$bin" -C "$work/project-$2" eval "$work/$1-bench" --out "$work/$name" "${flag[@]}" >"$work/$name.log" 2>&1
  python3 "$shared/tools/outcomes.py" "$work/$name/answers.jsonl" "$work/$1-bench/queries.jsonl" --json \
    >"$work/$name.outcomes.json"
}
for embedder in bm25 e5; do
  for reader in no candidates; do
    run dev "$embedder" "$reader"
    run lgo "$embedder" "$reader"
  done
done
python3 "$here/bench/reader_report.py" "$work" "$every" bm25-no="BM25, no reader" \
  bm25-candidates="BM25, reader (shipped)" e5-no="BM25 + e5, no reader" e5-candidates="BM25 + e5, reader" \
  >"$here/bench/results/reader-e5.md"
cat "$here/bench/results/reader-e5.md"
