#!/usr/bin/env bash
# Fuzzes every parser for a fixed time each (issue 24). Writes bench/results/fuzz.md.
#   bench/fuzz.sh [SECONDS_PER_TARGET]        (default 60)
#
# The targets live in fuzz/ (a cargo-fuzz project outside the workspace; libFuzzer, nightly):
#   skill_md   skillrag_skill::parse_skill_text          (SKILL.md frontmatter and sections)
#   pdf        skillrag_load::formats::extract_pdf        (default ExtractLimits)
#   docx       skillrag_load::formats::extract_docx       (default ExtractLimits)
#   html       skillrag_load::formats::extract_html
#   faq        skillrag_load::formats::extract_faq        (every FaqFormat on each input)
#   decode     skillrag_load::decode                      (plain text decoding)
#   http_json  skillrag_server::parse_json into the /v1/ask, /v1/search, /v1/route, /v1/index
#              and /v1/chat/completions request bodies
#   mcp_stdio  skillrag_server::mcp::stdio::GuardedStdio read to the end (MCP JSON-RPC over stdio)
# Each asserts only "no panic, no hang, bounded memory": libFuzzer's -timeout (per input) and
# -rss_limit_mb=2048. A crash, timeout or out-of-memory stops that target and leaves its input in
# fuzz/artifacts/<target>/ (reproduce with `fuzz/target/<triple>/release/<target> FILE`).
#
# Seeds are copied at run time from the committed test files (testdata/documents, the skills'
# SKILL.md, the server's web page) and fuzz/seeds/ (hand-written JSON bodies and MCP lines) into a
# temporary folder read as a second corpus; what the fuzzer learns accumulates in
# fuzz/corpus/<target>/ (ignored by git) from run to run.
#
# Environment: FUZZ_TARGETS (space-separated subset), FUZZ_SANITIZER (none by default: the
# parsers are safe Rust and ASan halves the executions; `address` to turn it on), FUZZ_TIMEOUT
# (seconds one input may take, default 10), FUZZ_RSS_MB (default 2048).
# Needs rustup's nightly toolchain; installs cargo-fuzz if it is missing. Never run in CI.
set -euo pipefail
cd "$(dirname "$0")/.."

budget="${1:-60}"
[[ "$budget" =~ ^[1-9][0-9]*$ ]] || { echo "usage: bench/fuzz.sh [SECONDS_PER_TARGET]" >&2; exit 2; }
sanitizer="${FUZZ_SANITIZER:-none}"
timeout_s="${FUZZ_TIMEOUT:-10}"
rss_mb="${FUZZ_RSS_MB:-2048}"
light=(skill_md pdf docx html faq decode)
server=(http_json mcp_stdio)
read -r -a targets <<< "${FUZZ_TARGETS:-${light[*]} ${server[*]}}"

rustup run nightly rustc --version > /dev/null 2>&1 || {
  echo "bench/fuzz.sh: needs the nightly toolchain: rustup toolchain install nightly" >&2
  exit 1
}
if ! cargo +nightly fuzz --version > /dev/null 2>&1; then
  echo "bench/fuzz.sh: installing cargo-fuzz" >&2
  cargo install cargo-fuzz --locked
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
triple="$(rustup run nightly rustc -vV | sed -n 's/^host: //p')"
bindir="fuzz/target/$triple/release"

is_server() { [[ " ${server[*]} " == *" $1 "* ]]; }
wants_server=false
for t in "${targets[@]}"; do is_server "$t" && wants_server=true; done

# One build for everything (the server targets need the whole engine: a long first build). If
# the server crate does not build, the parser targets still run and the others are reported.
declare -A not_built=()
(
  cd fuzz
  if $wants_server && cargo +nightly fuzz build -s "$sanitizer" --features server; then
    exit 0
  fi
  if $wants_server; then
    echo "bench/fuzz.sh: the server targets do not build; running the parser targets only" >&2
  fi
  for t in "${light[@]}"; do
    cargo +nightly fuzz build -s "$sanitizer" "$t" || echo "$t" >> "$work/not-built"
  done
) 2>&1 | tee "$work/build.log" >&2
for t in "${targets[@]}"; do
  if [ ! -x "$bindir/$t" ] || { [ -f "$work/not-built" ] && grep -qx "$t" "$work/not-built"; } \
    || { is_server "$t" && grep -q "the server targets do not build" "$work/build.log"; }; then
    not_built[$t]=1
  fi
done

# Seeds, per target, into $work/seeds/<target>.
seed() { # target file...
  local t="$1"
  shift
  mkdir -p "$work/seeds/$t"
  local f
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$work/seeds/$t/"; done
  return 0
}
docs=testdata/documents
shopt -s nullglob
seed pdf "$docs"/*.pdf
seed docx "$docs"/*.docx
seed html "$docs"/*.html "$docs"/*.htm crates/server/assets/index.html
seed faq "$docs"/*.csv "$docs"/*.tsv "$docs"/*.json "$docs"/*.jsonl
seed decode "$docs"/*.csv "$docs"/*.tsv "$docs"/*.json "$docs"/*.jsonl "$docs"/*.html "$docs"/README.md
seed http_json fuzz/seeds/http_json/*
seed mcp_stdio fuzz/seeds/mcp_stdio/*
mkdir -p "$work/seeds/skill_md"
for f in testdata/*/skills/*/SKILL.md crates/cli/template/skills/*/SKILL.md demo/skills/*/SKILL.md; do
  id="$(basename "$(dirname "$f")")"
  # The target reads `<skill id> NUL <SKILL.md>`; the id must match `name:` for a skill to load.
  { printf '%s\0' "$id"; cat "$f"; } > "$work/seeds/skill_md/$(echo "$f" | tr '/' '_')"
  cp "$f" "$work/seeds/decode/$(echo "$f" | tr '/' '_')"
done
shopt -u nullglob
# Lines that are not text or not JSON-RPC, written here rather than committed as binary files.
printf '\xef\xbb\xbf{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n\n   \n{"jsonrpc":"2.0","method":"notifications/whatever"}\n{"jsonrpc":"2.0","id":5,"method":"tools/list"}' \
  > "$work/seeds/mcp_stdio/bom-crlf-no-final-newline"
printf '{"jsonrpc": "2.0", "id": 1, "method": \n{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"x":"\xff\xfe"}}\n{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"\\ud800"}}\n{"jsonrpc":"2.0","id":4,"method":"tools/list"}\0\0\0\n[1, 2]\n{"id":"six","method":"ping"}\n{"jsonrpc":"1.0","id":7,"method":"tools/list"}\n{"jsonrpc":"2.0","id":8,"result":{}}\n{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"x"}}\n%s\n' \
  "$(printf '[%.0s' $(seq 200))" > "$work/seeds/mcp_stdio/malformed"
printf '{"query":"x","skill":"\xff"}' > "$work/seeds/http_json/bad-utf8"
# The decoder's other encodings, from the Chinese FAQ (python3's codecs, when there is one).
if command -v python3 > /dev/null && [ -f "$docs/faq-zh.csv" ]; then
  python3 - "$docs/faq-zh.csv" "$work/seeds/decode" <<'EOF'
import sys
text = open(sys.argv[1], encoding="utf-8").read()
for enc, prefix in [("gb18030", b""), ("big5", b""), ("utf-16-le", b""), ("utf-16-be", b""),
                    ("utf-16", b""), ("utf-8", b"\xef\xbb\xbf")]:
    data = prefix + text.encode(enc, errors="replace")
    open(f"{sys.argv[2]}/faq-zh.{enc}", "wb").write(data)
EOF
fi

count() { find "$1" -maxdepth 1 -type f 2> /dev/null | wc -l | tr -d ' '; }
stat_of() { # log key -> value or "?"
  local v
  v="$(grep -o "stat::$2: *[0-9]*" "$1" | tail -1 | grep -o '[0-9]*$' || true)"
  echo "${v:-?}"
}

rows=()
details=()
for t in "${targets[@]}"; do
  if [ -n "${not_built[$t]:-}" ]; then
    rows+=("| \`$t\` | not built (see the build log) | | | | | | | |")
    continue
  fi
  corpus="fuzz/corpus/$t"
  artifacts="fuzz/artifacts/$t"
  mkdir -p "$corpus" "$artifacts" "$work/seeds/$t"
  log="$work/$t.log"
  touch "$work/stamp"
  sleep 1 # artifacts written by this run are newer than the stamp
  echo "bench/fuzz.sh: $t for ${budget}s ($(count "$work/seeds/$t") seeds, $(count "$corpus") in the corpus)" >&2
  status=0
  "$bindir/$t" -max_total_time="$budget" -timeout="$timeout_s" -rss_limit_mb="$rss_mb" \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" "$work/seeds/$t" > "$log" 2>&1 || status=$?
  tail -n 3 "$log" >&2
  crashes=$(find "$artifacts" -maxdepth 1 -type f -name 'crash-*' -newer "$work/stamp" | wc -l | tr -d ' ')
  timeouts=$(find "$artifacts" -maxdepth 1 -type f -name 'timeout-*' -newer "$work/stamp" | wc -l | tr -d ' ')
  ooms=$(find "$artifacts" -maxdepth 1 -type f -name 'oom-*' -newer "$work/stamp" | wc -l | tr -d ' ')
  execs="$(stat_of "$log" number_of_executed_units)"
  rate="$(stat_of "$log" average_exec_per_sec)"
  rss="$(stat_of "$log" peak_rss_mb)"
  added="$(stat_of "$log" new_units_added)"
  cov="$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*' || true)"
  verdict="ok"
  [ "$status" -ne 0 ] && verdict="stopped (exit $status)"
  rows+=("| \`$t\` | $verdict | $execs | $rate | ${cov:-?} | $added | $(count "$corpus") | $rss | $crashes / $timeouts / $ooms |")
  if [ "$status" -ne 0 ] || [ $((crashes + timeouts + ooms)) -gt 0 ]; then
    details+=("### \`$t\`" "")
    for f in $(find "$artifacts" -maxdepth 1 -type f -newer "$work/stamp" | sort); do
      details+=("- \`$f\` ($(wc -c < "$f" | tr -d ' ') bytes): \`$(head -c 64 "$f" | od -An -tx1 | tr -d ' \n')\`…")
    done
    details+=("" '```')
    while IFS= read -r line; do details+=("$line"); done < <(
      grep -E -A4 "panicked at|==[0-9]+== ?ERROR|ALARM|out-of-memory|deadly signal" "$log" | head -n 30
    )
    details+=('```' "")
  fi
done

commit="$(git rev-parse --short HEAD 2> /dev/null || echo unknown)"
[ -n "$(git status --porcelain 2> /dev/null | head -1)" ] && commit="$commit (working tree with uncommitted changes)"
{
  echo "# Fuzzing the parsers"
  echo
  echo "Command: \`bench/fuzz.sh $budget\` ($(date -u +%Y-%m-%d), commit $commit; $(nproc) CPU(s), $(uname -m);"
  echo "$(rustup run nightly rustc --version), $(cargo +nightly fuzz --version 2> /dev/null || echo cargo-fuzz);"
  echo "sanitizer: $sanitizer; per target: -max_total_time=$budget -timeout=$timeout_s -rss_limit_mb=$rss_mb)."
  echo
  echo "Each target asserts only that its parser neither panics nor hangs and stays within the memory"
  echo "limit (see fuzz/ and the header of bench/fuzz.sh for the entry points). Seeds come from"
  echo "testdata/, the skills' SKILL.md and fuzz/seeds/; the corpus grows in fuzz/corpus/ from run to run,"
  echo "so later runs start further in. A target stops at its first crash, timeout or OOM."
  echo
  echo "Targets: \`skill_md\` skillrag_skill::parse_skill_text (input \`<id> NUL <SKILL.md>\`); \`pdf\`"
  echo "formats::extract_pdf and \`docx\` formats::extract_docx (default ExtractLimits); \`html\`"
  echo "formats::extract_html; \`faq\` formats::extract_faq in each FaqFormat (CSV, TSV, JSON, JSONL);"
  echo "\`decode\` skillrag_load::decode; \`http_json\` skillrag_server::parse_json into AskRequest,"
  echo "SearchRequest, RouteRequest, IndexRequest and ChatRequest; \`mcp_stdio\` the MCP stdio transport"
  echo "(skillrag_server::mcp::stdio::GuardedStdio) read to the end."
  echo
  echo "| target | result | executions | exec/s | coverage (edges) | new inputs | corpus after | peak RSS MB | crashes / timeouts / OOMs |"
  echo "|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  if [ ${#details[@]} -gt 0 ]; then
    echo "## Findings"
    echo
    echo "Artifacts are kept under fuzz/artifacts/<target>/; reproduce one with"
    echo "\`fuzz/target/$triple/release/<target> <artifact>\` (after \`cd fuzz && cargo +nightly fuzz build -s $sanitizer --features server\`)."
    echo
    printf '%s\n' "${details[@]}"
  else
    echo "No crashes, timeouts or OOMs."
  fi
} > "$work/fuzz.md"
mkdir -p bench/results
cp "$work/fuzz.md" bench/results/fuzz.md
echo "bench/fuzz.sh: wrote bench/results/fuzz.md" >&2
