"""onnxruntime's hyper-connection ops (com.microsoft HyperConnectionPreMix,
HyperConnectionPostMix, EngramGate) -> WebNN element-wise ops and reductions, in float32.

- HyperConnectionPreMix: Y[..., h] = reduction_scale · Σ_c X[..., c, h] · pre_mix[..., c, h];
  X grouped (..., C, H) or flattened (..., C·H) with num_branches = C; pre_mix (..., C),
  (..., C, 1), (..., C, H) or (..., C·H).
- HyperConnectionPostMix: Y[..., k, h] = Σ_c stream_mix[..., c, k] · streams[..., c, h] +
  post_mix[..., k, h] · block_output[..., h]; stream_mix (..., C, C) defaults to the identity;
  post_mix (..., C), (..., C, 1) or (..., C, H); streams grouped or flattened as above.
- EngramGate: per hyper-connection, dot = Σ_h RMSNorm(key)·RMSNorm(query) / √H (each RMS norm
  with its (hc, H) scale), gate = sigmoid(sign(dot)·√max(|dot|, 1e-6)); output = gate · value
  ((B, S, H) broadcast over the hyper-connections); gated_value_normed = RMSNorm(output) with
  conv_norm_scale.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    attr_epsilon,
    attr_float,
    attr_int,
    check_arity,
    check_same_type,
    float_operand,
    scalar,
    to_type,
)

MS = "com.microsoft"


def _grouped(ctx: ImportContext, node: Node, x: Any) -> tuple[Any, int, int]:
    """(x as float32 (..., C, H), C, H) from grouped or flattened (num_branches) x."""
    branches = attr_int(node, "num_branches", 0)
    shape = list(x.shape)
    if branches:
        if x.rank < 1 or shape[-1] % branches:
            raise InvalidModel(f"{node.op_type} num_branches {branches} must divide the last "
                               f"dimension of {shape}")
        shape = shape[:-1] + [branches, shape[-1] // branches]
    elif x.rank < 2:
        raise InvalidModel(f"{node.op_type} streams must be (..., C, H), got {shape}")
    return ctx.builder.reshape(to_type(ctx, x, "float32"), shape), shape[-2], shape[-1]


def _mix(ctx: ImportContext, node: Node, index: int, lead: list[int], c: int, h: int,
         what: str) -> Any:
    """Mix input `index` as float32 (..., C, 1) or (..., C, H)."""
    m = float_operand(ctx, node, index, what)
    shape = list(m.shape)
    if shape == lead + [c] or shape == lead + [c, 1]:
        return ctx.builder.reshape(to_type(ctx, m, "float32"), lead + [c, 1])
    if shape == lead + [c, h] or shape == lead + [c * h]:
        return ctx.builder.reshape(to_type(ctx, m, "float32"), lead + [c, h])
    raise InvalidModel(f"{node.op_type} {what} {shape} must be {lead + [c]}, {lead + [c, 1]} "
                       f"or {lead + [c, h]}")


@onnx_op("HyperConnectionPreMix", since=1, domain=MS)
def hyper_connection_pre_mix(ctx: ImportContext, node: Node) -> Outputs:
    """The weighted sum of the C streams (see the module docstring).
    Restrictions: float32/float16."""
    check_arity(node, (2, 2))
    b = ctx.builder
    x = float_operand(ctx, node, 0, "streams")
    xs, c, h = _grouped(ctx, node, x)
    lead = list(xs.shape[:-2])
    mix = _mix(ctx, node, 1, lead, c, h, "pre_mix")
    y = b.reduce_sum(b.mul(xs, mix), axes=[xs.rank - 2])
    scale = attr_float(node, "reduction_scale", 1.0)
    if scale != 1.0:
        y = b.mul(y, scalar(ctx, scale, "float32"))
    return [to_type(ctx, y, x.data_type)]


@onnx_op("HyperConnectionPostMix", since=1, domain=MS)
def hyper_connection_post_mix(ctx: ImportContext, node: Node) -> Outputs:
    """Streams mixed by stream_mix plus the block output weighted by post_mix (see the module
    docstring). Restrictions: float32/float16; block_output (..., H)."""
    check_arity(node, (3, 4))
    b = ctx.builder
    x = float_operand(ctx, node, 0, "streams")
    out = float_operand(ctx, node, 1, "block_output")
    check_same_type(node, [(x, "streams"), (out, "block_output")])
    xs, c, h = _grouped(ctx, node, x)
    lead = list(xs.shape[:-2])
    if list(out.shape) != lead + [h]:
        raise InvalidModel(f"HyperConnectionPostMix block_output {list(out.shape)} must be "
                           f"{lead + [h]}")
    post = _mix(ctx, node, 2, lead, c, h, "post_mix")
    y = b.mul(post, b.reshape(to_type(ctx, out, "float32"), lead + [1, h]))
    if node.input(3):
        sm = float_operand(ctx, node, 3, "stream_mix")
        if list(sm.shape) != lead + [c, c]:
            raise InvalidModel(f"HyperConnectionPostMix stream_mix {list(sm.shape)} must be "
                               f"{lead + [c, c]}")
        perm = [*range(len(lead)), len(lead) + 1, len(lead)]
        mixed = b.matmul(b.transpose(to_type(ctx, sm, "float32"), permutation=perm), xs)
    else:
        mixed = xs
    return [to_type(ctx, b.reshape(b.add(mixed, y), list(x.shape)), x.data_type)]


def _rms(ctx: ImportContext, x: Any, scale: Any, eps: float) -> Any:
    b = ctx.builder
    mean = b.reduce_mean(b.mul(x, x), axes=[x.rank - 1], keep_dimensions=True)
    return b.mul(b.div(x, b.sqrt(b.add(mean, scalar(ctx, eps, "float32")))), scale)


@onnx_op("EngramGate", since=1, domain=MS)
def engram_gate(ctx: ImportContext, node: Node) -> Outputs:
    """The Engram gate times value (see the module docstring).
    Restrictions: float32/float16; key and query (B, S, hc, H), value (B, S, H), norm scales
    (hc, H)."""
    check_arity(node, (5, 6), (1, 2))
    b = ctx.builder
    names = ("key", "query", "value", "key_norm_scale", "query_norm_scale")
    key, query, value, ks, qs = (float_operand(ctx, node, i, w) for i, w in enumerate(names))
    check_same_type(node, list(zip((key, query, value, ks, qs), names, strict=True)))
    if key.rank != 4 or list(query.shape) != list(key.shape) or \
            list(value.shape) != [key.shape[0], key.shape[1], key.shape[3]]:
        raise InvalidModel(f"EngramGate key/query {list(key.shape)} / {list(query.shape)} must "
                           f"be (B, S, hc, H) and value {list(value.shape)} (B, S, H)")
    bsz, seq, hc, h = key.shape
    for s, what in ((ks, "key_norm_scale"), (qs, "query_norm_scale")):
        if list(s.shape) != [hc, h]:
            raise InvalidModel(f"EngramGate {what} {list(s.shape)} must be [{hc}, {h}]")
    eps = attr_epsilon(node, 1e-5)

    def f32(v: Any) -> Any:
        return to_type(ctx, v, "float32")

    kn = _rms(ctx, f32(key), f32(ks), eps)
    qn = _rms(ctx, f32(query), f32(qs), eps)
    dot = b.div(b.reduce_sum(b.mul(kn, qn), axes=[3], keep_dimensions=True),
                scalar(ctx, float(np.sqrt(h)), "float32"))
    mag = b.sqrt(b.max(b.abs(dot), scalar(ctx, 1e-6, "float32")))
    gate = b.sigmoid(b.mul(b.sign(dot), mag))  # [B, S, hc, 1]
    y = b.mul(gate, b.reshape(f32(value), [bsz, seq, 1, h]))
    outs: list[Any] = [to_type(ctx, y, key.data_type)]
    if len(node.outputs) > 1:
        if node.outputs[1]:
            if not node.input(5):
                raise InvalidModel("EngramGate gated_value_normed needs conv_norm_scale")
            cs = float_operand(ctx, node, 5, "conv_norm_scale")
            if list(cs.shape) != [hc, h]:
                raise InvalidModel(f"EngramGate conv_norm_scale {list(cs.shape)} must be "
                                   f"[{hc}, {h}]")
            outs.append(to_type(ctx, _rms(ctx, y, f32(cs), eps), key.data_type))
        else:
            outs.append(None)
    return outs
