#!/usr/bin/env python3
"""Can a cheap, non-neural predictor tell an answerable question from one to refuse?

The refusal decisions (answer, `not_found`, `out_of_scope`) rest on one question: does the routed
skill's best evidence answer this question? The router measures that by the IDF-weighted share of
the question's words that the best document contains (`knowledge`). This script measures the
classic alternatives from passage retrieval and query performance prediction on the same
questions and the same retrieved chunks, so that a claim "lexical evidence has reached its limit"
is a number, not an impression:

- `knowledge`: the router's own best-document coverage (from the eval's answers);
- `chunk`: coverage by the best single chunk;
- `passage`: coverage by the best passage: a statute article (第X条 … up to the next), else a window
  of three sentences (passage-level evidence, Callan, SIGIR 1994);
- `key terms`: share of the question's three rarest words found together in one passage;
- `WIG`: the top hit's BM25 score over the question's IDF mass (weighted information gain, Zhou &
  Croft, SIGIR 2007, on BM25 scores);
- `NQC`: standard deviation over mean of the top-10 BM25 scores (normalized query commitment,
  Shtok et al., 2012);
- `confidence`, `specificity`, `knowledge_dense`: the router's own signals for that skill;
- `combined`: a logistic regression on all of the above, 5-fold cross-validated *on the benchmark
  itself*: a ceiling for what fitting these features could reach, never something to ship.

Separations (ROC AUC; 1.0 = a threshold separates them perfectly, 0.5 = chance):
- fact vs unanswerable, both routed to their own skill: the `not_found` decision;
- fact (routed to its own skill) vs out_of_scope (in the skill it was routed to): the
  `out_of_scope` decision after routing.

usage: bench/answerability.py EVAL_OUT_DIR BENCH_DIR INDEX_DIR SERVER_URL > report.md
(bench/answerability.sh runs the eval, starts the server and calls this.)
"""
import collections
import json
import math
import re
import sys
import unicodedata
import urllib.request
from pathlib import Path

import jieba
import jieba.analyse
import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import cross_val_predict

jieba.setLogLevel(60)
GENERAL_IDF = jieba.analyse.default_tfidf.idf_freq
# crates/text/src/stopwords.rs (Chinese and English), so terms match the analyzer's closely.
STOP = set(
    "的 了 是 在 和 与 或 及 等 吗 呢 吧 啊 呀 么 也 就 都 而 之 其 这 那 这个 那个 这些 那些 什么 怎么 怎样 为什么 "
    "哪些 哪个 哪里 多少 几 谁 被 把 对 从 向 给 让 我 你 他 她 它 我们 你们 他们 请问 一下 个 着 过 得 地 是否 能否 "
    "可否 能不能 可不可以 是不是 有没有 会不会 要不要 该不该 怎么办 怎么样 如何 为何 为啥 咋 哪儿 多久 "
    "a an the and or but of to in on at by for with from as is are was were be been being it its this that "
    "these those do does did what which who whom how why when where i you he she we they me my your our "
    "their there than then so if into about can could would should will has have had".split()
)
ARTICLE = re.compile(r"(?=第[一二三四五六七八九十百千零〇两]+条)")
SENTENCE_END = re.compile(r"(?<=[。！？!?；;\n])|(?<=\. )")


def terms(text):
    """The analyzer's terms, approximately: jieba search mode for CJK runs, lowercased words else."""
    text = unicodedata.normalize("NFKC", text)
    out = []
    for run in re.findall(r"[\u4e00-\u9fff]+|[^\u4e00-\u9fff]+", text):
        if "\u4e00" <= run[0] <= "\u9fff":
            out += [w for w in jieba.cut_for_search(run) if w not in STOP]
        else:
            out += [w.lower() for w in re.findall(r"\w+", run) if w.lower() not in STOP]
    return out


class Idf:
    """IDF over every skill's chunks, a Chinese word's document frequency averaged with its rate in
    general Chinese (as crates/ask/src/evidence.rs does)."""

    def __init__(self, index_dir):
        self.df = collections.Counter()
        self.docs = 0
        for skill in sorted(Path(index_dir).iterdir()):
            current = skill / "CURRENT"
            if not current.is_file():
                continue
            for line in (skill / current.read_text().strip() / "chunks.jsonl").open(encoding="utf-8"):
                chunk = json.loads(line)
                self.docs += 1
                self.df.update(set(terms(chunk.get("text", ""))))

    def __call__(self, term):
        known = self.df[term]
        df = (known + math.exp(-GENERAL_IDF[term]) * self.docs) / 2 if term in GENERAL_IDF else known
        return math.log(1 + (self.docs - df + 0.5) / (df + 0.5))


def coverage(question, present, idf):
    total = sum(idf(t) for t in question)
    return sum(idf(t) for t in question if t in present) / total if total else 0.0


def passages(text):
    if ARTICLE.search(text):
        return [p for p in ARTICLE.split(text) if p.strip()]
    sentences = [s for s in SENTENCE_END.split(text) if s and s.strip()]
    return ["".join(sentences[i : i + 3]) for i in range(max(1, len(sentences) - 2))]


def search(server, query, skill):
    body = json.dumps({"query": query, "skills": [skill], "k": 10}).encode()
    request = urllib.request.Request(f"{server}/v1/search", data=body, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def predictors(result, candidate, idf):
    question = list(dict.fromkeys(result["terms"]))
    hits = result["hits"]
    row = {
        "knowledge": candidate["knowledge"],
        "confidence": candidate["score"],
        "specificity": candidate["specificity"],
        "knowledge_dense": candidate.get("knowledge_dense"),
    }
    if not hits or not question:
        row.update(chunk=0.0, passage=0.0, **{"key terms": 0.0, "WIG": 0.0, "NQC": 0.0})
        return row
    key = sorted(question, key=lambda t: -idf(t))[:3]
    best_chunk = best_passage = best_key = 0.0
    for hit in hits:
        head = set(terms(f"{hit.get('title', '')}\n{hit.get('heading', '')}"))
        best_chunk = max(best_chunk, coverage(question, head | set(terms(hit["text"])), idf))
        for p in passages(hit["text"]):
            words = head | set(terms(p))
            best_passage = max(best_passage, coverage(question, words, idf))
            best_key = max(best_key, sum(t in words for t in key) / len(key))
    scores = [h["scores"].get("bm25") or 0.0 for h in hits]
    mean = sum(scores) / len(scores)
    sd = (sum((s - mean) ** 2 for s in scores) / len(scores)) ** 0.5
    row.update(
        chunk=best_chunk,
        passage=best_passage,
        **{"key terms": best_key, "WIG": scores[0] / sum(idf(t) for t in question), "NQC": sd / (mean + 1e-9)},
    )
    return row


NAMES = ["knowledge", "chunk", "passage", "key terms", "WIG", "NQC", "confidence", "specificity", "knowledge_dense"]


def auc(labels, values):
    pairs = [(l, v) for l, v in zip(labels, values) if v is not None]
    labels = [l for l, _ in pairs]
    if len(set(labels)) < 2:
        return None
    return roc_auc_score(labels, [v for _, v in pairs])


def main():
    out_dir, bench, index_dir, server = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
    queries = {json.loads(l)["id"]: json.loads(l) for l in (bench / "queries.jsonl").open(encoding="utf-8") if l.strip()}
    idf = Idf(index_dir)
    rows = []
    for line in (out_dir / "answers.jsonl").open(encoding="utf-8"):
        answer = json.loads(line)
        query = queries.get(answer["id"])
        candidates = (answer.get("route") or {}).get("candidates") or []
        if query is None or query["type"] == "chitchat" or not candidates:
            continue
        top = candidates[0]
        own = query["type"] != "out_of_scope"
        if own and top["skill"] != query["skill"]:
            continue  # misrouted: a routing error, not an evidence decision
        rows.append((query["type"], top["skill"], predictors(search(server, query["query"], top["skill"]), top, idf)))

    separations = [("fact vs unanswerable", "unanswerable"), ("fact vs out_of_scope", "out_of_scope")]
    print(f"## Answerability predictors on `{bench.name}` (`{out_dir}`)\n")
    print("ROC AUC; rows routed to their own skill (out_of_scope: the skill it was routed to). n = positives/negatives.\n")
    print("| separation | n | " + " | ".join(NAMES) + " | combined (CV on the bench) |")
    print("|---|---|" + "---|" * (len(NAMES) + 1))
    for name, negative in separations + [("fact vs either", None)]:
        subset = [r for r in rows if r[0] == "fact" or (r[0] == negative if negative else r[0] != "fact")]
        labels = [r[0] == "fact" for r in subset]
        cells = []
        for n in NAMES:
            a = auc(labels, [r[2][n] for r in subset])
            cells.append("–" if a is None else f"{a:.3f}")
        x = np.array([[r[2][n] if r[2][n] is not None else 0.0 for n in NAMES] for r in subset])
        model = LogisticRegression(max_iter=2000, class_weight="balanced")
        p = cross_val_predict(model, x, labels, cv=5, method="predict_proba")[:, 1]
        cells.append(f"{roc_auc_score(labels, p):.3f}")
        print(f"| {name} | {sum(labels)}/{len(labels) - sum(labels)} | " + " | ".join(cells) + " |")

    print("\nPer skill, fact vs either (knowledge / passage / combined features' single best):\n")
    print("| skill | n | knowledge | passage | best single predictor |")
    print("|---|---|---|---|---|")
    for skill in sorted({r[1] for r in rows}):
        subset = [r for r in rows if r[1] == skill]
        labels = [r[0] == "fact" for r in subset]
        if len(set(labels)) < 2:
            continue
        aucs = {n: auc(labels, [r[2][n] for r in subset]) for n in NAMES}
        best = max((n for n in aucs if aucs[n] is not None), key=lambda n: aucs[n])
        print(
            f"| {skill} | {sum(labels)}/{len(labels) - sum(labels)} | {aucs['knowledge']:.3f} | "
            f"{aucs['passage']:.3f} | {best} {aucs[best]:.3f} |"
        )


if __name__ == "__main__":
    main()
