#!/usr/bin/env python3
"""Retrieval of table rows past a table's first chunk (issue 45), before and after.

Builds a table corpus from public data on this machine (ISO 4217 currencies, ISO 3166-1
countries, ISO 15924 scripts from Debian's iso-codes; the IANA service names of /etc/services),
each table written twice: as a Markdown (GFM) table in a .md file and as a Word table in a .docx
file (header row marked `w:tblHeader`). Questions ask for one cell of a row sampled (seeded) from
rows 40 and later, well past the first chunk (a 500-character chunk holds about ten rows). A hit
is a retrieved chunk with a line holding both the row's key cell and the asked cell: the gold
row's chunk. Each binary indexes its own copy of the project; `skillrag search --json` is asked
every question in BM25 and hybrid mode.

Usage: bench/tables.py BEFORE_BINARY AFTER_BINARY [MODEL_DIR]  (writes Markdown to stdout;
bench/tables.sh builds both binaries and passes the test embedding model)
"""
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import zipfile
from xml.sax.saxutils import escape

ISO = "/usr/share/iso-codes/json"
FIRST_ROW = 40
PER_TABLE = 8


def iso(name, key):
    with open(f"{ISO}/{name}.json", encoding="utf-8") as f:
        return json.load(f)[key]


def tables():
    """(file stem, title, header, rows, key column, asked column, question template)."""
    currencies = [[c["name"], c["alpha_3"], c.get("numeric", "")] for c in iso("iso_4217", "4217")]
    countries = [
        [c["name"], c.get("official_name", ""), c["alpha_2"], c["alpha_3"], c["numeric"]]
        for c in iso("iso_3166-1", "3166-1")
    ]
    scripts = [[s["name"], s["alpha_4"], s.get("numeric", "")] for s in iso("iso_15924", "15924")]
    services = []
    with open("/etc/services", encoding="utf-8") as f:
        for line in f:
            body, _, comment = line.partition("#")
            parts = body.split()
            if len(parts) < 2 or "/" not in parts[1]:
                continue
            port, proto = parts[1].split("/", 1)
            services.append([parts[0], port, proto, " ".join(parts[2:]), comment.strip()])
    return [
        ("currencies", "ISO 4217 currency codes", ["Currency", "Code", "Numeric code"], currencies, 0, 2,
         "What is the numeric code of the currency {key}?"),
        ("countries", "ISO 3166-1 country codes", ["Country", "Official name", "Alpha-2", "Alpha-3", "Numeric"],
         countries, 0, 3, "What is the alpha-3 code of {key}?"),
        ("scripts", "ISO 15924 script codes", ["Script", "Code", "Numeric"], scripts, 0, 1,
         "What is the four-letter code of the script {key}?"),
        ("services", "IANA service names and ports", ["Service", "Port", "Protocol", "Aliases", "Comment"],
         services, 0, 1, "Which port does the {key} service use?"),
    ]


def markdown(title, header, rows):
    cell = lambda s: s.replace("|", "\\|")
    lines = [f"# {title}", "", f"The {title} as a table.", "", "| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def docx(title, header, rows):
    W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    para = lambda t, style=None: (
        "<w:p>" + (f'<w:pPr><w:pStyle w:val="{style}"/></w:pPr>' if style else "")
        + f'<w:r><w:t xml:space="preserve">{escape(t)}</w:t></w:r></w:p>')
    tc = lambda t: f"<w:tc><w:tcPr/>{para(t)}</w:tc>"
    head = "<w:tr><w:trPr><w:tblHeader/></w:trPr>" + "".join(tc(h) for h in header) + "</w:tr>"
    body = "".join("<w:tr>" + "".join(tc(c) for c in r) + "</w:tr>" for r in rows)
    styles = (f'<w:styles {W}><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/>'
              '</w:style></w:styles>')
    doc = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document {W}><w:body>'
           + para(title, "Heading1") + para(f"The {title} as a table.")
           + f"<w:tbl><w:tblPr/>{head}{body}</w:tbl></w:body></w:document>")
    return doc, styles


def write_project(root, corpus):
    with open(f"{root}/skillrag.toml", "w") as f:
        f.write('skills = ["skills"]\n')
    for skill, ext in [("tables-md", "md"), ("tables-docx", "docx")]:
        os.makedirs(f"{root}/skills/{skill}/knowledge")
        with open(f"{root}/skills/{skill}/SKILL.md", "w") as f:
            f.write(f"---\nname: {skill}\ndescription: Code tables (currencies, countries, scripts, "
                    "ports) as reference tables.\n---\n# Code tables\n\nLook codes up in the tables.\n")
        for stem, title, header, rows, *_ in corpus:
            path = f"{root}/skills/{skill}/knowledge/{stem}.{ext}"
            if ext == "md":
                with open(path, "w", encoding="utf-8") as f:
                    f.write(markdown(title, header, rows))
            else:
                doc, styles = docx(title, header, rows)
                with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
                    z.writestr("word/document.xml", doc)
                    z.writestr("word/styles.xml", styles)


def questions(corpus):
    rng = random.Random(45)
    out = []
    for stem, _, _, rows, key, asked, template in corpus:
        counts = {}
        for r in rows:
            counts[r[key]] = counts.get(r[key], 0) + 1
        # A key naming one row only, an asked cell that says something.
        eligible = [i for i in range(FIRST_ROW, len(rows))
                    if counts[rows[i][key]] == 1 and rows[i][asked] and len(rows[i][asked]) >= 2]
        for i in sorted(rng.sample(eligible, PER_TABLE)):
            out.append((stem, template.format(key=rows[i][key]), rows[i][key], rows[i][asked]))
    return out


def hit_rank(hits, key, answer):
    for rank, h in enumerate(hits, 1):
        if any(key in line and answer in line for line in h["text"].splitlines()):
            return rank
    return None


def run(binary, root, args, env):
    out = subprocess.run([binary, "-C", root, *args], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"{binary} {args}: {out.stderr}")
    return out.stdout


def main():
    before, after = sys.argv[1], sys.argv[2]
    model = sys.argv[3] if len(sys.argv) > 3 else "none"
    corpus = tables()
    qs = questions(corpus)
    env = dict(os.environ, SKILLRAG_EMBED_MODEL=model)
    modes = ["bm25"] + (["dense", "hybrid"] if model != "none" else [])
    results = {}
    tmp = tempfile.mkdtemp(prefix="tables-bench-")
    try:
        for label, binary in [("before", before), ("after", after)]:
            root = f"{tmp}/{label}"
            os.makedirs(root)
            write_project(root, corpus)
            run(binary, root, ["index"], env)
            for skill in ["tables-md", "tables-docx"]:
                for mode in modes:
                    ranks = []
                    for stem, q, key, answer in qs:
                        res = json.loads(run(binary, root, ["search", q, "--skill", skill, "--json", "--mode", mode,
                                                            "-k", "5", "--full"], env))
                        hits = res["hits"] if isinstance(res, dict) else res
                        ranks.append(hit_rank(hits, key, answer))
                    results[(label, skill, mode)] = ranks
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    n = len(qs)
    print(f"{n} questions ({PER_TABLE} per table, rows {FIRST_ROW}+), k = 5, embedding model: "
          f"{os.path.basename(os.path.dirname(model)) if model != 'none' else 'none'}\n")
    print("| skill | mode | hit@1 before | hit@1 after | hit@5 before | hit@5 after |")
    print("|---|---|---|---|---|---|")
    for skill in ["tables-md", "tables-docx"]:
        for mode in modes:
            b, a = results[("before", skill, mode)], results[("after", skill, mode)]
            at = lambda ranks, k: sum(1 for r in ranks if r is not None and r <= k)
            print(f"| {skill} | {mode} | {at(b, 1)}/{n} | {at(a, 1)}/{n} | {at(b, 5)}/{n} | {at(a, 5)}/{n} |")
    print("\nPer question (rank of the gold row's chunk, - = not in the top 5), before → after:\n")
    print("| table | question | " + " | ".join(f"{s} {m}" for s in ["md", "docx"] for m in modes) + " |")
    print("|---|---|" + "---|" * (2 * len(modes)))
    for i, (stem, q, _, _) in enumerate(qs):
        cells = []
        for skill in ["tables-md", "tables-docx"]:
            for mode in modes:
                f = lambda r: "-" if r is None else str(r)
                cells.append(f"{f(results[('before', skill, mode)][i])} → {f(results[('after', skill, mode)][i])}")
        print(f"| {stem} | {q} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
