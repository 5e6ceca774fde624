"""Self-attention with a packed QKV projection, found in a WebNN graph and lowered back to
one com.microsoft Attention node (onnxruntime's fused kernel), for the onnxruntime backend
only (`to_onnx(..., contrib_ops=True)`).

What is matched is what the importer builds for com.microsoft Attention (the onnxruntime
transformer optimizer's fused BERT-family attention) without past state:

- qkv = add(matmul(x, W), bias) with x [B, S, D] float32, W a constant [D, 3·N·H] and bias a
  constant [3·N·H]; q, k, v the three outputs of one `split` of qkv along axis 2 (N·H each);
  each head split transpose(reshape(t, [B, S, N, H]), [0, 2, 1, 3]);
- scores = matmul(q·scale (or q), transpose(k heads, [0, 1, 3, 2])) [B, N, S, S], plus
  optionally an additive key mask where(j < reshape(end, [B, 1, 1, 1]), 0, f) with `end` an
  int32 operand [B] (the Attention "mask_index" of end positions: keys j ≥ end[b] get f added,
  which becomes `mask_filter_value`);
- softmax over axis 3, matmul with the v heads, and the head merge transpose(.., [0, 2, 1,
  3]) + reshape to [B, S, N·H].

- or the quantized projection the importer builds for com.microsoft QAttention (after
  onnxruntime's dynamic quantization): qkv = add(mul(matmul(dequantizeLinear(x, 1, zx),
  dequantizeLinear(W, 1, zw)), mul(sx, sw)), bias) with x uint8 [B, S, D], sx and zx one
  element each, W a constant int8 / uint8 [D, 3·N·H], sw and zw constants per tensor or per
  column: QAttention(x, W, bias, sx, sw, end, zx, zw), whose kernel computes the same exact
  integer sums times sx·sw (rounded once to float32) plus bias (onnxruntime then keeps the
  DynamicQuantizeLinear in front of it, as in the original model).

That is Attention(x, W, bias, end) with num_heads N, scale and mask_filter_value f: the same
arithmetic (the kernel adds the bias after its own GEMM). With `float16=True` (float16
chains computed in float32, `float16_chains`) the same pattern in float16 (x, weights and
every operation float16) is matched too and runs as the float32 kernel on x's float32 value,
its result rounded once to float16: what the chain would compute. Anything else (past
state, causal, other mask forms, attention bias, unequal Q/K/V widths) is left decomposed;
the replaced operations then feed nothing and are removed by `fusion.remove_dead_nodes`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from converter.core.webnn.context import MLGraph
from converter.core.webnn.operand import MLOperand
from converter.runtimes.onnxruntime.lowering.context import Emitter
from converter.runtimes.onnxruntime.lowering.group_query_attention import DOMAIN, F32
from converter.runtimes.onnxruntime.lowering.matching import (
    const_of,
    equals,
    has_shape,
    made_by,
    merged_heads,
    reshaped,
    scalar_of,
    split_heads,
    transposed,
)

F16 = "float16"


@dataclass(frozen=True)
class QuantizedProjection:
    """QAttention's projection: uint8 x with the scale and optional zero point operands (one
    element each), the int8 / uint8 weight constant [D, 3·N·H] with its scale and optional
    zero point (scalars or per column)."""

    x: MLOperand
    weight: np.ndarray
    x_scale: MLOperand
    weight_scale: np.ndarray
    x_zero_point: MLOperand | None
    weight_zero_point: np.ndarray | None


@dataclass(frozen=True)
class AttentionMatch:
    """One matched Attention: input, packed weights and bias, heads, scale, the optional
    end-position mask and its fill, and the WebNN operand it computes."""

    x: MLOperand
    weight: np.ndarray
    bias: np.ndarray
    heads: int
    scale: float
    mask_index: MLOperand | None
    mask_filter_value: float
    output: MLOperand
    #: The quantized projection (then x and weight are its), None for a float one.
    quant: QuantizedProjection | None = None


def _end_mask(mask: object, bsz: int, keys: int) -> tuple[MLOperand, float] | None:
    """(end, f) when `mask` is where(arange(T) < reshape(end, [B, 1, 1, 1]), 0, f)."""
    where = made_by(mask, "where")
    if where is None or scalar_of(where.args[1]) != 0.0:
        return None
    fill = scalar_of(where.args[2])
    lt = made_by(where.args[0], "lesser")
    if fill is None or lt is None or not equals(lt.args[0],
                                                 np.arange(keys).reshape(1, 1, 1, keys)):
        return None
    bound = lt.args[1]
    end = reshaped(bound)
    if (end is None or not has_shape(bound, (bsz, 1, 1, 1)) or end.data_type != "int32"
            or not has_shape(end, (bsz,)) or not np.isfinite(fill)):
        return None
    return end, fill


def match_attention(out: MLOperand, float16: bool = False) -> AttentionMatch | None:
    """The Attention whose output is `out` (see the module docstring), else None.
    `float16`: a float16 attention matches too."""
    dtype = out.data_type
    if dtype not in ((F32, F16) if float16 else (F32,)):
        return None
    heads_of = merged_heads(out)
    if heads_of is None:
        return None
    merged, bsz, heads, seq, size = heads_of
    product = made_by(merged, "matmul")
    if product is None:
        return None
    probs, v_heads = product.args
    soft = made_by(probs, "softmax")
    if soft is None or int(soft.args[1] if len(soft.args) > 1 else soft.options["axis"]) != 3:
        return None
    scores = soft.args[0]
    mask: tuple[MLOperand, float] | None = None
    add = made_by(scores, "add")
    if add is not None:
        for raw, m in ((add.args[0], add.args[1]), (add.args[1], add.args[0])):
            mask = _end_mask(m, bsz, seq)
            if mask is not None and made_by(raw, "matmul") is not None:
                scores = raw
                break
        else:
            return None
    qk = made_by(scores, "matmul")
    if qk is None or not has_shape(qk.outputs[0], (bsz, heads, seq, seq)):
        return None
    q_scaled, k_t = qk.args
    k_heads = transposed(k_t, [0, 1, 3, 2])
    scale, q_heads = 1.0, q_scaled
    mul = made_by(q_scaled, "mul")
    if mul is not None:
        s = scalar_of(mul.args[1])
        if s is None:
            return None
        scale, q_heads = float(np.float32(s)), mul.args[0]
    if k_heads is None:
        return None
    q, k, v = (split_heads(t, bsz, seq, heads, size) for t in (q_heads, k_heads, v_heads))
    if q is None or k is None or v is None or q.kind != "output":
        return None
    split = q.operator
    if (split is None or split.op != "split" or list(split.outputs) != [q, k, v]
            or int(split.options.get("axis", 0)) != 2):
        return None
    qkv = split.args[0]
    biased = made_by(qkv, "add")
    if biased is None:
        return None
    for mm, b in ((biased.args[0], biased.args[1]), (biased.args[1], biased.args[0])):
        bias = const_of(b)
        if bias is None or bias.size != 3 * heads * size:
            continue
        if bias.ndim and bias.shape[-1] != bias.size:
            continue
        if not has_shape(mm, (bsz, seq, 3 * heads * size)):
            continue
        mask_index, fill = (mask[0], mask[1]) if mask else (None, -10000.0)
        quant = _quantized_projection(mm, 3 * heads * size) if dtype == F32 else None
        if quant is not None:
            return AttentionMatch(quant.x, quant.weight, bias.reshape(-1).astype(np.float32),
                                  heads, scale, mask_index, fill, out, quant)
        matmul = made_by(mm, "matmul")
        if matmul is None:
            continue
        x, w = matmul.args
        weight = const_of(w)
        if (weight is None or x.data_type != dtype or x.rank != 3
                or not has_shape(x, (bsz, seq, int(x.shape[2])))
                or weight.shape != (int(x.shape[2]), 3 * heads * size)):
            continue
        return AttentionMatch(x, weight.astype(np.float32), bias.reshape(-1).astype(np.float32),
                              heads, scale, mask_index, fill, out)
    return None


def _size1(operand: object) -> MLOperand | None:
    """`operand` when it is an MLOperand of one element."""
    if not isinstance(operand, MLOperand) or int(np.prod(operand.shape, dtype=np.int64)) != 1:
        return None
    return operand


def _quantized_projection(mm: MLOperand, total: int) -> QuantizedProjection | None:
    """The QAttention projection when `mm` is mul(matmul(dequantizeLinear(x, 1, zx),
    dequantizeLinear(W, 1, zw)), mul(sx, sw)) (either operand order of the muls; see the
    module docstring), else None."""
    mul = made_by(mm, "mul")
    if mul is None:
        return None
    for acc, factor in ((mul.args[0], mul.args[1]), (mul.args[1], mul.args[0])):
        matmul, scales = made_by(acc, "matmul"), made_by(factor, "mul")
        if matmul is None or scales is None:
            continue
        dx, dw = (made_by(a, "dequantizeLinear") for a in matmul.args)
        if dx is None or dw is None:
            continue
        x, w = dx.args[0], const_of(dw.args[0])
        if (x.data_type != "uint8" or x.rank != 3 or w is None or w.ndim != 2
                or w.dtype not in (np.int8, np.uint8) or w.shape[1] != total
                or not _ones(dx.args[1]) or not _ones(dw.args[1])):
            continue
        zx = _size1(dx.args[2]) if len(dx.args) > 2 and dx.args[2] is not None else None
        zw = const_of(dw.args[2]) if len(dw.args) > 2 and dw.args[2] is not None else None
        if (len(dx.args) > 2 and dx.args[2] is not None and zx is None) or (
                zw is not None and zw.size not in (1, total)):
            continue
        if zw is not None and zw.size == total and zw.shape[-1] != total:
            continue
        for sx_, sw_ in ((scales.args[0], scales.args[1]), (scales.args[1], scales.args[0])):
            sx, sw = _size1(sx_), const_of(sw_)
            if (sx is None or sx.data_type != F32 or sw is None or sw.dtype != np.float32
                    or sw.size not in (1, total) or (sw.size > 1 and sw.shape[-1] != total)):
                continue
            return QuantizedProjection(x, w, sx, sw.reshape(-1) if sw.size > 1 else
                                       sw.reshape(()), zx,
                                       None if zw is None else (zw.reshape(-1) if zw.size > 1
                                                                else zw.reshape(())))
    return None


def _ones(operand: object) -> bool:
    v = const_of(operand)
    return v is not None and bool(np.all(v == 1))


def plan_attention(graph: MLGraph, float16: bool = False
                   ) -> dict[int, tuple[AttentionMatch, int]]:
    """The operations whose output a matched Attention computes: (the match, 0). `float16`:
    float16 attentions too (float16 chains computed in float32)."""
    plan: dict[int, tuple[AttentionMatch, int]] = {}
    for i, op in enumerate(graph.operations):
        if op.op == "reshape" and op.outputs[0].rank == 3:
            match = match_attention(op.outputs[0], float16)
            if match is not None:
                plan[i] = (match, 0)
    return plan


def emit_attention(e: Emitter, match: AttentionMatch) -> list[str]:
    """The output of one com.microsoft Attention node computing `match` (float32; a float16
    match runs on x's float32 value and its result is rounded to float16)."""
    q = match.quant
    if q is not None:
        return [_emit_qattention(e, match, q)]
    inputs = [e.input(match.x, F32), e.const(match.weight, F32, "qkv_weight"),
              e.const(match.bias, F32, "qkv_bias")]
    if match.mask_index is not None:
        inputs.append(e.input(match.mask_index))
    y = e.node("Attention", inputs, F32, domain=DOMAIN, num_heads=match.heads,
               scale=match.scale, mask_filter_value=match.mask_filter_value)
    return [e.cast(y, match.output.data_type)]


def _scalar_value(e: Emitter, operand: MLOperand) -> str:
    """The ONNX value of a one-element operand, as a rank-0 tensor."""
    name = e.input(operand)
    return name if operand.rank == 0 else e.reshape(name, [])


def _emit_qattention(e: Emitter, match: AttentionMatch, q: QuantizedProjection) -> str:
    """One com.microsoft QAttention node computing a quantized `match`."""
    w_type = "int8" if q.weight.dtype == np.int8 else "uint8"
    inputs = [e.input(q.x), e.const(q.weight, w_type, "qkv_weight"),
              e.const(match.bias, F32, "qkv_bias"), _scalar_value(e, q.x_scale),
              e.const(q.weight_scale, F32, "qkv_weight_scale"),
              "" if match.mask_index is None else e.input(match.mask_index),
              "" if q.x_zero_point is None else _scalar_value(e, q.x_zero_point),
              "" if q.weight_zero_point is None else e.const(q.weight_zero_point, w_type,
                                                             "qkv_weight_zero_point")]
    while inputs[-1] == "":
        inputs.pop()
    return e.node("QAttention", inputs, F32, domain=DOMAIN, num_heads=match.heads,
                  scale=match.scale, mask_filter_value=match.mask_filter_value)
