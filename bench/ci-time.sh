#!/usr/bin/env bash
# The time CI takes from cold: for each REF, a fresh clone and an empty CARGO_TARGET_DIR, then
# that commit's own `.ci/run`, traced so every top-level step of it is timed (cargo's registry
# cache and the model/wheel caches of ~/.cache are kept, as on a CI machine with a warm cache).
# Usage: bench/ci-time.sh REF [REF…]   e.g. bench/ci-time.sh HEAD~1 HEAD
# Prints one Markdown table per REF; each run takes 30–45 minutes on 2 cores. Never in CI.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
for ref in "$@"; do
  commit="$(git -C "$repo" rev-parse --short "$ref")"
  work="$(mktemp -d)"
  git clone -q "$repo" "$work/src"
  git -C "$work/src" checkout -q "$commit"
  log="$work/trace.log"
  started=$(date +%s)
  set +e
  # Each top-level command of .ci/run is traced with the time it started. PS4 is set inside the
  # shell: bash ignores one from the environment when it runs as root.
  (cd "$work/src" && CARGO_TARGET_DIR="$work/target" \
    bash -c 'PS4="+@\$(date +%s) "; set -x; . .ci/run' .ci/run) > "$work/out.log" 2> "$log"
  rc=$?
  set -e
  ended=$(date +%s)
  echo "### $commit (\`.ci/run\` exit $rc, $(( ended - started )) s in all)"
  echo
  echo "| step | seconds |"
  echo "|---|---:|"
  # `++@` marks the commands of .ci/run itself (`+@` is the `.` that runs it, `+++@` nested ones).
  grep -E '^\+\+@[0-9]+ ' "$log" | grep -vE '^\+\+@[0-9]+ (cd|set|export|[A-Z_]+=)' |
    awk -v end="$ended" '{t=$1; sub(/^\+\+@/, "", t); $1=""; cmd[NR]=substr($0, 2); start[NR]=t}
      END {for (i = 1; i <= NR; i++) {next_t = (i < NR) ? start[i+1] : end; printf "| `%s` | %d |\n", cmd[i], next_t - start[i]}}'
  echo
  rm -rf "$work"
done
