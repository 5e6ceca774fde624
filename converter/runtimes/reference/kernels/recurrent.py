"""Reference kernels: gru, gruCell, lstm, lstmCell (spec section "gruCell"/"lstmCell"
emulation, float64 inside).

Loops run over directions and time steps only; each step is a batch of float64 matmuls.
Missing biases, peepholes and initial states are zeros. Gate offsets along the 3H/4H axis:
gru "zrn" z 0, r H, n 2H; "rzn" r 0, z H, n 2H; lstm "iofg" i 0, o H, f 2H, g 3H; "ifgo"
i 0, f H, g 2H, o 3H; peepholes are always packed i, o, f. The lstm output-gate peephole
reads the incoming cell state (as the spec emulation and webnn-baseline do; ONNX reads the
new one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from converter.core.webnn.operand import Operation
from converter.runtimes.reference.registry import kernel

Activation = Callable[[np.ndarray], np.ndarray]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        y: np.ndarray = 1.0 / (1.0 + np.exp(-x))  # numpy's stubs: Any for unknown dtypes
    return y


ACTIVATIONS: dict[str, Activation] = {
    "relu": lambda x: np.maximum(x, 0.0),
    "sigmoid": _sigmoid,
    "tanh": np.tanh,
}

GRU_OFFSETS = {"zrn": {"z": 0, "r": 1, "n": 2}, "rzn": {"r": 0, "z": 1, "n": 2}}
LSTM_OFFSETS = {"iofg": {"i": 0, "o": 1, "f": 2, "g": 3},
                "ifgo": {"i": 0, "f": 1, "g": 2, "o": 3}}
PEEPHOLE_OFFSETS = {"i": 0, "o": 1, "f": 2}


def _f64(x: np.ndarray | None, shape: tuple[int, ...]) -> np.ndarray:
    """x as float64, or zeros of `shape` when absent."""
    return np.zeros(shape) if x is None else np.asarray(x, dtype=np.float64)


def _gate(a: np.ndarray, offsets: dict[str, int], name: str, h: int) -> np.ndarray:
    """The `name` gate's block of H columns along the last axis of a [..., G*H] array."""
    k = offsets[name] * h
    return a[..., k:k + h]


def gru_step(xw: np.ndarray, hidden: np.ndarray, r_weight: np.ndarray, bias: np.ndarray,
             r_bias: np.ndarray, hidden_size: int, layout: str, reset_after: bool,
             acts: list[Activation]) -> np.ndarray:
    """One GRU step. xw = x @ Wᵀ [B, 3H] (without bias); r_weight [3H, H]; biases [3H]."""
    off, h = GRU_OFFSETS[layout], hidden_size
    f, g = acts
    xb = xw + bias

    def rec(name: str, state: np.ndarray) -> np.ndarray:
        rows = _gate(r_weight.T, off, name, h)  # [H, H] = R_gateᵀ
        product: np.ndarray = state @ rows
        return product

    z = f(_gate(xb, off, "z", h) + rec("z", hidden) + _gate(r_bias, off, "z", h))
    r = f(_gate(xb, off, "r", h) + rec("r", hidden) + _gate(r_bias, off, "r", h))
    rbn = _gate(r_bias, off, "n", h)
    if reset_after:
        n = g(_gate(xb, off, "n", h) + r * (rec("n", hidden) + rbn))
    else:
        n = g(_gate(xb, off, "n", h) + rbn + rec("n", r * hidden))
    new_hidden: np.ndarray = z * hidden + (1.0 - z) * n
    return new_hidden


def lstm_step(xw: np.ndarray, hidden: np.ndarray, cell: np.ndarray, r_weight: np.ndarray,
              bias: np.ndarray, r_bias: np.ndarray, peephole: np.ndarray, hidden_size: int,
              layout: str, acts: list[Activation]) -> tuple[np.ndarray, np.ndarray]:
    """One LSTM step. xw = x @ Wᵀ [B, 4H]; r_weight [4H, H]; biases [4H]; peephole [3H]."""
    off, h = LSTM_OFFSETS[layout], hidden_size
    f_act, g_act, h_act = acts
    pre = xw + hidden @ r_weight.T + bias + r_bias

    def peep(name: str) -> np.ndarray:
        term: np.ndarray = _gate(peephole, PEEPHOLE_OFFSETS, name, h) * cell
        return term

    i = f_act(_gate(pre, off, "i", h) + peep("i"))
    f = f_act(_gate(pre, off, "f", h) + peep("f"))
    g = g_act(_gate(pre, off, "g", h))
    o = f_act(_gate(pre, off, "o", h) + peep("o"))
    new_cell = f * cell + i * g
    return o * h_act(new_cell), new_cell


def _acts(options: dict[str, Any]) -> list[Activation]:
    return [ACTIVATIONS[a] for a in options["activations"]]


@kernel("gruCell")
def gru_cell(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, w, r, hs = (np.asarray(a, dtype=np.float64) for a in args[:4])
    h = int(args[4])
    with np.errstate(over="ignore", invalid="ignore"):
        out = gru_step(x @ w.T, hs, r, _f64(options.get("bias"), (3 * h,)),
                       _f64(options.get("recurrentBias"), (3 * h,)), h, options["layout"],
                       options["resetAfter"], _acts(options))
    return [out]


@kernel("lstmCell")
def lstm_cell(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, w, r, hs, cs = (np.asarray(a, dtype=np.float64) for a in args[:5])
    h = int(args[5])
    with np.errstate(over="ignore", invalid="ignore"):
        hidden, cell = lstm_step(x @ w.T, hs, cs, r, _f64(options.get("bias"), (4 * h,)),
                                 _f64(options.get("recurrentBias"), (4 * h,)),
                                 _f64(options.get("peepholeWeight"), (3 * h,)), h,
                                 options["layout"], _acts(options))
    return [hidden, cell]


def _step_order(steps: int, direction: str, d: int) -> range:
    """Time indices walked by direction index d (reverse for backward and d = 1 of both)."""
    reverse = direction == "backward" or d == 1
    return range(steps - 1, -1, -1) if reverse else range(steps)


@kernel("gru")
def gru(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, w, r = (np.asarray(a, dtype=np.float64) for a in args[:3])
    steps, h = int(args[3]), int(args[4])
    dirs, batch = w.shape[0], x.shape[1]
    bias = _f64(options.get("bias"), (dirs, 3 * h))
    r_bias = _f64(options.get("recurrentBias"), (dirs, 3 * h))
    state = _f64(options.get("initialHiddenState"), (dirs, batch, h))
    acts = _acts(options)
    hidden = np.empty((dirs, batch, h))
    sequence = np.empty((steps, dirs, batch, h))
    with np.errstate(over="ignore", invalid="ignore"):
        for d in range(dirs):
            xw = x @ w[d].T  # [steps, B, 3H]: all input products at once
            cur = state[d]
            for t in _step_order(steps, options["direction"], d):
                cur = gru_step(xw[t], cur, r[d], bias[d], r_bias[d], h, options["layout"],
                               options["resetAfter"], acts)
                sequence[t, d] = cur
            hidden[d] = cur
    return [hidden, sequence] if options["returnSequence"] else [hidden]


@kernel("lstm")
def lstm(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, w, r = (np.asarray(a, dtype=np.float64) for a in args[:3])
    steps, h = int(args[3]), int(args[4])
    dirs, batch = w.shape[0], x.shape[1]
    bias = _f64(options.get("bias"), (dirs, 4 * h))
    r_bias = _f64(options.get("recurrentBias"), (dirs, 4 * h))
    peephole = _f64(options.get("peepholeWeight"), (dirs, 3 * h))
    h_state = _f64(options.get("initialHiddenState"), (dirs, batch, h))
    c_state = _f64(options.get("initialCellState"), (dirs, batch, h))
    acts = _acts(options)
    hidden = np.empty((dirs, batch, h))
    cell = np.empty((dirs, batch, h))
    sequence = np.empty((steps, dirs, batch, h))
    with np.errstate(over="ignore", invalid="ignore"):
        for d in range(dirs):
            xw = x @ w[d].T  # [steps, B, 4H]
            cur_h, cur_c = h_state[d], c_state[d]
            for t in _step_order(steps, options["direction"], d):
                cur_h, cur_c = lstm_step(xw[t], cur_h, cur_c, r[d], bias[d], r_bias[d],
                                         peephole[d], h, options["layout"], acts)
                sequence[t, d] = cur_h
            hidden[d], cell[d] = cur_h, cur_c
    out = [hidden, cell]
    return out + [sequence] if options["returnSequence"] else out
