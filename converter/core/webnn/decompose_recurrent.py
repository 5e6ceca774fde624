"""Decompositions of the recurrent ops (gru, gruCell, lstm, lstmCell) into WebNN primitives
(gemm, matmul, slice, concat, reshape, add, mul, ...), for gate activations a native op cannot
express: every function takes its activations as names or `decompose.Activation` callables
`(builder, operand) -> operand` and returns what the native op would return, with the same
semantics, shapes and data types.

Argument validation is the native op's: each decomposition first runs the native builder
method on the same arguments (with string activations), which raises the spec's MLTypeError
for any bad argument; its unused result is not reachable from any output, so `build()`
leaves it out of the graph.

Every gate sums in the order of the spec's emulation code (lstmCell: peephole·c + ((bias +
recurrentBias) + (x·Wᵀ + h·Rᵀ)); gruCell z / r: (bias + recurrentBias) + (x·Wᵀ + h·Rᵀ), n
with resetAfter: bias + (x·Wᵀ + r·(recurrentBias + h·Rᵀ)), else (bias + recurrentBias) +
(x·Wᵀ + (r·h)·Rᵀ)), so that float32 results round as an implementation following it rounds
(Chromium's LiteRT backend: bit for bit on the WPT cases). For speed, x·Wᵀ of every step is
one gemm (each row the same dot product), the bias sum and the slices of the weights are
made once per direction, and each step has one gemm for h·Rᵀ (two for GRU with the reset
gate before the matmul).

Restrictions: float32 or float16 operands (gemm/matmul); `steps` above 8192 are concatenated
in chunks of 8192.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, overload

import numpy as np

from converter.core.webnn.decompose import (
    ACTIVATIONS,
    GRU_OFFSETS,
    LSTM_OFFSETS,
    PEEPHOLE_OFFSETS,
    Activation,
    ActivationSpec,
    concat,
    scalar,
    sigmoid_fn,
    tanh_fn,
)
from converter.core.webnn.errors import MLTypeError
from converter.core.webnn.operand import MLOperand

if TYPE_CHECKING:
    from converter.core.webnn.builder import MLGraphBuilder


def _resolve(acts: Sequence[ActivationSpec]) -> list[Activation]:
    out = []
    for a in acts:
        if isinstance(a, str):
            out.append(ACTIVATIONS[a])
        elif callable(a):
            out.append(a)
        else:
            raise MLTypeError(f"decompose: activation {a!r} is neither a name nor a callable")
    return out


def _native_names(acts: Sequence[ActivationSpec] | None, default: tuple[str, ...]
                  ) -> list[str] | None:
    """Activations to hand the native op for validation: names stay (so bad names fail as
    they do natively), callables become a default name (keeping the count check)."""
    if acts is None:
        return None
    if isinstance(acts, (str, bytes)) or not isinstance(acts, Sequence):
        return acts  # type: ignore[return-value]  # the native op rejects it
    return [a if isinstance(a, str) else default[min(k, len(default) - 1)]
            for k, a in enumerate(acts)]


def _cols(b: MLGraphBuilder, x: MLOperand, start: int, size: int) -> MLOperand:
    """Columns [start, start + size) of a 2-D operand."""
    if start == 0 and size == x.shape[1]:
        return x
    return b.slice(x, [0, start], [x.shape[0], size])


def _rows(b: MLGraphBuilder, x: MLOperand, start: int, size: int) -> MLOperand:
    """Rows [start, start + size) of a 1-D or 2-D operand."""
    if start == 0 and size == x.shape[0]:
        return x
    return b.slice(x, [start, *([0] * (x.rank - 1))], [size, *x.shape[1:]])


@overload
def _direction(b: MLGraphBuilder, x: MLOperand, d: int) -> MLOperand: ...
@overload
def _direction(b: MLGraphBuilder, x: MLOperand | None, d: int) -> MLOperand | None: ...
def _direction(b: MLGraphBuilder, x: MLOperand | None, d: int) -> MLOperand | None:
    """Entry d of the leading (directions) axis, squeezed."""
    if x is None:
        return None
    part = x if x.shape[0] == 1 else b.slice(x, [d, *([0] * (x.rank - 1))],
                                             [1, *x.shape[1:]])
    return b.reshape(part, list(x.shape[1:]))


def _zeros(b: MLGraphBuilder, shape: Sequence[int], data_type: str) -> MLOperand:
    return b.constant(np.zeros(tuple(shape), dtype=data_type))


# -- gru -------------------------------------------------------------------------------------
def _bias_sum(b: MLGraphBuilder, bias: MLOperand | None, r_bias: MLOperand | None
              ) -> MLOperand | None:
    """bias + recurrentBias (either alone when the other is absent: 0 + x is x)."""
    if bias is None or r_bias is None:
        return bias if r_bias is None else r_bias
    return b.add(bias, r_bias)


def _gru_weights(b: MLGraphBuilder, r_weight: MLOperand, bias: MLOperand | None,
                 r_bias: MLOperand | None, h: int, layout: str, reset_after: bool
                 ) -> dict[str, MLOperand | None]:
    """What every GRU step of one direction reads, sliced once: `r` the recurrent weight
    (its z and r rows when the reset gate applies before the matmul: z and r occupy the
    first 2H rows in both layouts), `rn` its n rows, `zr` the bias sum of the z and r gates
    (over all 3H when reset after), `n` the n gate's bias sum, `bn` / `rbn` its biases."""
    n = GRU_OFFSETS[layout]["n"] * h
    total = _bias_sum(b, bias, r_bias)
    if reset_after:
        return {"r": r_weight, "zr": total,
                "bn": None if bias is None else _rows(b, bias, n, h),
                "rbn": None if r_bias is None else _rows(b, r_bias, n, h)}
    return {"r": _rows(b, r_weight, 0, 2 * h), "rn": _rows(b, r_weight, n, h),
            "zr": None if total is None else _rows(b, total, 0, 2 * h),
            "n": None if total is None else _rows(b, total, n, h)}


def _plus(b: MLGraphBuilder, x: MLOperand | None, y: MLOperand) -> MLOperand:
    """x + y, or y when x is absent (the spec's zero)."""
    return y if x is None else b.add(x, y)


def _gru_step(b: MLGraphBuilder, xw: MLOperand, hidden: MLOperand,
              w: dict[str, MLOperand | None], h: int, layout: str, reset_after: bool,
              acts: list[Activation]) -> MLOperand:
    """One GRU step from the input projection xw = x·Wᵀ [B, 3H] (see the module docstring
    for the order of the sums)."""
    off = GRU_OFFSETS[layout]
    f, g = acts

    def gate(t: MLOperand, name: str) -> MLOperand:
        return _cols(b, t, off[name] * h, h)

    r_weight = w["r"]
    assert r_weight is not None
    hr = b.gemm(hidden, r_weight, b_transpose=True)  # [B, 3H], or [B, 2H] (z, r)
    zr = _plus(b, w["zr"], b.add(xw if reset_after else _cols(b, xw, 0, 2 * h), hr))
    z = f(b, gate(zr, "z"))
    r = f(b, gate(zr, "r"))
    if reset_after:
        inner = b.mul(r, _plus(b, w["rbn"], gate(hr, "n")))
        n = g(b, _plus(b, w["bn"], b.add(gate(xw, "n"), inner)))
    else:
        rn = w["rn"]
        assert rn is not None
        hn = b.gemm(b.mul(r, hidden), rn, b_transpose=True)
        n = g(b, _plus(b, w["n"], b.add(gate(xw, "n"), hn)))
    one = scalar(b, 1.0, hidden.data_type)
    return b.add(b.mul(z, hidden), b.mul(n, b.sub(one, z)))


def gru_cell(b: MLGraphBuilder, input: MLOperand, weight: MLOperand,
             recurrent_weight: MLOperand, hidden_state: MLOperand, hidden_size: int, *,
             bias: MLOperand | None = None, recurrent_bias: MLOperand | None = None,
             reset_after: bool = True, layout: str = "zrn",
             activations: Sequence[ActivationSpec] = (sigmoid_fn, tanh_fn)) -> MLOperand:
    """gruCell from primitives; `activations` = (gate activation, new-gate activation)."""
    b.gru_cell(input, weight, recurrent_weight, hidden_state, hidden_size, bias=bias,
               recurrent_bias=recurrent_bias, reset_after=reset_after, layout=layout,
               activations=_native_names(activations, ("sigmoid", "tanh")))
    xw = b.gemm(input, weight, b_transpose=True)
    w = _gru_weights(b, recurrent_weight, bias, recurrent_bias, hidden_size, layout,
                     reset_after)
    return _gru_step(b, xw, hidden_state, w, hidden_size, layout, reset_after,
                     _resolve(activations))


def _input_projection(b: MLGraphBuilder, input: MLOperand, weight: MLOperand
                      ) -> list[MLOperand]:
    """x·Wᵀ for every step at once, split back into per-step [B, G·H] operands."""
    steps, batch, _ = input.shape
    flat = b.reshape(input, [steps * batch, input.shape[2]])
    proj = b.gemm(flat, weight, b_transpose=True)  # [steps·B, G·H]
    if steps == 1:
        return [proj]
    return [b.slice(proj, [t * batch, 0], [batch, proj.shape[1]]) for t in range(steps)]


def _time_order(steps: int, direction: str, d: int) -> range:
    reverse = direction == "backward" or d == 1
    return range(steps - 1, -1, -1) if reverse else range(steps)


def gru(b: MLGraphBuilder, input: MLOperand, weight: MLOperand, recurrent_weight: MLOperand,
        steps: int, hidden_size: int, *, bias: MLOperand | None = None,
        recurrent_bias: MLOperand | None = None,
        initial_hidden_state: MLOperand | None = None, reset_after: bool = True,
        return_sequence: bool = False, direction: str = "forward", layout: str = "zrn",
        activations: Sequence[ActivationSpec] = (sigmoid_fn, tanh_fn)) -> list[MLOperand]:
    """gru from primitives: [hidden [D, B, H]] or [hidden, sequence [steps, D, B, H]]."""
    b.gru(input, weight, recurrent_weight, steps, hidden_size, bias=bias,
          recurrent_bias=recurrent_bias, initial_hidden_state=initial_hidden_state,
          reset_after=reset_after, return_sequence=return_sequence, direction=direction,
          layout=layout, activations=_native_names(activations, ("sigmoid", "tanh")))
    acts = _resolve(activations)
    dirs, batch, h, dtype = weight.shape[0], input.shape[1], hidden_size, input.data_type
    finals: list[MLOperand] = []
    sequences: list[MLOperand] = []
    for d in range(dirs):
        xw = _input_projection(b, input, _direction(b, weight, d))
        w = _gru_weights(b, _direction(b, recurrent_weight, d), _direction(b, bias, d),
                         _direction(b, recurrent_bias, d), h, layout, reset_after)
        cur = (_direction(b, initial_hidden_state, d) if initial_hidden_state is not None
               else _zeros(b, (batch, h), dtype))
        per_step: dict[int, MLOperand] = {}
        for t in _time_order(steps, direction, d):
            cur = _gru_step(b, xw[t], cur, w, h, layout, reset_after, acts)
            per_step[t] = cur
        finals.append(b.reshape(cur, [1, batch, h]))
        if return_sequence:
            sequences.append(concat(b, [b.reshape(per_step[t], [1, 1, batch, h])
                                        for t in range(steps)], 0))
    out = [concat(b, finals, 0)]
    if return_sequence:
        out.append(concat(b, sequences, 1))
    return out


# -- lstm ------------------------------------------------------------------------------------
def _lstm_weights(b: MLGraphBuilder, r_weight: MLOperand, bias: MLOperand | None,
                  r_bias: MLOperand | None, peephole: MLOperand | None, h: int
                  ) -> dict[str, MLOperand | None]:
    """What every LSTM step of one direction reads, made once: `r` the recurrent weight,
    `sum` bias + recurrentBias [4H], and the peephole weights of the i, f and o gates."""
    w: dict[str, MLOperand | None] = {"r": r_weight, "sum": _bias_sum(b, bias, r_bias)}
    for name, k in PEEPHOLE_OFFSETS.items():
        w[name] = None if peephole is None else _rows(b, peephole, k * h, h)
    return w


def _lstm_step(b: MLGraphBuilder, xw: MLOperand, hidden: MLOperand, cell: MLOperand,
               w: dict[str, MLOperand | None], h: int, layout: str, acts: list[Activation]
               ) -> list[MLOperand]:
    """One LSTM step from the input projection xw = x·Wᵀ [B, 4H] (see the module docstring
    for the order of the sums)."""
    off = LSTM_OFFSETS[layout]
    f_act, g_act, h_act = acts
    r_weight = w["r"]
    assert r_weight is not None
    pre = _plus(b, w["sum"], b.add(xw, b.gemm(hidden, r_weight, b_transpose=True)))

    def gate(name: str) -> MLOperand:
        value = _cols(b, pre, off[name] * h, h)
        peep = w.get(name)
        return value if peep is None else b.add(b.mul(cell, peep), value)  # the incoming c

    i = f_act(b, gate("i"))
    f = f_act(b, gate("f"))
    g = g_act(b, gate("g"))
    o = f_act(b, gate("o"))
    new_cell = b.add(b.mul(f, cell), b.mul(i, g))
    return [b.mul(o, h_act(b, new_cell)), new_cell]


def lstm_cell(b: MLGraphBuilder, input: MLOperand, weight: MLOperand,
              recurrent_weight: MLOperand, hidden_state: MLOperand, cell_state: MLOperand,
              hidden_size: int, *, bias: MLOperand | None = None,
              recurrent_bias: MLOperand | None = None,
              peephole_weight: MLOperand | None = None, layout: str = "iofg",
              activations: Sequence[ActivationSpec] = (sigmoid_fn, tanh_fn, tanh_fn)
              ) -> list[MLOperand]:
    """lstmCell from primitives: [hidden, cell]; `activations` = (gate activation,
    cell-candidate activation, activation applied to the cell state for the output)."""
    b.lstm_cell(input, weight, recurrent_weight, hidden_state, cell_state, hidden_size,
                bias=bias, recurrent_bias=recurrent_bias, peephole_weight=peephole_weight,
                layout=layout,
                activations=_native_names(activations, ("sigmoid", "tanh", "tanh")))
    xw = b.gemm(input, weight, b_transpose=True)
    w = _lstm_weights(b, recurrent_weight, bias, recurrent_bias, peephole_weight, hidden_size)
    return _lstm_step(b, xw, hidden_state, cell_state, w, hidden_size, layout,
                      _resolve(activations))


def lstm(b: MLGraphBuilder, input: MLOperand, weight: MLOperand, recurrent_weight: MLOperand,
         steps: int, hidden_size: int, *, bias: MLOperand | None = None,
         recurrent_bias: MLOperand | None = None, peephole_weight: MLOperand | None = None,
         initial_hidden_state: MLOperand | None = None,
         initial_cell_state: MLOperand | None = None, return_sequence: bool = False,
         direction: str = "forward", layout: str = "iofg",
         activations: Sequence[ActivationSpec] = (sigmoid_fn, tanh_fn, tanh_fn)
         ) -> list[MLOperand]:
    """lstm from primitives: [hidden, cell] (each [D, B, H]) plus the sequence
    [steps, D, B, H] when `return_sequence`."""
    b.lstm(input, weight, recurrent_weight, steps, hidden_size, bias=bias,
           recurrent_bias=recurrent_bias, peephole_weight=peephole_weight,
           initial_hidden_state=initial_hidden_state, initial_cell_state=initial_cell_state,
           return_sequence=return_sequence, direction=direction, layout=layout,
           activations=_native_names(activations, ("sigmoid", "tanh", "tanh")))
    acts = _resolve(activations)
    dirs, batch, h, dtype = weight.shape[0], input.shape[1], hidden_size, input.data_type
    hiddens: list[MLOperand] = []
    cells: list[MLOperand] = []
    sequences: list[MLOperand] = []
    for d in range(dirs):
        xw = _input_projection(b, input, _direction(b, weight, d))
        w = _lstm_weights(b, _direction(b, recurrent_weight, d), _direction(b, bias, d),
                          _direction(b, recurrent_bias, d),
                          _direction(b, peephole_weight, d), h)
        cur_h = (_direction(b, initial_hidden_state, d) if initial_hidden_state is not None
                 else _zeros(b, (batch, h), dtype))
        cur_c = (_direction(b, initial_cell_state, d) if initial_cell_state is not None
                 else _zeros(b, (batch, h), dtype))
        per_step: dict[int, MLOperand] = {}
        for t in _time_order(steps, direction, d):
            cur_h, cur_c = _lstm_step(b, xw[t], cur_h, cur_c, w, h, layout, acts)
            per_step[t] = cur_h
        hiddens.append(b.reshape(cur_h, [1, batch, h]))
        cells.append(b.reshape(cur_c, [1, batch, h]))
        if return_sequence:
            sequences.append(concat(b, [b.reshape(per_step[t], [1, 1, batch, h])
                                        for t in range(steps)], 0))
    out = [concat(b, hiddens, 0), concat(b, cells, 0)]
    if return_sequence:
        out.append(concat(b, sequences, 1))
    return out


__all__ = ["gru", "gru_cell", "lstm", "lstm_cell"]
