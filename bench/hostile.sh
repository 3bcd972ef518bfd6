#!/usr/bin/env bash
# Replays the adversarial audit of issue 24 against two binaries in one run: BASE_BIN (the build
# before the hardening) and the current release build. Each case is a hostile file or client;
# the table says what each binary did, how long it took and its peak memory. A case that runs
# past its time limit is killed and counted as a hang.
#
#   BASE_BIN=/path/to/old/skillrag bench/hostile.sh      # writes bench/results/hostile.md
#
# BM25 only (SKILLRAG_EMBED_MODEL=none): the cases are about reading files and serving, not the
# model. Needs python3 (it writes the hostile files and drives the slow clients).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p skillrag
NEW_BIN="${CARGO_TARGET_DIR:-target}/release/skillrag"
BASE_BIN="${BASE_BIN:-}"
LIMIT="${LIMIT:-120}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export SKILLRAG_EMBED_MODEL=none
out=bench/results/hostile.md

# make_case NAME BIN: a fresh example project, made by BIN (its own config template), with one
# hostile thing added.
make_case() {
  local dir="$work/$1-$(basename "$(dirname "$2")")-$RANDOM"
  rm -rf "$dir"
  "$2" init "$dir" >/dev/null 2>&1
  python3 - "$1" "$dir" <<'PY'
import os, sys, zlib
case, d = sys.argv[1], sys.argv[2]
k = os.path.join(d, "skills/router-faq/knowledge")
if case == "pdf-bomb":
    content = b"BT /F1 12 Tf 72 720 Td (bomb) Tj ET\n" * (50 * 1024 * 1024 // 36)
    st = zlib.compress(content, 9)
    objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(st) + st + b"\nendstream",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    pdf, offs = b"%PDF-1.5\n", []
    for i, o in enumerate(objs):
        offs.append(len(pdf)); pdf += b"%d 0 obj\n" % (i + 1) + o + b"\nendobj\n"
    x = len(pdf); pdf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for o in offs: pdf += b"%010d 00000 n \n" % o
    pdf += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, x)
    open(os.path.join(k, "bomb.pdf"), "wb").write(pdf)
elif case == "deep-html":
    open(os.path.join(k, "deep.html"), "w").write("<p>x</p>\n" + "<div>" * 100000 + "deep" + "</div>" * 100000)
elif case == "deep-yaml":
    s = os.path.join(d, "skills/deep"); os.makedirs(os.path.join(s, "knowledge"))
    open(os.path.join(s, "SKILL.md"), "w").write("---\nname: deep\ndescription: d\nx: " + "[" * 100000 + "]" * 100000 + "\n---\n# Deep\n")
    open(os.path.join(s, "knowledge/a.md"), "w").write("# A\n\ntext\n")
elif case == "fifo-skill":
    s = os.path.join(d, "skills/piped"); os.makedirs(s); os.mkfifo(os.path.join(s, "SKILL.md"))
elif case == "symlink-passwd":
    os.symlink("/etc/passwd", os.path.join(k, "passwd.md"))
elif case == "chunk-size-1":
    p = os.path.join(d, "skills/labor-law/SKILL.md")
    t = open(p).read().replace("metadata:\n", 'metadata:\n  chunk_size: "1"\n', 1)
    open(p, "w").write(t)
PY
  echo "$dir"
}

# run_case BIN DIR ARGS…: prints "seconds rss_mb exit" (exit "hang" when killed at LIMIT).
run_case() {
  local bin="$1" dir="$2"; shift 2
  local t0 t1 rc
  t0=$(date +%s.%N)
  set +e
  /usr/bin/time -f "%M" -o "$work/rss" timeout -s KILL "$LIMIT" "$bin" -C "$dir" "$@" >"$work/stdout" 2>"$work/stderr" </dev/null
  rc=$?
  set -e
  t1=$(date +%s.%N)
  local rss
  rss=$(tail -1 "$work/rss" 2>/dev/null | grep -E '^[0-9]+$' || echo 0)
  [ "$rc" = 137 ] && rc=hang
  printf '%.2f %d %s\n' "$(echo "$t1 - $t0" | bc)" "$((rss / 1024))" "$rc"
}

# what_it_said: the first line of stdout+stderr that names the hostile thing, shortened.
what_it_said() {
  cat "$work/stdout" "$work/stderr" | grep -m1 -E "$1" | sed "s#$work/[^/]*/##" | cut -c1-160 | sed 's/|/\\|/g' || true
}

{
  echo "# Hostile inputs, before and after (issue 24)"
  echo
  echo "Command: \`BASE_BIN=… bench/hostile.sh\` ($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD); $(nproc) CPUs; BM25 only; limit ${LIMIT} s per command)."
  echo "Before: \`${BASE_BIN:-(none)}\`. After: this tree's release build."
  echo
  echo "| case | command | before: s / MB / exit | after: s / MB / exit | what after says |"
  echo "|---|---|---|---|---|"
} >"$out"

row() {
  local case="$1" pattern="$2"; shift 2
  local before="–" after dir
  if [ -n "$BASE_BIN" ]; then
    dir=$(make_case "$case" "$BASE_BIN")
    before=$(run_case "$BASE_BIN" "$dir" "$@" | awk '{print $1" s / "$2" MB / "$3}')
  fi
  dir=$(make_case "$case" "$NEW_BIN")
  after=$(run_case "$NEW_BIN" "$dir" "$@" | awk '{print $1" s / "$2" MB / "$3}')
  echo "| $case | \`$*\` | $before | $after | $(what_it_said "$pattern") |" >>"$out"
  echo "hostile.sh: $case done" >&2
}

row pdf-bomb "knowledge/bomb\\.pdf" index
row deep-html "knowledge/deep\\.html" index
row deep-yaml "skills/deep/SKILL\\.md" skills
row fifo-skill "piped/SKILL\\.md" skills
row symlink-passwd "passwd\\.md|root:x" index
row chunk-size-1 "chunk_size" index

# Slow clients: 300 connections that never finish their headers; how many are still open after
# 15 s (the audit saw all 300 after 35 s).
slow_clients() {
  local bin="$1" dir
  dir=$(make_case plain "$bin")
  "$bin" -C "$dir" index >/dev/null 2>&1
  "$bin" -C "$dir" serve --addr 127.0.0.1:0 >/dev/null 2>"$work/serve.err" &
  local pid=$!
  local addr=""
  for _ in $(seq 1 600); do
    addr=$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.err" | head -1 || true)
    [ -n "$addr" ] && break
    sleep 0.1
  done
  python3 - "${addr#http://}" <<'PY'
import socket, sys, time
host, port = sys.argv[1].split(":")
conns = []
for _ in range(300):
    try:
        s = socket.create_connection((host, int(port)), timeout=5)
        s.sendall(b"POST /v1/index HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        conns.append(s)
    except OSError:
        pass
time.sleep(15)
still = 0
for s in conns:
    s.setblocking(False)
    try:
        s.recv(1)  # b"": closed by the server; bytes: it answered
    except BlockingIOError:
        still += 1  # nothing yet: the connection is still held open
    except OSError:
        pass
print(still)
PY
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
before="–"
[ -n "$BASE_BIN" ] && before="$(slow_clients "$BASE_BIN") of 300 open"
after="$(slow_clients "$NEW_BIN") of 300 open"
echo "| 300 partial-header connections | \`serve\`, 15 s later | $before | $after | header timeout 10 s, 128 connections per client |" >>"$out"

echo >>"$out"
echo "MB is peak resident memory; exit \`hang\` means killed at the limit. Every hostile case also has a test in \`crates/cli/tests/hostile/\`." >>"$out"
cat "$out"
