"""ONNX RNN, GRU, LSTM -> WebNN gru / lstm when the semantics match exactly, otherwise an
unrolled decomposition (gemm + element-wise ops per time step) with ONNX semantics.

Native WebNN op (GRU, LSTM) when: every activation is Relu/Tanh/Sigmoid and both directions
use the same list, no `clip`, LSTM `input_forget = 0`, and LSTM peepholes are absent or a
constant whose output-gate part is all zero (WebNN's output-gate peephole reads the previous
cell state, ONNX the new one). GRU `linear_before_reset` is passed as `resetAfter` explicitly
(the defaults differ); gate orders map directly (GRU zrh = WebNN zrn, LSTM iofc = iofg,
peepholes iof = WebNN's packing); `B` is split into bias/recurrentBias (numpy when constant).
RNN has no WebNN op and is always decomposed.

Decomposition: every ONNX activation (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu,
ScaledTanh, HardSigmoid, Elu, Softsign, Softplus; case-insensitive), different activations per
direction, `clip` (applied to every gate pre-activation, not to the cell state),
`linear_before_reset` 0/1, peepholes with ONNX semantics, `input_forget` (f = 1 - i),
initial states, forward/reverse/bidirectional.

activation_alpha / activation_beta are consumed in activation order only by the activations
that take them (Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid: alpha and/or
beta; Elu: alpha), as onnxruntime does; a missing value takes the ONNX operator default for
LeakyRelu (0.01), HardSigmoid (0.2, 0.5) and Elu (1.0) and 0 otherwise (onnxruntime). When a
bidirectional node lists activations for one direction only, they serve both.

`layout = 1` (batch-first) adds transposes around the computation.

Restrictions: float32/float16; `sequence_lens` must be a constant with every entry equal to
the sequence length (variable lengths are rejected); the Y output is produced only when the
node names it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn import decompose as dc
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import attr_in_range, check_rank
from op_mappings._common.recurrent_layout import (
    GRU_ZRH,
    LSTM_IOFC,
    PEEPHOLES,
    cell_activation,
    webnn_direction,
)
from op_mappings._common.unroll import (
    check_steps,
    flatten_steps,
    input_projection,
    stack_steps,
    step_blocks,
    swap_batch_time,
    unroll,
)
from op_mappings._common.values import const_or_none, scalar
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import float_dtype_check, take

# name -> (takes alpha, takes beta); defaults per onnxruntime's rnn_helpers
_PARAMS = {"relu": (0, 0), "tanh": (0, 0), "sigmoid": (0, 0), "softsign": (0, 0),
           "softplus": (0, 0), "affine": (1, 1), "leakyrelu": (1, 0),
           "thresholdedrelu": (1, 0), "scaledtanh": (1, 1), "hardsigmoid": (1, 1),
           "elu": (1, 0)}
_DEFAULTS = {"leakyrelu": (0.01, 0.0), "hardsigmoid": (0.2, 0.5), "elu": (1.0, 0.0)}
_DEFAULT_ACTS = {"RNN": ("tanh",), "GRU": ("sigmoid", "tanh"),
                 "LSTM": ("sigmoid", "tanh", "tanh")}
_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
_NATIVE_ACTS = ("relu", "sigmoid", "tanh")
_DIRECTIONS = ("forward", "reverse", "bidirectional")

Act = tuple[str, float, float]


def parse_activations(node: Node, dirs: int) -> list[list[Act]]:
    """Per direction, the (lower-case name, alpha, beta) of each activation."""
    per = len(_DEFAULT_ACTS[node.op_type])
    names = [str(n) for n in node.attrs.get("activations", ())]
    if not names:
        names = list(_DEFAULT_ACTS[node.op_type]) * dirs
    elif len(names) == per and dirs == 2:
        names = names * 2
    elif node.op_type == "RNN" and len(names) > dirs:
        names = names[:dirs]  # the schema default is ["Tanh", "Tanh"] for any direction
    if len(names) != per * dirs:
        raise InvalidModel(f"{node.op_type} needs {per * dirs} activations for {dirs} "
                           f"direction(s), got {len(names)}: {names}")
    alphas = iter(float(a) for a in node.attrs.get("activation_alpha", ()))
    betas = iter(float(v) for v in node.attrs.get("activation_beta", ()))
    acts: list[Act] = []
    for name in names:
        low = name.lower()
        if low not in _PARAMS:
            raise UnsupportedAttribute(f"{node.op_type} activation {name!r} is not an ONNX "
                                       "recurrent activation")
        da, db = _DEFAULTS.get(low, (0.0, 0.0))
        takes_a, takes_b = _PARAMS[low]
        alpha = next(alphas, da) if takes_a else da
        beta = next(betas, db) if takes_b else db
        acts.append((low, alpha, beta))
    return [acts[d * per:(d + 1) * per] for d in range(dirs)]


def activation_fn(act: Act) -> dc.Activation:
    """The builder callable computing one ONNX recurrent activation."""
    name, alpha, beta = act
    return cell_activation(name, alpha, beta)


class _Rnn:
    """Everything one recurrent node needs, parsed once."""

    def __init__(self, ctx: ImportContext, node: Node) -> None:
        self.ctx, self.node, self.b = ctx, node, ctx.builder
        self.kind = node.op_type
        self.gates = _GATES[self.kind]
        self.x_name, self.w_name, self.r_name = node.inputs[:3]
        self.b_name = node.input(3)
        x = ctx.operand(self.x_name)
        float_dtype_check(node, x)
        self.dtype = x.data_type
        check_rank(x, 3, f"{self.kind} X")
        direction = str(node.attrs.get("direction", "forward"))
        if direction not in _DIRECTIONS:
            raise InvalidModel(f"{self.kind} direction {direction!r} is not forward, reverse "
                               "or bidirectional")
        self.direction = direction
        self.dirs = 2 if direction == "bidirectional" else 1
        w_shape = ctx.shape(self.w_name)
        if len(w_shape) != 3 or w_shape[0] != self.dirs:
            raise InvalidModel(f"{self.kind} W shape {list(w_shape)} does not match "
                               f"{self.dirs} direction(s)")
        check_rank(ctx.shape(self.r_name), 3, f"{self.kind} R")
        self.hidden = int(node.attrs.get("hidden_size", ctx.shape(self.r_name)[-1]))
        if w_shape[1] != self.gates * self.hidden:
            raise InvalidModel(f"{self.kind} W shape {list(w_shape)} does not match "
                               f"hidden_size {self.hidden}")
        self.layout = int(attr_in_range(node, "layout", 0, 1)) if "layout" in node.attrs else 0
        if self.layout:
            x = swap_batch_time(self.b, x)
        self.x = x
        self.steps, self.batch = x.shape[0], x.shape[1]
        self._check_shapes()
        self.acts = parse_activations(node, self.dirs)
        clip = node.attrs.get("clip")
        self.clip = None if clip is None else float(clip)
        self.lbr = bool(node.attrs.get("linear_before_reset", 0))
        self.input_forget = bool(node.attrs.get("input_forget", 0))
        self.peep_name = node.input(7) if self.kind == "LSTM" else ""
        self._check_sequence_lens()
        self.h0 = self._state(node.input(5))
        self.c0 = self._state(node.input(6)) if self.kind == "LSTM" else None

    def _check_shapes(self) -> None:
        """InvalidModel unless W, R, B, the initial states and P have the shapes ONNX gives
        them for this X, direction and hidden_size."""
        d, g, h, batch = self.dirs, self.gates, self.hidden, self.batch
        if h < 1:
            raise InvalidModel(f"{self.kind} hidden_size is {h}, it must be at least 1")
        state = [batch, d, h] if self.layout else [d, batch, h]
        wanted = [("W", self.w_name, [d, g * h, self.x.shape[2]]),
                  ("R", self.r_name, [d, g * h, h]), ("B", self.b_name, [d, 2 * g * h]),
                  ("initial_h", self.node.input(5), state)]
        if self.kind == "LSTM":
            wanted += [("initial_c", self.node.input(6), state),
                       ("P", self.node.input(7), [d, 3 * h])]
        for what, name, shape in wanted:
            if name and list(self.ctx.shape(name)) != shape:
                raise InvalidModel(f"{self.kind} {what} has shape "
                                   f"{list(self.ctx.shape(name))}, {shape} expected")

    def _check_sequence_lens(self) -> None:
        name = self.node.input(4)
        if not name:
            return
        lens = const_or_none(self.ctx, name)
        if lens is None:
            raise UnsupportedAttribute(
                f"{self.kind} sequence_lens is computed in the graph; only a constant equal "
                "to the sequence length is supported",
                hint="pin the sequence lengths or remove the sequence_lens input")
        if lens.size and np.any(lens.reshape(-1) != self.steps):
            raise UnsupportedAttribute(
                f"{self.kind} sequence_lens {lens.reshape(-1).tolist()} differ from the "
                f"sequence length {self.steps}; variable sequence lengths are not supported")

    def _state(self, name: str) -> Any:
        if not name:
            return None
        s = self.ctx.operand(name)
        return self.b.transpose(s, permutation=[1, 0, 2]) if self.layout else s

    # -- native --------------------------------------------------------------------------
    def native_ok(self) -> bool:
        if self.kind == "RNN" or self.clip is not None or self.input_forget:
            return False
        first = self.acts[0]
        if any(a != first for a in self.acts):
            return False
        if any(n not in _NATIVE_ACTS or (al, be) != (0.0, 0.0) for n, al, be in first):
            return False
        if self.peep_name:  # WebNN's output-gate peephole reads the previous cell
            p = const_or_none(self.ctx, self.peep_name)
            if p is None or np.any(p[:, PEEPHOLES.cols("o", self.hidden)] != 0):
                return False
        return True

    def _bias_pair(self) -> tuple[Any, Any]:
        if not self.b_name:
            return None, None
        gh = self.gates * self.hidden
        return (take(self.ctx, self.b_name, [slice(None), slice(0, gh)]),
                take(self.ctx, self.b_name, [slice(None), slice(gh, 2 * gh)]))

    def native(self, want_y: bool) -> list[Any]:
        ctx, b = self.ctx, self.b
        w, r = ctx.operand(self.w_name), ctx.operand(self.r_name)
        bias, rbias = self._bias_pair()
        acts = [n for n, _, _ in self.acts[0]]
        common = dict(bias=bias, recurrent_bias=rbias, initial_hidden_state=self.h0,
                      return_sequence=want_y,
                      direction=webnn_direction(self.dirs, self.direction == "reverse"),
                      activations=acts)
        if self.kind == "GRU":
            outs = b.gru(self.x, w, r, self.steps, self.hidden, reset_after=self.lbr,
                         layout=GRU_ZRH.webnn, **common)
            hidden, seq = outs[0], outs[1] if want_y else None
            return self._finish(seq, hidden, None)
        peep = None
        p = const_or_none(ctx, self.peep_name)
        if p is not None and np.any(p != 0):
            peep = ctx.operand(self.peep_name)
        outs = b.lstm(self.x, w, r, self.steps, self.hidden, peephole_weight=peep,
                      initial_cell_state=self.c0, layout=LSTM_IOFC.webnn, **common)
        return self._finish(outs[2] if want_y else None, outs[0], outs[1])

    def _finish(self, seq: Any, hidden: Any, cell: Any) -> list[Any]:
        b = self.b
        if self.layout:
            seq = None if seq is None else b.transpose(seq, permutation=[2, 0, 1, 3])
            hidden = b.transpose(hidden, permutation=[1, 0, 2])
            cell = None if cell is None else b.transpose(cell, permutation=[1, 0, 2])
        out = [seq, hidden]
        if self.kind == "LSTM":
            out.append(cell)
        return out

    # -- decomposition -------------------------------------------------------------------
    def _clip(self, x: Any) -> Any:
        if self.clip is None:
            return x
        return self.b.clamp(x, min_value=-self.clip, max_value=self.clip)

    # Parameters of a direction group: one direction ([d]) gives 2-D per-step tensors
    # [batch, n] and matrices in ONNX layout [rows, cols] (gemm transposes them); both
    # directions stacked ([0, 1]) give per-step tensors [1, 2, batch, n], matrices
    # pre-transposed [2, cols, rows] for a batched matmul and vectors [2, 1, n].
    def _mat(self, name: str, group: list[int], rows: slice) -> Any:
        ctx = self.ctx
        if len(group) == 1:
            return take(ctx, name, [group[0], rows])
        value = const_or_none(ctx, name)
        if value is not None:
            return ctx.constant(np.ascontiguousarray(value[:, rows].transpose(0, 2, 1)),
                                what=f"part of {name!r}")
        return self.b.transpose(take(ctx, name, [slice(None), rows]), permutation=[0, 2, 1])

    def _vec(self, name: str, group: list[int], cols: slice) -> Any:
        ctx = self.ctx
        if len(group) == 1:
            return take(ctx, name, [group[0], cols])
        value = const_or_none(ctx, name)
        if value is not None:
            return ctx.constant(np.ascontiguousarray(value[:, None, cols]),
                                what=f"part of {name!r}")
        part = take(ctx, name, [slice(None), cols])
        return self.b.reshape(part, [2, 1, part.shape[-1]])

    def _proj_bias(self, group: list[int]) -> Any:
        """Bias added to the input projection: Wb + Rb, except the GRU candidate gate with
        linear_before_reset = 1, whose Rb goes inside the reset product."""
        if not self.b_name:
            return None
        gh = self.gates * self.hidden
        keep_rb = np.ones(gh, dtype=bool)
        if self.kind == "GRU" and self.lbr:
            keep_rb[GRU_ZRH.cols("h", self.hidden)] = False
        wb = self._vec(self.b_name, group, slice(0, gh))
        rb = self._vec(self.b_name, group, slice(gh, 2 * gh))
        if wb.kind == "constant" and rb.kind == "constant":
            value = np.asarray(wb.value) + np.where(keep_rb, np.asarray(rb.value), 0)
            return self.ctx.constant(value.astype(self.dtype), what="recurrent bias")
        if not keep_rb.all():
            rb = self.b.mul(rb, self.ctx.constant(keep_rb.astype(self.dtype)))
        return self.b.add(wb, rb)

    def _init(self, state: Any, group: list[int]) -> Any:
        b = self.b
        shape = [self.batch, self.hidden] if len(group) == 1 else [1, 2, self.batch,
                                                                   self.hidden]
        if state is None:
            return b.constant(np.zeros(shape, dtype=self.dtype))
        if len(group) == 1 and self.dirs == 2:
            state = b.slice(state, [group[0], 0, 0], [1, self.batch, self.hidden])
        return b.reshape(state, shape)

    def _lin(self, group: list[int]) -> Any:
        """state, matrix, addend -> state·matrixᵀ + addend (gemm), or the batched matmul of
        a stacked group with its pre-transposed matrices."""
        b = self.b
        if len(group) == 1:
            return lambda x, r, c: b.gemm(x, r, c=c, b_transpose=True)
        return lambda x, r, c: b.add(b.matmul(x, r), c) if c is not None else b.matmul(x, r)

    def _inputs(self, group: list[int], flat: Any) -> Any:
        """The input projection of every step, one operand per step (GRU: a pair, update/reset
        and candidate columns); both directions of a stacked group read their own step: the
        backward one's are reversed in time. `flat`: the input as [steps·batch, input]."""
        b, steps, batch = self.b, self.steps, self.batch
        gh = self.gates * self.hidden
        w = self._mat(self.w_name, group, slice(None))
        bias = self._proj_bias(group)
        if len(group) == 1:
            proj = input_projection(b, flat, w, bias)
            if self.kind == "GRU":  # update/reset and candidate columns, split once
                zr, hh = b.split(proj, [2 * self.hidden, self.hidden], axis=1)
                return list(zip(step_blocks(b, zr, steps), step_blocks(b, hh, steps),
                                strict=True))
            return step_blocks(b, proj, steps)
        proj = b.matmul(flat, w)  # [2, steps * batch, gh]
        if bias is not None:
            proj = b.add(proj, bias)
        forward, backward = b.split(b.reshape(proj, [2, steps, batch, gh]), 2, axis=0)
        proj = b.concat([forward, b.reverse(backward, axes=[1])], 0)
        proj = b.transpose(proj, permutation=[1, 0, 2, 3])  # [steps, 2, batch, gh]
        xs = [proj] if steps == 1 else b.split(proj, steps, axis=0)
        if self.kind == "GRU":
            return [tuple(b.split(x, [2 * self.hidden, self.hidden], axis=3)) for x in xs]
        return xs

    def _lstm_step(self, lin: Any, xw: Any, hidden: Any, cell: Any, r: Any,
                   peeps: dict[str, Any] | None, acts: list[dc.Activation], one: Any
                   ) -> tuple[Any, Any]:
        """One ONNX LSTM step (gates iofc); the output-gate peephole reads the new cell."""
        b = self.b
        parts = LSTM_IOFC.split(b, lin(hidden, r, xw), axis=hidden.rank - 1)

        def gate(name: str, c: Any = None) -> Any:
            x = parts[name]
            if peeps is not None and c is not None:
                x = b.add(x, b.mul(peeps[name], c))
            return self._clip(x)

        i = acts[0](b, gate("i", cell))
        f = b.sub(one, i) if self.input_forget else acts[0](b, gate("f", cell))
        g = acts[1](b, gate("c"))
        new_cell = b.add(b.mul(f, cell), b.mul(i, g))
        o = acts[0](b, gate("o", new_cell))
        return b.mul(o, acts[2](b, new_cell)), new_cell

    def _run(self, group: list[int], want_y: bool, flat: Any) -> tuple[Any, Any, Any]:
        """One direction, or both stacked: (sequence [steps, len(group), batch, hidden] or
        None, final hidden and final cell [len(group), batch, hidden])."""
        ctx, b, h = self.ctx, self.b, self.hidden
        steps, batch, n = self.steps, self.batch, len(group)
        one = scalar(ctx, 1.0, self.dtype)
        acts = [activation_fn(a) for a in self.acts[group[0]]]
        lin = self._lin(group)
        xs = self._inputs(group, flat)
        cur = self._init(self.h0, group)
        cell = self._init(self.c0, group) if self.kind == "LSTM" else None
        axis = cur.rank - 1
        reverse = n == 1 and (self.direction == "reverse" or group[0] == 1)
        if self.kind == "RNN":
            r = self._mat(self.r_name, group, slice(None))

            def rnn_step(t: int, cur: Any) -> tuple[Any, Any]:
                cur = acts[0](b, self._clip(lin(cur, r, xs[t])))
                return cur, cur

            seq, cur = unroll(steps, reverse, rnn_step, cur)
        elif self.kind == "GRU":
            r_zr = self._mat(self.r_name, group, GRU_ZRH.span(("z", "r"), h))
            r_h = self._mat(self.r_name, group, GRU_ZRH.cols("h", h))
            rb_h = (self._vec(self.b_name, group, _shift(GRU_ZRH.cols("h", h), 3 * h))
                    if self.b_name and self.lbr else None)

            def gru_step(t: int, cur: Any) -> tuple[Any, Any]:
                x_zr, x_h = xs[t]
                z, rg = b.split(acts[0](b, self._clip(lin(cur, r_zr, x_zr))), 2, axis=axis)
                if self.lbr:
                    pre = b.add(x_h, b.mul(rg, lin(cur, r_h, rb_h)))
                else:
                    pre = lin(b.mul(rg, cur), r_h, x_h)
                nn = acts[1](b, self._clip(pre))
                cur = b.add(nn, b.mul(z, b.sub(cur, nn)))
                return cur, cur

            seq, cur = unroll(steps, reverse, gru_step, cur)
        else:
            r = self._mat(self.r_name, group, slice(None))
            peeps = ({g: self._vec(self.peep_name, group, PEEPHOLES.cols(g, h))
                      for g in PEEPHOLES.gates} if self.peep_name else None)

            def lstm_step(t: int, state: tuple[Any, Any]) -> tuple[tuple[Any, Any], Any]:
                cur, cell = self._lstm_step(lin, xs[t], *state, r, peeps, acts, one)
                return (cur, cell), cur

            seq, (cur, cell) = unroll(steps, reverse, lstm_step, (cur, cell))
        shape = [n, batch, h]
        final_h = b.reshape(cur, shape)
        final_c = b.reshape(cell, shape) if cell is not None else None
        if not want_y:
            return None, final_h, final_c
        y = stack_steps(b, seq, [n, batch, h])
        if n == 2:  # the backward direction's states were computed last step first
            forward, backward = b.split(y, 2, axis=1)
            y = b.concat([forward, b.reverse(backward, axes=[0])], 1)
        return y, final_h, final_c

    def decompose(self, want_y: bool) -> list[Any]:
        """Unrolled steps; both directions of a bidirectional node run stacked (one batched
        matmul and one element-wise op per step for both) when they use the same
        activations."""
        b = self.b
        check_steps(self.ctx, self.steps)
        same = self.dirs == 2 and self.acts[0] == self.acts[1]
        groups = [[0, 1]] if same else [[d] for d in range(self.dirs)]
        flat = flatten_steps(b, self.x)
        parts = [self._run(g, want_y, flat) for g in groups]
        seq = dc.concat(b, [p[0] for p in parts], 1) if want_y else None
        hidden = dc.concat(b, [p[1] for p in parts], 0)
        cell = dc.concat(b, [p[2] for p in parts], 0) if self.kind == "LSTM" else None
        return self._finish(seq, hidden, cell)


def _shift(cols: slice, offset: int) -> slice:
    """`cols` moved by `offset` (e.g. into the recurrent half of ONNX's B)."""
    return slice(cols.start + offset, cols.stop + offset)


def _convert(ctx: ImportContext, node: Node) -> Outputs:
    rnn = _Rnn(ctx, node)
    want_y = bool(node.outputs and node.outputs[0])
    outs = rnn.native(want_y) if rnn.native_ok() else rnn.decompose(want_y)
    return outs[:len(node.outputs)]


@onnx_op(("RNN", "GRU", "LSTM"), since=1)
def recurrent(ctx: ImportContext, node: Node) -> Outputs:
    """See the module docstring."""
    return _convert(ctx, node)
