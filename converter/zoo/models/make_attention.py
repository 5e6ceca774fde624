"""Write a small transformer encoder block as ONNX (onnx.helper, opset 20, seeded weights).

Inputs: `input_ids` int64 [1, seq] (token ids < VOCAB, feeding a Gather embedding table)
and `attention_mask` int64 [1, seq] (1 = attend, 0 = masked: added to the scores as
(1 - mask) * -10000). `seq` is a free dimension (at most MAX_SEQ: position embeddings are
gathered from a table with Range(0, Shape(input_ids)[1])).

Block (pre-norm, as exported by PyTorch): x = token_emb[ids] + pos_emb[0..seq);
h = LayerNormalization(x); Q/K/V = MatMul(h, W) + b; Reshape [1, seq, HEADS, HEAD_DIM] and
Transpose into heads; scores = Q @ K^T / sqrt(HEAD_DIM) + mask bias; Softmax(-1); context =
scores @ V, Transpose / Reshape back; output projection; residual Add; LayerNormalization;
MLP MatMul + Gelu (exact, erf) + MatMul; residual Add; final LayerNormalization -> `hidden`
float32 [1, seq, DIM].

Usage: python -m converter.zoo.models.make_attention OUT.onnx [--seed N]; the zoo
(`source = "generated:make_attention.py"`) calls `make(path, seed=)`.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 20
VOCAB, MAX_SEQ, DIM, HEADS, MLP = 50, 32, 32, 4, 64
HEAD_DIM = DIM // HEADS


def make_attention(seed: int = 0) -> onnx.ModelProto:
    """The encoder block (see the module docstring)."""
    rng = np.random.default_rng(seed)
    inits: list[onnx.TensorProto] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(value, name))
        return name

    def weight(name: str, *shape: int, scale: float) -> str:
        return const(name, rng.normal(0.0, scale, shape).astype(np.float32))

    def i64(name: str, *values: int) -> str:
        return const(name, np.array(values, np.int64))

    def f32(name: str, value: float) -> str:
        return const(name, np.array(value, np.float32))

    n: list[onnx.NodeProto] = []

    def node(op: str, inputs: list[str], output: str, **attrs: Any) -> str:
        n.append(helper.make_node(op, inputs, [output], name=output, **attrs))
        return output

    def layer_norm(x: str, name: str) -> str:
        gamma = const(f"{name}.g", (1.0 + rng.normal(0.0, 0.1, DIM)).astype(np.float32))
        beta = weight(f"{name}.b", DIM, scale=0.1)
        return node("LayerNormalization", [x, gamma, beta], name, axis=-1, epsilon=1e-5)

    def linear(x: str, name: str, fan_in: int, fan_out: int) -> str:
        mm = node("MatMul", [x, weight(f"{name}.w", fan_in, fan_out,
                                       scale=1 / math.sqrt(fan_in))], f"{name}.mm")
        return node("Add", [mm, weight(f"{name}.b", fan_out, scale=0.1)], name)

    # embeddings
    tok = node("Gather", [weight("tok_emb", VOCAB, DIM, scale=1.0), "input_ids"], "tok",
               axis=0)
    shape = node("Shape", ["input_ids"], "ids_shape")
    seq = node("Gather", [shape, const("one", np.array(1, np.int64))], "seq_len", axis=0)
    pos_ids = node("Range", [const("zero", np.array(0, np.int64)), seq,
                             const("step", np.array(1, np.int64))], "pos_ids")
    pos = node("Gather", [weight("pos_emb", MAX_SEQ, DIM, scale=0.5), pos_ids], "pos", axis=0)
    x = node("Add", [tok, pos], "emb")
    # attention mask bias [1, 1, 1, seq]
    maskf = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    inv = node("Sub", [f32("onef", 1.0), maskf], "mask_inv")
    bias = node("Mul", [inv, f32("neg", -10000.0)], "mask_bias")
    bias4 = node("Unsqueeze", [bias, i64("axes12", 1, 2)], "mask_bias4")
    # self-attention
    h = layer_norm(x, "ln1")
    heads_shape = i64("heads_shape", 0, 0, HEADS, HEAD_DIM)
    proj = {}
    for k in ("q", "k", "v"):
        lin = linear(h, k, DIM, DIM)
        r = node("Reshape", [lin, heads_shape], f"{k}.heads")
        perm = [0, 2, 3, 1] if k == "k" else [0, 2, 1, 3]
        proj[k] = node("Transpose", [r], f"{k}.t", perm=perm)
    scores = node("MatMul", [proj["q"], proj["k"]], "scores")
    scaled = node("Div", [scores, f32("sqrt_d", math.sqrt(HEAD_DIM))], "scores_scaled")
    masked = node("Add", [scaled, bias4], "scores_masked")
    probs = node("Softmax", [masked], "probs", axis=-1)
    ctx = node("MatMul", [probs, proj["v"]], "ctx")
    ctx_t = node("Transpose", [ctx], "ctx.t", perm=[0, 2, 1, 3])
    ctx_m = node("Reshape", [ctx_t, i64("merge_shape", 0, 0, DIM)], "ctx.merged")
    x = node("Add", [x, linear(ctx_m, "out", DIM, DIM)], "res1")
    # MLP
    h = layer_norm(x, "ln2")
    act = node("Gelu", [linear(h, "fc1", DIM, MLP)], "gelu", approximate="none")
    x = node("Add", [x, linear(act, "fc2", MLP, DIM)], "res2")
    layer_norm(x, "hidden")
    graph = helper.make_graph(
        n, "attention_block",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "seq"]),
         helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, "seq"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [1, "seq", DIM])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=9, producer_name="webnn-converter/make_attention")
    onnx.checker.check_model(model, full_check=True)
    return model


def make(path: Path, seed: int = 0) -> None:
    """Write the model to `path` (the zoo's generator entry point)."""
    onnx.save_model(make_attention(seed), path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    make(args.out, args.seed)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
