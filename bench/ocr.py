#!/usr/bin/env python3
"""The maths and the report of bench/ocr.sh (standard library only).

    ocr.py accuracy TRUTH --extract EXTRACT.json [--seconds S] [--languages L]
                                                      # skillrag extract --json output
    ocr.py accuracy TRUTH --pages P1.txt P2.txt ... [--seconds S] [--languages L]
                                                      # one OCR text per page (tesseract directly)
        -> JSON on stdout: characters, edit distance, accuracy, the same per page, mean confidence

    ocr.py hits QUESTIONS.jsonl RESULTS_DIR           # RESULTS_DIR/<n>.json = search --json of line n
        -> JSON on stdout: hit@1, hit@5, MRR@10 over all questions and per language, the misses

    ocr.py report STATE_DIR OUT.md                    # STATE_DIR/results/*.json -> OUT.md and OUT.json

Accuracy = 1 - Levenshtein(ocr, truth) / len(truth), after NFKC (full-width punctuation and letters
-> their ASCII forms, on both sides) and with every whitespace character removed from both (Tesseract
puts spaces between CJK characters and breaks lines where the scan does; neither is an error for
search). It can go below 0 when the OCR text is much longer than the truth. Per page: the OCR text
cut at the page offsets of `skillrag extract --json` against the truth's form-feed-separated page.
"""

import glob
import json
import os
import re
import sys
import unicodedata

TARGET_ACCURACY = 0.95
TARGET_HIT5 = 0.9
LANGS = ("zh-Hans", "zh-Hant", "en")


def normalize(text):
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def levenshtein(a, b):
    """Edit distance (insert, delete, substitute; all cost 1), bit-parallel (Myers 1999 / Hyyrö
    2001) with Python integers as bit vectors: O(len(a) * len(b) / 64) word operations, so a
    50-page OCR text against its truth (25 000 characters each) takes a fraction of a second."""
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    m = len(b)
    peq = {}
    for i, c in enumerate(b):
        peq[c] = peq.get(c, 0) | (1 << i)
    mask = (1 << m) - 1
    high = 1 << (m - 1)
    pv, mv, dist = mask, 0, m
    for c in a:
        eq = peq.get(c, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | (~(xh | pv) & mask)
        mh = pv & xh
        if ph & high:
            dist += 1
        elif mh & high:
            dist -= 1
        ph = ((ph << 1) | 1) & mask
        mh = (mh << 1) & mask
        pv = mh | (~(xv | ph) & mask)
        mv = ph & xv
    return dist


def _levenshtein_dp(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(cur[j - 1] + 1, prev[j] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def score(ocr, truth):
    o, t = normalize(ocr), normalize(truth)
    d = levenshtein(o, t)
    return {"truth_chars": len(t), "ocr_chars": len(o), "distance": d,
            "accuracy": round(1 - d / len(t), 4) if t else None}


def accuracy(args):
    import argparse
    ap = argparse.ArgumentParser(prog="ocr.py accuracy")
    ap.add_argument("truth")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--extract", metavar="JSON")
    g.add_argument("--pages", nargs="+", metavar="TXT")
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--languages", default="")
    a = ap.parse_args(args)
    truth_pages = open(a.truth, encoding="utf-8").read().split("\f")
    confidence = None
    if a.extract:
        doc = json.load(open(a.extract, encoding="utf-8"))
        text = doc["text"]
        marks = sorted(doc.get("pages") or [{"page": 1, "offset": 0}], key=lambda p: p["offset"])
        by_page = {}
        for i, mark in enumerate(marks):
            end = marks[i + 1]["offset"] if i + 1 < len(marks) else len(text)
            by_page[mark["page"]] = by_page.get(mark["page"], "") + text[mark["offset"]:end]
        ocr_pages = [by_page.get(n, "") for n in range(1, len(truth_pages) + 1)]
        whole = text
        ocr = doc.get("ocr")
        if isinstance(ocr, dict) and ocr.get("pages"):
            confs = [p.get("confidence") for p in ocr["pages"] if isinstance(p.get("confidence"), (int, float))]
            if confs:
                confidence = round(sum(confs) / len(confs), 4)
            a.languages = a.languages or ocr.get("languages", "")
    else:
        ocr_pages = [open(p, encoding="utf-8").read() for p in a.pages]
        whole = "\n".join(ocr_pages)
    out = score(whole, "\n".join(truth_pages))
    out["pages"] = [dict(score(o, t), page=n) for n, (o, t) in enumerate(zip(ocr_pages, truth_pages), 1)]
    out["page_count"] = len(truth_pages)
    out["mean_confidence"] = confidence
    out["seconds"] = a.seconds
    out["languages"] = a.languages
    json.dump(out, sys.stdout, ensure_ascii=False)
    print()


def hits(args):
    questions = [json.loads(line) for line in open(args[0], encoding="utf-8") if line.strip()]
    folder = args[1]
    rows = []
    for n, q in enumerate(questions):
        path = os.path.join(folder, f"{n}.json")
        rank = None
        try:
            result = json.load(open(path, encoding="utf-8"))
        except (OSError, ValueError):
            result = {"hits": []}
        for r, hit in enumerate(result.get("hits", [])[:10], 1):
            pages = hit.get("pages") or []
            lo, hi = (pages[0], pages[-1]) if pages else (None, None)
            if str(hit.get("source", "")).endswith(q["file"]) and lo is not None and lo <= q["page"] <= hi:
                rank = r
                break
        rows.append({"query": q["query"], "lang": q.get("lang", ""), "file": q["file"], "page": q["page"], "rank": rank})

    def summary(rs):
        if not rs:
            return None
        return {"questions": len(rs),
                "hit@1": round(sum(r["rank"] == 1 for r in rs) / len(rs), 4),
                "hit@5": round(sum(r["rank"] is not None and r["rank"] <= 5 for r in rs) / len(rs), 4),
                "mrr@10": round(sum(1 / r["rank"] for r in rs if r["rank"]) / len(rs), 4)}

    out = {"all": summary(rows), "per_lang": {l: summary([r for r in rows if r["lang"] == l]) for l in LANGS},
           "misses": [r for r in rows if r["rank"] is None or r["rank"] > 5]}
    json.dump(out, sys.stdout, ensure_ascii=False)
    print()


def load(path):
    try:
        return json.load(open(path, encoding="utf-8"))
    except (OSError, ValueError):
        return None


def fmt(x, digits=3):
    return "—" if x is None else f"{x:.{digits}f}"


def report(args):
    state, out_md = args
    res = os.path.join(state, "results")
    meta = load(os.path.join(res, "meta.json")) or {}
    acc = {(l, via): load(os.path.join(res, f"accuracy-{l}-{via}.json")) for l in LANGS for via in ("skillrag", "tesseract")}
    retrieval = {m: load(os.path.join(res, f"retrieval-{m}.json")) for m in ("bm25", "model")}
    long = load(os.path.join(res, "long.json"))
    nproc = meta.get("nproc")

    L = []
    L.append("# OCR of scans: character accuracy, retrieval, speed")
    L.append("")
    L.append(f"Generated by `bench/ocr.sh{' ' + meta['args'] if meta.get('args') else ''}` on {meta.get('date', '?')}"
             f"{' at ' + meta['commit'] if meta.get('commit') else ''}. Scans: `scripts/make-scans --bench` "
             f"({meta.get('pages', '?')} A4 pages per script at 300 dpi, rotated 0.3–1.2°, blurred, noisy, grayscale "
             "JPEG in an image-only PDF; a 50-page 1-bit Simplified Chinese scan).")
    L.append("")
    omp = " (OpenMP" + (f", OMP_THREAD_LIMIT={meta['omp_thread_limit']})" if meta.get("omp_thread_limit") else ")") \
        if meta.get("tesseract_openmp") else ""
    L.append(f"Machine: {meta.get('cpu', '?')}, `nproc` = {nproc}; {meta.get('tesseract', '?')}{omp}; "
             f"{meta.get('pdftoppm', '')}. skillrag: {meta.get('skillrag', 'not run')}.")
    if meta.get("load_start") or meta.get("load_end") or meta.get("load_note"):
        L.append("")
        L.append(f"Load average (1, 5, 15 min) when the run started: {meta.get('load_start') or '?'}; when it ended: "
                 f"{meta.get('load_end') or '?'}. {meta.get('load_note', '')}".rstrip() +
                 " Times and pages/s are wall clock; other work on the machine slows them down.")
    L.append("")

    L.append("## Targets")
    L.append("")
    L.append("| metric | target | measured |")
    L.append("|---|---|---|")
    for l in LANGS:
        a = acc[(l, "skillrag")] or {}
        m = a.get("accuracy")
        ok = "" if m is None else (" ✓" if m >= TARGET_ACCURACY else " ✗")
        L.append(f"| character accuracy, {l} (`skillrag extract`) | ≥ {TARGET_ACCURACY} | {fmt(m)}{ok} |")
    for m, label in (("bm25", "BM25 only"), ("model", "hybrid, all-MiniLM-L6-v2")):
        r = retrieval[m]
        if r and r.get("hits") and r["hits"].get("all"):
            h = r["hits"]["all"]["hit@5"]
            L.append(f"| scan-only questions hit@5, {label} | ≥ {TARGET_HIT5} | {fmt(h)}"
                     f"{' ✓' if h >= TARGET_HIT5 else ' ✗'} ({r['hits']['all']['questions']} questions) |")
        else:
            L.append(f"| scan-only questions hit@5, {label} | ≥ {TARGET_HIT5} | {r.get('skipped', 'not run') if r else 'not run'} |")
    for l in LANGS:
        a = acc[(l, "skillrag")]
        if a and a.get("seconds"):
            L.append(f"| pages/s, `skillrag extract` {l} ({a['page_count']} pages) | report | "
                     f"{a['page_count'] / a['seconds']:.2f} ({a['seconds']:.1f} s) |")
    if long and long.get("seconds"):
        L.append(f"| pages/s, `skillrag index` of the 50-page scan (BM25 only) | report | "
                 f"{long['pages'] / long['seconds']:.2f} ({long['seconds']:.1f} s) |")
    L.append("")

    L.append("## Character accuracy")
    L.append("")
    L.append("1 − Levenshtein / truth length, after NFKC and with all whitespace removed. `skillrag` = "
             "`skillrag extract FILE --json --ocr-languages L`; `tesseract` = the same PDF through "
             "`pdftoppm -r 300 -gray` (PGM) and `tesseract PAGE OUT -l L` directly, one page after the other, "
             "Tesseract's own threading (the baseline).")
    L.append("")
    L.append("| script | languages | via | accuracy | per page | edits / truth chars | mean confidence | time | pages/s |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for l in LANGS:
        for via in ("skillrag", "tesseract"):
            a = acc[(l, via)]
            if not a:
                continue
            per = ", ".join(fmt(p["accuracy"]) for p in a["pages"])
            secs = a.get("seconds")
            L.append(f"| {l} | `{a.get('languages', '')}` | {via} | {fmt(a['accuracy'])} | {per} | "
                     f"{a['distance']} / {a['truth_chars']} | {fmt(a.get('mean_confidence'), 2)} | "
                     f"{fmt(secs, 1)} s | {fmt(a['page_count'] / secs if secs else None, 2)} |")
    L.append("")

    L.append("## Retrieval over scans")
    L.append("")
    L.append("One skill `scans` with the three scan PDFs (zh-hans.pdf, zh-hant.pdf, en.pdf), "
             "`[index] ocr_languages = \"chi_sim+chi_tra+eng\"`, indexed from empty; each question of "
             "`questions.jsonl` (its answer is on one page of one scan only) searched with "
             "`skillrag search QUERY --skill scans --json`. A hit = a result whose `source` ends with the "
             "question's file and whose `pages` range holds its page.")
    L.append("")
    L.append("| embedding | index time | questions | hit@1 | hit@5 | MRR@10 | hit@5 zh-Hans | hit@5 zh-Hant | hit@5 en |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    for m, label in (("bm25", "none (BM25 only)"), ("model", "all-MiniLM-L6-v2 (hybrid)")):
        r = retrieval[m]
        if not r or not r.get("hits"):
            L.append(f"| {label} | {r.get('skipped', 'not run') if r else 'not run'} |  |  |  |  |  |  |  |")
            continue
        h = r["hits"]
        per = [fmt((h["per_lang"].get(l) or {}).get("hit@5")) for l in LANGS]
        L.append(f"| {label} | {r['index_seconds']:.1f} s | {h['all']['questions']} | {fmt(h['all']['hit@1'])} | "
                 f"{fmt(h['all']['hit@5'])} | {fmt(h['all']['mrr@10'])} | {' | '.join(per)} |")
    misses = [(m, x) for m in ("bm25", "model") if retrieval[m] and retrieval[m].get("hits")
              for x in retrieval[m]["hits"]["misses"]]
    if misses:
        L.append("")
        L.append("Misses at 5:")
        L.append("")
        for m in ("bm25", "model"):
            mine = [x for mm, x in misses if mm == m]
            for x in mine[:15]:
                where = "not in the top 10" if x["rank"] is None else f"rank {x['rank']}"
                L.append(f"- {m}: {x['query']} → {x['file']} p.{x['page']}: {where}")
            if len(mine) > 15:
                L.append(f"- {m}: … and {len(mine) - 15} more (`target/bench-state/ocr/results/retrieval-{m}.json`)")
    L.append("")

    L.append("## The 50-page scan")
    L.append("")
    if long and long.get("seconds"):
        L.append(f"`skillrag index` of a project with only `long/scan-50.pdf` (BM25 only, empty state): "
                 f"{long['seconds']:.1f} s for {long['pages']} pages = {long['pages'] / long['seconds']:.2f} pages/s "
                 f"with `nproc` = {nproc}; {long.get('chunks', '?')} chunks; character accuracy {fmt(long.get('accuracy'))} "
                 "(all 50 pages, `skillrag extract` of the same file after indexing).")
        L.append("")
        if long.get("progress"):
            L.append("stderr and the summary line (stderr not a terminal: plain progress lines every 10 pages; "
                     "on a terminal the same rate and ETA are drawn as a bar):")
            L.append("")
            L.append("```")
            L.extend(long["progress"])
            L.append("```")
    else:
        L.append("not run")
    L.append("")

    L.append("## Commands")
    L.append("")
    L.append("```sh")
    L.extend(meta.get("commands", []))
    L.append("```")
    L.append("")

    with open(out_md, "w", encoding="utf-8") as f:
        f.write("\n".join(L))
    everything = {"meta": meta, "accuracy": {f"{l}/{via}": a for (l, via), a in acc.items() if a},
                  "retrieval": retrieval, "long": long}
    with open(os.path.splitext(out_md)[0] + ".json", "w", encoding="utf-8") as f:
        json.dump(everything, f, ensure_ascii=False, indent=1)
        f.write("\n")


def brief(args):
    """One line of a result file for the log."""
    path, label = args
    r = load(path) or {}
    if "accuracy" in r:
        per = ", ".join(fmt(p["accuracy"]) for p in r["pages"])
        secs = f", {r['seconds']:.1f} s" if r.get("seconds") else ""
        print(f"  {label}: accuracy {fmt(r['accuracy'])} (pages {per}){secs}")
    elif r.get("hits"):
        a = r["hits"]["all"]
        print(f"  {label}: index {r['index_seconds']:.1f} s, hit@1 {fmt(a['hit@1'])}, hit@5 {fmt(a['hit@5'])}, "
              f"MRR@10 {fmt(a['mrr@10'])} ({a['questions']} questions)")
    else:
        print(f"  {label}: {r}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    {"accuracy": accuracy, "hits": hits, "report": report, "brief": brief}.get(cmd, lambda _: sys.exit(__doc__))(args)


if __name__ == "__main__":
    main()
