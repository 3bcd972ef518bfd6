#!/usr/bin/env python3
"""Per-skill quality of one or more `skillrag eval` runs, side by side: routing, false refusals,
hit@1/hit@5, whether the answer text contains the gold answer, and whether it is readable.

    bench/per_skill.py LABEL=REPORT_DIR [LABEL=REPORT_DIR ...]

REPORT_DIR is an `eval --out` folder (report.json, answers.jsonl). Routing, false refusals,
hit@k, answer-contains-gold, readable answers and statute answers naming the gold article are the
eval's own per-skill numbers (report.json). For a run whose eval predates the readable-answer check,
`readable` is measured here instead (marked *) on the answered fact rows: an answer is readable when none of its sentences is a
fragment a user cannot use — a table header or row (`| LED | Meaning |`), a question handed back
(`Q: …?`), a sentence cut mid-way (an English sentence whose first word is lower case), a bare
citation marker opening the answer (`[3] [4] …`), or a piece with under four letters or digits.
It is a lexical proxy for the failure modes listed in issue 18, not a judgement of content."""
import json
import re
import sys

MARKER = re.compile(r"\[\d+\]")


def unreadable_reason(text):
    text = text.strip()
    if not text:
        return "empty"
    if MARKER.match(text):
        return "opens with a citation marker"
    for piece in (p.strip() for p in MARKER.split(text)):
        if not piece:
            continue
        if piece.startswith("|") or piece.count("|") >= 2:
            return "table row"
        if piece.rstrip("。.!！ ").endswith(("?", "？")) or piece.startswith(("Q:", "问：")):
            return "a question"
        first = piece.split()[0]
        # A lower-case first word (not a name such as rVSV or mRNA) means the sentence was cut.
        if first[0].isascii() and first[0].islower() and first.lower() == first:
            return "starts mid-sentence"
        if sum(c.isalnum() for c in piece) < 4:
            return "fragment"
    return None


def load(folder):
    """The run's report and, per skill, (readable, answered) fact rows."""
    report = json.load(open(f"{folder}/report.json", encoding="utf-8"))["report"]
    rows = {row["id"]: row for row in report["rows"]}
    counts = {}
    for line in open(f"{folder}/answers.jsonl", encoding="utf-8"):
        answer = json.loads(line)
        row = rows.get(answer.get("id"))
        if not row or row["kind"] != "fact" or answer.get("refusal"):
            continue
        for key in (row["expected_skill"] or "(none)", "overall"):
            ok, total = counts.get(key, (0, 0))
            counts[key] = (ok + (unreadable_reason(answer["answer"]) is None), total + 1)
    return report, counts


def fmt(v):
    return "–" if v is None else f"{v:.3f}"


COLUMNS = [
    ("routing", "routing_accuracy"),
    ("false refusals", "false_refusals"),
    ("hit@1", "hit_at_1"),
    ("hit@5", "hit_at_5"),
    ("answer contains gold", "answer_contains_gold"),
    ("names gold article", "names_gold_article"),
]


def main():
    runs = [arg.split("=", 1) for arg in sys.argv[1:]]
    if not runs or any(len(r) != 2 for r in runs):
        sys.exit(__doc__)
    loaded = [(label, *load(folder)) for label, folder in runs]
    skills = sorted({s for _, report, _ in loaded for s in report["per_skill"]})
    print("| skill | run | questions | " + " | ".join(c for c, _ in COLUMNS) + " | readable answers |")
    print("|---|---|---:|" + "---:|" * (len(COLUMNS) + 1))
    for skill in skills + ["overall"]:
        for label, report, counts in loaded:
            m = report["overall"] if skill == "overall" else report["per_skill"].get(skill)
            if m is None:
                print(f"| {skill} | {label} | – |" + " – |" * (len(COLUMNS) + 1))
                continue
            ok, total = counts.get(skill, (0, 0))
            values = " | ".join(fmt(m.get(key)) for _, key in COLUMNS)
            if "readable_answers" in m:
                readable = fmt(m["readable_answers"])
            else:
                readable = fmt(ok / total if total else None) + ("*" if total else "")
            print(f"| {skill} | {label} | {m['questions']} | {values} | {readable} |")


if __name__ == "__main__":
    main()
