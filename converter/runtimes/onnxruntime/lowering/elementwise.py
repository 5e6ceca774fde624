"""ONNX lowerings: element-wise binary, comparison, logical, unary, activations, cast, clamp,
prelu and where.

Restrictions and exactness notes:
- float16 operands of inexact operations are computed in float32 and rounded once to float16
  (`lift`); exact ones (max, min, comparisons, abs, neg, sign, ceil, floor, roundEven, relu,
  clamp, where, isNaN, isInfinite) run in float16 directly.
- Integer types onnxruntime has no kernel for are widened exactly (int8/uint8 → int32, uint32
  → int64); uint64 goes through int64 only where the arithmetic is modular (add, sub, mul)
  or bit-preserving (where).
- Integer `div` truncates toward zero (ONNX Div on integers) and gives 0 for a zero divisor
  (guarded, so no runtime trap). Signed integer `pow` with a negative exponent gives the
  truncated real result (0, or ±1 for bases ±1), as the reference does.
- Comparisons and logical ops produce uint8 0/1 (ONNX bool cast to uint8); logical inputs are
  uint8 where any non-zero value is true.
- `cast` float → integer truncates toward zero, maps NaN to 0 and saturates out-of-range
  values to the target range (computed in float64).
"""

from __future__ import annotations

import math

import numpy as np

from converter.core.webnn.dtypes import type_range
from converter.core.webnn.operand import Operation
from converter.runtimes.onnxruntime.lowering.context import Emitter, constant_value, lift, lowering
from converter.runtimes.onnxruntime.lowering.patterns import lower_cast, lower_mul

_BINARY = {"add": "Add", "sub": "Sub", "mul": "Mul", "max": "Max", "min": "Min"}
_MODULAR = {"add", "sub", "mul"}


def binary_type(op: str, data_type: str) -> str:
    """The type `op` is computed in for operands of `data_type` (exact results)."""
    if data_type == "float16":
        return "float16" if op in ("max", "min") else "float32"
    if op == "pow":
        return {"int8": "int32", "uint8": "int32", "uint32": "int64", "uint64": "int64"}.get(
            data_type, data_type)
    return data_type


@lowering("add", "sub", "mul", "max", "min", "pow")
def binary(e: Emitter, op: Operation) -> list[str]:
    a, b = op.args
    out = op.outputs[0].data_type
    if op.op == "mul":
        fused = lower_mul(e, op)  # x² as Pow, RMS normalization as Div (see patterns)
        if fused is not None:
            return [fused]
    ct = binary_type(op.op, out)
    av, bv = e.input(a, ct), e.input(b, ct)
    if op.op == "pow" and out in ("int8", "int32", "int64"):
        return [e.cast(_signed_int_pow(e, av, bv, ct), out)]
    y = e.node(_BINARY.get(op.op, "Pow"), [av, bv], ct)
    return [e.cast(y, out)]


def _signed_int_pow(e: Emitter, a: str, b: str, ct: str) -> str:
    """a^b for b >= 0; for b < 0 the truncated real result: 1 for a = 1, ±1 for a = -1 by
    the parity of b, 0 otherwise (ONNX leaves negative integer exponents undefined)."""
    zero, one = e.scalar(0, ct), e.scalar(1, ct)
    neg = e.node("Less", [b, zero], "bool")
    power = e.node("Pow", [a, e.node("Max", [b, zero], ct)], ct)
    odd = e.node("Equal", [e.node("Mod", [b, e.scalar(2, ct)], ct), one], "bool")
    minus_one = e.scalar(-1, ct)
    inv = e.where(e.node("Equal", [a, one], "bool"), one, e.where(
        e.node("Equal", [a, minus_one], "bool"), e.where(odd, minus_one, one), zero))
    return e.where(neg, inv, power)


@lowering("div")
def div(e: Emitter, op: Operation) -> list[str]:
    a, b = op.args
    out = op.outputs[0].data_type
    if out in ("float32", "float16"):
        y = e.node("Div", [e.input(a, "float32"), e.input(b, "float32")], "float32")
        return [e.cast(y, out)]
    av, bv = e.input(a), e.input(b)
    zero, one = e.scalar(0, out), e.scalar(1, out)
    is_zero = e.node("Equal", [bv, zero], "bool")
    safe = e.where(is_zero, one, bv)
    q = e.node("Div", [av, safe], out)
    return [e.where(is_zero, zero, q)]


_COMPARE = {"equal": "Equal", "greater": "Greater", "greaterOrEqual": "GreaterOrEqual",
            "lesser": "Less", "lesserOrEqual": "LessOrEqual"}


@lowering("equal", "notEqual", "greater", "greaterOrEqual", "lesser", "lesserOrEqual")
def compare(e: Emitter, op: Operation) -> list[str]:
    a, b = (e.input(x) for x in op.args)
    if op.op == "notEqual":
        r = e.node("Not", [e.node("Equal", [a, b], "bool")], "bool")
    else:
        r = e.node(_COMPARE[op.op], [a, b], "bool")
    return [e.cast(r, "uint8")]


_LOGICAL = {"logicalAnd": "And", "logicalOr": "Or", "logicalXor": "Xor"}


@lowering("logicalAnd", "logicalOr", "logicalXor", "logicalNot")
def logical(e: Emitter, op: Operation) -> list[str]:
    args = [e.input(x, "bool") for x in op.args]
    r = e.node("Not" if op.op == "logicalNot" else _LOGICAL[op.op], args, "bool")
    return [e.cast(r, "uint8")]


@lowering("isNaN", "isInfinite")
def is_special(e: Emitter, op: Operation) -> list[str]:
    r = e.node("IsNaN" if op.op == "isNaN" else "IsInf", [e.input(op.args[0])], "bool")
    return [e.cast(r, "uint8")]


# ONNX op of each unary WebNN op, and whether it is exact (no rounding) in float16.
_UNARY: dict[str, tuple[str, bool]] = {
    "abs": ("Abs", True), "neg": ("Neg", True), "sign": ("Sign", True),
    "ceil": ("Ceil", True), "floor": ("Floor", True), "roundEven": ("Round", True),
    "identity": ("Identity", True), "cos": ("Cos", False), "sin": ("Sin", False),
    "tan": ("Tan", False), "erf": ("Erf", False), "exp": ("Exp", False), "log": ("Log", False),
    "reciprocal": ("Reciprocal", False), "sqrt": ("Sqrt", False),
    "sigmoid": ("Sigmoid", False), "softplus": ("Softplus", False),
    "softsign": ("Softsign", False), "tanh": ("Tanh", False), "hardSwish": ("HardSwish", False),
}


@lowering(*_UNARY)
def unary(e: Emitter, op: Operation) -> list[str]:
    x = op.args[0]
    out = op.outputs[0].data_type
    onnx_op, exact = _UNARY[op.op]
    ct = out if exact else lift(out)
    return [e.cast(e.node(onnx_op, [e.input(x, ct)], ct), out)]


@lowering("relu")
def relu(e: Emitter, op: Operation) -> list[str]:
    x = op.args[0]
    out = op.outputs[0].data_type
    if out in ("float32", "float16"):
        return [e.node("Relu", [e.input(x)], out)]
    return [e.node("Max", [e.input(x), e.scalar(0, out)], out)]


@lowering("gelu")
def gelu(e: Emitter, op: Operation) -> list[str]:
    out = op.outputs[0].data_type
    x = e.input(op.args[0], "float32")
    if e.opset >= 20:
        y = e.node("Gelu", [x], "float32")
    else:  # 0.5·x·(1 + erf(x/√2))
        t = e.node("Erf", [e.node("Mul", [x, e.scalar(1 / np.sqrt(2.0), "float32")],
                                  "float32")], "float32")
        t = e.node("Add", [t, e.scalar(1.0, "float32")], "float32")
        y = e.node("Mul", [e.node("Mul", [x, e.scalar(0.5, "float32")], "float32"), t],
                   "float32")
    return [e.cast(y, out)]


def _param(op: Operation, name: str) -> float:
    """A double option rounded to the operand's float type, as the spec casts it."""
    return float(np.asarray(op.options[name], dtype=np.float64).astype(
        op.outputs[0].data_type))


@lowering("elu", "hardSigmoid", "leakyRelu", "linear")
def parametric(e: Emitter, op: Operation) -> list[str]:
    out = op.outputs[0].data_type
    x = e.input(op.args[0], "float32")
    alpha = _param(op, "alpha")
    if op.op == "elu":
        y = e.node("Elu", [x], "float32", alpha=alpha)
    elif op.op == "leakyRelu":
        y = e.node("LeakyRelu", [x], "float32", alpha=alpha)
    elif op.op == "hardSigmoid":
        y = e.node("HardSigmoid", [x], "float32", alpha=alpha, beta=_param(op, "beta"))
    else:
        # alpha·x + beta, computed in float64 so that it is rounded once.
        xd = e.cast(x, "float64")
        y = e.node("Add", [e.node("Mul", [xd, e.scalar(alpha, "float64")], "float64"),
                           e.scalar(_param(op, "beta"), "float64")], "float64")
    return [e.cast(y, out)]


@lowering("prelu")
def prelu(e: Emitter, op: Operation) -> list[str]:
    """where(x < 0, x·slope, x), broadcast bidirectionally like WebNN.

    With a finite slope known at export time that does not widen x (float types, computed in
    float32), the patterns onnxruntime runs fastest, all computing the same two candidates
    x and x·slope: LeakyRelu when all slopes are equal (fused into a preceding Conv); for a
    rank-4 x with one slope per channel (axis 1, or axis 3 via transposes that onnxruntime
    cancels against the neighbouring NHWC convolutions) `relu(x) + bn(relu(bn(x, −1)),
    −slope)` with per-channel BatchNormalizations (mean 0, variance 1, ε 0), which stay in
    onnxruntime's blocked convolution layout; max(x, x·slope) when all slopes lie in [0, 1]
    and min(x, x·slope) when all are ≥ 1. Otherwise Less/Mul/Where (onnxruntime's PRelu
    kernel is slower than any of these). NaN follows onnxruntime's kernels (a Relu fused
    into a blocked-layout convolution maps NaN to 0)."""
    x, slope = op.args
    out = op.outputs[0].data_type
    ct = lift(out)
    xv = e.input(x, ct)
    s = constant_value(slope)
    if ct == "float32" and s is not None and tuple(x.shape) == tuple(op.outputs[0].shape):
        s64 = s.astype(np.float64)
        if s64.size and np.isfinite(s64).all():
            if (s64 == s64.flat[0]).all():
                return [e.cast(e.node("LeakyRelu", [xv], ct, alpha=float(s64.flat[0])), out)]
            axis = _channel_axis(s64.shape, x.rank)
            if axis is not None:
                return [e.cast(_prelu_channels(e, xv, s64, x.shape[axis], axis), out)]
            pick = "Max" if ((s64 >= 0) & (s64 <= 1)).all() else (
                "Min" if (s64 >= 1).all() else None)
            if pick is not None:
                prod = e.node("Mul", [xv, e.input(slope, ct)], ct)
                return [e.cast(e.node(pick, [xv, prod], ct), out)]
    neg = e.node("Less", [xv, e.scalar(0, ct)], "bool")
    prod = e.node("Mul", [xv, e.input(slope, ct)], ct)
    return [e.cast(e.node("Where", [neg, prod, xv], ct), out)]


def _channel_axis(shape: tuple[int, ...], rank: int) -> int | None:
    """1 or 3 when a parameter of `shape` varies only along that axis of a rank-4 operand."""
    if rank != 4 or len(shape) > 4:
        return None
    full = (1,) * (4 - len(shape)) + tuple(shape)
    varying = [k for k, n in enumerate(full) if n != 1]
    return varying[0] if varying in ([1], [3]) else None


def _prelu_channels(e: Emitter, xv: str, slope: np.ndarray, channels: int, axis: int) -> str:
    """relu(x) + (−slope)·relu(−x) along channel `axis` (1 or 3) of a rank-4 float32 x; each
    product has one rounding, the sum adds a zero, so the result equals the definition."""
    ct = "float32"
    if axis == 3:
        xv = e.transpose(xv, [0, 3, 1, 2])
    zeros = e.const(np.zeros(channels), ct, "zeros")
    ones = e.const(np.ones(channels), ct, "ones")

    def scale(v: str, factor: np.ndarray) -> str:
        return e.node("BatchNormalization", [v, e.const(factor, ct, "prelu_scale"), zeros,
                                             zeros, ones], ct, epsilon=0.0)

    negative = e.node("Relu", [scale(xv, -np.ones(channels))], ct)
    y = e.node("Add", [e.node("Relu", [xv], ct),
                       scale(negative, -np.broadcast_to(slope.reshape(-1), (channels,)))], ct)
    return e.transpose(y, [0, 2, 3, 1]) if axis == 3 else y


@lowering("clamp")
def clamp(e: Emitter, op: Operation) -> list[str]:
    """Clip, with a NaN bound dropped (it clamps nothing, as the WPT "minValue as NaN" cases
    expect). On float types a missing bound is passed as ±inf: onnxruntime's Clip would use
    the float32 maximum/lowest instead and turn an infinite element into ±3.4e38."""
    x = op.args[0]
    out = op.outputs[0].data_type
    lo, hi = (None if v is None or math.isnan(float(v)) else v
              for v in (op.options.get("minValue"), op.options.get("maxValue")))
    if lo is None and hi is None:
        return [e.node("Identity", [e.input(x)], out)]
    if out in ("float32", "float16"):
        lo = -math.inf if lo is None else lo
        hi = math.inf if hi is None else hi
    inputs = [e.input(x),
              "" if lo is None else e.scalar(lo, out, "min"),
              "" if hi is None else e.scalar(hi, out, "max")]
    while inputs[-1] == "":
        inputs.pop()
    return [e.node("Clip", inputs, out)]


@lowering("where")
def where(e: Emitter, op: Operation) -> list[str]:
    c, t, f = op.args
    return [e.where(e.input(c, "bool"), e.input(t), e.input(f))]


@lowering("cast")
def cast(e: Emitter, op: Operation) -> list[str]:
    x = op.args[0]
    target = op.outputs[0].data_type
    src = x.data_type
    fused = lower_cast(e, op)  # DynamicQuantizeLinear, MatMulInteger (see patterns)
    if fused is not None:
        return [fused]
    if src in ("float32", "float16") and target not in ("float32", "float16"):
        xd = e.input(x, "float64")
        xd = e.node("Where", [e.node("IsNaN", [xd], "bool"), e.scalar(0.0, "float64"), xd],
                    "float64")
        lo, hi = type_range(target)
        top = float(np.nextafter(float(hi), 0.0)) if hi >= 2**53 else float(hi)
        xd = e.node("Clip", [xd, e.scalar(float(lo), "float64"), e.scalar(top, "float64")],
                    "float64")
        y = e.cast(xd, target)
        if top != float(hi):  # int64/uint64: values beyond the largest double saturate
            over = e.node("GreaterOrEqual", [e.input(x, "float64"),
                                             e.scalar(float(hi), "float64")], "bool")
            y = e.where(over, e.scalar(hi, target), y)
        return [y]
    if src == target:
        return [e.node("Identity", [e.input(x)], src)]
    return [e.cast(e.input(x), target)]
