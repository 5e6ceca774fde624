"""Reference kernels: the reduce family, argMin/argMax, cumulativeSum and softmax.

Floats are computed in float64 and rounded once by the executor; integer reductions (sum,
product, L1, sumSquare, max, min, cumulativeSum) are exact in int64/uint64 arithmetic
(wrapping like the output type on overflow). argMin/argMax ties resolve to the first index
(ONNX `select_last_index=0`); a NaN counts as the extreme value, so the first NaN wins.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.webnn.operand import Operation
from converter.runtimes.reference.registry import f64, kernel


def _log_sum_exp(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """log(sum(exp(x))) shifted by the maximum so that large inputs do not overflow (over no
    axes this is x itself, also for +-inf)."""
    m = np.max(x, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    out: np.ndarray = np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True)) + m
    return out


def _reduce(op: str, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The reduction over `axes`, keeping the reduced dimensions (as size 1)."""
    out: np.ndarray  # numpy's stubs type reductions with keepdims as Any
    if op == "reduceSum":
        out = np.sum(x, axis=axes, keepdims=True)
    elif op == "reduceL1":
        out = np.sum(np.abs(x), axis=axes, keepdims=True)
    elif op == "reduceSumSquare":
        out = np.sum(x * x, axis=axes, keepdims=True)
    elif op == "reduceL2":
        out = np.sqrt(np.sum(x * x, axis=axes, keepdims=True))
    elif op == "reduceMean":
        count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
        out = np.sum(x, axis=axes, keepdims=True) / count
    elif op == "reduceProduct":
        out = np.prod(x, axis=axes, keepdims=True)
    elif op == "reduceMax":
        out = np.max(x, axis=axes, keepdims=True)
    elif op == "reduceMin":
        out = np.min(x, axis=axes, keepdims=True)
    elif op == "reduceLogSum":
        out = np.log(np.sum(x, axis=axes, keepdims=True))
    else:
        assert op == "reduceLogSumExp"
        out = _log_sum_exp(x, axes)
    return out


@kernel("reduceL1", "reduceL2", "reduceLogSum", "reduceLogSumExp", "reduceMax", "reduceMean",
        "reduceMin", "reduceProduct", "reduceSum", "reduceSumSquare")
def reduce(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x = f64(args[0])
    axes = tuple(int(a) for a in options["axes"])
    with np.errstate(all="ignore"):
        out = _reduce(op.op, x, axes)
    if not options["keepDimensions"]:
        out = np.squeeze(out, axis=axes) if axes else out
    return [out]


@kernel("argMin", "argMax")
def arg_min_max(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, axis = args[0], int(args[1])
    fn = np.argmin if op.op == "argMin" else np.argmax
    out = fn(x, axis=axis, keepdims=bool(options["keepDimensions"]))
    return [np.asarray(out, dtype=np.int64)]


@kernel("cumulativeSum")
def cumulative_sum(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, axis = f64(args[0]), int(args[1])
    if options["reversed"]:
        x = np.flip(x, axis=axis)
    with np.errstate(all="ignore"):
        out = np.cumsum(x, axis=axis, dtype=x.dtype)
    if options["exclusive"]:
        zero = np.zeros_like(np.take(out, [0], axis=axis))
        out = np.concatenate([zero, np.delete(out, -1, axis=axis)], axis=axis)
    if options["reversed"]:
        out = np.flip(out, axis=axis)
    return [out]


@kernel("softmax")
def softmax(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, axis = f64(args[0]), int(args[1])
    with np.errstate(all="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return [e / np.sum(e, axis=axis, keepdims=True)]
