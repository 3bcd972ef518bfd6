#!/usr/bin/env python3
"""Where the fact is among the reader's candidates (issue 44, job 2): a stand-in reader server
that logs every passage skillrag would show the reader, and the report over that log.

  bench/reader_probe.py serve PORT LOG.jsonl
      An OpenAI-compatible /v1/chat/completions that answers "no" to every judgement (so every
      candidate up to `[reader] max_calls + passages` is judged, none is chosen) and appends
      {"question", "passage"} to LOG for each. No model runs: it shows what the reader would read.
  bench/reader_probe.py report LOG.jsonl QUERIES.jsonl [K ...]
      For the fact rows: the share whose fact (outcomes.py's match: NFKC, whitespace removed) is in
      one of the first K passages judged, for each K (default 1 2 3 5 8 10), per skill.
"""
import collections, json, re, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from reader_calibration import norm  # outcomes.py's gold-string rule, kept in one place for the reader studies
PROMPT = re.compile(r'^Passage:\n(?P<passage>.*)\n\nQuestion: (?P<question>.*)\n\nDoes the passage', re.S)


def serve(port, log_path):
    lock = threading.Lock()
    log = open(log_path, 'a', encoding='utf-8')

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_):
            pass

        def do_GET(self):  # health checks and model listings
            self._json({'data': [{'id': 'probe'}], 'status': 'ok'})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get('Content-Length', 0))))
            user = next((m['content'] for m in body.get('messages', []) if m.get('role') == 'user'), '')
            m = PROMPT.match(user)
            if m:
                with lock:
                    log.write(json.dumps({'question': m['question'], 'passage': m['passage']}, ensure_ascii=False) + '\n')
                    log.flush()
            top = [{'token': 'no', 'logprob': -0.01}, {'token': 'yes', 'logprob': -6.0}]
            self._json({'choices': [{'index': 0, 'message': {'role': 'assistant', 'content': 'no'},
                                     'logprobs': {'content': [{'token': 'no', 'logprob': -0.01, 'top_logprobs': top}]},
                                     'finish_reason': 'length'}],
                        'usage': {'prompt_tokens': len(user) // 3, 'completion_tokens': 1}})

        def _json(self, value):
            data = json.dumps(value).encode()
            self.send_response(200)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    ThreadingHTTPServer(('127.0.0.1', int(port)), Handler).serve_forever()


def report(log_path, queries_path, ks):
    judged = collections.defaultdict(list)
    for line in open(log_path, encoding='utf-8'):
        r = json.loads(line)
        judged[r['question']].append(norm(r['passage']))
    rows = [json.loads(l) for l in open(queries_path, encoding='utf-8')]
    rows = [r for r in rows if r['type'] == 'fact']
    per = collections.defaultdict(collections.Counter)
    for r in rows:
        passages = judged.get(r['query'], [])
        first = next((i for i, p in enumerate(passages) if any(norm(a) in p for a in r['answers'])), None)
        for c in (per['overall'], per[r['skill']]):
            c['n'] += 1
            c['judged'] += bool(passages)
            for k in ks:
                c[k] += first is not None and first < k
    print(f"| skill | fact rows | reach the reader | " + ' | '.join(f'fact in first {k}' for k in ks) + ' |')
    print('|---|---:|---:|' + '---:|' * len(ks))
    for s in ['overall'] + sorted(k for k in per if k != 'overall'):
        c = per[s]
        print(f"| {s} | {c['n']} | {c['judged'] / c['n']:.3f} | " + ' | '.join(f"{c[k] / c['n']:.3f}" for k in ks) + ' |')


if __name__ == '__main__':
    if len(sys.argv) >= 4 and sys.argv[1] == 'serve':
        serve(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == 'report':
        report(sys.argv[2], sys.argv[3], [int(k) for k in sys.argv[4:]] or [1, 2, 3, 5, 8, 10])
    else:
        sys.exit(__doc__)
