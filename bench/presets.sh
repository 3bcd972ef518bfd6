#!/usr/bin/env bash
# Does a chunking preset help? Retrieval (hit@1/hit@5/MRR@10 of `fact` rows, search restricted to
# the gold skill) with every document chunked by the `general` preset, against the default `auto`
# (statute text detected → `legal`: cut only at article boundaries, whole neighbouring articles
# packed per chunk, chapter in the heading path). BM25 only: the dense signal is blind to Chinese
# with all-MiniLM-L6-v2 and dropped for the statute skill anyway, so the comparison is lexical.
# Writes bench/results/presets-<bench>.md.      bench/presets.sh [BENCH_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bench="$(cd "${1:-../shared/bench/dev}" && pwd)"
name="$(basename "$bench")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
run() { # preset
  SKILLRAG_INDEX_PRESET="$1" cargo bench --locked -q -p skillrag-engine --bench dev_retrieval -- \
    "$bench" --model none --state "$work/$1" --out "$work/$1.json" > "$work/$1.md" 2> "$work/$1.err"
}
run general
run auto
python3 - "$work" "$name" > "bench/results/presets-$name.md" <<'PY'
import json, sys
work, name = sys.argv[1:3]
g = json.load(open(f"{work}/general.json"))
a = json.load(open(f"{work}/auto.json"))
gr, ar = g["retrieval"], a["retrieval"]
print(f"## Chunking presets on `{name}` (BM25, search restricted to the gold skill)\n")
print("| skill | n | general hit@5 | auto hit@5 | change | general hit@1 | auto hit@1 | general MRR@10 | auto MRR@10 |")
print("|---|---|---|---|---|---|---|---|---|")
for skill in gr:
    x, y = gr[skill]["bm25"], ar[skill]["bm25"]
    print(f"| {skill} | {x['n']} | {x['hit5']:.3f} | {y['hit5']:.3f} | {y['hit5'] - x['hit5']:+.3f} | {x['hit1']:.3f} | {y['hit1']:.3f} | {x['mrr10']:.3f} | {y['mrr10']:.3f} |")
print("\n`auto` chose `legal` for the statute files (numbered articles) and `general` for the rest.")
PY
cat "bench/results/presets-$name.md"
