#!/usr/bin/env python3
"""Runs llama.cpp's OpenAI-compatible HTTP server (from the PyPI wheel xllamacpp) on loopback
until SIGTERM/SIGINT. Started by scripts/setup-llm; not meant to be exposed beyond 127.0.0.1."""
import argparse
import os
import signal

import xllamacpp as xlc

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--model", required=True, help="GGUF file")
parser.add_argument("--port", type=int, default=18080)
parser.add_argument("--alias", default="local", help="model name shown by /v1/models")
parser.add_argument("--ctx-size", type=int, default=8192)
parser.add_argument("--parallel", type=int, default=2, help="requests decoded at once")
parser.add_argument("--embedding", action="store_true", help="serve /v1/embeddings (mean pooling) instead of chat")
args = parser.parse_args()

# Block the signals before the server's threads start, so that they all inherit the mask and
# sigwait below is the one place they arrive.
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
params = xlc.CommonParams()
params.model.path = args.model
params.hostnames = ["127.0.0.1"]
params.port = args.port
params.n_ctx = args.ctx_size
params.n_parallel = args.parallel
params.model_alias = {args.alias}
params.cpuparams.n_threads = os.cpu_count() or 2
if args.embedding:
    params.embedding = True
    params.pooling_type = xlc.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN
    # Texts of one request are decoded together, up to 1024 tokens each.
    params.n_parallel = 4
    params.n_ctx = 4 * 1024
    params.n_batch = params.n_ubatch = 1024
    # Embedding requests are short: one thread answers them as fast as two on a busy machine,
    # without spinning against the test processes.
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
server = xlc.Server(params)
print(f"serving {args.model} at {server.listening_address}/v1", flush=True)
signal.sigwait({signal.SIGTERM, signal.SIGINT})
