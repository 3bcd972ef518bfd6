#!/usr/bin/env python3
"""Does the reader's verdict, fitted together with the lexical evidence, move the trade-off?

A study for issue 44, job 1 (the reader as the retrieval evaluator of Corrective RAG, calibrated
with the lexical evidence by Platt-style stacking). It reads runs that `bench/reader-calibration.sh`
makes: dev v2 and its leave-gold-out variant asked with the reader judging *every* routed question
that has evidence (`band` 0, `threshold` 0: the answer is always the candidate the reader rates
highest), plus the same benches without the reader. Each answered row then has two features, known
before any decision is taken:

  p  the reader's highest P(the passage answers) over the candidates it judged
  c  the routed skill's best-document coverage of the question (`knowledge`, the lexical evidence)

and a label from `outcomes.py`'s rules: good when a fact row's answer holds the fact, bad when it
does not, or when the row is unanswerable or out of scope. Rows refused before the reader (routing,
no evidence) stay refused under every policy. Each policy decides, per row, to answer or refuse,
and is scored as a user sees it: answered with the fact, refused, answered without it, and
unanswerable / out-of-scope answered anyway.

The joint policy is a class-balanced logistic regression on (logit p, c), cross-validated by
skill: each skill's rows are decided by a model fitted on the other skills' rows only, so no row
is decided by a model that saw its own skill. It is an upper bound on what `tune` could fit from a
skill's own examples and twins only to the extent the bench's rows look like them.

usage: reader_calibration.py WORK_DIR DEV_QUERIES LGO_QUERIES EVIDENCE_THRESHOLD
"""
import json
import math
import sys
import unicodedata
import re
from collections import Counter, defaultdict

# outcomes.py's rule for "the answer holds a gold string".
norm = lambda s: re.sub(r'\s+', '', unicodedata.normalize('NFKC', s or '')).lower()


def load(answers_path, queries_path, bench):
    answers = {}
    for line in open(answers_path, encoding='utf-8'):
        try:
            a = json.loads(line)
        except ValueError:
            continue
        answers[a.get('id')] = a
    rows = []
    for line in open(queries_path, encoding='utf-8'):
        q = json.loads(line)
        if q['type'] == 'chitchat':
            continue
        a = answers.get(q['id']) or {'refusal': 'missing'}
        row = {'id': q['id'], 'bench': bench, 'type': q['type'], 'skill': q.get('skill') or '-', 'answer': a,
               'gold': q.get('answers') or [], 'gold_sources': set(q.get('gold_sources') or [])}
        answered = not a.get('refusal')
        row['answered'] = answered
        if q['type'] == 'fact':
            row['good'] = answered and any(norm(x) in norm(a.get('answer')) for x in q['answers'])
        else:
            row['good'] = False
        reader = a.get('reader') or {}
        verdicts = reader.get('verdicts') or []
        row['p'] = max(verdicts) if verdicts else None
        routed = (a.get('route') or {}).get('skills') or []
        cands = (a.get('route') or {}).get('candidates') or []
        row['c'] = next((c.get('knowledge', 0.0) for c in cands if routed and c.get('skill') == routed[0]), 0.0)
        row['calls'] = len(verdicts)
        rows.append(row)
    return rows


def score(rows, decide):
    """Outcomes when each answerable-by-the-reader row is answered iff decide(row)."""
    n = Counter()
    per = defaultdict(Counter)
    for r in rows:
        kind = 'fact' if r['type'] == 'fact' else ('unans' if r['type'] == 'unanswerable' else 'oos')
        # A run without the reader is scored as it answered; the others decide on the reader's rows.
        answered = r['answered'] and (decide is None or (r['p'] is not None and decide(r)))
        if kind == 'fact':
            o = 'refused' if not answered else ('right' if r['good'] else 'wrong')
        else:
            o = 'answered' if answered else 'refused'
        n[(kind, o)] += 1
        n[kind] += 1
        if kind == 'fact':
            per[r['skill']][o] += 1
            per[r['skill']]['n'] += 1
        elif kind == 'unans':
            per[r['skill']]['unans_' + o] += 1
            per[r['skill']]['unans'] += 1
    share = lambda k, o: n[(k, o)] / n[k] if n[k] else float('nan')
    return {
        'right': share('fact', 'right'), 'refused': share('fact', 'refused'), 'wrong': share('fact', 'wrong'),
        'unans': share('unans', 'answered'), 'oos': share('oos', 'answered'),
        'per': {s: (c['right'] / c['n'] if c['n'] else float('nan'),
                    c['unans_answered'] / c['unans'] if c['unans'] else float('nan')) for s, c in per.items()},
        'n': dict(fact=n['fact'], unans=n['unans'], oos=n['oos']),
    }


def logit(p):
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def features(r):
    return [logit(r['p']), r['c']]


def fit_logistic(xs, ys, l2=1.0, steps=25):
    """Class-balanced, L2-regularised (weights, not bias) logistic regression by Newton's method."""
    d = len(xs[0]) + 1
    beta = [0.0] * d
    pos = max(1, sum(ys))
    neg = max(1, len(ys) - sum(ys))
    for _ in range(steps):
        grad = [0.0] * d
        hess = [[0.0] * d for _ in range(d)]
        for x, y in zip(xs, ys):
            z = [1.0] + x
            w = (len(ys) / (2 * pos)) if y else (len(ys) / (2 * neg))
            s = 1 / (1 + math.exp(-sum(b * v for b, v in zip(beta, z))))
            for i in range(d):
                grad[i] += w * (s - y) * z[i]
                for j in range(d):
                    hess[i][j] += w * s * (1 - s) * z[i] * z[j]
        for i in range(1, d):
            grad[i] += l2 * beta[i]
            hess[i][i] += l2
        step = solve(hess, grad)
        beta = [b - s for b, s in zip(beta, step)]
    return beta


def solve(a, b):
    """Gaussian elimination with partial pivoting (a 3x3 system)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        if abs(m[c][c]) < 1e-12:
            continue
        for r in range(n):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-12 else 0.0 for i in range(n)]


def predict(beta, x):
    return 1 / (1 + math.exp(-(beta[0] + sum(b * v for b, v in zip(beta[1:], x)))))


def auc(pairs):
    """ROC AUC of (score, label) pairs (ties count half)."""
    pos = [s for s, y in pairs if y]
    neg = [s for s, y in pairs if not y]
    if not pos or not neg:
        return float('nan')
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def missing_fact(rows):
    """Where a fact row's answer lacks the fact: the first retrieved hit of a gold source that holds
    it (its rank), or why there is none."""
    why = Counter()
    for r in rows:
        if r['type'] != 'fact' or r['good']:
            continue
        a = r['answer']
        hits = a.get('hits') or []
        routed = (a.get('route') or {}).get('skills') or []
        rank = next((i + 1 for i, h in enumerate(hits) if h.get('source') in r['gold_sources']
                     and any(norm(x) in norm(h.get('text')) for x in r['gold'])), None)
        if rank is not None:
            why[f'a gold hit at rank {rank if rank <= 5 else "6–10"} holds the fact'] += 1
        elif a.get('refusal') and not hits:
            why['refused before the reader (routing, no evidence)'] += 1
        elif routed and routed[0] != r['skill']:
            why['routed to another skill'] += 1
        elif any(h.get('source') in r['gold_sources'] for h in hits):
            why['a gold source is retrieved, but no hit of it holds the fact string'] += 1
        else:
            why['no gold source among the hits'] += 1
    return why


def main():
    work, dev_q, lgo_q, evidence = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    judged = load(f'{work}/dev-judged/answers.jsonl', dev_q, 'dev') + load(f'{work}/lgo-judged/answers.jsonl', lgo_q, 'lgo')
    plain = load(f'{work}/dev-plain/answers.jsonl', dev_q, 'dev') + load(f'{work}/lgo-plain/answers.jsonl', lgo_q, 'lgo')
    usable = [r for r in judged if r['answered'] and r['p'] is not None]

    # Cross-validated by skill: each skill's rows decided by a model fitted on the others'.
    joint = {}
    for skill in sorted({r['skill'] for r in usable}):
        train = [r for r in usable if r['skill'] != skill]
        beta = fit_logistic([features(r) for r in train], [1 if r['good'] else 0 for r in train])
        for r in usable:
            if r['skill'] == skill:
                joint[r['id'] + r['bench']] = predict(beta, features(r))
    full = fit_logistic([features(r) for r in usable], [1 if r['good'] else 0 for r in usable])

    policies = [
        ('no reader (lexical threshold; the product without a reader)', plain, None),
        ('oracle: answers exactly the rows whose answer holds the fact (the ceiling of any decision)', judged,
         lambda r: r['good']),
        ('reader zero-shot: P ≥ 0.5, evidence ≥ band 0.5 × threshold (the product today)', judged,
         lambda r: r['p'] >= 0.5 and r['c'] >= 0.5 * evidence),
    ]
    for t in (0.3, 0.5, 0.7, 0.8, 0.9):
        policies.append((f'reader alone: P ≥ {t}', judged, lambda r, t=t: r['p'] >= t))
    policies.append((f'lexical alone on the judged runs: c ≥ {evidence:.3f}', judged, lambda r: r['c'] >= evidence))
    policies.append(('joint: logistic on (logit P, c), cross-validated by skill, ≥ 0.5', judged,
                     lambda r: joint.get(r['id'] + r['bench'], 0.0) >= 0.5))

    print('# The reader calibrated with the lexical evidence (a study for issue 44, job 1)\n')
    print('`bench/reader-calibration.sh`: dev v2 and its leave-gold-out variant, BM25 only, the reader')
    print('(Qwen2.5-Coder-1.5B-Instruct Q4_K_M, llama.cpp) judging every routed question with evidence;')
    print('`bench/reader_calibration.py` decides offline. A policy answers a row or refuses it; rows refused')
    print('before the reader stay refused.\n')
    n = score(judged, None)['n']
    print(f'Rows: {n["fact"]} fact, {n["unans"]} unanswerable (dev v2 + leave-gold-out), {n["oos"]} out of scope; '
          f'{len(usable)} reach the reader with evidence ({sum(r["good"] for r in usable)} would be answered with the fact).\n')
    print('| policy | answered with the fact | refused | answered without the fact | unanswerable answered | out of scope answered |')
    print('|---|---:|---:|---:|---:|---:|')
    results = []
    for name, rows, decide in policies:
        s = score(rows, decide)
        results.append((name, s))
        print(f"| {name} | {s['right']:.3f} | {s['refused']:.3f} | {s['wrong']:.3f} | {s['unans']:.3f} | {s['oos']:.3f} |")
    print('\n## Per skill (answered with the fact · unanswerable answered anyway)\n')
    skills = sorted({r['skill'] for r in judged if r['skill'] != '-'})
    print('| policy | ' + ' | '.join(skills) + ' |')
    print('|---|' + '---|' * len(skills))
    for name, s in results:
        cells = []
        for sk in skills:
            right, unans = s['per'].get(sk, (float('nan'), float('nan')))
            cells.append(f'{right:.2f} · {unans:.2f}' if unans == unans else f'{right:.2f} · –')
        print(f'| {name} | ' + ' | '.join(cells) + ' |')
    print('\n## Separation of good from bad answers among the rows the reader judged (ROC AUC)\n')
    labelled = [(r, 1 if r['good'] else 0) for r in usable]
    print(f"- reader P alone: {auc([(r['p'], y) for r, y in labelled]):.3f}")
    print(f"- lexical coverage alone: {auc([(r['c'], y) for r, y in labelled]):.3f}")
    print(f"- joint, cross-validated by skill: {auc([(joint[r['id'] + r['bench']], y) for r, y in labelled]):.3f}")
    print(f"- fitted on every row: bias {full[0]:.2f}, logit P {full[1]:.2f}, coverage {full[2]:.2f}")
    calls = [r['calls'] for r in usable]
    print(f"- reader calls per judged question: {sum(calls) / max(1, len(calls)):.2f}")
    facts = [r for r in judged if r['type'] == 'fact']
    print('\n## Where the fact is missing (fact rows whose chosen answer lacks it, both benches)\n')
    print('| why | rows | share of fact rows |')
    print('|---|---:|---:|')
    for why, count in sorted(missing_fact(judged).items()):
        print(f'| {why} | {count} | {count / len(facts):.3f} |')



if __name__ == '__main__':
    main()
