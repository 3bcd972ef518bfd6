#!/usr/bin/env python3
"""Would the reader choose well among more of the retrieved passages? (issue 44, job 2 widened)

From the judged runs of `bench/reader-calibration.sh` (dev v2 + its leave-gold-out variant, the
reader judging every routed question): each sampled row's top retrieved hits are judged by the same
reader, with the same instruction and prompt as `crates/ask/src/reader.rs` (kept in step by hand:
this is a measurement, not the product), through llama.cpp's OpenAI-compatible API. Two pools are
compared on the same rows:

  shipped  the extractive candidate the reader rated highest (at most three, built around the
           best units)
  wider    that candidate and the first HITS hits' own texts

Each pool answers with its highest-rated text when its P(yes) >= t, and is scored by outcome as
`outcomes.py` scores answers: a fact row is right when the chosen text holds a gold string.

usage: reader_wider.py WORK_DIR DEV_QUERIES LGO_QUERIES READER_URL [EVERY] [HITS]
"""
import json
import math
import sys
import urllib.request
from collections import Counter

from reader_calibration import norm  # outcomes.py's rule, kept in one place for both studies

# As in crates/ask/src/reader.rs.
SYSTEM = ("You check whether a passage answers a question. Answer yes only if the passage itself "
          "states the answer to exactly this question. If the passage is about something else (another product, item, "
          "person or topic), answer no. Reply with one word: yes or no.")
MAX_PASSAGE_CHARS = 900


def judge(url, question, passage):
    prompt = (f"Passage:\n{passage[:MAX_PASSAGE_CHARS]}\n\nQuestion: {question}\n\n"
              "Does the passage state the answer to the question?")
    body = json.dumps({'model': 'reader', 'max_tokens': 1, 'temperature': 0.0, 'logprobs': True, 'top_logprobs': 20,
                       'messages': [{'role': 'system', 'content': SYSTEM}, {'role': 'user', 'content': prompt}]})
    req = urllib.request.Request(url.rstrip('/') + '/chat/completions', body.encode(), {'Content-Type': 'application/json'})
    with urllib.request.urlopen(req, timeout=120) as r:
        reply = json.load(r)
    yes = no = 0.0
    for e in reply['choices'][0]['logprobs']['content'][0]['top_logprobs']:
        t = e['token'].strip().lower()
        if t in ('yes', '是'):
            yes += math.exp(e['logprob'])
        elif t in ('no', '否'):
            no += math.exp(e['logprob'])
    return yes / (yes + no) if yes + no > 0 else 0.0


def rows_of(answers_path, queries_path, bench):
    queries = [json.loads(l) for l in open(queries_path, encoding='utf-8')]
    answers = {}
    for line in open(answers_path, encoding='utf-8'):
        a = json.loads(line)
        answers[a.get('id')] = a
    for q in queries:
        if q['type'] == 'chitchat' or q['id'] not in answers:
            continue
        yield bench, q, answers[q['id']]


def main():
    work, dev_q, lgo_q, url = sys.argv[1:5]
    every = int(sys.argv[5]) if len(sys.argv) > 5 else 2
    n_hits = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    rows = list(rows_of(f'{work}/dev-judged/answers.jsonl', dev_q, 'dev')) + \
        list(rows_of(f'{work}/lgo-judged/answers.jsonl', lgo_q, 'lgo'))
    rows = rows[::every]
    judged = []
    for i, (bench, q, a) in enumerate(rows):
        verdicts = (a.get('reader') or {}).get('verdicts') or []
        if a.get('refusal') or not verdicts:
            judged.append((q, []))  # refused before the reader: refused in both pools
            continue
        pool = [('shipped', max(verdicts), a.get('answer') or '')]
        for h in (a.get('hits') or [])[:n_hits]:
            pool.append(('hit', judge(url, q['query'], h.get('text') or ''), h.get('text') or ''))
        judged.append((q, pool))
        if i % 25 == 0:
            print(f'reader_wider: {i}/{len(rows)}', file=sys.stderr, flush=True)

    def score(t, wider):
        n = Counter()
        for q, pool in judged:
            kind = {'fact': 'fact', 'unanswerable': 'unans'}.get(q['type'], 'oos')
            n[kind] += 1
            options = pool if wider else pool[:1]
            best = max(options, key=lambda o: o[1]) if options else None
            answered = best is not None and best[1] >= t
            if kind == 'fact':
                holds = answered and any(norm(x) in norm(best[2]) for x in q['answers'])
                n['fact_' + ('right' if holds else 'wrong' if answered else 'refused')] += 1
            elif answered:
                n[kind + '_answered'] += 1
        return n

    print('# The reader choosing among more of the retrieved passages (issue 44, job 2 widened)\n')
    print(f'`bench/reader_wider.py` on the judged runs of `bench/reader-calibration.sh`: every {every}th row of dev v2 + '
          f'leave-gold-out; the wider pool adds the first {n_hits} hits\' own texts to the shipped candidate.\n')
    print('| pool | P ≥ | answered with the fact | refused | without the fact | unanswerable answered | out of scope answered |')
    print('|---|---:|---:|---:|---:|---:|---:|')
    for wider in (False, True):
        for t in (0.5, 0.7, 0.8):
            n = score(t, wider)
            f = n['fact'] or 1
            print(f"| {'wider' if wider else 'shipped'} | {t} | {n['fact_right'] / f:.3f} | {n['fact_refused'] / f:.3f} | "
                  f"{n['fact_wrong'] / f:.3f} | {n['unans_answered'] / max(1, n['unans']):.3f} | "
                  f"{n['oos_answered'] / max(1, n['oos']):.3f} |")
    n = score(0.5, False)
    calls = sum(max(0, len(p) - 1) for _, p in judged)
    print(f"\nRows: {n['fact']} fact, {n['unans']} unanswerable, {n['oos']} out of scope; {calls} extra reader calls.")


if __name__ == '__main__':
    main()
