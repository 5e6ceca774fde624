"""ONNX lowerings: quantizeLinear, dequantizeLinear, resample2d.

(De)quantization is decomposed so that every WebNN blockwise broadcast works, also blocks on
several axes at once: the input is viewed with each blocked axis split into `[scale_dim,
block]` and the scale/zero point with `[scale_dim, 1]`, so plain broadcasting applies the
same parameter to each contiguous block; nothing is materialised. Axes where the parameter
has size 1 (per-tensor or per-channel parameters) broadcast as they are, without a view.
- dequantizeLinear: `(x − zeroPoint)·scale`, in float32 for 8-bit inputs (the difference
  and the product are exact before the single rounding) and in float64 for 32-bit ones.
  A 4-bit (int4/uint4) input whose scale is per-tensor, per-axis or blocked along one axis
  (the forms ONNX has) becomes one ONNX DequantizeLinear (opset 21: `axis`, `block_size`)
  reading the packed INT4/UINT4 initializer, in float32 (exact difference, one rounding);
  onnxruntime can then fuse it with a following MatMul. Other 4-bit forms are cast to float
  and decomposed like the 8-bit ones.
- quantizeLinear: `clamp(roundEven(x / scale) + zeroPoint)` in float64, NaN → 0, saturated to
  the zero point type (exactly the reference's arithmetic).

resample2d (half-pixel mapping, scale = output/input size):
- nearest-neighbor: Gathers with index tables computed exactly at export time
  (`ceil(src − 0.5)`, i.e. ONNX round_prefer_floor), values copied unchanged.
- linear, float types: ONNX Resize (linear, half_pixel) on the two axes moved last, in float32.
- linear, int8/uint8: Gathers of the two neighbours weighted by exact integer numerators in
  float64, one division, round half to even, saturation.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from converter.core.webnn.dtypes import FOUR_BIT_TYPES, type_range
from converter.core.webnn.half_pixel import linear_weights, nearest_indices
from converter.core.webnn.operand import MLOperand, Operation
from converter.core.webnn.ops.quantize import blocked_views
from converter.runtimes.onnxruntime.lowering.context import Emitter, constant_value, lowering


def _param(e: Emitter, operand: MLOperand, view: list[int], data_type: str) -> str:
    v = e.input(operand, data_type)
    return v if list(operand.shape) == view else e.reshape(v, view)


def _onnx_form(shape: Sequence[int], param_shape: Sequence[int]
               ) -> tuple[list[int], dict[str, int]] | None:
    """The ONNX DequantizeLinear parameter shape and attributes (`axis`, `block_size`) of a
    WebNN blockwise parameter shape, or None when ONNX has no such form."""
    varying = [i for i, s in enumerate(param_shape) if s != 1]
    if not varying:
        return [], {}
    if len(varying) == 1 and param_shape[varying[0]] == shape[varying[0]]:
        return [param_shape[varying[0]]], {"axis": varying[0]}
    differ = [i for i, (n, s) in enumerate(zip(shape, param_shape, strict=True)) if n != s]
    if len(differ) == 1:
        axis = differ[0]
        return list(param_shape), {"axis": axis, "block_size": shape[axis] // param_shape[axis]}
    return None


def _dequantize_4bit(e: Emitter, op: Operation) -> str | None:
    """One ONNX DequantizeLinear for a 4-bit input (None when ONNX has no form for the
    scale shape); float32 result cast to the output type."""
    x, scale, zero_point = op.args
    form = _onnx_form(x.shape, scale.shape)
    if form is None:
        return None
    p_shape, attrs = form

    def param(operand: MLOperand, data_type: str, hint: str) -> str:
        value = constant_value(operand)
        if value is not None:
            return e.const(np.asarray(value).reshape(p_shape), data_type, hint)
        name = e.input(operand, data_type)
        return name if list(operand.shape) == p_shape else e.reshape(name, p_shape)

    s = param(scale, "float32", "scale")
    zp = param(zero_point, x.data_type, "zero_point")
    y = e.node("DequantizeLinear", [e.input(x), s, zp], "float32", **attrs)
    return e.cast(y, op.outputs[0].data_type)


def transposed_dequantize(e: Emitter, op: Operation) -> str | None:
    """For transpose(dequantizeLinear(w, scale, zero point), [1, 0]) of a constant 4-bit
    [N, K] w with constant parameters: one DequantizeLinear of the transposed constants
    ([K, N], blocked along axis 0; the same values, as dequantization is element-wise), the
    form onnxruntime fuses with a following MatMul into MatMulNBits. None otherwise."""
    src = op.args[0]
    dq = src.operator if src.kind == "output" else None
    if (dq is None or dq.op != "dequantizeLinear" or src.rank != 2
            or [int(p) for p in op.options["permutation"]] != [1, 0]):
        return None
    x, scale, zero_point = dq.args
    values = [constant_value(v) for v in (x, scale, zero_point)]
    if x.data_type not in FOUR_BIT_TYPES or any(v is None or v.ndim != 2 for v in values):
        return None
    xv, sv, zv = (np.ascontiguousarray(np.asarray(v).T) for v in values)
    form = _onnx_form(xv.shape, sv.shape)
    if form is None or zv.shape != sv.shape:
        return None
    p_shape, attrs = form
    y = e.node("DequantizeLinear", [e.const(xv, x.data_type, "weight"),
                                    e.const(sv.reshape(p_shape), "float32", "scale"),
                                    e.const(zv.reshape(p_shape), x.data_type, "zero_point")],
               "float32", **attrs)
    return e.cast(y, op.outputs[0].data_type)


@lowering("dequantizeLinear")
def dequantize_linear(e: Emitter, op: Operation) -> list[str]:
    x, scale, zero_point = op.args
    out = op.outputs[0].data_type
    if x.data_type in FOUR_BIT_TYPES:
        native = _dequantize_4bit(e, op)
        if native is not None:
            return [native]
    ct = "float64" if x.data_type in ("int32", "uint32") else "float32"
    x_view, p_view = blocked_views(x.shape, scale.shape)
    xv = e.input(x, ct)
    if x_view != list(x.shape):
        xv = e.reshape(xv, x_view)
    y = e.node("Sub", [xv, _param(e, zero_point, p_view, ct)], ct)
    y = e.node("Mul", [y, _param(e, scale, p_view, ct)], ct)
    if x_view != list(x.shape):
        y = e.reshape(y, x.shape)
    return [e.cast(y, out)]


@lowering("quantizeLinear")
def quantize_linear(e: Emitter, op: Operation) -> list[str]:
    x, scale, zero_point = op.args
    out = op.outputs[0].data_type
    ct = "float64"
    x_view, p_view = blocked_views(x.shape, scale.shape)
    xv = e.input(x, ct)
    if x_view != list(x.shape):
        xv = e.reshape(xv, x_view)
    q = e.node("Round", [e.node("Div", [xv, _param(e, scale, p_view, ct)], ct)], ct)
    q = e.node("Add", [q, _param(e, zero_point, p_view, ct)], ct)
    q = e.node("Where", [e.node("IsNaN", [q], "bool"), e.scalar(0.0, ct), q], ct)
    lo, hi = type_range(out)
    q = e.node("Clip", [q, e.scalar(float(lo), ct), e.scalar(float(hi), ct)], ct)
    if x_view != list(x.shape):
        q = e.reshape(q, x.shape)
    return [e.cast(q, out)]


@lowering("resample2d")
def resample2d(e: Emitter, op: Operation) -> list[str]:
    x = op.args[0]
    out_shape = op.outputs[0].shape
    axes = [int(a) for a in op.options["axes"]]
    dt = x.data_type
    if op.options["mode"] == "nearest-neighbor":
        y = e.input(x)
        for a in axes:
            idx = nearest_indices(x.shape[a], out_shape[a])
            if not np.array_equal(idx, np.arange(x.shape[a])):
                y = e.node("Gather", [y, e.const(idx, "int64", "nearest")], dt, axis=a)
        return [e.node("Identity", [y], dt) if y == e.value(x) else y]
    if dt in ("float32", "float16"):
        perm = [a for a in range(4) if a not in axes] + axes
        inverse = [int(i) for i in np.argsort(perm)]
        y = e.transpose(e.input(x, "float32"), perm)
        sizes = [out_shape[p] for p in perm]
        y = e.node("Resize", [y, "", "", e.ints(sizes, "sizes")], "float32", mode="linear",
                   coordinate_transformation_mode="half_pixel")
        return [e.cast(e.transpose(y, inverse), dt)]
    ct = "float64"
    y = e.input(x, ct)
    total = 1
    for a in reversed(axes):
        lo, hi, r, den = linear_weights(x.shape[a], out_shape[a])
        shape = [1] * 4
        shape[a] = out_shape[a]
        w_lo = e.const((den - r).reshape(shape), ct, "w_lo")
        w_hi = e.const(r.reshape(shape), ct, "w_hi")
        y_lo = e.node("Gather", [y, e.const(lo, "int64", "lo")], ct, axis=a)
        y_hi = e.node("Gather", [y, e.const(hi, "int64", "hi")], ct, axis=a)
        y = e.node("Add", [e.node("Mul", [y_lo, w_lo], ct), e.node("Mul", [y_hi, w_hi], ct)],
                   ct)
        total *= den
    y = e.node("Round", [e.node("Div", [y, e.scalar(float(total), ct)], ct)], ct)
    lo_v, hi_v = type_range(dt)
    y = e.node("Clip", [y, e.scalar(float(lo_v), ct), e.scalar(float(hi_v), ct)], ct)
    return [e.cast(y, dt)]
