"""onnxruntime's mixture of experts (com.microsoft MoE, QMoE; the genai model builder's
Mixtral / Qwen-MoE / gpt-oss / Gemma-MoE layers) -> every expert computed densely, mixed with
top-k routing weights (exact: an expert that is not selected gets weight 0).

For tokens x [T, H] (a [B, S, H] input is T = B·S rows) and router logits [T, E]:
- routing: p = softmax(logits) (float32); expert j is selected for a token when fewer than k
  experts rank above it, ranking by (p, expert index) descending as onnxruntime's
  partial_sort does (ties go to the higher index); its weight is p_j, or p_j / Σ selected p
  with normalize_routing_weights. The rank is an [T, E, E] comparison (WebNN has no topK).
- experts: h = x · W1[e]ᵀ + b1[e] (W1 [E, F, H]; the legacy [E, H, F] layout when
  fc2's shape says so), a = act(h), y[e] = a · W2[e]ᵀ + b2[e] (W2 [E, H, I]) for all E
  experts at once (batched matmul [E, T, H] · [E, H, F]).
- output: Σ_e weight[t, e] · y[e, t], in the input's shape and type (computed in float32).
Activations: relu, gelu (onnxruntime's CPU kernel uses the tanh approximation), silu,
identity, swiglu (G = min(g, limit), L = clamp(l, -limit, limit), G · sigmoid(alpha·G) ·
(L + beta); swiglu_fusion 1: g, l interleaved on each FC1 row, 2: concatenated).
QMoE: the integer weights (uint8, expert_weight_bits 4 or 8, two 4-bit values per byte low
nibble first, [E, N, K·bits/8]) are dequantized at conversion time, (q - zero point) · scale
with per-row scales [E, N] or block scales [E, N, K/block_size] and the zero point 2^(bits-1)
when fc*_zero_points are omitted, then computed as MoE. The routing follows the operator's
definition: onnxruntime 1.31.1's CPU QMoE kernel normalizes the top-k weights even when
normalize_routing_weights is 0 (its MoE kernel does not), so such a QMoE node differs from
that kernel for k < num_experts.
The dense form computes E/k times the arithmetic of a routed kernel: meant for small expert
counts (the graph holds every expert's weights, float32 for QMoE).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    attr_float,
    attr_int,
    attr_str,
    check_arity,
    fast_gelu,
    float_operand,
    scalar,
    to_type,
)
from op_mappings.onnx.contrib._quant_common import unpack_bits

MS = "com.microsoft"
ACTIVATIONS = ("relu", "gelu", "silu", "identity", "swiglu")


def _routing(ctx: ImportContext, logits: Any, k: int, normalize: bool) -> Any:
    """[T, E] float32 routing weights: softmax, top-k by (p, index) descending, 0 elsewhere."""
    b = ctx.builder
    experts = logits.shape[1]
    p = b.softmax(to_type(ctx, logits, "float32"), 1)
    if k < experts:
        pi = b.reshape(p, [p.shape[0], experts, 1])  # p_i along axis 1
        pj = b.reshape(p, [p.shape[0], 1, experts])  # p_j along axis 2
        later = np.triu(np.ones((experts, experts), np.float32), 1).T  # i > j
        above = b.add(b.cast(b.greater(pi, pj), "float32"),
                      b.mul(b.cast(b.equal(pi, pj), "float32"), ctx.constant(later)))
        rank = b.reduce_sum(above, axes=[1])  # [T, E]: experts ranked above j
        keep = b.lesser(rank, scalar(ctx, float(k), "float32"))
        p = b.where(keep, p, scalar(ctx, 0.0, "float32"))
    if normalize:
        p = b.div(p, b.reduce_sum(p, axes=[1], keep_dimensions=True))
    return p


def _activate(ctx: ImportContext, node: Node, h: Any, name: str, fusion: int) -> Any:
    b = ctx.builder
    if name == "relu":
        return b.relu(h)
    if name == "gelu":
        return fast_gelu(ctx, h)
    if name == "silu":
        return b.mul(h, b.sigmoid(h))
    if name == "identity":
        return h
    e, t, f = h.shape
    inter = f // 2
    if fusion == 1:
        pairs = b.reshape(h, [e, t, inter, 2])
        g = b.reshape(b.slice(pairs, [0, 0, 0, 0], [e, t, inter, 1]), [e, t, inter])
        lin = b.reshape(b.slice(pairs, [0, 0, 0, 1], [e, t, inter, 1]), [e, t, inter])
    else:
        g = b.slice(h, [0, 0, 0], [e, t, inter])
        lin = b.slice(h, [0, 0, inter], [e, t, inter])
    alpha = attr_float(node, "activation_alpha", 1.0)
    beta = attr_float(node, "activation_beta", 0.0)
    if "swiglu_limit" in node.attrs:
        limit = attr_float(node, "swiglu_limit", None)
        g = b.clamp(g, max_value=limit)
        lin = b.clamp(lin, min_value=-limit, max_value=limit)
    gate = b.mul(g, b.sigmoid(b.mul(g, scalar(ctx, alpha, "float32"))))
    return b.mul(gate, b.add(lin, scalar(ctx, beta, "float32")))


def _transposed(ctx: ImportContext, w: Any) -> Any:
    """[E, N, K] -> [E, K, N] (numpy when constant)."""
    if isinstance(w, np.ndarray):
        return ctx.constant(np.ascontiguousarray(np.swapaxes(w, 1, 2), np.float32))
    return ctx.builder.transpose(to_type(ctx, w, "float32"), permutation=[0, 2, 1])


def _as_is(ctx: ImportContext, w: Any) -> Any:
    if isinstance(w, np.ndarray):
        return ctx.constant(np.ascontiguousarray(w, np.float32))
    return to_type(ctx, w, "float32")


def moe_layer(ctx: ImportContext, node: Node, x: Any, logits: Any, w1: Any, b1: Any,
              w2: Any, b2: Any) -> Any:
    """The MoE computation (module docstring) with weights as numpy arrays (constants) or
    operands; biases operands or None."""
    b = ctx.builder
    if x.rank not in (2, 3):
        raise InvalidModel(f"{node.op_type} input must be 2-D or 3-D, got shape "
                           f"{list(x.shape)}")
    hidden = x.shape[-1]
    tokens = int(np.prod(x.shape[:-1], dtype=np.int64))
    experts = logits.shape[-1] if logits.rank == 2 else -1
    if logits.rank != 2 or logits.shape[0] != tokens:
        raise InvalidModel(f"{node.op_type} router_probs must be [{tokens}, num_experts], got "
                           f"{list(logits.shape)}")
    if attr_int(node, "use_sparse_mixer", 0):
        raise UnsupportedAttribute(f"{node.op_type} use_sparse_mixer=1 is not supported")
    act = attr_str(node, "activation_type", "relu")
    if act not in ACTIVATIONS:
        raise UnsupportedAttribute(f"{node.op_type} activation_type {act!r} is not one of "
                                   f"{', '.join(ACTIVATIONS)}")
    fusion = attr_int(node, "swiglu_fusion", 0)
    if act == "swiglu" and fusion not in (1, 2):
        raise UnsupportedAttribute(f"{node.op_type} swiglu needs swiglu_fusion 1 or 2 (FC1 "
                                   f"holds both projections), got {fusion}")
    k = attr_int(node, "k", 1)
    if not 1 <= k <= experts:
        raise InvalidModel(f"{node.op_type} k={k} must be in [1, {experts}]")
    s1, s2 = tuple(w1.shape), tuple(w2.shape)
    if len(s1) != 3 or len(s2) != 3 or s1[0] != experts or s2[0] != experts:
        raise InvalidModel(f"{node.op_type} expert weights {list(s1)} and {list(s2)} must be "
                           f"3-D with {experts} experts")
    inter = s2[1] * s2[2] // hidden
    f1 = 2 * inter if act == "swiglu" else inter
    legacy = hidden != inter and s2[1] == inter
    want1, want2 = ((experts, hidden, f1), (experts, inter, hidden)) if legacy else \
        ((experts, f1, hidden), (experts, hidden, inter))
    if s1 != want1 or s2 != want2:
        raise InvalidModel(f"{node.op_type} fc1/fc2 weights {list(s1)} / {list(s2)} do not fit "
                           f"hidden {hidden}: expected {list(want1)} / {list(want2)}")
    xt = b.reshape(to_type(ctx, x, "float32"), [1, tokens, hidden])
    h = b.matmul(xt, _as_is(ctx, w1) if legacy else _transposed(ctx, w1))  # [E, T, F]
    if b1 is not None:
        h = b.add(h, b.reshape(to_type(ctx, b1, "float32"), [experts, 1, f1]))
    a = _activate(ctx, node, h, act, fusion)
    y = b.matmul(a, _as_is(ctx, w2) if legacy else _transposed(ctx, w2))  # [E, T, H]
    if b2 is not None:
        y = b.add(y, b.reshape(to_type(ctx, b2, "float32"), [experts, 1, hidden]))
    weights = _routing(ctx, logits, k, bool(attr_int(node, "normalize_routing_weights", 0)))
    mixed = b.mul(y, b.reshape(b.transpose(weights), [experts, tokens, 1]))
    out = b.reduce_sum(mixed, axes=[0])
    return to_type(ctx, b.reshape(out, list(x.shape)), x.data_type)


def _no_fc3(node: Node, index: int) -> None:
    if node.input(index):
        raise UnsupportedAttribute(f"{node.op_type} fc3 (a separate gate projection, input "
                                   f"{index}) is not supported (onnxruntime's CPU kernel has "
                                   "none either)")


def _bias(ctx: ImportContext, node: Node, index: int, rows: int, cols: int, what: str) -> Any:
    if not node.input(index):
        return None
    bias = float_operand(ctx, node, index, what)
    if list(bias.shape) != [rows, cols]:
        raise InvalidModel(f"{node.op_type} {what} has shape {list(bias.shape)}, expected "
                           f"{[rows, cols]}")
    return bias


def _weight(ctx: ImportContext, node: Node, index: int, what: str) -> Any:
    value = const_or_none(ctx, node.inputs[index])
    if value is not None and value.dtype.kind == "f":
        return np.asarray(value, np.float32)
    return float_operand(ctx, node, index, what)


@onnx_op("MoE", since=1, domain=MS)
def moe(ctx: ImportContext, node: Node) -> Outputs:
    """Dense mixture of experts (see the module docstring).
    Restrictions: float32/float16; no fc3 weights (a separate gate projection), no
    use_sparse_mixer; activation_type relu, gelu (tanh form), silu, identity or swiglu
    (swiglu_fusion 1 or 2); all experts are computed."""
    check_arity(node, (5, 8), required=(0, 1, 2, 4))
    _no_fc3(node, 6)
    x = float_operand(ctx, node, 0, "input")
    logits = float_operand(ctx, node, 1, "router_probs")
    w1, w2 = _weight(ctx, node, 2, "fc1_experts_weights"), _weight(ctx, node, 4,
                                                                     "fc2_experts_weights")
    experts = logits.shape[-1]
    hidden = x.shape[-1]
    b1 = _bias(ctx, node, 3, experts, w1.shape[1] if w1.shape[-1] == hidden else w1.shape[2],
               "fc1_experts_bias")
    b2 = _bias(ctx, node, 5, experts, hidden, "fc2_experts_bias")
    return [moe_layer(ctx, node, x, logits, w1, b1, w2, b2)]


def _dequantize(ctx: ImportContext, node: Node, wi: int, si: int, zi: int, bits: int,
                block: int, k_dim: int, what: str) -> np.ndarray:
    """QMoE weights [E, N, K] float32 from uint8 input `wi`, scales `si`, zero points `zi`."""
    names = (node.inputs[wi], node.input(si), node.input(zi))
    packed = const_or_none(ctx, names[0])
    scales = const_or_none(ctx, names[1]) if names[1] else None
    if packed is None or scales is None:
        raise UnsupportedAttribute(f"{node.op_type} {what} weights and scales must be constant")
    if packed.dtype != np.uint8 or packed.ndim != 3:
        raise InvalidModel(f"{node.op_type} {what} weights must be 3-D uint8, got "
                           f"{packed.dtype}{list(packed.shape)}")
    e, n = packed.shape[:2]
    q = unpack_bits(packed, bits, k_dim).astype(np.float32) if bits == 4 \
        else packed.astype(np.float32)
    if q.shape[-1] != k_dim:
        raise InvalidModel(f"{node.op_type} {what} weights hold {q.shape[-1]} values per row, "
                           f"{k_dim} are needed")
    groups = -(-k_dim // block) if block else 1
    s = np.asarray(scales, np.float32).reshape(e, n, groups) if scales.size == e * n * groups \
        else None
    if s is None:
        raise InvalidModel(f"{node.op_type} {what} scales have shape {list(scales.shape)}, "
                           f"expected {[e, n] if not block else [e, n, groups]}")
    if names[2]:
        zp_packed = const_or_none(ctx, names[2])
        if zp_packed is None:
            raise UnsupportedAttribute(f"{node.op_type} {what} zero points must be constant")
        zp = (unpack_bits(zp_packed.reshape(e, n, -1), bits, groups) if bits == 4
              else zp_packed.reshape(e, n, groups)).astype(np.float32)
    else:
        zp = np.full((e, n, groups), 2.0 ** (bits - 1), np.float32)
    index = np.arange(k_dim) // block if block else np.zeros(k_dim, np.int64)
    return (q - zp[:, :, index]) * s[:, :, index]


@onnx_op("QMoE", since=1, domain=MS)
def qmoe(ctx: ImportContext, node: Node) -> Outputs:
    """MoE with integer expert weights dequantized at conversion time (see the module
    docstring). Restrictions: those of MoE; quant_type "int" with expert_weight_bits 4 or 8
    (no per-FC bit overrides, no float8/fp4 weights, no router_weights or activation scales);
    weights, scales and zero points constant; weights_prepacked absent, -1 or 0 (raw layout)."""
    check_arity(node, (6, 21), required=(0, 1, 2, 5))
    if attr_str(node, "quant_type", "int") != "int":
        raise UnsupportedAttribute(f"QMoE quant_type {node.attrs['quant_type']!r} is not "
                                   "supported (int is)")
    if attr_int(node, "weights_prepacked", -1) == 1:
        raise UnsupportedAttribute("QMoE weights_prepacked=1 (CUTLASS layout) is not supported")
    for name in ("fc1_expert_weight_bits", "fc2_expert_weight_bits", "fc3_expert_weight_bits"):
        if name in node.attrs:
            raise UnsupportedAttribute(f"QMoE {name} is not supported")
    extra = [i for i in range(14, len(node.inputs)) if node.input(i)]
    if extra:
        raise UnsupportedAttribute(f"QMoE inputs {extra} (router weights, global or activation "
                                   "scales) are not supported")
    _no_fc3(node, 8)
    bits = attr_int(node, "expert_weight_bits", 4)
    if bits not in (4, 8):
        raise UnsupportedAttribute(f"QMoE expert_weight_bits={bits} is not supported (4 or 8)")
    block = attr_int(node, "block_size", 0)
    x = float_operand(ctx, node, 0, "input")
    logits = float_operand(ctx, node, 1, "router_probs")
    experts, hidden = logits.shape[-1], x.shape[-1]
    fc2_shape = ctx.shape(node.inputs[5])
    if len(fc2_shape) != 3:
        raise InvalidModel(f"QMoE fc2 weights must be 3-D, got {list(fc2_shape)}")
    inter = fc2_shape[2] * 8 // bits
    act = attr_str(node, "activation_type", "relu")
    f1 = 2 * inter if act == "swiglu" else inter
    w1 = _dequantize(ctx, node, 2, 3, 11, bits, block, hidden, "fc1")
    w2 = _dequantize(ctx, node, 5, 6, 12, bits, block, inter, "fc2")
    b1 = _bias(ctx, node, 4, experts, f1, "fc1_experts_bias")
    b2 = _bias(ctx, node, 7, experts, hidden, "fc2_experts_bias")
    return [moe_layer(ctx, node, x, logits, w1, b1, w2, b2)]
