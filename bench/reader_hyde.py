#!/usr/bin/env python3
"""Would the reader's hypothetical passage find the fact that a refused question missed? (issue 44, job 3)

Job 3 of the reader issue: when the evidence is weak, the reader rewrites the question into the
knowledge's own words (HyDE, Gao et al., 2023; query2doc, Wang et al., 2023) for one more
retrieval. Before building it into the ask path, this measures its reach on the rows where it
could change the outcome: the fact rows of a reader run (`skillrag eval` with `[reader]`) that the
reader refused. For each, the reader writes the hypothetical passage with the prompt of
`Assist::hypothetical_passage` (crates/ask/src/llm.rs, kept in step by hand: this is a
measurement, not the product), and the routed skill is searched (`skillrag search`, BM25) with

  question  the question alone (what the ask path retrieved)
  passage   the hypothetical passage alone
  fused     both lists fused by reciprocal rank fusion (k = 60), as `expand::fuse_lists` does

Reach is counted two ways within the first 5 hits: a gold source among them, and a hit whose text
holds a gold string (outcomes.py's rule): the fact the answer must quote.

usage: reader_hyde.py ANSWERS_JSONL QUERIES_JSONL PROJECT_DIR READER_URL [BIN]
  PROJECT_DIR: a project whose skills are the bench's, indexed (`skillrag -C DIR index`).
"""
import json
import re
import subprocess
import sys
import time
import urllib.request

from reader_calibration import norm  # outcomes.py's rule for "holds a gold string"

SYSTEM = {
    'zh': "写一段可能出现在知识库资料里的文字（两三句），正面回答下面的问题，使用资料里常见的正式术语。只输出这段文字。",
    'en': ("Write a short passage (two or three sentences) that the knowledge base's documents might contain, "
           "answering the question directly in the formal terms they would use. Output only the passage."),
}
USER = {'zh': "知识库：{d}\n问题：{q}", 'en': "Knowledge base: {d}\nQuestion: {q}"}
TOP = 5


def hypothetical_passage(url, description, question):
    lang = 'zh' if re.search(r'[\u4e00-\u9fff]', question) else 'en'
    body = {'messages': [{'role': 'system', 'content': SYSTEM[lang]},
                         {'role': 'user', 'content': USER[lang].format(d=description, q=question)}],
            'max_tokens': 120, 'temperature': 0}
    started = time.time()
    request = urllib.request.Request(f'{url}/chat/completions', json.dumps(body).encode(),
                                     {'Content-Type': 'application/json'})
    with urllib.request.urlopen(request, timeout=120) as reply:
        text = json.loads(reply.read())['choices'][0]['message']['content']
    return ' '.join(line.strip() for line in text.splitlines() if line.strip())[:600], time.time() - started


def search(binary, project, text, skill):
    out = subprocess.run([binary, '-C', project, 'search', text, '--skill', skill, '--json', '-k', '10',
                          '--embed-model', 'none'], capture_output=True, text=True, check=True).stdout
    return json.loads(out)['hits']


def fuse(lists, k=60.0):
    score, first = {}, {}
    for hits in lists:
        for rank, hit in enumerate(hits):
            score[hit['chunk_id']] = score.get(hit['chunk_id'], 0.0) + 1.0 / (k + rank + 1)
            first.setdefault(hit['chunk_id'], hit)
    return [first[c] for c in sorted(score, key=lambda c: -score[c])]


def reach(hits, row):
    top = hits[:TOP]
    source = any(h['source'] in row['gold_sources'] for h in top)
    fact = any(any(norm(g) in norm(h['text']) for g in row['answers']) for h in top)
    return source, fact


def descriptions(binary, project):
    """Each skill's description as the product parses its SKILL.md (any of the three forms)."""
    out = subprocess.run([binary, '-C', project, 'skills', '--json'], capture_output=True, text=True, check=True)
    return {s['skill']: s['description'] for s in json.loads(out.stdout)}


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    answers, queries, project, url = sys.argv[1:5]
    binary = sys.argv[5] if len(sys.argv) > 5 else 'skillrag'
    described = descriptions(binary, project)
    rows = {json.loads(l)['id']: json.loads(l) for l in open(queries)}
    arms = ('question', 'passage', 'fused')
    counts = {(a, m): 0 for a in arms for m in ('source', 'fact')}
    gained = lost = n = 0
    per_skill = {}
    seconds = []
    for line in open(answers):
        answer = json.loads(line)
        row = rows.get(answer['id'])
        if not row or row.get('type') != 'fact' or (answer.get('reader') or {}).get('decision') != 'refused':
            continue
        skill = row['skill']
        passage, took = hypothetical_passage(url, described[skill], row['query'])
        seconds.append(took)
        question = search(binary, project, row['query'], skill)
        alone = search(binary, project, passage, skill) if passage else []
        lists = {'question': question, 'passage': alone, 'fused': fuse([question, alone])}
        n += 1
        for arm, hits in lists.items():
            source, fact = reach(hits, row)
            counts[(arm, 'source')] += source
            counts[(arm, 'fact')] += fact
        before, after = reach(question, row)[1], reach(lists['fused'], row)[1]
        gained += after and not before
        tally = per_skill.setdefault(skill, [0, 0, 0])
        tally[0] += 1
        tally[1] += before
        tally[2] += after
        lost += before and not after
    if not n:
        sys.exit('no fact row refused by the reader in ' + answers)
    seconds.sort()
    print(f'Fact rows the reader refused: {n}\n')
    print(f'| within the first {TOP} hits | ' + ' | '.join(arms) + ' |')
    print('|---|' + '---:|' * len(arms))
    for measure, label in (('source', 'a gold source'), ('fact', 'a hit holding a gold string')):
        print(f'| {label} | ' + ' | '.join(f'{counts[(a, measure)]} ({counts[(a, measure)] / n:.2f})' for a in arms) + ' |')
    print(f'\nFused against the question alone, rows with the fact within the first {TOP}: +{gained} −{lost}.')
    print(f'\n| skill | refused fact rows | fact within {TOP}: question | fused |')
    print('|---|---:|---:|---:|')
    for skill, (rows_, before_, after_) in sorted(per_skill.items()):
        print(f'| {skill} | {rows_} | {before_} | {after_} |')
    print(f'\nWriting the passage: mean {sum(seconds) / n:.2f} s, p50 {seconds[n // 2]:.2f} s, '
          f'max {seconds[-1]:.2f} s ({n} calls).')


if __name__ == '__main__':
    main()
