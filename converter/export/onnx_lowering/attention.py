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

from ...webnn.graph import MLGraph
from ...webnn.operand import MLOperand
from .context import Emitter
from .group_query_attention import (
    DOMAIN,
    F32,
    _const,
    _equals,
    _heads,
    _op,
    _reshaped,
    _scalar,
    _shape,
    _transposed,
)

F16 = "float16"


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


def _end_mask(mask: object, bsz: int, keys: int) -> tuple[MLOperand, float] | None:
    """(end, f) when `mask` is where(arange(T) < reshape(end, [B, 1, 1, 1]), 0, f)."""
    where = _op(mask, "where")
    if where is None or _scalar(where.args[1]) != 0.0:
        return None
    fill = _scalar(where.args[2])
    lt = _op(where.args[0], "lesser")
    if fill is None or lt is None or not _equals(lt.args[0],
                                                 np.arange(keys).reshape(1, 1, 1, keys)):
        return None
    bound = lt.args[1]
    end = _reshaped(bound)
    if (end is None or not _shape(bound, (bsz, 1, 1, 1)) or end.data_type != "int32"
            or not _shape(end, (bsz,)) or not np.isfinite(fill)):
        return None
    return end, fill


def match_attention(out: MLOperand, float16: bool = False) -> AttentionMatch | None:
    """The Attention whose output is `out` (see the module docstring), else None.
    `float16`: a float16 attention matches too."""
    dtype = out.data_type
    if dtype not in ((F32, F16) if float16 else (F32,)) or out.rank != 3:
        return None
    merged = _transposed(_reshaped(out), [0, 2, 1, 3])
    if merged is None or merged.rank != 4:
        return None
    bsz, heads, seq, size = (int(d) for d in merged.shape)
    if not _shape(out, (bsz, seq, heads * size)):
        return None
    product = _op(merged, "matmul")
    if product is None:
        return None
    probs, v_heads = product.args
    soft = _op(probs, "softmax")
    if soft is None or int(soft.args[1] if len(soft.args) > 1 else soft.options["axis"]) != 3:
        return None
    scores = soft.args[0]
    mask: tuple[MLOperand, float] | None = None
    add = _op(scores, "add")
    if add is not None:
        for raw, m in ((add.args[0], add.args[1]), (add.args[1], add.args[0])):
            mask = _end_mask(m, bsz, seq)
            if mask is not None and _op(raw, "matmul") is not None:
                scores = raw
                break
        else:
            return None
    qk = _op(scores, "matmul")
    if qk is None or not _shape(qk.outputs[0], (bsz, heads, seq, seq)):
        return None
    q_scaled, k_t = qk.args
    k_heads = _transposed(k_t, [0, 1, 3, 2])
    scale, q_heads = 1.0, q_scaled
    mul = _op(q_scaled, "mul")
    if mul is not None:
        s = _scalar(mul.args[1])
        if s is None:
            return None
        scale, q_heads = float(np.float32(s)), mul.args[0]
    if k_heads is None:
        return None
    q, k, v = (_heads(t, bsz, seq, heads, size) for t in (q_heads, k_heads, v_heads))
    if q is None or k is None or v is None or q.kind != "output":
        return None
    split = q.operator
    if (split is None or split.op != "split" or list(split.outputs) != [q, k, v]
            or int(split.options.get("axis", 0)) != 2):
        return None
    qkv = split.args[0]
    biased = _op(qkv, "add")
    if biased is None:
        return None
    for mm, b in ((biased.args[0], biased.args[1]), (biased.args[1], biased.args[0])):
        matmul = _op(mm, "matmul")
        bias = _const(b)
        if matmul is None or bias is None or bias.size != 3 * heads * size:
            continue
        if bias.ndim and bias.shape[-1] != bias.size:
            continue
        x, w = matmul.args
        weight = _const(w)
        if (weight is None or x.data_type != dtype or x.rank != 3
                or not _shape(x, (bsz, seq, int(x.shape[2])))
                or weight.shape != (int(x.shape[2]), 3 * heads * size)
                or not _shape(mm, (bsz, seq, 3 * heads * size))):
            continue
        return AttentionMatch(x, weight.astype(np.float32), bias.reshape(-1).astype(np.float32),
                              heads, scale, mask[0] if mask else None,
                              mask[1] if mask else -10000.0, out)
    return None


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
    inputs = [e.input(match.x, F32), e.const(match.weight, F32, "qkv_weight"),
              e.const(match.bias, F32, "qkv_bias")]
    if match.mask_index is not None:
        inputs.append(e.input(match.mask_index))
    y = e.node("Attention", inputs, F32, domain=DOMAIN, num_heads=match.heads,
               scale=match.scale, mask_filter_value=match.mask_filter_value)
    return [e.cast(y, match.output.data_type)]
