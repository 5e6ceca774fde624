"""Reference kernels: element-wise binary, comparison, logical, unary, activations, cast,
clamp, where. Floats are computed in float64, integers exactly in int64/uint64."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from converter.core.webnn.dtypes import cast_number
from converter.core.webnn.operand import Operation
from converter.runtimes.reference.registry import f64, kernel

_ERF = np.frompyfunc(math.erf, 1, 1)


def _erf(x: np.ndarray) -> np.ndarray:
    return np.asarray(_ERF(x), dtype=np.float64) if x.size else x.astype(np.float64)


def _int_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division truncating toward zero; division by zero yields 0.

    Floor division plus a correction avoids |a|, which overflows for the most negative value.
    """
    a, b = np.broadcast_arrays(a, b)
    safe = np.where(b == 0, 1, b).astype(a.dtype)
    with np.errstate(over="ignore"):
        q = np.floor_divide(a, safe)
        r = a - q * safe
    q = np.where((r != 0) & ((a < 0) != (safe < 0)), q + 1, q)
    return np.where(b == 0, 0, q)


def _int_pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.broadcast_arrays(a, b)
    if a.dtype.kind == "u":
        powered: np.ndarray = np.power(a, b)  # numpy's stubs: Any for unknown dtypes
        return powered
    neg = b < 0
    out = np.power(a, np.where(neg, 0, b))
    # x^-n: 1 for |x| == 1 (sign by parity), 0 otherwise (truncation of the real result).
    inv = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0))
    return np.where(neg, inv, out)


_BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
}


@kernel("add", "sub", "mul", "div", "max", "min", "pow")
def binary(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    a, b = f64(args[0]), f64(args[1])
    with np.errstate(all="ignore"):
        if op.op in _BINARY:
            return [_BINARY[op.op](a, b)]
        floating = a.dtype.kind == "f"
        if op.op == "div":
            return [np.divide(a, b) if floating else _int_div(a, b)]
        return [np.power(a, b) if floating else _int_pow(a, b)]


_COMPARE = {
    "equal": np.equal, "notEqual": np.not_equal, "greater": np.greater,
    "greaterOrEqual": np.greater_equal, "lesser": np.less, "lesserOrEqual": np.less_equal,
}


@kernel(*_COMPARE)
def compare(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    return [_COMPARE[op.op](args[0], args[1]).astype(np.uint8)]


_LOGICAL = {"logicalAnd": np.logical_and, "logicalOr": np.logical_or,
            "logicalXor": np.logical_xor}


@kernel(*_LOGICAL)
def logical(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    return [_LOGICAL[op.op](args[0] != 0, args[1] != 0).astype(np.uint8)]


@kernel("logicalNot")
def logical_not(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    return [(args[0] == 0).astype(np.uint8)]


@kernel("isNaN")
def is_nan(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    return [np.isnan(args[0]).astype(np.uint8)]


@kernel("isInfinite")
def is_infinite(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    return [np.isinf(args[0]).astype(np.uint8)]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    y: np.ndarray = 1.0 / (1.0 + np.exp(-x))  # numpy's stubs: Any for unknown dtypes
    return y


def _softplus(x: np.ndarray) -> np.ndarray:
    y: np.ndarray = np.logaddexp(0.0, x)
    return y


_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "abs": np.abs, "ceil": np.ceil, "cos": np.cos, "erf": _erf, "exp": np.exp,
    "floor": np.floor, "identity": lambda x: x, "log": np.log, "neg": np.negative,
    "reciprocal": lambda x: 1.0 / x, "roundEven": np.rint, "sin": np.sin,
    "sign": lambda x: np.where(np.isnan(x), 0, np.sign(x)) if x.dtype.kind == "f" else np.sign(x),
    "sqrt": np.sqrt, "tan": np.tan,
    "gelu": lambda x: 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0))),
    "hardSwish": lambda x: x * np.clip(x + 3.0, 0.0, 6.0) / 6.0,
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": _sigmoid, "softplus": _softplus, "softsign": lambda x: x / (1.0 + np.abs(x)),
    "tanh": np.tanh,
}


@kernel(*_UNARY)
def unary(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    with np.errstate(all="ignore"):
        return [_UNARY[op.op](f64(args[0]))]


def _param(op: Operation, options: dict[str, Any], name: str) -> float:
    """A double option cast to the operand's data type, as the spec requires."""
    return float(cast_number(options[name], op.outputs[0].data_type))


@kernel("elu", "hardSigmoid", "leakyRelu", "linear")
def parametric(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x = f64(args[0])
    alpha = _param(op, options, "alpha")
    with np.errstate(all="ignore"):
        if op.op == "elu":
            return [np.maximum(x, 0.0) + alpha * (np.exp(np.minimum(x, 0.0)) - 1.0)]
        if op.op == "leakyRelu":
            return [np.maximum(x, 0.0) + alpha * np.minimum(x, 0.0)]
        beta = _param(op, options, "beta")
        if op.op == "linear":
            return [alpha * x + beta]
        return [np.maximum(0.0, np.minimum(1.0, alpha * x + beta))]


@kernel("prelu")
def prelu(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, slope = f64(args[0]), f64(args[1])
    return [np.maximum(x, 0) + slope * np.minimum(x, 0)]


@kernel("clamp")
def clamp(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    """A NaN bound clamps nothing (WPT clamp "minValue as NaN" / "maxValue as NaN")."""
    x = f64(args[0])
    lo, hi = options.get("minValue"), options.get("maxValue")
    if lo is not None and not math.isnan(float(lo)):
        x = np.maximum(x, np.asarray(lo, dtype=x.dtype))
    if hi is not None and not math.isnan(float(hi)):
        x = np.minimum(x, np.asarray(hi, dtype=x.dtype))
    return [x]


@kernel("where")
def where(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    c, t, f = args
    return [np.where(c != 0, t, f)]


@kernel("cast")
def cast(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    """float->int truncates toward zero (NaN -> 0, out of range saturates); int->int keeps
    the low bits (two's complement); anything->float rounds to nearest."""
    x, target = args[0], np.dtype(args[1])
    if x.dtype.kind == "f" and target.kind in "iu":
        info = np.iinfo(target)
        t = np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0))
        t = np.clip(t, float(info.min), float(info.max))
        if target.itemsize == 8:
            # float64 cannot represent 2^63-1 / 2^64-1: saturate the clipped top explicitly.
            top = t >= float(info.max)
            out = t.astype(target) if not top.any() else np.where(
                top, info.max, np.where(top, 0, t).astype(target)).astype(target)
            return [out]
        return [t.astype(target)]
    with np.errstate(over="ignore"):
        return [x.astype(target)]
