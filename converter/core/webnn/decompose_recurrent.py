"""Decompositions of the recurrent ops (gru, gruCell, lstm, lstmCell) into WebNN primitives
(gemm, split, concat, reshape, add, mul, ...), for gate activations a native op cannot
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
(Chromium's LiteRT backend: bit for bit on the WPT cases).

For speed (a browser's build and compute time grow with the number of operations; measured
in benchmarks/browser_recurrent.py), the graph is rank 2 throughout and has few operations:
x·Wᵀ of every step is one gemm over all steps, cut into the steps by one `split` (GRU: first
into its z/r and n columns); the bias sum and the weight rows are made once per direction;
each step has one gemm for h·Rᵀ (two for GRU with the reset gate before the matmul), one
`split` of its gates instead of a slice per gate, one activation over the gates that are
contiguous and share it (LSTM's i, o, f in layout iofg; GRU's z and r), and the sequence is
one concat of the steps' [batch, hidden] states and one reshape. With no initial state the
first step skips what multiplies the zero state (h·Rᵀ, f·c, z·h): exact, up to the sign of
a zero.

Restrictions: float32 or float16 operands (gemm/matmul); `steps` above 8192 are split and
concatenated in chunks of 8192.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, overload

from converter.core.webnn.decompose import (
    ACTIVATIONS,
    GRU_OFFSETS,
    LSTM_OFFSETS,
    MAX_CONCAT,
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


def _parts(b: MLGraphBuilder, x: MLOperand, sizes: Sequence[int], axis: int
           ) -> list[MLOperand]:
    """`x` cut along `axis` into consecutive parts of `sizes`: one split (equal parts as a
    count), in chunks of 8192 parts; `x` itself when one part covers it."""
    sizes = list(sizes)
    if len(sizes) == 1:
        return [x]
    if len(sizes) > MAX_CONCAT:
        chunks = [sizes[i:i + MAX_CONCAT] for i in range(0, len(sizes), MAX_CONCAT)]
        pieces = _parts(b, x, [sum(c) for c in chunks], axis)
        return [p for piece, c in zip(pieces, chunks, strict=True)
                for p in _parts(b, piece, c, axis)]
    equal = all(s == sizes[0] for s in sizes)
    return b.split(x, len(sizes) if equal else sizes, axis=axis)


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


def _bias_sum(b: MLGraphBuilder, bias: MLOperand | None, r_bias: MLOperand | None
              ) -> MLOperand | None:
    """bias + recurrentBias (either alone when the other is absent: 0 + x is x)."""
    if bias is None or r_bias is None:
        return bias if r_bias is None else r_bias
    return b.add(bias, r_bias)


def _plus(b: MLGraphBuilder, x: MLOperand | None, y: MLOperand) -> MLOperand:
    """x + y, or y when x is absent (the spec's zero)."""
    return y if x is None else b.add(x, y)


def _input_projection(b: MLGraphBuilder, input: MLOperand, weight: MLOperand,
                      columns: Sequence[int]) -> list[list[MLOperand]]:
    """x·Wᵀ for every step at once ([steps·B, G·H]), cut into `columns` (consecutive column
    counts) and each into the steps: [part][step] -> [B, columns[part]]."""
    steps, batch, _ = input.shape
    flat = b.reshape(input, [steps * batch, input.shape[2]])
    proj = b.gemm(flat, weight, b_transpose=True)
    return [_parts(b, part, [batch] * steps, 0) for part in _parts(b, proj, columns, 1)]


def _time_order(steps: int, direction: str, d: int) -> range:
    reverse = direction == "backward" or d == 1
    return range(steps - 1, -1, -1) if reverse else range(steps)


def _sequence(b: MLGraphBuilder, per_step: dict[int, MLOperand], steps: int, batch: int,
              h: int) -> MLOperand:
    """The states of steps 0..steps-1 ([B, H] each) as [steps, 1, B, H]."""
    return b.reshape(concat(b, [per_step[t] for t in range(steps)], 0), [steps, 1, batch, h])


def _stack(b: MLGraphBuilder, states: list[MLOperand], batch: int, h: int) -> MLOperand:
    """The directions' final [B, H] states as [D, B, H]."""
    return b.reshape(concat(b, states, 0), [len(states), batch, h])


# -- gru -------------------------------------------------------------------------------------
def _gru_weights(b: MLGraphBuilder, r_weight: MLOperand, bias: MLOperand | None,
                 r_bias: MLOperand | None, h: int, layout: str, reset_after: bool
                 ) -> dict[str, MLOperand | None]:
    """What every GRU step of one direction reads, made once: `r` the recurrent weight (its
    z and r rows when the reset gate applies before the matmul: z and r occupy the first 2H
    rows in both layouts, n the last H), `rn` its n rows, `zr` the z and r gates' bias sum
    [2H], `n` the n gate's bias sum, `bn` / `rbn` its biases, `one` the scalar 1."""
    total = _bias_sum(b, bias, r_bias)
    w: dict[str, MLOperand | None] = {"zr": None if total is None else _rows(b, total, 0, 2 * h),
                                      "one": scalar(b, 1.0, r_weight.data_type)}
    if reset_after:
        w.update(r=r_weight, bn=None if bias is None else _rows(b, bias, 2 * h, h),
                 rbn=None if r_bias is None else _rows(b, r_bias, 2 * h, h))
    else:
        w.update(r=_rows(b, r_weight, 0, 2 * h), rn=_rows(b, r_weight, 2 * h, h),
                 n=None if total is None else _rows(b, total, 2 * h, h))
    return w


def _gru_step(b: MLGraphBuilder, xw_zr: MLOperand, xw_n: MLOperand, hidden: MLOperand | None,
              w: dict[str, MLOperand | None], h: int, layout: str, reset_after: bool,
              acts: list[Activation]) -> MLOperand:
    """One GRU step from the input projection's z/r columns xw_zr [B, 2H] and n columns
    xw_n [B, H]; `hidden` None is the zero state (see the module docstring for the order of
    the sums)."""
    f, g = acts
    r_weight = w["r"]
    assert r_weight is not None
    hr_zr: MLOperand | None = None
    hr_n: MLOperand | None = None
    if hidden is not None:
        hr = b.gemm(hidden, r_weight, b_transpose=True)  # [B, 3H], or [B, 2H] (z, r)
        hr_zr, hr_n = _parts(b, hr, [2 * h, h], 1) if reset_after else (hr, None)
    zr = _plus(b, w["zr"], xw_zr if hr_zr is None else b.add(xw_zr, hr_zr))
    gates = _parts(b, f(b, zr), [h, h], 1)
    z, r = gates[GRU_OFFSETS[layout]["z"]], gates[GRU_OFFSETS[layout]["r"]]
    if reset_after:
        recurrent = (w["rbn"] if hr_n is None  # the zero state: recurrentBias + 0
                     else _plus(b, w["rbn"], hr_n))
        inner = None if recurrent is None else b.mul(r, recurrent)
        n = g(b, _plus(b, w["bn"], xw_n if inner is None else b.add(xw_n, inner)))
    else:
        rn = w["rn"]
        assert rn is not None
        n_in = xw_n if hidden is None else b.add(xw_n, b.gemm(b.mul(r, hidden), rn,
                                                              b_transpose=True))
        n = g(b, _plus(b, w["n"], n_in))
    one = w["one"]
    assert one is not None
    new = b.mul(n, b.sub(one, z))
    return new if hidden is None else b.add(b.mul(z, hidden), new)


def gru_cell(b: MLGraphBuilder, input: MLOperand, weight: MLOperand,
             recurrent_weight: MLOperand, hidden_state: MLOperand, hidden_size: int, *,
             bias: MLOperand | None = None, recurrent_bias: MLOperand | None = None,
             reset_after: bool = True, layout: str = "zrn",
             activations: Sequence[ActivationSpec] = (sigmoid_fn, tanh_fn)) -> MLOperand:
    """gruCell from primitives; `activations` = (gate activation, new-gate activation)."""
    b.gru_cell(input, weight, recurrent_weight, hidden_state, hidden_size, bias=bias,
               recurrent_bias=recurrent_bias, reset_after=reset_after, layout=layout,
               activations=_native_names(activations, ("sigmoid", "tanh")))
    h = hidden_size
    xw_zr, xw_n = _parts(b, b.gemm(input, weight, b_transpose=True), [2 * h, h], 1)
    w = _gru_weights(b, recurrent_weight, bias, recurrent_bias, h, layout, reset_after)
    return _gru_step(b, xw_zr, xw_n, hidden_state, w, h, layout, reset_after,
                     _resolve(activations))


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
    dirs, batch, h = weight.shape[0], input.shape[1], hidden_size
    finals: list[MLOperand] = []
    sequences: list[MLOperand] = []
    for d in range(dirs):
        xw_zr, xw_n = _input_projection(b, input, _direction(b, weight, d), [2 * h, h])
        w = _gru_weights(b, _direction(b, recurrent_weight, d), _direction(b, bias, d),
                         _direction(b, recurrent_bias, d), h, layout, reset_after)
        cur = _direction(b, initial_hidden_state, d)
        per_step: dict[int, MLOperand] = {}
        for t in _time_order(steps, direction, d):
            cur = per_step[t] = _gru_step(b, xw_zr[t], xw_n[t], cur, w, h, layout,
                                          reset_after, acts)
        assert cur is not None
        finals.append(cur)
        if return_sequence:
            sequences.append(_sequence(b, per_step, steps, batch, h))
    out = [_stack(b, finals, batch, h)]
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


def _lstm_gates(b: MLGraphBuilder, pre: MLOperand, cell: MLOperand | None,
                w: dict[str, MLOperand | None], h: int, layout: str, acts: list[Activation]
                ) -> dict[str, MLOperand]:
    """The activated gates i, o, f, g of the pre-activations `pre` [B, 4H]: in layout iofg
    without peepholes one activation over i, o, f (contiguous) and one split of it; else one
    split into the four gates, the peephole term added to i, f, o (before the activation)."""
    f_act, g_act, _ = acts
    if layout == "iofg" and (w["i"] is None or cell is None):
        ifo, g_pre = _parts(b, pre, [3 * h, h], 1)
        i, o, f = _parts(b, f_act(b, ifo), [h, h, h], 1)
        return {"i": i, "o": o, "f": f, "g": g_act(b, g_pre)}
    off = LSTM_OFFSETS[layout]
    parts = _parts(b, pre, [h] * 4, 1)
    out = {}
    for name in ("i", "f", "g", "o"):
        value, peep = parts[off[name]], w.get(name)
        if peep is not None and cell is not None:
            value = b.add(b.mul(cell, peep), value)  # the incoming c
        out[name] = (g_act if name == "g" else f_act)(b, value)
    return out


def _lstm_step(b: MLGraphBuilder, xw: MLOperand, hidden: MLOperand | None,
               cell: MLOperand | None, w: dict[str, MLOperand | None], h: int, layout: str,
               acts: list[Activation]) -> list[MLOperand]:
    """One LSTM step from the input projection xw = x·Wᵀ [B, 4H]; `hidden` / `cell` None
    are the zero states (see the module docstring for the order of the sums)."""
    r_weight = w["r"]
    assert r_weight is not None
    pre = _plus(b, w["sum"], xw if hidden is None else
                b.add(xw, b.gemm(hidden, r_weight, b_transpose=True)))
    gate = _lstm_gates(b, pre, cell, w, h, layout, acts)
    new_cell = b.mul(gate["i"], gate["g"])
    if cell is not None:
        new_cell = b.add(b.mul(gate["f"], cell), new_cell)
    return [b.mul(gate["o"], acts[2](b, new_cell)), new_cell]


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
    dirs, batch, h = weight.shape[0], input.shape[1], hidden_size
    hiddens: list[MLOperand] = []
    cells: list[MLOperand] = []
    sequences: list[MLOperand] = []
    for d in range(dirs):
        [xw] = _input_projection(b, input, _direction(b, weight, d), [4 * h])
        w = _lstm_weights(b, _direction(b, recurrent_weight, d), _direction(b, bias, d),
                          _direction(b, recurrent_bias, d),
                          _direction(b, peephole_weight, d), h)
        cur_h = _direction(b, initial_hidden_state, d)
        cur_c = _direction(b, initial_cell_state, d)
        per_step: dict[int, MLOperand] = {}
        for t in _time_order(steps, direction, d):
            cur_h, cur_c = _lstm_step(b, xw[t], cur_h, cur_c, w, h, layout, acts)
            per_step[t] = cur_h
        assert cur_h is not None and cur_c is not None
        hiddens.append(cur_h)
        cells.append(cur_c)
        if return_sequence:
            sequences.append(_sequence(b, per_step, steps, batch, h))
    out = [_stack(b, hiddens, batch, h), _stack(b, cells, batch, h)]
    if return_sequence:
        out.append(concat(b, sequences, 1))
    return out


__all__ = ["gru", "gru_cell", "lstm", "lstm_cell"]
