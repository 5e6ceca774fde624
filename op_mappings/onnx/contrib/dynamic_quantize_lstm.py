"""com.microsoft DynamicQuantizeLSTM (onnxruntime's dynamic int8 quantization of LSTM) ->
an unrolled WebNN LSTM whose two matrix products are integer products, computed the way
onnxruntime's CPU kernel computes them.

onnxruntime quantizes the float operand of each product at run time to uint8 (as
DynamicQuantizeLinear: range [min(0, min), max(0, max)], scale = range / 255, or 1 when the
range is empty, zero point roundEven(−min / scale), values saturate(roundEven(x / scale) +
zero point)): X once for the whole sequence (so one scale for every step), and the hidden
state h(t−1) again before every step (a scale per step). onnxruntime splits the batch into
chunks of ceil(batch / threads) rows, each quantized with its own range, when batch > 4 or
2 <= batch with hidden <= 256 (UniDirectionalLstm::SetNumThreads), so its own result depends
on its thread count; here each row of the batch gets its own range in that case (what
onnxruntime computes with at least `batch` intra-op threads, and the one choice where a
sequence's result does not depend on the rest of the batch), and the whole batch one range
otherwise (as onnxruntime always does then). Batch 1 is the same either way. Each product is then
((q − zero point) · (W − W_zero_point)) · (scale · W_scale), summed exactly in integers.
Here the integer differences are exact float32 values, the weights are turned into
(W − W_zero_point) constants at conversion time, the sums are exact while |sum| < 2^24, and
the scale product multiplies them once, so the gate pre-activations match onnxruntime's to
float32 rounding; the cell (iofc gates, bias Wb + Rb, peepholes, clip, activations,
input_forget) is ONNX LSTM's. Measured against onnxruntime: at most 2.4e-7 apart (float32
rounding of the activations; a float LSTM on the dequantized weights is ~6e-3 apart). A
hidden value that lands exactly on a quantization step boundary on one side only would move
one quantized value by 1 (~1e-4 here), which is the tests' tolerance.

Layout (the contrib schema): W [num_directions, input_size, 4·hidden], R [num_directions,
hidden, 4·hidden] (already transposed, unlike ONNX LSTM), W_scale / W_zero_point / R_scale /
R_zero_point [num_directions] (per tensor) or [num_directions, 4·hidden] (per channel; the
zero points of a per-channel tensor must all be equal, and 0 for int8, as onnxruntime
requires).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import decompose as dc
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.recurrent_layout import LSTM_IOFC, PEEPHOLES
from op_mappings._common.unroll import check_steps, flatten_steps, stack_steps, step_blocks
from op_mappings._common.unroll import unroll as unroll_steps
from op_mappings._common.values import const_or_none, scalar
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import attr_int, attr_str
from op_mappings.onnx.recurrent import activation_fn, parse_activations

MS = "com.microsoft"
_DIRECTIONS = ("forward", "reverse", "bidirectional")


def _quantized(ctx: ImportContext, x: Any, per_row: bool = False) -> tuple[Any, Any]:
    """onnxruntime's dynamic uint8 quantization of float32 `x` (GetQuantizationParameter and
    MlasQuantizeLinear): (q − zero point as exact floats, scale: 0-D, or [rows, 1] with
    `per_row`, one range per row of a 2-D `x`)."""
    b = ctx.builder
    zero = scalar(ctx, 0.0, "float32")
    axes = [1] if per_row else None
    lo = b.min(b.reduce_min(x, axes=axes, keep_dimensions=per_row), zero)
    hi = b.max(b.reduce_max(x, axes=axes, keep_dimensions=per_row), zero)
    span = b.sub(hi, lo)
    empty = b.equal(span, zero)
    scale = b.where(empty, scalar(ctx, 1.0, "float32"),
                    b.div(span, scalar(ctx, 255.0, "float32")))
    zp = b.round_even(b.clamp(b.neg(b.div(lo, scale)), min_value=0, max_value=255))
    q = b.clamp(b.add(b.round_even(b.div(x, scale)), zp), min_value=0, max_value=255)
    return b.sub(q, zp), scale


@dataclasses.dataclass(frozen=True)
class _Weights:
    """One direction's integer weights (W − zero point, float32 [K, 4·hidden]) and scale
    (constant [1] or [4·hidden])."""

    ints: np.ndarray
    scale: np.ndarray


def _weights(ctx: ImportContext, node: Node, index: int, what: str, k: int, dirs: int,
             hidden: int) -> list[_Weights]:
    """Per direction, input `index` (W or R) less its zero point, with its scale."""
    w = const_or_none(ctx, node.inputs[index])
    scale = const_or_none(ctx, node.inputs[8 if index == 1 else 10])
    zp = const_or_none(ctx, node.inputs[9 if index == 1 else 11])
    if w is None or scale is None or zp is None:
        raise UnsupportedAttribute(f"DynamicQuantizeLSTM {what}, its scale and zero point must "
                                   "be constants")
    if w.dtype not in (np.int8, np.uint8):
        raise UnsupportedDataType(f"DynamicQuantizeLSTM {what} has data type {w.dtype}; int8 "
                                  "or uint8 is needed")
    if list(w.shape) != [dirs, k, 4 * hidden]:
        raise InvalidModel(f"DynamicQuantizeLSTM {what} has shape {list(w.shape)}, "
                           f"{[dirs, k, 4 * hidden]} expected")
    if zp.dtype != w.dtype or scale.dtype != np.float32:
        raise InvalidModel(f"DynamicQuantizeLSTM {what}_zero_point must be {w.dtype} and "
                           f"{what}_scale float32, got {zp.dtype} and {scale.dtype}")
    for arr, part in ((scale, "scale"), (zp, "zero_point")):
        if list(arr.shape) not in ([dirs], [dirs, 4 * hidden]):
            raise InvalidModel(f"DynamicQuantizeLSTM {what}_{part} has shape "
                               f"{list(arr.shape)}; [{dirs}] (per tensor) or "
                               f"[{dirs}, {4 * hidden}] (per channel) is needed")
    if zp.ndim == 2 and np.any(zp != (0 if w.dtype == np.int8 else zp.reshape(-1)[0])):
        raise InvalidModel(f"DynamicQuantizeLSTM per-channel {what}_zero_point must be one "
                           f"value{' (0 for int8)' if w.dtype == np.int8 else ''}, as "
                           "onnxruntime requires")
    out = []
    for d in range(dirs):
        z = int(zp[d].reshape(-1)[0])
        ints = (w[d].astype(np.int32) - z).astype(np.float32)
        out.append(_Weights(ints, np.asarray(scale[d], np.float32).reshape(-1)))
    return out


class _QuantLstm:
    """One DynamicQuantizeLSTM node, parsed once."""

    def __init__(self, ctx: ImportContext, node: Node) -> None:
        if len(node.inputs) != 12 or len(node.outputs) > 3:
            raise InvalidModel(f"DynamicQuantizeLSTM takes 12 inputs and up to 3 outputs, the "
                               f"node has {len(node.inputs)} and {len(node.outputs)}")
        missing = [i for i in (0, 1, 2, 8, 9, 10, 11) if not node.input(i)]
        if missing:
            raise InvalidModel(f"DynamicQuantizeLSTM required input(s) {missing} are omitted")
        self.ctx, self.node, self.b = ctx, node, ctx.builder
        x = ctx.operand(node.inputs[0])
        if x.data_type != "float32":
            raise UnsupportedDataType(f"DynamicQuantizeLSTM X has data type {x.data_type}; "
                                      "float32 is needed")
        if x.rank != 3:
            raise InvalidModel(f"DynamicQuantizeLSTM X must be 3-D [seq, batch, input], got "
                               f"shape {list(x.shape)}")
        self.x = x
        self.steps, self.batch, size = (int(v) for v in x.shape)
        self.direction = attr_str(node, "direction", "forward")
        if self.direction not in _DIRECTIONS:
            raise InvalidModel(f"DynamicQuantizeLSTM direction {self.direction!r} is not "
                               "forward, reverse or bidirectional")
        self.dirs = 2 if self.direction == "bidirectional" else 1
        r_shape = ctx.shape(node.inputs[2])
        default_h = int(r_shape[1]) if len(r_shape) == 3 else 0
        self.hidden = h = attr_int(node, "hidden_size", default_h)
        if h < 1:
            raise InvalidModel(f"DynamicQuantizeLSTM hidden_size is {h}, it must be at least 1")
        self.w = _weights(ctx, node, 1, "W", size, self.dirs, h)
        self.r = _weights(ctx, node, 2, "R", h, self.dirs, h)
        state = [self.dirs, self.batch, h]
        for what, i, shape in (("B", 3, [self.dirs, 8 * h]), ("initial_h", 5, state),
                               ("initial_c", 6, state), ("P", 7, [self.dirs, 3 * h])):
            name = node.input(i)
            if name and list(ctx.shape(name)) != shape:
                raise InvalidModel(f"DynamicQuantizeLSTM {what} has shape "
                                   f"{list(ctx.shape(name))}, {shape} expected")
            if name and ctx.dtype(name) != "float32":
                raise InvalidModel(f"DynamicQuantizeLSTM {what} has data type "
                                   f"{ctx.dtype(name)}, float32 expected")
        self._check_sequence_lens()
        self.acts = parse_activations(dataclasses.replace(node, op_type="LSTM"), self.dirs)
        clip = node.attrs.get("clip")
        self.clip = None if clip is None else float(clip)
        self.input_forget = bool(attr_int(node, "input_forget", 0))
        # onnxruntime's UniDirectionalLstm::SetNumThreads: batch rows are processed (and the
        # hidden state quantized) in parallel chunks when this holds
        self.per_row = self.batch > 4 or (self.batch >= 2 and h <= 256)

    def _check_sequence_lens(self) -> None:
        name = self.node.input(4)
        if not name:
            return
        lens = const_or_none(self.ctx, name)
        if lens is None or (lens.size and np.any(lens.reshape(-1) != self.steps)):
            raise UnsupportedAttribute(
                "DynamicQuantizeLSTM sequence_lens must be a constant equal to the sequence "
                f"length {self.steps}; variable sequence lengths are not supported",
                hint="pin the sequence lengths or remove the sequence_lens input")

    def _part(self, index: int, d: int, cols: slice) -> Any:
        """Direction d's columns `cols` of float input `index` (B, P), as [1, n]."""
        b = self.b
        name = self.node.inputs[index]
        value = const_or_none(self.ctx, name)
        if value is not None:
            return self.ctx.constant(np.ascontiguousarray(value[d:d + 1, cols]))
        start, stop, _ = cols.indices(self.ctx.shape(name)[1])
        return b.slice(self.ctx.operand(name), [d, start], [1, stop - start])

    def _state(self, index: int, d: int) -> Any:
        name = self.node.input(index)
        if not name:
            return None
        return self.b.reshape(self.b.slice(self.ctx.operand(name), [d, 0, 0],
                                           [1, self.batch, self.hidden]),
                              [self.batch, self.hidden])

    def _bias(self, d: int) -> Any:
        """Wb + Rb of direction d as [1, 4·hidden] (onnxruntime adds them once)."""
        if not self.node.input(3):
            return None
        gh = 4 * self.hidden
        wb, rb = self._part(3, d, slice(0, gh)), self._part(3, d, slice(gh, 2 * gh))
        if wb.kind == "constant" and rb.kind == "constant":
            return self.ctx.constant(np.asarray(wb.value) + np.asarray(rb.value))
        return self.b.add(wb, rb)

    def _product(self, q: Any, scale: Any, w: _Weights) -> Any:
        """(q − zp)·(W − W_zp) · (scale · W_scale), the integer sums exact in float32."""
        b = self.b
        acc = b.matmul(q, self.ctx.constant(w.ints, what="integer weights"))
        if scale.rank == 0:
            scale = b.reshape(scale, [1])
        multiplier = b.mul(scale, self.ctx.constant(w.scale))  # as onnxruntime, once
        return b.mul(acc, multiplier)

    def run(self, d: int, xq: Any, x_scale: Any, want_y: bool) -> tuple[Any, Any, Any]:
        """Direction d: (sequence [steps, 1, batch, hidden] or None, final h, final c)."""
        b, h, batch = self.b, self.hidden, self.batch
        proj = step_blocks(b, self._product(xq, x_scale, self.w[d]), self.steps)
        bias = self._bias(d)
        peeps = ({g: self._part(7, d, PEEPHOLES.cols(g, h)) for g in PEEPHOLES.gates}
                 if self.node.input(7) else None)
        acts = [activation_fn(a) for a in self.acts[d]]
        one = scalar(self.ctx, 1.0, "float32")
        h0, c0 = self._state(5, d), self._state(6, d)
        zeros = b.constant(np.zeros([batch, h], np.float32))
        reverse = self.direction == "reverse" or d == 1

        def gate(parts: dict[str, Any], name: str, cell: Any) -> Any:
            x = parts[name]
            if peeps is not None and cell is not None:
                x = b.add(x, b.mul(peeps[name], cell))
            if bias is not None:
                x = b.add(x, b.slice(bias, [0, LSTM_IOFC.cols(name, h).start], [1, h]))
            return x if self.clip is None else b.clamp(x, min_value=-self.clip,
                                                       max_value=self.clip)

        def step(t: int, state: tuple[Any, Any, bool]) -> tuple[tuple[Any, Any, bool], Any]:
            hidden, cell, first = state
            pre = proj[t]
            if not (first and h0 is None):  # a zero state adds exactly 0
                hq, h_scale = _quantized(self.ctx, hidden, self.per_row)
                pre = b.add(pre, self._product(hq, h_scale, self.r[d]))
            parts = LSTM_IOFC.split(b, pre, axis=1)
            i = acts[0](b, gate(parts, "i", cell))
            f = b.sub(one, i) if self.input_forget else acts[0](b, gate(parts, "f", cell))
            g = acts[1](b, gate(parts, "c", None))
            new_cell = b.add(b.mul(f, cell), b.mul(i, g))
            o = acts[0](b, gate(parts, "o", new_cell))
            new_hidden = b.mul(o, acts[2](b, new_cell))
            return (new_hidden, new_cell, False), new_hidden

        init = (zeros if h0 is None else h0, zeros if c0 is None else c0, True)
        seq, (hidden, cell, _) = unroll_steps(self.steps, reverse, step, init)
        shape = [1, batch, h]
        y = stack_steps(b, seq, shape) if want_y else None
        return y, b.reshape(hidden, shape), b.reshape(cell, shape)


@onnx_op("DynamicQuantizeLSTM", since=1, domain=MS)
def dynamic_quantize_lstm(ctx: ImportContext, node: Node) -> Outputs:
    """LSTM with int8/uint8 W and R and run-time uint8 quantization of X and of the hidden
    state, as onnxruntime's CPU kernel (see the module docstring).
    Restrictions: X float32 [seq, batch, input]; W, R, their scales and zero points
    constant; per-channel zero points one value (0 for int8); sequence_lens absent or a
    constant equal to the sequence length; every ONNX LSTM activation, clip, input_forget,
    peepholes and initial states are supported (the steps are unrolled)."""
    lstm = _QuantLstm(ctx, node)
    check_steps(ctx, lstm.steps)
    b = ctx.builder
    xq, x_scale = _quantized(ctx, flatten_steps(b, lstm.x))
    want_y = bool(node.outputs and node.outputs[0])
    parts = [lstm.run(d, xq, x_scale, want_y) for d in range(lstm.dirs)]
    y = dc.concat(b, [p[0] for p in parts], 1) if want_y else None
    outs = [y, dc.concat(b, [p[1] for p in parts], 0), dc.concat(b, [p[2] for p in parts], 0)]
    return outs[:len(node.outputs)]
