#!/usr/bin/env bash
# Where the fact is among what the reader reads (issue 44, job 2), and the reader's verdict under
# other prompts on exactly those texts (job 1). No model is needed for the first part: a stand-in
# reader (bench/reader_probe.py serve) logs every text skillrag would show the reader and answers
# "no", so every candidate is judged. dev v2 and its leave-gold-out variant are asked twice, BM25
# only: with 10 extractive candidates (`[reader] max_calls = 10`) and with the first candidate plus
# 10 retrieved passages (`max_calls = 1, passages = 10`). READER_PROBE_EMBED names the embedder
# (default none: BM25 only; e.g. the folder `scripts/setup-e5 local` exports).
#
#   bench/reader-probe.sh [SKILLRAG_BINARY]
#
# Then, with the reader server (scripts/setup-reader), on every third row:
#   bench/reader_prompts.py judge  $READER_PROBE_DIR 3 yesno cf fewshot
#   bench/reader_prompts.py report $READER_PROBE_DIR 3 yesno cf cfc fewshot
#
# Writes bench/results/reader-probe.md (the first part).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-${CARGO_TARGET_DIR:-$here/target}/release/skillrag}"
shared="${SKILLRAG_SHARED:-$here/../shared}"
work="${READER_PROBE_DIR:-/tmp/skillrag-reader-probe}"
port="${READER_PROBE_PORT:-18099}"
mkdir -p "$work/project"
[ -d "$work/lgo" ] || python3 "$shared/tools/leave-gold-out.py" "$shared/bench/dev" "$work/lgo" >/dev/null
cp "$shared/bench/dev/queries.jsonl" "$work/queries.jsonl"
retrieval="BM25 only"
[ "${READER_PROBE_EMBED:-none}" != none ] && retrieval="BM25 with $(basename "$READER_PROBE_EMBED")"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null' EXIT
for bench in dev lgo; do
  prefix="" dir="$shared/bench/dev"
  [ "$bench" = lgo ] && prefix="lgo-" dir="$work/lgo"
  for arm in c10 p10; do
    log="$work/$prefix$arm.jsonl"
    rm -f "$log"
    python3 "$here/bench/reader_probe.py" serve "$port" "$log" &
    server=$!
    sleep 1
    calls=10 passages=0
    [ "$arm" = p10 ] && calls=1 passages=10
    echo "reader-probe: $bench, $arm" >&2
    SKILLRAG_EMBED_MODEL="${READER_PROBE_EMBED:-none}" SKILLRAG_READER="http://127.0.0.1:$port/v1" SKILLRAG_READER_MAX_CALLS=$calls \
      SKILLRAG_READER_PASSAGES=$passages "$bin" -C "$work/project" eval "$dir" --out "$work/eval-$prefix$arm" \
      >"$work/eval-$prefix$arm.log" 2>&1
    kill "$server" && wait "$server" 2>/dev/null || true
    server=""
  done
done
{
  echo "# Where the fact is among what the reader reads (dev v2, $retrieval)"
  echo
  echo "\`bench/reader-probe.sh\`: the texts skillrag shows the reader for each of dev v2's fact rows, logged by a"
  echo "stand-in reader that accepts none (so all are judged); *fact in first K*: one of the first K holds the"
  echo "row's fact (outcomes.py's match), i.e. the share a perfect reader judging K texts could answer."
  echo
  echo "## Extractive candidates (\`max_calls = 10\`; the product judges 3)"
  echo
  python3 "$here/bench/reader_probe.py" report "$work/c10.jsonl" "$work/queries.jsonl" 1 2 3 5 8 10
  echo
  echo "## The first candidate, then the retrieved passages whole (\`max_calls = 1, passages = 10\`)"
  echo
  echo "K = 1 is the first candidate; K = 1 + n adds the first n passages."
  echo
  python3 "$here/bench/reader_probe.py" report "$work/p10.jsonl" "$work/queries.jsonl" 1 2 3 4 6 11
} >"${READER_PROBE_OUT:-$here/bench/results/reader-probe.md}"
cat "${READER_PROBE_OUT:-$here/bench/results/reader-probe.md}"
