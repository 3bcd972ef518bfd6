#!/usr/bin/env python3
"""The reader's verdict under other prompts, on the passages skillrag shows it (issue 44, job 1).

  bench/reader_prompts.py judge WORK EVERY VARIANT...    (the reader server: scripts/setup-reader)
  bench/reader_prompts.py report WORK EVERY VARIANT...
  bench/reader_prompts.py floor WORK EVERY FLOOR         (early rejection, the shipped prompt)

WORK holds what bench/reader_probe.py logged (c10.jsonl / p10.jsonl for dev v2, lgo-c10.jsonl /
lgo-p10.jsonl for its leave-gold-out variant, made in WORK/lgo). `judge` asks the reader
(SKILLRAG_READER, an OpenAI-compatible root) about every EVERY-th row's first three
extractive candidates and first two retrieved passages under each VARIANT, as `Reader::judge` does
(one token, top 20 log-probabilities), and caches each verdict in WORK/verdicts.jsonl. `report`
simulates the product's selection (judged in order, stopping at P >= max(0.8, t); the best with
P >= t answers) for each variant, pool and threshold, scored as ../shared/tools/outcomes.py
scores (the fact in the text the reader saw).

`floor` judges the first candidate of every EVERY-th row, and the other two where its P(yes) is
below FLOOR, and counts what judging them changes: rows a later candidate would answer (with the
fact or not) and the calls it costs, by kind of row.

Variants:
  yesno   the shipped prompt (crates/ask/src/reader.rs): yes/no, 是/否 pooled with them
  yesno1  the same, with only yes/no counted (是/否 can be the answer to a 是否 question itself)
  fewshot the shipped prompt after four worked examples (in-context demonstrations: invented
          passages, two languages, a neighbouring item and a same-topic passage that does not say it);
          a server that caches prompt prefixes reads them once
  cf      contextual calibration (Zhao et al., 2021): the shipped prompt on a content-free passage
          ("N/A") gives each question's prior P(yes); the verdict is corrected by it in logit space
  cfc     the same, centred: corrected by the question's prior relative to the mean prior (logit),
          so only a question's own bias moves its verdict, not the model's bias as a whole
"""
import collections, json, math, os, sys, time, urllib.request

from reader_calibration import norm  # outcomes.py's gold-string rule, kept in one place for the reader studies
from reader_wider import SYSTEM, MAX_PASSAGE_CHARS as MAX  # the shipped prompt, as in crates/ask/src/reader.rs

# Invented, not drawn from any bench: what "states the answer" means, by example.
DEMOS = [
    ("The X200 kettle switches itself off 30 seconds after the water boils.", "When does the X200 kettle switch off?", "yes"),
    ("The X100 kettle holds 1.7 litres of water.", "How much water does the X200 kettle hold?", "no"),
    ("第三条 借阅图书的期限为三十日，可续借一次。", "逾期归还图书要交多少罚款？", "no"),
    ("本馆每周一闭馆，其余每天九点开放。", "图书馆星期一开门吗？", "yes"),
]


def user_turn(question, passage):
    return f"Passage:\n{passage}\n\nQuestion: {question}\n\nDoes the passage state the answer to the question?"


def prompt(variant, question, passage):
    passage = passage[:MAX]
    if variant == 'fewshot':
        turns = [{'role': 'system', 'content': SYSTEM}]
        for p, q, a in DEMOS:
            turns += [{'role': 'user', 'content': user_turn(q, p)}, {'role': 'assistant', 'content': a}]
        return turns + [{'role': 'user', 'content': user_turn(question, passage)}]
    return [{'role': 'system', 'content': SYSTEM}, {'role': 'user', 'content': user_turn(question, passage)}]


def spellings(c):
    cap = c[:1].upper() + c[1:]
    return {c, cap, ' ' + c, ' ' + cap}


PROMPT_OF = {'yesno1': 'yesno'}
CHOICES = {'yesno': (['yes', '是'], ['no', '否']), 'fewshot': (['yes', '是'], ['no', '否']), 'yesno1': (['yes'], ['no'])}


def ask(url, messages):
    body = json.dumps({'model': 'reader', 'messages': messages, 'max_tokens': 1, 'temperature': 0.0,
                       'logprobs': True, 'top_logprobs': 20}).encode()
    req = urllib.request.Request(url.rstrip('/') + '/chat/completions', body, {'Content-Type': 'application/json'})
    value = json.load(urllib.request.urlopen(req, timeout=300))
    return {e['token']: math.exp(e['logprob']) for e in value['choices'][0]['logprobs']['content'][0]['top_logprobs']}


def p_of(top, variant):
    yes, no = CHOICES['yesno' if variant == 'cf' else variant]
    w = lambda cs: sum(p for t, p in top.items() if any(t in spellings(c) for c in cs))
    y, n = w(yes), w(no)
    return y / (y + n) if y + n > 0 else 0.0


def rows(work, every):
    """(bench, row, texts) for every EVERY-th row of each bench; texts: 3 candidates, 2 passages."""
    out = []
    for bench, queries, prefix in (('dev', os.environ.get('DEV_QUERIES', f'{work}/queries.jsonl'), ''),
                                   ('lgo', f'{work}/lgo/queries.jsonl', 'lgo-')):
        logs = {}
        for arm in ('c10', 'p10'):
            logs[arm] = collections.defaultdict(list)
            for l in open(f'{work}/{prefix}{arm}.jsonl', encoding='utf-8'):
                r = json.loads(l)
                logs[arm][r['question']].append(r['passage'])
        for i, l in enumerate(open(queries, encoding='utf-8')):
            r = json.loads(l)
            if i % every or r['type'] == 'chitchat':
                continue
            cands = logs['c10'].get(r['query'], [])[:3]
            passages = [p for p in logs['p10'].get(r['query'], [])[1:3] if p not in cands]
            out.append((bench, r, cands, passages))
    return out


def load_cache(work):
    cache = {}
    path = f'{work}/verdicts.jsonl'
    if os.path.exists(path):
        for l in open(path, encoding='utf-8'):
            v = json.loads(l)
            cache[(v['variant'], v['question'], v['passage'])] = v['top']
    return cache


def judge(work, every, variants):
    url = os.environ['SKILLRAG_READER']
    cache = load_cache(work)
    todo = []
    for _, r, cands, passages in rows(work, every):
        for v in variants:
            if v in ('cf', 'cfc'):
                todo.append(('cf', r['query'], 'N/A'))
            else:
                # yesno1 reads the shipped prompt's own reply.
                pool = cands + (passages if os.environ.get('POOL') != 'candidates' else [])
                todo += [(PROMPT_OF.get(v, v), r['query'], p[:MAX]) for p in pool]
    todo = [t for t in dict.fromkeys(todo) if t not in cache]
    started = time.time()
    with open(f'{work}/verdicts.jsonl', 'a', encoding='utf-8') as log:
        for n, (v, q, p) in enumerate(todo, 1):
            top = ask(url, prompt('yesno' if v == 'cf' else v, q, p))
            log.write(json.dumps({'variant': v, 'question': q, 'passage': p, 'top': top}, ensure_ascii=False) + '\n')
            log.flush()
            if n % 50 == 0:
                print(f'{n}/{len(todo)} in {time.time() - started:.0f}s', file=sys.stderr)


logit = lambda p: math.log(max(p, 1e-6) / max(1 - p, 1e-6))
sigmoid = lambda x: 1 / (1 + math.exp(-x))


def auc(good, bad):
    if not good or not bad:
        return float('nan')
    return sum((g > b) + 0.5 * (g == b) for g in good for b in bad) / (len(good) * len(bad))


def report(work, every, variants):
    cache = load_cache(work)
    data = rows(work, every)
    n = collections.Counter()
    for bench, r, _, _ in data:
        n['unanswerable' if bench == 'lgo' else r['type']] += 1
    priors = [logit(p_of(top, 'cf')) for (v, _, _), top in cache.items() if v == 'cf']
    mean_prior = sum(priors) / max(len(priors), 1)
    print(f"Mean content-free prior: P(yes | N/A) = {sigmoid(mean_prior):.3f} (logit mean over {len(priors)} questions).\n")
    print(f"Rows (one in {every}): {n['fact']} fact, {n['unanswerable']} unanswerable (dev v2 + leave-gold-out), "
          f"{n['out_of_scope']} out of scope.\n")
    print('| variant | pool | P ≥ (candidates / passages) | answered with the fact | refused | without the fact | unanswerable answered | '
          'out of scope answered | calls per judged row |')
    print('|---|---|---:|---:|---:|---:|---:|---:|---:|')
    aucs, per_skill = {}, {}
    for v in variants:
        def p(q, text):
            if v in ('cf', 'cfc'):
                top, prior = cache.get(('yesno', q, text[:MAX])), cache.get(('cf', q, 'N/A'))
                if top is None or prior is None:
                    return None
                shift = logit(p_of(prior, 'cf')) - (mean_prior if v == 'cfc' else 0.0)
                return sigmoid(logit(p_of(top, 'yesno')) - shift)
            top = cache.get((PROMPT_OF.get(v, v), q, text[:MAX]))
            return None if top is None else p_of(top, v)
        for pool in ('candidates', '+ 2 passages'):
            # Threshold-free: each row's best P over its pool; good when that text holds the fact.
            good, bad = [], []
            for bench, r, cands, passages in data:
                texts = cands + (passages if pool != 'candidates' else [])
                scored = [(p(r['query'], t), t) for t in texts]
                scored = [x for x in scored if x[0] is not None]
                if not scored:
                    continue
                best = max(scored, key=lambda x: x[0])
                fact = bench == 'dev' and r['type'] == 'fact' and any(norm(a) in norm(best[1]) for a in r['answers'])
                (good if fact else bad).append(best[0])
            aucs[(v, pool)] = auc(good, bad)
            # (threshold for candidates, threshold for passages): a passage is longer, so a "yes"
            # to it may need more certainty.
            ts = [(t, t) for t in (0.3, 0.5, 0.7)]
            if pool != 'candidates':
                ts += [(0.5, 0.7), (0.5, 0.8), (0.3, 0.7)]
            for t, tp in ts:
                c = collections.Counter()
                for bench, r, cands, passages in data:
                    texts = [(x, t) for x in cands] + ([(x, tp) for x in passages] if pool != 'candidates' else [])
                    kind = 'unanswerable' if bench == 'lgo' else r['type']
                    best, calls = None, 0
                    for text, ti in texts:
                        # The product judges the candidates first, then the passages, one at a time.
                        pi = p(r['query'], text)
                        if pi is None:
                            break
                        calls += 1
                        if pi >= ti and (best is None or pi > best[0]):
                            best = (pi, text)
                        if pi >= max(0.8, ti):
                            break
                    c['calls'] += calls
                    c['judged'] += calls > 0
                    holds = best is not None and kind == 'fact' and any(norm(a) in norm(best[1]) for a in r['answers'])
                    for key in (kind, (r.get('skill') or '-', kind)):
                        c[key] += 1
                        c[(key, 'answered' if best else 'refused')] += 1
                        c[(key, 'right')] += holds
                share = lambda k, o: c[(k, o)] / c[k] if c[k] else float('nan')
                t = t if t == tp else f'{t} / {tp}'
                print(f"| {v} | {pool} | {t} | {share('fact', 'right'):.3f} | {share('fact', 'refused'):.3f} | "
                      f"{share('fact', 'answered') - share('fact', 'right'):.3f} | {share('unanswerable', 'answered'):.3f} | "
                      f"{share('out_of_scope', 'answered'):.3f} | {c['calls'] / max(c['judged'], 1):.2f} |")
                skills = sorted({k[0] for k in c if isinstance(k, tuple) and isinstance(k[0], str) and k[0] != '-'
                                 and k[1] in ('fact', 'unanswerable')})
                per_skill[(v, pool, t)] = {s: (share((s, 'fact'), 'right'), share((s, 'unanswerable'), 'answered'))
                                           for s in skills}
    print('\nROC AUC of each row\'s best P over its pool (good: that text holds the fact; bad: it does not, '
          'or the row is unanswerable or out of scope):\n')
    for (v, pool), a in aucs.items():
        print(f'- {v}, {pool}: {a:.3f}')
    skills = sorted({s for d in per_skill.values() for s in d})
    print('\n## Per skill (answered with the fact · unanswerable answered)\n')
    print('| variant | pool | P ≥ | ' + ' | '.join(skills) + ' |')
    print('|---|---|---:|' + '---|' * len(skills))
    for (v, pool, t), d in per_skill.items():
        print(f'| {v} | {pool} | {t} | ' + ' | '.join(f'{d[s][0]:.2f} · {d[s][1]:.2f}' if s in d else '–' for s in skills) + ' |')


def floor(work, every, args):
    url, limit = os.environ['SKILLRAG_READER'], float(args[0])
    cache = load_cache(work)
    log = open(f'{work}/verdicts.jsonl', 'a', encoding='utf-8')

    def p(q, text):
        key = ('yesno', q, text[:MAX])
        if key not in cache:
            cache[key] = ask(url, prompt('yesno', q, text))
            log.write(json.dumps({'variant': 'yesno', 'question': q, 'passage': text[:MAX], 'top': cache[key]},
                                 ensure_ascii=False) + '\n')
        return p_of(cache[key], 'yesno')

    c = collections.Counter()
    for bench, r, cands, _ in rows(work, every):
        if not cands:
            continue
        kind = 'leave-gold-out' if bench == 'lgo' else r['type']
        c[(kind, 'judged')] += 1
        first = p(r['query'], cands[0])
        if first >= limit:
            continue
        c[(kind, 'below the floor')] += 1
        ps = [first]
        for text in cands[1:]:
            ps.append(p(r['query'], text))
            c[(kind, 'calls the floor saves')] += 1
            if ps[-1] >= 0.8:
                break
        best = max(range(len(ps)), key=lambda i: ps[i])
        if ps[best] >= 0.5:
            holds = kind == 'fact' and any(norm(a) in norm(cands[best]) for a in r['answers'])
            c[(kind, 'answered with the fact' if holds else 'answered (without the fact)')] += 1
    print(f'Floor {limit} on the first verdict, one row in {every}: what judging the rest of the rows below it would change.\n')
    print('| rows | judged | below the floor | answered with the fact | answered (without the fact) | calls the floor saves |')
    print('|---|---:|---:|---:|---:|---:|')
    for kind in ('fact', 'unanswerable', 'out_of_scope', 'leave-gold-out'):
        print(f'| {kind} | ' + ' | '.join(str(c[(kind, k)]) for k in ('judged', 'below the floor', 'answered with the fact',
                                                                         'answered (without the fact)', 'calls the floor saves')) + ' |')


if __name__ == '__main__':
    if len(sys.argv) < 5 or sys.argv[1] not in ('judge', 'report', 'floor'):
        sys.exit(__doc__)
    {'judge': judge, 'report': report, 'floor': floor}[sys.argv[1]](sys.argv[2], int(sys.argv[3]), sys.argv[4:])
