#!/usr/bin/env bash
# Chunking speed on long paragraphs (issue 46 item 16): `crates/chunk/examples/chunk_speed.rs`
# at 1, 2 and 4 MB for four shapes (one line of short English sentences, one line of Chinese
# sentences, one paragraph of short lines, one line without any boundary), this tree against
# BASE (a commit; the same example is copied into it), in one run. Linear chunking doubles its
# time with the input: the table gives the seconds and the ratios 2 MB/1 MB and 4 MB/2 MB.
#
#   BASE=main bench/chunking.sh        # writes bench/results/chunking.md
#
# PROFILE (default dev: the ratios, not the seconds, are the point) picks the cargo profile.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${PROFILE:-dev}"
sizes="${SIZES:-1 2 4}"
out=bench/results/chunking.md
work="$(mktemp -d)"
trap 'git worktree remove --force "$work/base" 2>/dev/null || true; rm -rf "$work"' EXIT

run() { # DIR TARGET_DIR LABEL
    (cd "$1" && CARGO_TARGET_DIR="$2" cargo run -q --profile "$profile" -p skillrag-chunk --example chunk_speed -- $sizes) |
        sed "s/^/$3 /"
}

: >"$work/lines"
if [ -n "${BASE:-}" ]; then
    git worktree add -q --detach "$work/base" "$BASE"
    mkdir -p "$work/base/crates/chunk/examples"
    cp crates/chunk/examples/chunk_speed.rs "$work/base/crates/chunk/examples/"
    # A target folder of its own: the base's crates must not replace this tree's build.
    run "$work/base" "$work/target" before >>"$work/lines"
fi
run . "${CARGO_TARGET_DIR:-target}" after >>"$work/lines"

python3 - "$work/lines" "${BASE:-}" "$profile" >"$out" <<'PY'
import sys
lines, base, profile = sys.argv[1], sys.argv[2], sys.argv[3]
t = {}
for line in open(lines):
    label, shape, mb, secs, chunks = line.split()
    t[(label, shape, int(mb))] = (float(secs), int(chunks))
labels = [l for l in ("before", "after") if any(k[0] == l for k in t)]
sizes = sorted({k[2] for k in t})
shapes = list(dict.fromkeys(k[1] for k in t))
print("# Chunking speed on long paragraphs (issue 46 item 16)\n")
print(f"`bench/chunking.sh`, `{profile}` profile, `chunk_document` (Markdown, general preset, 500/80);")
print(f"before = {base or '(not run)'}, after = this tree. Seconds, then the time ratio of each")
print("doubling of the input: 2.0 is linear, 4.0 quadratic.\n")
head = ["shape", "build"] + [f"{s} MB s" for s in sizes] + [f"{b}→{a} MB" for a, b in zip(sizes[1:], sizes)] + ["chunks"]
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for shape in shapes:
    for label in labels:
        row = [t[(label, shape, s)][0] for s in sizes]
        ratios = [f"{b / a:.2f}x" if a > 0 else "-" for a, b in zip(row, row[1:])]
        chunks = t[(label, shape, sizes[-1])][1]
        print("| " + " | ".join([shape, label] + [f"{r:.3f}" for r in row] + ratios + [str(chunks)]) + " |")
PY
cat "$out"
