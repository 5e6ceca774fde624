"""LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM, BIDIRECTIONAL_SEQUENCE_LSTM (float; hybrid int8
weights are dequantized at conversion time).

TFLite semantics (lstm_eval.cc), per gate g of i, f, c(=candidate), o:
`pre_g = W_g·x + R_g·h (+ P_g ⊙ cell)`; with layer norm `LN(pre_g)·ln_g + b_g` (LN with
epsilon 1e-8), else `pre_g + b_g`; i, f, o use sigmoid, c the fused activation. The input
and forget peepholes read the previous cell, the output peephole the **new** cell.
`cell = f ⊙ cell + i ⊙ g` (CIFG: i = 1 − f), clipped to ±cell_clip when > 0;
`h = o ⊙ act(cell)`, then the projection `W_proj·h + b_proj` clipped to ±proj_clip.

WebNN `lstm` (layout "ifgo", activations [sigmoid, act, act]) is used when it is exactly
equivalent: all four gates, no peephole (WebNN's output-gate peephole reads the old cell),
no projection, no layer norm, no clipping, TANH or RELU and constant weights. Everything else
is unrolled step by step from primitives (one gemm for the input projection of all steps).
Restrictions: integer (int8/int16) LSTM kernels, auxiliary inputs, the BASIC LSTM kernel and
activation NONE/SIGN_BIT (LiteRT leaves the hidden output unset) are rejected. State inputs
are variable tensors: each run starts from their initial value (zeros without a buffer).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.recurrent_layout import LSTM_IFCO, stack_directions, webnn_direction
from op_mappings._common.unroll import check_steps, unroll
from op_mappings.tflite import tflite_op
from op_mappings.tflite._recurrent import (
    Act,
    Weight,
    activation_fn,
    cat,
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
from op_mappings.tflite._util import RELU, TANH

GATES = ("i", "f", "c", "o")
"""TFLite's gate tensors in input order (the operator's inputs 1-4, 5-8, 12-15, 20-23)."""


@dataclass
class Cell:
    """The weights of one direction (None for omitted tensors)."""

    w: dict[str, Weight | None]
    r: dict[str, Weight | None]
    peep: dict[str, Weight | None]
    bias: dict[str, Weight | None]
    ln: dict[str, Weight | None]
    proj_w: Weight | None
    proj_b: Weight | None
    n_cell: int
    n_output: int

    @property
    def cifg(self) -> bool:
        return self.w["i"] is None

    def simple(self) -> bool:
        """True when WebNN lstm computes exactly the same thing."""
        return (not self.cifg and all(v is None for v in self.peep.values())
                and all(v is None for v in self.ln.values()) and self.proj_w is None
                and all(isinstance(v, np.ndarray) for v in
                        [*self.w.values(), *self.r.values()])
                and all(self.bias[g] is None or isinstance(self.bias[g], np.ndarray)
                        for g in GATES))


def read_cell(ctx: ImportContext, node: Node, base: int, n_input: int,
              ln_base: int | None) -> Cell:
    """Weights of one direction; `base` is the index of input_to_input_weights (the
    UNIDIRECTIONAL layout from there: 4 W, 4 R, 3 peephole, 4 bias, proj W, proj b)."""
    w = {g: weight(ctx, node, base + k) for k, g in enumerate(GATES)}
    r = {g: weight(ctx, node, base + 4 + k) for k, g in enumerate(GATES)}
    peep = {g: weight(ctx, node, base + 8 + k) for k, g in enumerate(("i", "f", "o"))}
    bias = {g: weight(ctx, node, base + 11 + k) for k, g in enumerate(GATES)}
    proj_w, proj_b = weight(ctx, node, base + 15), weight(ctx, node, base + 16)
    ln: dict[str, Weight | None] = {g: None for g in GATES}
    if ln_base is not None:
        ln = {g: weight(ctx, node, ln_base + k) for k, g in enumerate(GATES)}
    for g in ("f", "c", "o"):
        if w[g] is None or r[g] is None:
            raise InvalidModel(f"LSTM {g}-gate weights are missing")
    wf, rf = w["f"], r["f"]
    assert wf is not None and rf is not None
    n_cell = shape_of(wf)[0]
    n_output = shape_of(rf)[1]
    cifg = w["i"] is None
    if cifg != (r["i"] is None):
        raise InvalidModel("LSTM: input-gate weights must be all present or all omitted (CIFG)")
    for g in GATES:
        if cifg and g == "i":
            continue
        check_rank(w[g], [n_cell, n_input], f"input_to_{g} weights")
        check_rank(r[g], [n_cell, n_output], f"recurrent_to_{g} weights")
        check_rank(ln[g], [n_cell], f"{g} layer-norm weights")
        if bias[g] is None:
            raise InvalidModel(f"LSTM {g}-gate bias is missing")
        check_rank(bias[g], [n_cell], f"{g} gate bias")
    for g, p in peep.items():
        check_rank(p, [n_cell], f"cell_to_{g} weights")
    use_ln = any(v is not None for v in ln.values())
    if use_ln and any(ln[g] is None for g in GATES if not (cifg and g == "i")):
        raise InvalidModel("LSTM: layer-norm weights must be given for every gate")
    if proj_w is not None:
        check_rank(proj_w, [n_output, n_cell], "projection weights")
        check_rank(proj_b, [n_output], "projection bias")
    elif n_output != n_cell:
        raise InvalidModel(f"LSTM without projection has output size {n_output} != cell size "
                           f"{n_cell}")
    return Cell(w, r, peep, bias, ln, proj_w, proj_b, n_cell, n_output)


def _native(ctx: ImportContext, x: MLOperand, cells: list[Cell], h0: list[MLOperand],
            c0: list[MLOperand], act_code: int) -> list[MLOperand]:
    """WebNN lstm over [T, B, I]; returns the per-direction sequences [T, B, H]."""
    b = ctx.builder
    steps, batch, _ = x.shape
    h = cells[0].n_cell
    layout = LSTM_IFCO  # the weights packed i, f, c, o: WebNN layout "ifgo"
    w = stack_directions([layout.pack(c.w) for c in cells])  # type: ignore[arg-type]
    rec = stack_directions([layout.pack(c.r) for c in cells])  # type: ignore[arg-type]
    bias = stack_directions([layout.pack(c.bias) for c in cells])  # type: ignore[arg-type]
    name = "tanh" if act_code == TANH else "relu"
    outs = b.lstm(x, ctx.constant(w.astype(np.float32)),
                  ctx.constant(rec.astype(np.float32)), steps, h,
                  bias=ctx.constant(bias.astype(np.float32)),
                  initial_hidden_state=b.concat([b.reshape(s, [1, batch, h]) for s in h0], 0),
                  initial_cell_state=b.concat([b.reshape(s, [1, batch, h]) for s in c0], 0),
                  return_sequence=True, direction=webnn_direction(len(cells)),
                  layout=layout.webnn, activations=["sigmoid", name, name])
    seq = outs[2]  # [T, D, B, H]
    return [b.reshape(b.slice(seq, [0, d, 0, 0], [steps, 1, batch, h]), [steps, batch, h])
            for d in range(len(cells))]


def _unrolled(ctx: ImportContext, x: MLOperand, cell: Cell, h0: MLOperand, c0: MLOperand,
              act: Act, cell_clip: float, proj_clip: float, reverse: bool) -> MLOperand:
    """One direction from primitives over [T, B, I]; returns [T, B, n_output] in time order."""
    b = ctx.builder
    steps = x.shape[0]
    check_steps(ctx, steps)
    layout = LSTM_IFCO.without("i") if cell.cifg else LSTM_IFCO
    gates = layout.gates
    use_ln = any(v is not None for v in cell.ln.values())
    w_cat = cat(ctx, [cell.w[g] for g in gates])  # type: ignore[misc]
    r_cat = operand(ctx, cat(ctx, [cell.r[g] for g in gates]))  # type: ignore[misc]
    bias_cat = None if use_ln else cat(ctx, [cell.bias[g] for g in gates])  # type: ignore[misc]
    xw = projection(ctx, x, w_cat, bias_cat)
    peep = {g: operand(ctx, p) for g, p in cell.peep.items() if p is not None}
    ln = {g: operand(ctx, v) for g, v in cell.ln.items() if v is not None}
    bias = {g: operand(ctx, cell.bias[g]) for g in gates} if use_ln else {}  # type: ignore[arg-type]
    proj_w = operand(ctx, cell.proj_w) if cell.proj_w is not None else None
    proj_b = operand(ctx, cell.proj_b) if cell.proj_b is not None else None

    def lstm_step(t: int, state: tuple[MLOperand, MLOperand]
                  ) -> tuple[tuple[MLOperand, MLOperand], MLOperand]:
        h, c = state
        pre = layout.split(b, b.add(xw[t], b.gemm(h, r_cat, b_transpose=True)), axis=1)

        def gate(g: str, state: MLOperand) -> MLOperand:
            v = pre[g]
            if g in peep:
                v = b.add(v, b.mul(peep[g], state))
            if use_ln:
                v = b.layer_normalization(v, scale=ln[g], bias=bias[g], axes=[1], epsilon=1e-8)
            return v

        f = b.sigmoid(gate("f", c))
        g_val = act(b, gate("c", c))
        if cell.cifg:
            i = b.sub(ctx.constant(np.array(1.0, np.float32)), f)
        else:
            i = b.sigmoid(gate("i", c))
        c = b.add(b.mul(f, c), b.mul(i, g_val))
        if cell_clip > 0:
            c = b.clamp(c, min_value=-cell_clip, max_value=cell_clip)
        o = b.sigmoid(gate("o", c))
        h = b.mul(o, act(b, c))
        if proj_w is not None:
            h = b.gemm(h, proj_w, c=proj_b, b_transpose=True)
            if proj_clip > 0:
                h = b.clamp(h, min_value=-proj_clip, max_value=proj_clip)
        return (h, c), h

    outs, _ = unroll(steps, reverse, lstm_step, (h0, c0))
    return stack(ctx, outs)


def _options(node: Node) -> tuple[int, float, float]:
    a = node.attrs
    code = int(a.get("fused_activation_function", TANH))
    return code, float(a.get("cell_clip", 0.0)), float(a.get("proj_clip", 0.0))


def _sequences(ctx: ImportContext, x: MLOperand, cells: list[Cell], h0: list[MLOperand],
               c0: list[MLOperand], node: Node) -> list[MLOperand]:
    code, cell_clip, proj_clip = _options(node)
    act = activation_fn(code, none_ok=False)
    if (code in (TANH, RELU) and cell_clip <= 0 and proj_clip <= 0
            and all(c.simple() for c in cells)):
        return _native(ctx, x, cells, h0, c0, code)
    return [_unrolled(ctx, x, cell, h0[d], c0[d], act, cell_clip, proj_clip, reverse=d == 1)
            for d, cell in enumerate(cells)]


def _ln_base(node: Node, index: int) -> int | None:
    return index if len(node.inputs) > index else None


@tflite_op("UNIDIRECTIONAL_SEQUENCE_LSTM", since=1)
def unidirectional_sequence_lstm(ctx: ImportContext, node: Node) -> Outputs:
    """Input [B, T, I] (or [T, B, I] with time_major); states inputs 18/19; layer norm
    inputs 20-23. Output: the hidden sequence."""
    x = float_input(ctx, node, 3)
    tm = bool(node.attrs.get("time_major", False))
    xt = time_major(ctx, x, tm)
    steps, batch, n_in = xt.shape
    cell = read_cell(ctx, node, 1, n_in, _ln_base(node, 20))
    h0 = initial_state(ctx, node, 18, [batch, cell.n_output])
    c0 = initial_state(ctx, node, 19, [batch, cell.n_cell])
    (seq,) = _sequences(ctx, xt, [cell], [h0], [c0], node)
    return [from_time_major(ctx, seq, tm)]


@tflite_op("LSTM", since=1)
def lstm(ctx: ImportContext, node: Node) -> Outputs:
    """One step of the full LSTM kernel: input [B, I], states 18/19, layer norm 20-23;
    output [B, n_output]. The BASIC kernel (kernel_type 1) is rejected."""
    if int(node.attrs.get("kernel_type", 0)) != 0:
        raise UnsupportedAttribute("the BASIC LSTM kernel (kernel_type 1) is not supported")
    x = float_input(ctx, node, 2)
    batch, n_in = x.shape
    cell = read_cell(ctx, node, 1, n_in, _ln_base(node, 20))
    h0 = initial_state(ctx, node, 18, [batch, cell.n_output])
    c0 = initial_state(ctx, node, 19, [batch, cell.n_cell])
    xt = ctx.builder.reshape(x, [1, batch, n_in])
    (seq,) = _sequences(ctx, xt, [cell], [h0], [c0], node)
    return [ctx.builder.reshape(seq, [batch, cell.n_output])]


@tflite_op("BIDIRECTIONAL_SEQUENCE_LSTM", since=1)
def bidirectional_sequence_lstm(ctx: ImportContext, node: Node) -> Outputs:
    """Forward weights at inputs 1-17, backward at 18-34, states 35-38 (fw h, fw c, bw h,
    bw c); the backward direction walks time in reverse and its outputs keep time order.
    merge_outputs concatenates both on the last axis. Auxiliary inputs are rejected."""
    x = float_input(ctx, node, 3)
    tm = bool(node.attrs.get("time_major", True))
    reject_aux(node, 39)
    xt = time_major(ctx, x, tm)
    steps, batch, n_in = xt.shape
    cells = [read_cell(ctx, node, 1, n_in, None), read_cell(ctx, node, 18, n_in, None)]
    h0 = [initial_state(ctx, node, 35, [batch, cells[0].n_output]),
          initial_state(ctx, node, 37, [batch, cells[1].n_output])]
    c0 = [initial_state(ctx, node, 36, [batch, cells[0].n_cell]),
          initial_state(ctx, node, 38, [batch, cells[1].n_cell])]
    if cells[0].n_cell != cells[1].n_cell:  # WebNN lstm needs one hidden size
        code, cell_clip, proj_clip = _options(node)
        act = activation_fn(code, none_ok=False)
        seqs = [_unrolled(ctx, xt, c, h0[d], c0[d], act, cell_clip, proj_clip, d == 1)
                for d, c in enumerate(cells)]
    else:
        seqs = _sequences(ctx, xt, cells, h0, c0, node)
    fw, bw = (from_time_major(ctx, s, tm) for s in seqs)
    return merge(ctx, fw, bw, bool(node.attrs.get("merge_outputs", False)))
