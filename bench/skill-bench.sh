# Sourced by the benchmarks that run `skillrag eval` on a benchmark with one skill changed
# (bench/ablation.sh, bench/script.sh): reads `SKILL [BENCH]`, installs the embedding model and
# builds this tree. Sets skill, bench (absolute), name (the benchmark folder's name), model and
# new_bin (this tree's release binary).
skill="${1:?usage: $0 SKILL [BENCH]}"
bench="$(cd "${2:-../shared/bench/dev}" && pwd)"
name="$(basename "$bench")"
[ -d "$bench/skills/$skill" ] || { echo "no skill $skill in $bench/skills" >&2; exit 2; }
model="$(./scripts/setup-model)"
cargo build --release --locked -q
new_bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag"
