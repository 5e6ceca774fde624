"""ONNX lowerings: gru, gruCell, lstm, lstmCell (float32; float16 lifted and rounded once).

gru and lstm map to ONNX GRU / LSTM (one node, onnxruntime's fused kernel) when the options
mean exactly the same: gru with layout "zrn" (ONNX zrh; `resetAfter` is
`linear_before_reset`), lstm with layout "iofg" (ONNX iofc) and no peephole weight (the
WebNN output-gate peephole reads the incoming cell state, ONNX's the new one); any
activations from relu/sigmoid/tanh, every direction, biases concatenated into ONNX `B`.

Otherwise, and for gruCell / lstmCell, they are unrolled over directions and time steps into
MatMul / Add / Mul / activation nodes, which reproduce WebNN exactly where ONNX GRU/LSTM
cannot: both gate layouts (gru "zrn"/"rzn", lstm "iofg"/"ifgo") and the WebNN peephole.
Missing biases, peepholes and initial states are omitted (zeros). The unrolled graph grows
linearly with `steps`; constant weight slicing and transposes are folded by onnxruntime.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

import numpy as np

from converter.core.webnn.operand import MLOperand, Operation
from converter.runtimes.onnxruntime.lowering.context import Emitter, lowering

F32 = "float32"
_ACT = {"relu": "Relu", "sigmoid": "Sigmoid", "tanh": "Tanh"}
GRU_OFFSETS = {"zrn": {"z": 0, "r": 1, "n": 2}, "rzn": {"r": 0, "z": 1, "n": 2}}
LSTM_OFFSETS = {"iofg": {"i": 0, "o": 1, "f": 2, "g": 3},
                "ifgo": {"i": 0, "f": 1, "g": 2, "o": 3}}
PEEPHOLE_OFFSETS = {"i": 0, "o": 1, "f": 2}


class _Rnn:
    """Shared helpers of the unrolled recurrent lowerings."""

    def __init__(self, e: Emitter, hidden_size: int, acts: Sequence[str]) -> None:
        self.e = e
        self.h = hidden_size
        self.acts = list(acts)

    def act(self, index: int, v: str) -> str:
        return self.e.node(_ACT[self.acts[index]], [v], F32)

    @overload
    def gate(self, v: str, offset: int) -> str: ...

    @overload
    def gate(self, v: str | None, offset: int) -> str | None: ...

    def gate(self, v: str | None, offset: int) -> str | None:
        """Columns [offset·H, (offset+1)·H) of the last axis (None stays None)."""
        if v is None:
            return None
        e, h = self.e, self.h
        return e.node("Slice", [v, e.ints([offset * h], "starts"),
                                e.ints([(offset + 1) * h], "ends"), e.ints([-1], "axes")], F32)

    def add(self, *terms: str | None) -> str:
        present = [t for t in terms if t is not None]
        out = present[0]
        for t in present[1:]:
            out = self.e.node("Add", [out, t], F32)
        return out

    def mul(self, a: str, b: str) -> str:
        return self.e.node("Mul", [a, b], F32)

    def matmul(self, a: str, b: str) -> str:
        return self.e.node("MatMul", [a, b], F32)

    def pick(self, operand: MLOperand | None, d: int | None) -> str | None:
        """The operand in float32, or its direction-d slice (axis 0 removed)."""
        if operand is None:
            return None
        v = self.e.input(operand, F32)
        if d is None:
            return v
        return self.e.node("Gather", [v, self.e.scalar(d, "int64", "dir")], F32, axis=0)

    def transposed(self, v: str) -> str:
        return self.e.transpose(v, [1, 0])

    def gru_step(self, xw: str, hidden: str, r_t: str, bias: str | None, r_bias: str | None,
                 layout: str, reset_after: bool) -> str:
        off = GRU_OFFSETS[layout]
        g = self.gate
        xb = self.add(xw, bias)
        rec = {name: self.matmul(hidden, g(r_t, off[name])) for name in ("z", "r")}
        z = self.act(0, self.add(g(xb, off["z"]), rec["z"], g(r_bias, off["z"])))
        r = self.act(0, self.add(g(xb, off["r"]), rec["r"], g(r_bias, off["r"])))
        rn = g(r_t, off["n"])
        rbn = g(r_bias, off["n"])
        if reset_after:
            n = self.act(1, self.add(g(xb, off["n"]),
                                     self.mul(r, self.add(self.matmul(hidden, rn), rbn))))
        else:
            n = self.act(1, self.add(g(xb, off["n"]), rbn,
                                     self.matmul(self.mul(r, hidden), rn)))
        one_minus_z = self.e.node("Sub", [self.e.scalar(1.0, F32), z], F32)
        return self.add(self.mul(z, hidden), self.mul(one_minus_z, n))

    def lstm_step(self, xw: str, hidden: str, cell: str, r_t: str, bias: str | None,
                  r_bias: str | None, peephole: str | None, layout: str) -> tuple[str, str]:
        off = LSTM_OFFSETS[layout]
        g = self.gate
        pre = self.add(xw, self.matmul(hidden, r_t), bias, r_bias)

        def peep(name: str) -> str | None:
            p = g(peephole, PEEPHOLE_OFFSETS[name])
            return None if p is None else self.mul(p, cell)

        i = self.act(0, self.add(g(pre, off["i"]), peep("i")))
        f = self.act(0, self.add(g(pre, off["f"]), peep("f")))
        cand = self.act(1, g(pre, off["g"]))
        o = self.act(0, self.add(g(pre, off["o"]), peep("o")))
        new_cell = self.add(self.mul(f, cell), self.mul(i, cand))
        return self.mul(o, self.act(2, new_cell)), new_cell


def _zeros(e: Emitter, batch: int, h: int) -> str:
    return e.const(np.zeros((batch, h)), F32, "zeros")


@lowering("gruCell")
def gru_cell(e: Emitter, op: Operation) -> list[str]:
    x, w, r, hs, h = op.args
    o = op.options
    rnn = _Rnn(e, int(h), o["activations"])
    xw = rnn.matmul(e.input(x, F32), rnn.transposed(e.input(w, F32)))
    y = rnn.gru_step(xw, e.input(hs, F32), rnn.transposed(e.input(r, F32)),
                     rnn.pick(o.get("bias"), None), rnn.pick(o.get("recurrentBias"), None),
                     o["layout"], bool(o["resetAfter"]))
    return [e.cast(y, op.outputs[0].data_type)]


@lowering("lstmCell")
def lstm_cell(e: Emitter, op: Operation) -> list[str]:
    x, w, r, hs, cs, h = op.args
    o = op.options
    rnn = _Rnn(e, int(h), o["activations"])
    xw = rnn.matmul(e.input(x, F32), rnn.transposed(e.input(w, F32)))
    hidden, cell = rnn.lstm_step(xw, e.input(hs, F32), e.input(cs, F32),
                                 rnn.transposed(e.input(r, F32)),
                                 rnn.pick(o.get("bias"), None),
                                 rnn.pick(o.get("recurrentBias"), None),
                                 rnn.pick(o.get("peepholeWeight"), None), o["layout"])
    out = op.outputs[0].data_type
    return [e.cast(hidden, out), e.cast(cell, out)]


def _steps(steps: int, direction: str, d: int) -> range:
    reverse = direction == "backward" or d == 1
    return range(steps - 1, -1, -1) if reverse else range(steps)


_DIRECTIONS = {"forward": "forward", "backward": "reverse", "both": "bidirectional"}


def _native(e: Emitter, op: Operation) -> list[str] | None:
    """ONNX GRU / LSTM computing `op` (see the module docstring), or None."""
    o = op.options
    is_lstm = op.op == "lstm"
    if o["layout"] != ("iofg" if is_lstm else "zrn"):
        return None
    if is_lstm and o.get("peepholeWeight") is not None:
        return None
    x, w, r, _, h = op.args
    h = int(h)
    dirs = w.shape[0]
    gates = 4 if is_lstm else 3
    bias, r_bias = o.get("bias"), o.get("recurrentBias")
    b = ""
    if bias is not None or r_bias is not None:
        parts = [e.input(p, F32) if p is not None else e.const(np.zeros((dirs, gates * h)),
                                                               F32, "zeros")
                 for p in (bias, r_bias)]
        b = e.node("Concat", parts, F32, axis=1)
    init_h = o.get("initialHiddenState")
    inputs = [e.input(x, F32), e.input(w, F32), e.input(r, F32), b, "",
              e.input(init_h, F32) if init_h is not None else ""]
    if is_lstm:
        init_c = o.get("initialCellState")
        inputs.append(e.input(init_c, F32) if init_c is not None else "")
    while inputs[-1] == "":
        inputs.pop()
    acts = [_ACT[a] for a in o["activations"]] * dirs
    attrs = {"hidden_size": h, "direction": _DIRECTIONS[o["direction"]], "activations": acts}
    if not is_lstm:
        attrs["linear_before_reset"] = int(bool(o["resetAfter"]))
    outs = e.node_multi("LSTM" if is_lstm else "GRU", inputs, [F32] * (3 if is_lstm else 2),
                        **attrs)
    out = op.outputs[0].data_type
    results = [e.cast(outs[1], out)]
    if is_lstm:
        results.append(e.cast(outs[2], out))
    if o["returnSequence"]:
        results.append(e.cast(outs[0], out))
    return results


@lowering("gru", "lstm")
def recurrent(e: Emitter, op: Operation) -> list[str]:
    native = _native(e, op)
    if native is not None:
        return native
    x, w, r, steps, h = op.args
    steps, h = int(steps), int(h)
    o = op.options
    is_lstm = op.op == "lstm"
    dirs, batch = w.shape[0], x.shape[1]
    rnn = _Rnn(e, h, o["activations"])
    xv = e.input(x, F32)
    finals: list[list[str]] = [[], []]
    sequences: list[str] = []
    for d in range(dirs):
        w_d, r_d = rnn.pick(w, d), rnn.pick(r, d)
        assert w_d is not None and r_d is not None
        xw = rnn.matmul(xv, rnn.transposed(w_d))  # [steps, B, G·H]
        r_t = rnn.transposed(r_d)
        bias, r_bias = rnn.pick(o.get("bias"), d), rnn.pick(o.get("recurrentBias"), d)
        hidden = rnn.pick(o.get("initialHiddenState"), d) or _zeros(e, batch, h)
        cell = None
        if is_lstm:
            cell = rnn.pick(o.get("initialCellState"), d) or _zeros(e, batch, h)
            peephole = rnn.pick(o.get("peepholeWeight"), d)
        per_step: dict[int, str] = {}
        for t in _steps(steps, o["direction"], d):
            xw_t = e.node("Gather", [xw, e.scalar(t, "int64", "step")], F32, axis=0)
            if is_lstm:
                assert cell is not None
                hidden, cell = rnn.lstm_step(xw_t, hidden, cell, r_t, bias, r_bias, peephole,
                                             o["layout"])
            else:
                hidden = rnn.gru_step(xw_t, hidden, r_t, bias, r_bias, o["layout"],
                                      bool(o["resetAfter"]))
            per_step[t] = hidden
        finals[0].append(e.reshape(hidden, [1, batch, h]))
        if cell is not None:
            finals[1].append(e.reshape(cell, [1, batch, h]))
        if o["returnSequence"]:
            parts = [e.reshape(per_step[t], [1, 1, batch, h]) for t in range(steps)]
            sequences.append(parts[0] if len(parts) == 1 else e.node("Concat", parts, F32,
                                                                     axis=0))
    out = op.outputs[0].data_type

    def join(parts: list[str], axis: int) -> str:
        joined = parts[0] if len(parts) == 1 else e.node("Concat", parts, F32, axis=axis)
        return e.cast(joined, out)

    results = [join(finals[0], 0)]
    if is_lstm:
        results.append(join(finals[1], 0))
    if o["returnSequence"]:
        results.append(join(sequences, 1))
    return results
