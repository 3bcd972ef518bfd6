# Sourced by the reader benches: sample BENCH OUT EVERY makes OUT a bench with BENCH's skills
# (linked) and every EVERY-th of its questions — a systematic sample, the same rows in every arm.
sample() {
  mkdir -p "$2"
  ln -sfn "$(realpath "$1/skills")" "$2/skills"
  awk -v n="$3" '(NR - 1) % n == 0' "$1/queries.jsonl" >"$2/queries.jsonl"
}
