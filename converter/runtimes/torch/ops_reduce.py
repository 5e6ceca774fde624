"""Torch implementations: the reduce family, argMin/argMax, cumulativeSum and softmax (mirrors
the reference kernels/reduce.py).

Floats are computed in float32 (float16 too, also on CUDA); integer reductions (sum, product,
L1, sumSquare, max, min, cumulativeSum) are exact in int64 arithmetic, wrapping like the
output type on overflow (uint64 as its bit pattern; max/min in unsigned order). Reducing over
no axes applies the per-element part of the reduction only (e.g. reduceL1 -> abs).
argMin/argMax ties resolve to the first index; a NaN counts as the extreme value, so the first
NaN wins.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from converter.runtimes.torch.registry import INT64_MIN, Fn, Node, impl, int64, order_key

Reduce = Callable[[torch.Tensor], torch.Tensor]


def _product(x: torch.Tensor, axes: list[int]) -> torch.Tensor:
    for a in axes:
        x = torch.prod(x, dim=a, keepdim=True)
    return x


def _reducer(op: str, axes: list[int], data_type: str) -> Reduce:
    """The reduction over `axes` (non-empty), keeping the reduced dimensions."""
    floating = data_type in ("float32", "float16")
    unsigned = data_type in ("uint32", "uint64")

    def absolute(x: torch.Tensor) -> torch.Tensor:
        return x if unsigned else torch.abs(x)

    def square(x: torch.Tensor) -> torch.Tensor:
        x = x if floating else int64(x)
        return x * x

    if op == "reduceSum":
        return lambda x: torch.sum(x, dim=axes, keepdim=True)
    if op == "reduceL1":
        return lambda x: torch.sum(absolute(x), dim=axes, keepdim=True)
    if op == "reduceSumSquare":
        return lambda x: torch.sum(square(x), dim=axes, keepdim=True)
    if op == "reduceL2":
        return lambda x: torch.sqrt(torch.sum(x * x, dim=axes, keepdim=True))
    if op == "reduceMean":
        return lambda x: torch.mean(x, dim=axes, keepdim=True)
    if op == "reduceProduct":
        return lambda x: _product(x if floating else int64(x), axes)
    if op in ("reduceMax", "reduceMin"):
        fn = torch.amax if op == "reduceMax" else torch.amin
        if data_type == "uint64":
            return lambda x: fn(x ^ INT64_MIN, dim=axes, keepdim=True) ^ INT64_MIN
        return lambda x: fn(x, dim=axes, keepdim=True)
    if op == "reduceLogSum":
        return lambda x: torch.log(torch.sum(x, dim=axes, keepdim=True))
    assert op == "reduceLogSumExp"
    return lambda x: torch.logsumexp(x, dim=axes, keepdim=True)


def _elementwise(op: str, data_type: str) -> Reduce:
    """What the reduction does to a single element (reducing over no axes)."""
    floating = data_type in ("float32", "float16")
    if op == "reduceL1":
        return (lambda x: x) if data_type in ("uint32", "uint64") else (lambda x: torch.abs(x))
    if op == "reduceSumSquare":
        return (lambda x: x * x) if floating else (lambda x: int64(x) * int64(x))
    if op == "reduceL2":
        return lambda x: torch.abs(x)
    if op == "reduceLogSum":
        return lambda x: torch.log(x)
    return lambda x: x


@impl("reduceL1", "reduceL2", "reduceLogSum", "reduceLogSumExp", "reduceMax", "reduceMean",
      "reduceMin", "reduceProduct", "reduceSum", "reduceSumSquare")
def reduce(node: Node) -> Fn:
    axes = [int(a) for a in node.options["axes"]]
    dt, fl, out_shape = node.in_type, node.acc, node.out_shape
    fn = _reducer(node.op.op, axes, dt) if axes else _elementwise(node.op.op, dt)
    return lambda x: [fn(fl(x)).reshape(out_shape)]


@impl("argMin", "argMax")
def arg_min_max(node: Node) -> Fn:
    axis, keep = int(node.op.args[1]), bool(node.options["keepDimensions"])
    fn = torch.argmin if node.op.op == "argMin" else torch.argmax
    dt, fl = node.in_type, node.fl
    return lambda x: [fn(order_key(fl(x), dt), dim=axis, keepdim=keep)]


@impl("cumulativeSum")
def cumulative_sum(node: Node) -> Fn:
    axis = int(node.op.args[1])
    exclusive, reverse = bool(node.options["exclusive"]), bool(node.options["reversed"])
    n, fl = node.operand(0).shape[axis], node.acc

    def fn(x: torch.Tensor) -> list[torch.Tensor]:
        x = fl(x)
        if reverse:
            x = torch.flip(x, [axis])
        out = torch.cumsum(x, dim=axis)
        if exclusive:
            zero = torch.zeros_like(out.narrow(axis, 0, 1))
            out = torch.cat([zero, out.narrow(axis, 0, n - 1)], dim=axis)
        if reverse:
            out = torch.flip(out, [axis])
        return [out]

    return fn


@impl("softmax")
def softmax(node: Node) -> Fn:
    axis, fl = int(node.op.args[1]), node.acc
    return lambda x: [torch.softmax(fl(x), dim=axis)]
