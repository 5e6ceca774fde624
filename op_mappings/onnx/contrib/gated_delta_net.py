"""com.microsoft GatedDeltaNet (packed token-major gated delta network, CUDA / WebGPU in
onnxruntime) -> the LinearAttention recurrence (linear_attention.recurrence), unrolled.

query [T, Hq, dk], key [T, Hk, dk], value [T, Hv, dv] (or [B, S, H, d] each; or packed QKV
[T, 2·Hq·dk + Hv·dv] with key and value absent) are read as B uniform sequences, B taken
from initial_state [B, Hv, dv, dk] (V-major; required in the rank-3 form) or the rank-4
shape. Per token and value head: S ← exp(g)·S; S ← S + k ⊗ β(v - Sᵀk) (delta rules);
o = scale·Sᵀq (scale default 1/√dk), S the [dk, dv] state (transposed from and to the
V-major state at the boundaries). gate_activation "qwen": g = -exp(a_log)·softplus(decay +
dt_bias) in float32; beta_activation "sigmoid": β = sigmoid(beta). The final state is
float32 [B, Hv, dv, dk].
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
    float_operand,
    to_type,
)
from op_mappings.onnx.contrib.linear_attention import UPDATE_RULES, recurrence

MS = "com.microsoft"


def _unsupported(node: Node) -> None:
    if node.input(3):
        raise UnsupportedAttribute("GatedDeltaNet cu_seqlens (ragged packing) is not supported")
    if attr_int(node, "state_update_capacity", 0) or node.input(9) or \
            (len(node.outputs) > 2 and node.outputs[2]):
        raise UnsupportedAttribute("GatedDeltaNet compact state updates are not supported")
    if attr_int(node, "qk_l2_norm", 0):
        raise UnsupportedAttribute("GatedDeltaNet qk_l2_norm=1 is not supported (normalise "
                                   "the query and key heads upstream)")


@onnx_op("GatedDeltaNet", since=1, domain=MS)
def gated_delta_net(ctx: ImportContext, node: Node) -> Outputs:
    """Gated delta network over uniform sequences (see the module docstring).
    Restrictions: float32/float16; no cu_seqlens, no compact state updates, no qk_l2_norm;
    decay per value head ([T, Hv] / [B, S, Hv]); Hv a multiple of Hq = Hk."""
    check_arity(node, (1, 11), (1, 3))
    _unsupported(node)
    b = ctx.builder
    rule = attr_str(node, "update_rule", "gated_delta")
    if rule not in UPDATE_RULES:
        raise InvalidModel(f"GatedDeltaNet update_rule {rule!r} is not one of "
                           f"{', '.join(UPDATE_RULES)}")
    gate_act = attr_str(node, "gate_activation", "none")
    beta_act = attr_str(node, "beta_activation", "none")
    if gate_act not in ("none", "qwen") or beta_act not in ("none", "sigmoid"):
        raise UnsupportedAttribute(f"GatedDeltaNet gate_activation {gate_act!r} / "
                                   f"beta_activation {beta_act!r} (none/qwen, none/sigmoid)")
    q = float_operand(ctx, node, 0, "query")
    state = float_operand(ctx, node, 6, "initial_state") if node.input(6) else None
    if bool(node.input(1)) != bool(node.input(2)):
        raise InvalidModel("GatedDeltaNet key and value must be given together")
    if node.input(1):
        k, v = float_operand(ctx, node, 1, "key"), float_operand(ctx, node, 2, "value")
        if q.rank not in (3, 4) or k.rank != q.rank or v.rank != q.rank:
            raise InvalidModel("GatedDeltaNet query, key and value must all be [T, H, d] or "
                               "[B, S, H, d]")
        hq, dk = q.shape[-2:]
        hk, hv, dv = k.shape[-2], v.shape[-2], v.shape[-1]
        if k.shape[-1] != dk:
            raise InvalidModel(f"GatedDeltaNet key head size {k.shape[-1]} != query's {dk}")
    else:
        if state is None or q.rank != 2:
            raise InvalidModel("GatedDeltaNet packed QKV needs a [T, width] query and "
                               "initial_state")
        hv, dv, dk = state.shape[1:]
        hq = hk = (q.shape[1] - hv * dv) // (2 * dk)
        if hq < 1 or 2 * hq * dk + hv * dv != q.shape[1]:
            raise InvalidModel(f"GatedDeltaNet packed QKV width {q.shape[1]} does not fit "
                               f"initial_state {list(state.shape)}")
        k = v = None
    if hq != hk or hv % hq:
        raise InvalidModel(f"GatedDeltaNet needs num_heads_q == num_heads_k dividing "
                           f"num_heads_v, got {hq}, {hk}, {hv}")
    if q.rank == 4:
        bsz, seq = q.shape[:2]
    else:
        if state is None:
            raise InvalidModel("GatedDeltaNet without cu_seqlens needs initial_state (the "
                               "batch size)")
        bsz = state.shape[0]
        if q.shape[0] % bsz:
            raise InvalidModel(f"GatedDeltaNet {q.shape[0]} tokens are not {bsz} uniform "
                               "sequences")
        seq = q.shape[0] // bsz
    state_shape = [bsz, hv, dv, dk]
    if state is not None and list(state.shape) != state_shape:
        raise InvalidModel(f"GatedDeltaNet initial_state {list(state.shape)} must be "
                           f"{state_shape}")
    check_steps(ctx, seq)
    if k is None:
        flat = b.reshape(q, [bsz, seq, q.shape[-1]])
        qp, kp, vp = b.split(flat, [hq * dk, hk * dk, hv * dv], axis=2)
    else:
        qp, kp, vp = (b.reshape(t, [bsz, seq, t.shape[-2] * t.shape[-1]]) for t in (q, k, v))
    gated, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    decay = _gate(ctx, node, bsz, seq, hv, gate_act) if gated else None
    beta = _beta(ctx, node, bsz, seq, hv, beta_act) if delta else None
    s0 = (ctx.constant(np.zeros([bsz, hv, dk, dv], np.float32)) if state is None else
          b.transpose(to_type(ctx, state, "float32"), permutation=[0, 1, 3, 2]))
    scale = attr_float(node, "scale", 0.0) or 1.0 / math.sqrt(dk)
    y, s = recurrence(ctx, qp, kp, vp, s0, decay, beta, scale, (hq, hk, hv), (dk, dv))
    out_shape = [bsz, seq, hv, dv] if q.rank == 4 else [bsz * seq, hv, dv]
    outs: list[Any] = [to_type(ctx, b.reshape(y, out_shape), q.data_type)]
    if len(node.outputs) > 1:
        outs.append(b.transpose(s, permutation=[0, 1, 3, 2]) if node.outputs[1] else None)
    return outs + [None] * (len(node.outputs) - len(outs))


def _per_token(ctx: ImportContext, node: Node, index: int, bsz: int, seq: int, hv: int,
               what: str) -> Any:
    x = float_operand(ctx, node, index, what)
    if int(np.prod(x.shape)) != bsz * seq * hv or x.shape[-1] != hv:
        raise InvalidModel(f"GatedDeltaNet {what} {list(x.shape)} must hold one value per "
                           f"token and value head ([{bsz * seq}, {hv}])")
    return ctx.builder.reshape(to_type(ctx, x, "float32"), [bsz, seq, hv])


def _gate(ctx: ImportContext, node: Node, bsz: int, seq: int, hv: int, act: str) -> Any:
    if not node.input(4):
        raise InvalidModel("GatedDeltaNet gated rules need decay")
    g = _per_token(ctx, node, 4, bsz, seq, hv, "decay")
    if act == "none":
        return g
    b = ctx.builder
    if not (node.input(7) and node.input(8)):
        raise InvalidModel("GatedDeltaNet gate_activation qwen needs a_log and dt_bias")
    a_log, dt_bias = float_operand(ctx, node, 7, "a_log"), float_operand(ctx, node, 8, "dt_bias")
    if list(a_log.shape) != [hv] or list(dt_bias.shape) != [hv]:
        raise InvalidModel(f"GatedDeltaNet a_log / dt_bias must be [{hv}]")
    sp = b.softplus(b.add(g, to_type(ctx, dt_bias, "float32")))
    return b.mul(b.neg(b.exp(to_type(ctx, a_log, "float32"))), sp)


def _beta(ctx: ImportContext, node: Node, bsz: int, seq: int, hv: int, act: str) -> Any:
    if not node.input(5):
        raise InvalidModel("GatedDeltaNet delta rules need beta")
    beta = _per_token(ctx, node, 5, bsz, seq, hv, "beta")
    return ctx.builder.sigmoid(beta) if act == "sigmoid" else beta
