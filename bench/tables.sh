#!/usr/bin/env bash
# Retrieval of late table rows (issue 45), before and after: BASE (a commit) built in a worktree
# with a target folder of its own, against this tree, both asked the same 32 questions by
# bench/tables.py (BM25, dense and hybrid with all-MiniLM-L6-v2, scripts/setup-model).
#
#   BASE=3557ad5 bench/tables.sh        # prints the tables; bench/results/tables.md keeps a run
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BASE:?set BASE to the commit to compare with}"
work="$(mktemp -d)"
trap 'git worktree remove --force "$work/base" 2>/dev/null || true; rm -rf "$work"' EXIT
git worktree add -q --detach "$work/base" "$BASE"
(cd "$work/base" && CARGO_TARGET_DIR="$work/target" cargo build -q -p skillrag)
cargo build -q -p skillrag
after="${CARGO_TARGET_DIR:-target}/debug/skillrag"
python3 bench/tables.py "$work/target/debug/skillrag" "$after" "$(./scripts/setup-model)"
