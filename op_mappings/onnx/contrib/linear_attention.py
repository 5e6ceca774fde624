"""onnxruntime's gated-DeltaNet building blocks (com.microsoft; the genai model builder's
Qwen3.5 / Qwen3-Next / Mamba-style layers) -> WebNN ops, the recurrence unrolled.

- CausalConvWithState (ndim 1): the depthwise causal convolution of the past state
  (zeros when omitted) concatenated with the input along time: out[t] = bias +
  Σ_j w[c, 0, j] · cat[P + t - (k - 1 - j)·dilation], P = (k - 1)·dilation, then optional
  SiLU; present_state is the last P positions of the concatenation. channels_last = 1 reads
  (B, L, d1...) activations and (B, P, d1...) states (C = d1·...).
- LinearAttentionGate: decay = decay_scale · softplus(a + dt_bias) and beta = sigmoid(b), in
  float32.
- VarlenCausalConvWithState: the same convolution over packed variable-length sequences
  (gathers at indices computed from cumulative_sequence_length).
- LinearAttention (update_rule linear, gated, delta, gated_delta): per token t and head,
  S ← exp(g_t)·S (gated), r = Sᵀk_t, S ← S + k_t ⊗ β_t(v_t - r) (delta; k_t ⊗ v_t otherwise),
  o_t = scale · q_tᵀS, as onnxruntime's CPU kernel computes it; every token a step of about
  ten WebNN ops (the `max_recurrent_steps` budget bounds the tokens). Queries and keys may
  have fewer heads than the values (each value head reads query head h·Hq/Hkv and key head
  h·Hk/Hkv); the output is [B, T, Hkv·dv] and present_state [B, Hkv, dk, dv].
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.unroll import check_steps
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    attr_float,
    attr_int,
    attr_str,
    check_arity,
    check_same_type,
    float_operand,
    scalar,
    to_type,
)

MS = "com.microsoft"
UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")


@onnx_op("CausalConvWithState", since=1, domain=MS)
def causal_conv_with_state(ctx: ImportContext, node: Node) -> Outputs:
    """Stateful depthwise causal 1-D convolution (see the module docstring).
    Restrictions: float32/float16; ndim 1; state_window 0; kernel size >= 2; activation
    none, silu or swish."""
    check_arity(node, (2, 4), (1, 2))
    b = ctx.builder
    if attr_int(node, "ndim", 1) != 1 or attr_int(node, "state_window", 0) != 0:
        raise UnsupportedAttribute("CausalConvWithState supports ndim 1 and state_window 0")
    act = attr_str(node, "activation", "none")
    if act not in ("none", "silu", "swish"):
        raise UnsupportedAttribute(f"CausalConvWithState activation {act!r} is not none, silu "
                                   "or swish")
    dilation = attr_int(node, "dilation", 1)
    last = attr_int(node, "channels_last", 0)
    x = float_operand(ctx, node, 0, "input")
    w = float_operand(ctx, node, 1, "weight")
    bias = float_operand(ctx, node, 2, "bias") if node.input(2) else None
    past = float_operand(ctx, node, 3, "past_state") if node.input(3) else None
    check_same_type(node, [(x, "input"), (w, "weight"), (bias, "bias"), (past, "past_state")])
    if w.rank != 3 or w.shape[1] != 1 or w.shape[2] < 2 or dilation < 1:
        raise InvalidModel(f"CausalConvWithState weight {list(w.shape)} must be (C, 1, k) with "
                           f"k >= 2, dilation {dilation} >= 1")
    channels, _, k = w.shape
    state = (k - 1) * dilation
    shape = list(x.shape)
    if last:
        if x.rank < 3 or int(np.prod(shape[2:])) != channels:
            raise InvalidModel(f"CausalConvWithState input {shape} must be (B, L, d...) with "
                               f"{channels} channels")
        bsz, length = shape[:2]
        x = b.transpose(b.reshape(x, [bsz, length, channels]), permutation=[0, 2, 1])
        state_shape = [bsz, state, *shape[2:]]
    else:
        if x.rank != 3 or shape[1] != channels:
            raise InvalidModel(f"CausalConvWithState input {shape} must be (B, {channels}, L)")
        bsz, _, length = shape
        state_shape = [bsz, channels, state]
    if past is None:
        past_cf = ctx.constant(np.zeros([bsz, channels, state], x.data_type))
    else:
        if list(past.shape) != state_shape:
            raise InvalidModel(f"CausalConvWithState past_state {list(past.shape)} must be "
                               f"{state_shape}")
        past_cf = b.transpose(b.reshape(past, [bsz, state, channels]), permutation=[0, 2, 1]) \
            if last else past
    cat = b.concat([past_cf, x], 2)  # [B, C, P + L]
    y = b.conv2d(b.reshape(cat, [bsz, channels, state + length, 1]),
                 b.reshape(w, [channels, 1, k, 1]), dilations=[dilation, 1], groups=channels,
                 bias=bias)
    y = b.reshape(y, [bsz, channels, length])
    if act != "none":
        y = b.mul(y, b.sigmoid(y))
    present = b.slice(cat, [0, 0, length], [bsz, channels, state])
    if last:
        y = b.reshape(b.transpose(y, permutation=[0, 2, 1]), shape)
        present = b.reshape(b.transpose(present, permutation=[0, 2, 1]), state_shape)
    return [y, present][:len(node.outputs)]


@onnx_op("LinearAttentionGate", since=1, domain=MS)
def linear_attention_gate(ctx: ImportContext, node: Node) -> Outputs:
    """decay = decay_scale · softplus(a + dt_bias), beta = sigmoid(b) (see the module
    docstring). Restrictions: float32/float16 a and b; dt_bias and decay_scale float32 of
    a's last dimension."""
    check_arity(node, (3, 4), (1, 2))
    b = ctx.builder
    a = float_operand(ctx, node, 0, "a")
    dt_bias = float_operand(ctx, node, 1, "dt_bias")
    decay_scale = float_operand(ctx, node, 2, "decay_scale")
    for v, what in ((dt_bias, "dt_bias"), (decay_scale, "decay_scale")):
        if a.rank == 0 or list(v.shape) != [a.shape[-1]]:
            raise InvalidModel(f"LinearAttentionGate {what} {list(v.shape)} must be "
                               f"[{a.shape[-1] if a.rank else '?'}]")
    sp = b.softplus(b.add(to_type(ctx, a, "float32"), to_type(ctx, dt_bias, "float32")))
    outs: list[Any] = [to_type(ctx, b.mul(to_type(ctx, decay_scale, "float32"), sp),
                               a.data_type)]
    if len(node.outputs) > 1:
        if node.outputs[1] and not node.input(3):
            raise InvalidModel("LinearAttentionGate beta needs the b input")
        outs.append(b.sigmoid(float_operand(ctx, node, 3, "b")) if node.outputs[1] else None)
    return outs


def _heads(ctx: ImportContext, x: Any, t: int, heads: int, size: int,
           index: np.ndarray | None) -> Any:
    """Token t of packed x [B, T, heads·size] as [B, H, 1, size], heads gathered by `index`
    (None: as they are)."""
    b = ctx.builder
    bsz = x.shape[0]
    row = b.reshape(b.slice(x, [0, t, 0], [bsz, 1, heads * size]), [bsz, heads, 1, size])
    return row if index is None else b.gather(row, ctx.constant(index), axis=1)


def _per_head(ctx: ImportContext, x: Any, t: int, tail: list[int]) -> Any:
    """Token t of a gate [B, T, n] as [B, n // prod(tail), *tail] broadcastable to the state."""
    b = ctx.builder
    bsz, _, n = x.shape
    row = b.slice(x, [0, t, 0], [bsz, 1, n])
    lead = n // int(np.prod(tail)) if tail != [1, 1] else n
    return b.reshape(row, [bsz, lead, *tail])


@onnx_op("LinearAttention", since=1, domain=MS)
def linear_attention(ctx: ImportContext, node: Node) -> Outputs:
    """The linear-attention recurrence over the tokens (see the module docstring).
    Restrictions: float32/float16 (computed in float32); q_num_heads <= kv_num_heads, both
    dividing evenly, and key heads dividing kv_num_heads; decay [B, T, Hkv] or
    [B, T, Hkv·dk]; beta [B, T, Hkv] or [B, T, 1]."""
    check_arity(node, (3, 6), (1, 2))
    rule = attr_str(node, "update_rule", "gated_delta")
    if rule not in UPDATE_RULES:
        raise InvalidModel(f"LinearAttention update_rule {rule!r} is not one of "
                           f"{', '.join(UPDATE_RULES)}")
    hq, hkv = attr_int(node, "q_num_heads", None), attr_int(node, "kv_num_heads", None)
    if attr_int(node, "state_window", 0):
        raise UnsupportedAttribute("LinearAttention state_window is not supported")
    q, k, v = (float_operand(ctx, node, i, w) for i, w in enumerate(("query", "key", "value")))
    check_same_type(node, [(q, "query"), (k, "key"), (v, "value")])
    if any(t.rank != 3 for t in (q, k, v)) or len({t.shape[0] for t in (q, k, v)}) != 1 \
            or len({t.shape[1] for t in (q, k, v)}) != 1:
        raise InvalidModel("LinearAttention query, key and value must be [B, T, heads·size] "
                           "of one batch and length")
    bsz, steps, _ = q.shape
    if hq < 1 or hkv < 1 or q.shape[2] % hq or v.shape[2] % hkv or hkv % hq:
        raise InvalidModel(f"LinearAttention heads (q {hq}, kv {hkv}) do not fit query "
                           f"{list(q.shape)} / value {list(v.shape)} (q_num_heads must "
                           "divide kv_num_heads)")
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    hk = k.shape[2] // dk if k.shape[2] % dk == 0 else 0
    if hk < 1 or hkv % hk:
        raise InvalidModel(f"LinearAttention key {list(k.shape)} must hold a number of "
                           f"{dk}-wide heads dividing kv_num_heads {hkv}")
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    decay = float_operand(ctx, node, 4, "decay") if node.input(4) else None
    beta = float_operand(ctx, node, 5, "beta") if node.input(5) else None
    if (gated and decay is None) or (delta and beta is None):
        raise InvalidModel(f"LinearAttention update_rule {rule} needs "
                           f"{'decay' if gated and decay is None else 'beta'}")
    if gated and decay is not None:
        if list(decay.shape) not in ([bsz, steps, hkv], [bsz, steps, hkv * dk]):
            raise InvalidModel(f"LinearAttention decay {list(decay.shape)} must be "
                               f"[{bsz}, {steps}, {hkv}] or [{bsz}, {steps}, {hkv * dk}]")
    if delta and beta is not None and list(beta.shape) not in ([bsz, steps, hkv],
                                                               [bsz, steps, 1]):
        raise InvalidModel(f"LinearAttention beta {list(beta.shape)} must be "
                           f"[{bsz}, {steps}, {hkv}] or [{bsz}, {steps}, 1]")
    check_steps(ctx, steps)
    scale = attr_float(node, "scale", 0.0) or 1.0 / math.sqrt(dk)
    state_shape = [bsz, hkv, dk, dv]
    if node.input(3):
        past = float_operand(ctx, node, 3, "past_state")
        if list(past.shape) != state_shape:
            raise InvalidModel(f"LinearAttention past_state {list(past.shape)} must be "
                               f"{state_shape}")
        s = to_type(ctx, past, "float32")
    else:
        s = ctx.constant(np.zeros(state_shape, np.float32))
    y, s = recurrence(ctx, q, k, v, s, decay if gated else None, beta if delta else None,
                      scale, (hq, hk, hkv), (dk, dv))
    result: list[Any] = [to_type(ctx, y, q.data_type)]
    if len(node.outputs) > 1:
        result.append(s)
    return result


def recurrence(ctx: ImportContext, q: Any, k: Any, v: Any, state: Any, decay: Any, beta: Any,
               scale: float, heads: tuple[int, int, int], sizes: tuple[int, int]
               ) -> tuple[Any, Any]:
    """The unrolled recurrence (module docstring) over packed q [B, T, Hq·dk], k [B, T,
    Hk·dk], v [B, T, Hkv·dv] from float32 `state` [B, Hkv, dk, dv]; decay [B, T, Hkv] or
    [B, T, Hkv·dk] (None: not gated), beta [B, T, Hkv] or [B, T, 1] (None: no delta rule).
    Returns (float32 output [B, T, Hkv·dv], final state)."""
    b = ctx.builder
    hq, hk, hkv = heads
    dk, dv = sizes
    bsz, steps, _ = q.shape
    qf, kf, vf = (to_type(ctx, t, "float32") for t in (q, k, v))
    decay = None if decay is None else to_type(ctx, decay, "float32")
    beta = None if beta is None else to_type(ctx, beta, "float32")
    per_key = decay is not None and decay.shape[2] == hkv * dk
    q_index = None if hq == hkv else (np.arange(hkv) * hq // hkv).astype(np.int32)
    k_index = None if hk == hkv else (np.arange(hkv) // (hkv // hk)).astype(np.int32)
    s = state
    outs = []
    for t in range(steps):
        qt = _heads(ctx, qf, t, hq, dk, q_index)  # [B, H, 1, dk]
        kt = _heads(ctx, kf, t, hk, dk, k_index)
        vt = _heads(ctx, vf, t, hkv, dv, None)  # [B, H, 1, dv]
        if decay is not None:
            g = _per_head(ctx, decay, t, [dk, 1] if per_key else [1, 1])
            s = b.mul(s, b.exp(g if per_key else b.reshape(g, [bsz, hkv, 1, 1])))
        k_col = b.reshape(kt, [bsz, hkv, dk, 1])
        if beta is not None:
            r = b.matmul(kt, s)  # [B, H, 1, dv]
            bt = b.reshape(b.slice(beta, [0, t, 0], [bsz, 1, beta.shape[2]]),
                           [bsz, beta.shape[2], 1, 1])
            s = b.add(s, b.matmul(k_col, b.mul(bt, b.sub(vt, r))))
        else:
            s = b.add(s, b.matmul(k_col, vt))
        outs.append(b.mul(b.matmul(qt, s), scalar(ctx, scale, "float32")))  # [B, H, 1, dv]
    y = outs[0] if steps == 1 else b.concat(outs, 2)  # [B, H, T, dv]
    return b.reshape(b.transpose(y, permutation=[0, 2, 1, 3]), [bsz, steps, hkv * dv]), s


@onnx_op("VarlenCausalConvWithState", since=1, domain=MS)
def varlen_causal_conv_with_state(ctx: ImportContext, node: Node) -> Outputs:
    """CausalConvWithState over packed variable-length sequences: input [T, C] holds sequence
    s at rows cumulative_sequence_length[s]..[s + 1] (run-time values), each continuing its
    own initial_state [B, C, P] (P = (k - 1)·dilation). Every tap of every token is one
    gather from the states and the tokens stacked time-major ([B·P + T, C]) at an index
    computed from the token's sequence and position; final_state holds each sequence's last P
    samples. Restrictions: float32/float16; no compact state updates
    (state_update_capacity 0); activation none, silu or swish."""
    check_arity(node, (5, 6), (1, 3), required=(0, 1, 2, 4))
    if attr_int(node, "state_update_capacity", 0) or node.input(5) or \
            (len(node.outputs) > 2 and node.outputs[2]):
        raise UnsupportedAttribute("VarlenCausalConvWithState compact state updates are not "
                                   "supported")
    act = attr_str(node, "activation", "none")
    if act not in ("none", "silu", "swish"):
        raise UnsupportedAttribute(f"VarlenCausalConvWithState activation {act!r} is not none, "
                                   "silu or swish")
    b = ctx.builder
    x = float_operand(ctx, node, 0, "input")
    w = float_operand(ctx, node, 1, "weight")
    state = float_operand(ctx, node, 4, "initial_state")
    check_same_type(node, [(x, "input"), (w, "weight"), (state, "initial_state")])
    dilation = attr_int(node, "dilation", 1)
    if x.rank != 2 or w.rank != 3 or w.shape[1] != 1 or w.shape[0] != x.shape[1] or \
            w.shape[2] < 2 or dilation < 1:
        raise InvalidModel(f"VarlenCausalConvWithState input {list(x.shape)} and weight "
                           f"{list(w.shape)} must be [T, C] and [C, 1, k >= 2]")
    tokens, channels = x.shape
    k = w.shape[2]
    span = (k - 1) * dilation
    cum = ctx.operand(node.inputs[2])
    bsz = cum.shape[0] - 1 if cum.rank == 1 else 0
    if bsz < 1 or list(state.shape) != [bsz, channels, span]:
        raise InvalidModel(f"VarlenCausalConvWithState cumulative_sequence_length "
                           f"{list(cum.shape)} and initial_state {list(state.shape)} must be "
                           f"[B + 1] and [B, {channels}, {span}]")
    cum = b.cast(cum, "int32") if cum.data_type != "int32" else cum
    stacked = b.concat([b.reshape(b.transpose(state, permutation=[0, 2, 1]),
                                  [bsz * span, channels]), x], 0)  # [B·P + T, C]
    base = bsz * span

    def const(v: np.ndarray) -> Any:
        return ctx.constant(np.ascontiguousarray(v, np.int32))

    starts = b.slice(cum, [0], [bsz])
    ends = b.slice(cum, [1], [bsz])
    t = const(np.arange(tokens).reshape(tokens, 1))
    seq = b.reduce_sum(b.cast(b.greater_or_equal(t, b.reshape(ends, [1, bsz])), "int32"),
                       axes=[1], keep_dimensions=True)  # [T, 1]
    seq = b.min(seq, const(np.asarray(bsz - 1)))
    first = b.gather(starts, b.reshape(seq, [tokens]), axis=0)  # each token's sequence start
    local = b.sub(t, b.reshape(first, [tokens, 1]))  # [T, 1]: position within its sequence
    lags = const(((k - 1 - np.arange(k)) * dilation).reshape(1, k))  # [1, k]
    back = b.sub(local, lags)  # [T, k]: position within the sequence read by each tap
    from_tokens = b.add(const(np.asarray(base)), b.sub(t, lags))
    from_state = b.add(b.mul(seq, const(np.asarray(span))),
                       b.add(back, const(np.asarray(span))))
    index = b.where(b.greater_or_equal(back, const(np.asarray(0))), from_tokens, from_state)
    taps = b.gather(stacked, index, axis=0)  # [T, k, C]
    kernel = b.reshape(b.transpose(b.reshape(w, [channels, k]), permutation=[1, 0]),
                       [1, k, channels])
    y = b.reduce_sum(b.mul(taps, kernel), axes=[1])  # [T, C]
    if node.input(3):
        bias = float_operand(ctx, node, 3, "bias")
        if list(bias.shape) != [channels]:
            raise InvalidModel(f"VarlenCausalConvWithState bias {list(bias.shape)} must be "
                               f"[{channels}]")
        y = b.add(y, bias)
    if act != "none":
        y = b.mul(y, b.sigmoid(y))
    outs: list[Any] = [y]
    if len(node.outputs) > 1:
        if node.outputs[1]:
            lengths = b.reshape(b.sub(ends, starts), [bsz, 1])
            slot = const(np.arange(span).reshape(1, span))
            rel = b.add(b.sub(lengths, const(np.asarray(span))), slot)  # [B, P]
            tok = b.add(const(np.asarray(base)), b.add(b.reshape(starts, [bsz, 1]), rel))
            own = b.add(const((np.arange(bsz) * span).reshape(bsz, 1)),
                        b.add(lengths, slot))
            idx = b.where(b.greater_or_equal(rel, const(np.asarray(0))), tok, own)
            final = b.gather(stacked, idx, axis=0)  # [B, P, C]
            outs.append(b.transpose(final, permutation=[0, 2, 1]))
        else:
            outs.append(None)
    return outs + [None] * (len(node.outputs) - len(outs))
