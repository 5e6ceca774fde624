"""RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN (float; hybrid int8 weights
are dequantized at conversion time).

TFLite basic RNN cell (basic_rnn.cc / rnn_batch_step): `h = act(x·Wᵀ + h·Rᵀ + b)` with the
fused activation (NONE = identity, as LiteRT applies it in place). WebNN has no plain RNN op,
so the cell is unrolled from primitives: one gemm projects every step's input, then one gemm
plus add and the activation per step. The backward direction of the bidirectional op walks
time in reverse and keeps its outputs in time order; merge_outputs concatenates both
directions on the last axis.
Restrictions: integer RNN kernels, auxiliary inputs and SIGN_BIT are rejected. The hidden
state input is a variable tensor: each run starts from its initial value (zeros without a
buffer).
"""

from __future__ import annotations

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.unroll import check_steps, unroll
from op_mappings.tflite import tflite_op
from op_mappings.tflite._recurrent import (
    Act,
    activation_fn,
    check_rank,
    float_input,
    from_time_major,
    initial_state,
    merge,
    operand,
    projection,
    reject_aux,
    shape_of,
    stack,
    time_major,
    weight,
)


def _direction(ctx: ImportContext, node: Node, xt: MLOperand, base: int, act: Act,
               reverse: bool) -> MLOperand:
    """Inputs base..base+3 = weights [U, I], recurrent weights [U, U], bias [U], hidden
    state [B, U]; returns the hidden sequence [T, B, U] in time order."""
    b = ctx.builder
    steps, batch, n_in = xt.shape
    check_steps(ctx, steps)
    w, r, bias = (weight(ctx, node, base + k) for k in range(3))
    if w is None or r is None or bias is None:
        raise InvalidModel("RNN weights, recurrent weights and bias are required")
    units = shape_of(w)[0]
    check_rank(w, [units, n_in], "input weights")
    check_rank(r, [units, units], "recurrent weights")
    check_rank(bias, [units], "bias")
    h0 = initial_state(ctx, node, base + 3, [batch, units])
    xw = projection(ctx, xt, w, bias)
    r_op = operand(ctx, r)

    def cell(t: int, h: MLOperand) -> tuple[MLOperand, MLOperand]:
        h = act(b, b.add(xw[t], b.gemm(h, r_op, b_transpose=True)))
        return h, h

    outs, _ = unroll(steps, reverse, cell, h0)
    return stack(ctx, outs)


def _act(node: Node) -> Act:
    return activation_fn(node.attrs.get("fused_activation_function", 0), none_ok=True)


@tflite_op("RNN", since=1)
def rnn(ctx: ImportContext, node: Node) -> Outputs:
    """One step: input [B, I] -> new hidden state [B, U]."""
    x = float_input(ctx, node, 2)
    batch, n_in = x.shape
    seq = _direction(ctx, node, ctx.builder.reshape(x, [1, batch, n_in]), 1, _act(node), False)
    return [ctx.builder.reshape(seq, list(seq.shape[1:]))]


@tflite_op("UNIDIRECTIONAL_SEQUENCE_RNN", since=1)
def unidirectional_sequence_rnn(ctx: ImportContext, node: Node) -> Outputs:
    """Input [B, T, I] (or [T, B, I] with time_major) -> hidden sequence."""
    x = float_input(ctx, node, 3)
    tm = bool(node.attrs.get("time_major", False))
    seq = _direction(ctx, node, time_major(ctx, x, tm), 1, _act(node), False)
    return [from_time_major(ctx, seq, tm)]


@tflite_op("BIDIRECTIONAL_SEQUENCE_RNN", since=1)
def bidirectional_sequence_rnn(ctx: ImportContext, node: Node) -> Outputs:
    """Forward weights/state at inputs 1-4, backward at 5-8; auxiliary inputs (9-11)
    rejected. Outputs fw, bw (or one merged output)."""
    x = float_input(ctx, node, 3)
    tm = bool(node.attrs.get("time_major", False))
    reject_aux(node, 9)
    xt = time_major(ctx, x, tm)
    act = _act(node)
    fw = _direction(ctx, node, xt, 1, act, False)
    bw = _direction(ctx, node, xt, 5, act, True)
    return merge(ctx, from_time_major(ctx, fw, tm), from_time_major(ctx, bw, tm),
                 bool(node.attrs.get("merge_outputs", False)))
