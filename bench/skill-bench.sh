# Sourced by the benchmarks that run `skillrag eval` on a benchmark with one skill changed
# (bench/ablation.sh, bench/script.sh): reads `SKILL [BENCH]`, installs the embedding model and
# builds this tree. Sets skill, bench (absolute), name (the benchmark folder's name), model and
# new_bin (this tree's release binary); eval_mixes (below) runs both binaries on the mixes.
skill="${1:?usage: $0 SKILL [BENCH]}"
bench="$(cd "${2:-../shared/bench/dev}" && pwd)"
name="$(basename "$bench")"
[ -d "$bench/skills/$skill" ] || { echo "no skill $skill in $bench/skills" >&2; exit 2; }
model="$(./scripts/setup-model)"
cargo build --release --locked -q
new_bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag"

# eval_mixes OUT_ROOT LABEL=BENCH=PROJECT...: `skillrag eval` of each benchmark BENCH in its
# project PROJECT, by BASE_BIN ("before", when set) and by this tree ("after"), each router
# refitted. Sets runs ("before, LABEL=OUT" for bench/per_skill.py) and wrong
# ("before, LABEL=OUT=QUERIES" for bench/wrong_answers.py).
eval_mixes() {
  local out_root="$1" label bin spec mix_label mix project mix_name out
  shift
  runs=()
  wrong=()
  for label in ${BASE_BIN:+before} after; do
    bin="$new_bin"
    [ "$label" = before ] && bin="$BASE_BIN"
    for spec in "$@"; do
      IFS='=' read -r mix_label mix project <<<"$spec"
      mix_name="$(basename "$mix")"
      out="$out_root/out-$label-$mix_name"
      rm -f "$project/.skillrag/eval/$mix_name/router.json"
      SKILLRAG_EMBED_MODEL="$model" "$bin" -C "$project" eval "$mix" --out "$out" >/dev/null
      runs+=("$label, $mix_label=$out")
      wrong+=("$label, $mix_label=$out=$mix/queries.jsonl")
    done
  done
}
