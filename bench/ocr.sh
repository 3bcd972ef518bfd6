#!/usr/bin/env bash
# OCR of scans: character accuracy per script, retrieval over scanned PDFs, pages/s.
# Writes bench/results/ocr.md and bench/results/ocr.json.
#
#   bench/ocr.sh [--pages N]          # N pages per script (default 3)
#   bench/ocr.sh --tesseract-only     # only the baseline: the scans through pdftoppm + tesseract
#                                     # directly, no skillrag build (checks the scans and the maths);
#                                     # report in target/bench-state/ocr/report-tesseract.md
#   SKILLRAG_BIN=path/to/skillrag bench/ocr.sh   # another binary instead of building this tree
#
# 1. scripts/setup-ocr (tesseract with eng/chi_sim/chi_tra, poppler); python3-pil, img2pdf and
#    fonts-wqy-zenhei for scripts/make-scans, installed from Debian when missing.
# 2. cargo build --release -p skillrag-cli, unless SKILLRAG_BIN is set.
# 3. scripts/make-scans --bench target/bench-state/ocr/data: zh-Hans (a regulation), zh-Hant (an
#    encyclopedia entry), en (a product manual), N grayscale A4 pages each at 300 dpi in an
#    image-only PDF, with the source text (truth.txt); a 50-page 1-bit Simplified Chinese scan;
#    questions.jsonl (answer on one page of one scan only). Regenerated when the script or N changed.
# 4. Character accuracy (bench/ocr.py: 1 - Levenshtein/len(truth), NFKC, whitespace removed) of
#    `skillrag extract SCAN --json --ocr-languages L` (L = chi_sim+eng, chi_tra+eng, eng), per page
#    too, timed (pages/s, wall clock, empty OCR cache); the same PDF through pdftoppm -r 300 -gray
#    (PGM) and the tesseract CLI directly, one page after the other, as the baseline.
# 5. Retrieval: one skill with the three scans, `[index] ocr_languages = "chi_sim+chi_tra+eng"`,
#    indexed from empty with SKILLRAG_EMBED_MODEL=none and again with all-MiniLM-L6-v2
#    (scripts/setup-model); every question through `skillrag search --skill scans --json`:
#    hit@1/hit@5/MRR@10, a hit = source ends with the question's file and pages hold its page.
# 6. The 50-page scan indexed alone (BM25 only, from empty): wall time, pages/s, and the OCR
#    progress lines skillrag writes to a stderr that is not a terminal (pages/s, ETA).
set -euo pipefail
cd "$(dirname "$0")/.."

pages=3
tesseract_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --pages) pages="$2"; shift 2 ;;
    --pages=*) pages="${1#--pages=}"; shift ;;
    --tesseract-only) tesseract_only=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/ocr.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$pages" in '' | *[!0-9]* | 0) echo "bench/ocr.sh: --pages needs a positive number" >&2; exit 2 ;; esac

log() { echo "bench/ocr.sh: $*" >&2; }
export OCR_BENCH_LOAD_START="$(cut -d' ' -f1-3 /proc/loadavg 2> /dev/null || true)"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

# 1. Tools.
./scripts/setup-ocr > /dev/null
debian=()
/usr/bin/python3 -c 'import PIL' 2> /dev/null || debian+=(python3-pil)
{ command -v img2pdf > /dev/null && /usr/bin/python3 -c 'import img2pdf' 2> /dev/null; } || debian+=(img2pdf)
[ -f /usr/share/fonts/truetype/wqy/wqy-zenhei.ttc ] || debian+=(fonts-wqy-zenhei)
if [ ${#debian[@]} -gt 0 ]; then
  log "installing Debian ${debian[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt_install() { apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${debian[@]}" >&2; }
  if ! apt_install; then
    apt-get -o DPkg::Lock::Timeout=600 update >&2
    apt_install
  fi
fi

state=target/bench-state/ocr
data="$state/data"
res="$state/results"
mkdir -p "$state"
state="$(realpath "$state")"
data="$state/data"
res="$state/results"
rm -rf "$res"
mkdir -p "$res"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# 2. The binary.
bin=""
if [ "$tesseract_only" = 0 ]; then
  if [ -n "${SKILLRAG_BIN:-}" ]; then
    bin="$(realpath "$SKILLRAG_BIN")"
    unset SKILLRAG_BIN   # skillrag warns about SKILLRAG_* variables it does not know
  else
    log "cargo build --release -p skillrag-cli"
    cargo build --release --locked -q -p skillrag-cli
    bin="$(realpath -m "${CARGO_TARGET_DIR:-target}")/release/skillrag"
  fi
  if ! "$bin" extract --help | grep -q -- '--ocr-languages'; then
    log "$bin has no \`extract --ocr-languages\` (a build without OCR); --tesseract-only measures the baseline alone"
    exit 1
  fi
fi

# 3. The scans.
stamp="pages=$pages $(sha256sum scripts/make-scans | cut -c1-16)"
if [ "$(cat "$data/.stamp" 2> /dev/null)" != "$stamp" ]; then
  log "generating the scans (scripts/make-scans --bench $data --pages $pages)"
  rm -rf "$data"
  scripts/make-scans --bench "$data" --pages "$pages" >&2
  echo "$stamp" > "$data/.stamp"
fi

declare -A ocr_langs=([zh-Hans]=chi_sim+eng [zh-Hant]=chi_tra+eng [en]=eng)
declare -A knowledge_name=([zh-Hans]=zh-hans.pdf [zh-Hant]=zh-hant.pdf [en]=en.pdf)
langs=(zh-Hans zh-Hant en)

# 4. Character accuracy: skillrag, then tesseract directly.
for lang in "${langs[@]}"; do
  scan="$data/$lang/scan.pdf"
  L="${ocr_langs[$lang]}"
  if [ -n "$bin" ]; then
    log "$lang: skillrag extract --ocr-languages $L"
    empty="$work/extract-$lang"
    rm -rf "$empty" && mkdir -p "$empty"
    t0=$(now)
    "$bin" -C "$empty" extract "$scan" --json --ocr-languages "$L" > "$work/$lang.extract.json" 2> "$work/$lang.extract.err" \
      || { log "skillrag extract failed:"; cat "$work/$lang.extract.err" >&2; exit 1; }
    secs=$(since "$t0")
    python3 bench/ocr.py accuracy "$data/$lang/truth.txt" --extract "$work/$lang.extract.json" \
      --seconds "$secs" --languages "$L" > "$res/accuracy-$lang-skillrag.json"
    cp "$work/$lang.extract.json" "$res/extract-$lang.json"
  fi
  # PGM, not -png: pdftoppm's PNG encoder takes ~25 s on a noisy 300-dpi grayscale page, PGM 0.3 s
  # (tesseract reads the same pixels either way).
  log "$lang: pdftoppm + tesseract -l $L directly"
  dir="$work/tess-$lang"
  mkdir -p "$dir"
  t0=$(now)
  pdftoppm -r 300 -gray "$scan" "$dir/p"
  txts=()
  while IFS= read -r pgm; do
    tesseract "$pgm" "${pgm%.pgm}" -l "$L" --dpi 300 2> /dev/null   # a PGM carries no resolution
    txts+=("${pgm%.pgm}.txt")
  done < <(ls "$dir"/p-*.pgm | sort -V)
  secs=$(since "$t0")
  python3 bench/ocr.py accuracy "$data/$lang/truth.txt" --pages "${txts[@]}" \
    --seconds "$secs" --languages "$L" > "$res/accuracy-$lang-tesseract.json"
  for via in skillrag tesseract; do
    [ -f "$res/accuracy-$lang-$via.json" ] && python3 bench/ocr.py brief "$res/accuracy-$lang-$via.json" "$lang $via" >&2
  done
done

commands=(
  "scripts/make-scans --bench $data --pages $pages"
  "skillrag extract $data/<lang>/scan.pdf --json --ocr-languages chi_sim+eng|chi_tra+eng|eng"
  "pdftoppm -r 300 -gray $data/<lang>/scan.pdf p && tesseract p-N.pgm p-N -l <languages> --dpi 300   # baseline, page by page"
)

if [ -n "$bin" ]; then
  # 5. Retrieval over the three scans.
  proj="$state/project"
  rm -rf "$proj"
  mkdir -p "$proj/skills/scans/knowledge"
  cat > "$proj/skills/scans/SKILL.md" << 'EOF'
---
name: scans
description: A mixed archive of scanned documents in Chinese and English - a municipal public library regulation (Simplified Chinese), an encyclopedia entry on a lighthouse (Traditional Chinese) and an air purifier owner's manual (English), all image-only PDFs read by OCR.
---
# Scanned archive

Scanned notices, statutes and manuals. Cite the file and the page.
EOF
  printf '[index]\nocr_languages = "chi_sim+chi_tra+eng"\n' > "$proj/skillrag.toml"
  for lang in "${langs[@]}"; do cp "$data/$lang/scan.pdf" "$proj/skills/scans/knowledge/${knowledge_name[$lang]}"; done
  mapfile -t queries < <(python3 -c 'import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    if line.strip(): print(json.loads(line)["query"])' "$data/questions.jsonl")

  retrieval() { # label model
    local label="$1" model="$2" dir="$res/search-$1" n=0 t0 secs
    mkdir -p "$dir"
    rm -rf "$proj/.skillrag"
    log "retrieval ($label): skillrag index"
    t0=$(now)
    SKILLRAG_EMBED_MODEL="$model" "$bin" -C "$proj" index --json > "$work/index-$label.json" 2> "$res/index-$label.stderr.txt" \
      || { log "skillrag index failed:"; tail -5 "$res/index-$label.stderr.txt" >&2; exit 1; }
    secs=$(since "$t0")
    for q in "${queries[@]}"; do
      SKILLRAG_EMBED_MODEL="$model" "$bin" -C "$proj" search "$q" --skill scans --k 10 --json > "$dir/$n.json" 2> /dev/null \
        || echo '{"hits": []}' > "$dir/$n.json"
      n=$((n + 1))
    done
    python3 - "$data/questions.jsonl" "$dir" "$secs" "$work/index-$label.json" > "$res/retrieval-$label.json" << 'EOF'
import json, subprocess, sys
questions, folder, secs, index = sys.argv[1:]
hits = json.loads(subprocess.run([sys.executable, "bench/ocr.py", "hits", questions, folder],
                                 capture_output=True, text=True, check=True).stdout)
try:
    chunks = sum(s.get("chunks", 0) for s in json.load(open(index))["skills"])
except Exception:
    chunks = None
json.dump({"index_seconds": float(secs), "chunks": chunks, "hits": hits}, sys.stdout, ensure_ascii=False)
EOF
    python3 bench/ocr.py brief "$res/retrieval-$label.json" "$label" >&2
  }
  retrieval bm25 none
  if model="$(scripts/setup-model 2> "$work/setup-model.err")"; then
    retrieval model "$model"
  else
    log "scripts/setup-model failed; hybrid retrieval skipped"
    echo '{"skipped": "scripts/setup-model failed"}' > "$res/retrieval-model.json"
  fi
  cp "$proj/skills/scans/SKILL.md" "$res/SKILL.md"

  # 6. The 50-page scan alone. Not with --json (that silences the progress) and stderr not a
  #    terminal, so the OCR progress comes as plain lines "OCR n/N pages, r pages/s, eta s" (every
  #    10 pages; on a terminal it is a bar with the same rate and ETA).
  lp="$state/long-project"
  rm -rf "$lp"
  mkdir -p "$lp/skills/long/knowledge"
  printf -- '---\nname: long\ndescription: A 50-page scanned municipal library regulation in Simplified Chinese.\n---\n# long\n' > "$lp/skills/long/SKILL.md"
  printf '[index]\nocr_languages = "chi_sim+eng"\n' > "$lp/skillrag.toml"
  cp "$data/long/scan-50.pdf" "$lp/skills/long/knowledge/"
  log "long: skillrag index of the 50-page scan (stderr in $res/long-progress.txt)"
  t0=$(now)
  SKILLRAG_EMBED_MODEL=none "$bin" -C "$lp" index > "$work/long.stdout" 2> "$res/long-progress.txt" \
    || { log "skillrag index of the 50-page scan failed:"; tail -5 "$res/long-progress.txt" >&2; exit 1; }
  secs=$(since "$t0")
  SKILLRAG_EMBED_MODEL=none "$bin" -C "$lp" index --json > "$work/index-long.json" 2> /dev/null || true   # unchanged: the chunk count
  "$bin" -C "$lp" extract "$lp/skills/long/knowledge/scan-50.pdf" --json --ocr-languages chi_sim+eng > "$work/long.extract.json" 2> /dev/null || true
  cat "$work/long.stdout" >> "$res/long-progress.txt"
  python3 - "$res/long-progress.txt" "$secs" "$work/index-long.json" "$data/long/truth.txt" "$work/long.extract.json" > "$res/long.json" << 'EOF'
import json, re, subprocess, sys
log, secs, index, truth, extract = sys.argv[1:]
raw = open(log, encoding="utf-8", errors="replace").read()
raw = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw)
lines = []
for part in re.split(r"[\r\n]+", raw):
    part = part.rstrip()
    if part and not (lines and lines[-1] == part):
        lines.append(part)
progress = lines if len(lines) <= 24 else lines[:4] + ["…"] + lines[-18:]
try:
    chunks = sum(s.get("chunks", 0) for s in json.load(open(index))["skills"])
except Exception:
    chunks = None
acc = None
try:
    out = subprocess.run([sys.executable, "bench/ocr.py", "accuracy", truth, "--extract", extract],
                         capture_output=True, text=True, check=True).stdout
    acc = json.loads(out)["accuracy"]
except Exception:
    pass
json.dump({"seconds": float(secs), "pages": 50, "chunks": chunks, "accuracy": acc, "progress": progress},
          sys.stdout, ensure_ascii=False)
EOF
  commands+=(
    "SKILLRAG_EMBED_MODEL=none skillrag -C $proj index            # and SKILLRAG_EMBED_MODEL=\$(scripts/setup-model)"
    "skillrag -C $proj search QUERY --skill scans --k 10 --json   # each question of $data/questions.jsonl"
    "SKILLRAG_EMBED_MODEL=none skillrag -C $lp index 2> long-progress.txt   # the 50-page scan alone"
  )
fi

# Machine and report.
python3 - "$res/meta.json" "$pages" "$tesseract_only" "$bin" "${commands[@]}" << 'EOF'
import json, os, platform, subprocess, sys, time
out, pages, tonly, binary, *commands = sys.argv[1:]
def run(*cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        return (r.stdout + r.stderr).strip()
    except Exception:
        return ""
cpu = next((l.split(":", 1)[1].strip() for l in run("lscpu").splitlines() if l.startswith("Model name")), platform.processor())
commit = run("git", "rev-parse", "--short", "HEAD")
if commit and run("git", "status", "--porcelain", "--untracked-files=no"):
    commit += " (with uncommitted changes)"
args = f"--pages {pages}" if pages != "3" else ""
if tonly == "1":
    args = (args + " --tesseract-only").strip()
meta = {
    "date": time.strftime("%Y-%m-%d"),
    "commit": commit,
    "args": args,
    "pages": int(pages),
    "nproc": os.cpu_count(),
    "cpu": cpu,
    "tesseract": run("tesseract", "--version").splitlines()[0] if run("tesseract", "--version") else "?",
    "tesseract_openmp": "OpenMP" in run("tesseract", "--version"),
    "omp_thread_limit": os.environ.get("OMP_THREAD_LIMIT"),
    "load_start": os.environ.get("OCR_BENCH_LOAD_START", ""),
    "load_end": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    "pdftoppm": (run("pdftoppm", "-v").splitlines() or [""])[0],
    "skillrag": (run(binary, "--version") + time.strftime(", binary built %Y-%m-%d %H:%M UTC", time.gmtime(os.path.getmtime(binary))))
                if binary else "not run (--tesseract-only)",
    "commands": ["bench/ocr.sh" + (" " + args if args else "")] + commands,
}
json.dump(meta, open(out, "w"), ensure_ascii=False, indent=1)
EOF
mkdir -p bench/results
out=bench/results/ocr.md
[ "$tesseract_only" = 1 ] && out="$state/report-tesseract.md"   # a partial run: not the committed result
python3 bench/ocr.py report "$state" "$out"
log "wrote $out and ${out%.md}.json"
