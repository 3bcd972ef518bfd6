#!/usr/bin/env python3
"""Builds the ONNX graph of a BERT or XLM-RoBERTa encoder straight from its safetensors weights.

    build-onnx-graph.py MODEL_FOLDER OUT.onnx [--int8]

No torch and no export step: the graph is written op by op with the `onnx` package, with ONNX
Runtime's fused `Attention` operator (com.microsoft) for self-attention, so each layer runs as a
handful of kernels. Inputs `input_ids` and `attention_mask` (int64, batch x tokens); output
`last_hidden_state` (batch x tokens x hidden). Pooling and normalisation stay in skillrag, which
reads them from the model folder like the candle backend does.

`--int8` also quantizes the weights of the linear layers to int8, per output channel, with
activations quantized per batch at run time (ONNX Runtime's dynamic quantization). The
feed-forward output of every layer stays f32: its input (the GELU output) carries the outlier
features that one activation scale per tensor clips. Weights use 7 bits (`reduce_range`): on CPUs
without VNNI, ONNX Runtime multiplies u8 activations by s8 weights with AVX2's vpmaddubsw, whose
16-bit pair sums saturate on full-range weights, so the same graph gave other vectors there.
Measured on all-MiniLM-L6-v2, lowest cosine to sentence-transformers over the parity fixture:
first two feed-forward outputs f32, 8-bit weights: 0.990 with VNNI, 0.988 on AVX2 (Haswell,
under qemu); every feed-forward output f32, 7-bit weights: 0.9924 on both, at 0.84x the speed
of the former and 1.5x the f32 graph's.

Called by scripts/setup-onnx; skillrag's parity test checks the result against
sentence-transformers' vectors.
"""
import argparse
import json
import os
import re
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file


def build(folder):
    config = json.load(open(os.path.join(folder, "config.json")))
    kind = config.get("model_type", "bert")
    if kind not in ("bert", "xlm-roberta"):
        sys.exit(f"build-onnx-graph: model_type {kind!r} is not supported (bert, xlm-roberta)")
    weights = load_file(os.path.join(folder, "model.safetensors"))

    def w(name):
        for prefix in ("", "bert.", "roberta.", "model."):
            if prefix + name in weights:
                return weights[prefix + name].astype(np.float32)
        sys.exit(f"build-onnx-graph: {folder}/model.safetensors has no tensor {name!r}")

    hidden = config["hidden_size"]
    heads = config["num_attention_heads"]
    eps = config.get("layer_norm_eps", 1e-12)
    if config.get("hidden_act", "gelu") != "gelu":
        sys.exit(f"build-onnx-graph: hidden_act {config['hidden_act']!r} is not supported (gelu)")
    # RoBERTa numbers positions from padding_idx + 1; inputs are right-padded, so real tokens
    # sit at padding_idx + 1 + index.
    first_position = config.get("pad_token_id", 1) + 1 if kind == "xlm-roberta" else 0

    nodes, initializers = [], []
    counter = [0]

    def const(name, array):
        initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def op(kind, inputs, domain=None, **attrs):
        counter[0] += 1
        out = f"{kind}_{counter[0]}"
        nodes.append(helper.make_node(kind, inputs, [out], name=out, domain=domain, **attrs))
        return out

    def linear(x, prefix):
        weight = const(prefix + ".weight_t", w(prefix + ".weight").T.copy())
        return op("Add", [op("MatMul", [x, weight]), const(prefix + ".bias", w(prefix + ".bias"))])

    def layer_norm(x, prefix):
        gamma, beta = const(prefix + ".weight", w(prefix + ".weight")), const(prefix + ".bias", w(prefix + ".bias"))
        return op("LayerNormalization", [x, gamma, beta], axis=-1, epsilon=eps)

    tokens = op("Gather", [op("Shape", [ "input_ids"]), const("axis_1", np.array(1, np.int64))], axis=0)
    start = const("first_position", np.array(first_position, np.int64))
    positions = op("Range", [start, op("Add", [tokens, start]), const("step_1", np.array(1, np.int64))])
    x = op("Add", [
        op("Add", [
            op("Gather", [const("word_embeddings", w("embeddings.word_embeddings.weight")), "input_ids"], axis=0),
            op("Gather", [const("position_embeddings", w("embeddings.position_embeddings.weight")), positions], axis=0),
        ]),
        # Every token has type 0 in a single-text encoder.
        const("token_type_0", w("embeddings.token_type_embeddings.weight")[0]),
    ])
    x = layer_norm(x, "embeddings.LayerNorm")
    mask = op("Cast", ["attention_mask"], to=TensorProto.INT32)
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        qkv_w = np.concatenate([w(p + f"attention.self.{t}.weight").T for t in ("query", "key", "value")], axis=1)
        qkv_b = np.concatenate([w(p + f"attention.self.{t}.bias") for t in ("query", "key", "value")])
        context = op("Attention", [x, const(p + "qkv.weight", qkv_w.copy()), const(p + "qkv.bias", qkv_b), mask],
                     domain="com.microsoft", num_heads=heads)
        x = layer_norm(op("Add", [linear(context, p + "attention.output.dense"), x]), p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        # GELU, erf form (BERT's): 0.5 * h * (1 + erf(h / sqrt 2)); ONNX Runtime fuses it.
        erf = op("Erf", [op("Div", [h, const(p + "sqrt2", np.array(np.sqrt(2.0), np.float32))])])
        g = op("Mul", [op("Mul", [h, op("Add", [erf, const(p + "one", np.array(1.0, np.float32))])]),
                       const(p + "half", np.array(0.5, np.float32))])
        x = layer_norm(op("Add", [linear(g, p + "output.dense"), x]), p + "output.LayerNorm")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    graph = helper.make_graph(
        nodes, f"{os.path.basename(os.path.normpath(folder))} encoder",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "tokens"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "tokens"])],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", hidden])],
        initializers)
    model = helper.make_model(graph, producer_name="skillrag build-onnx-graph",
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("out")
    parser.add_argument("--int8", action="store_true", help="quantize the linear layers' weights to int8")
    args = parser.parse_args()
    model = build(args.folder)
    tmp = args.out + ".partial"
    if not args.int8:
        onnx.save(model, tmp)
    else:
        import logging
        logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process does not apply here
        from onnxruntime.quantization import QuantType, quantize_dynamic
        f32 = args.out + ".f32.partial"
        onnx.save(model, f32)
        def feed_forward_output(node):
            return any(re.fullmatch(r"encoder\.layer\.\d+\.output\.dense\.weight_t", i) for i in node.input)
        quantized = [n.name for n in model.graph.node
                     if n.op_type in ("MatMul", "Attention") and not feed_forward_output(n)]
        quantize_dynamic(f32, tmp, weight_type=QuantType.QInt8, per_channel=True, reduce_range=True,
                         nodes_to_quantize=quantized, extra_options={"DefaultTensorType": TensorProto.FLOAT})
        os.remove(f32)
    os.replace(tmp, args.out)  # a reader never sees half a graph
    print(f"build-onnx-graph: wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
