"""Torch implementations: gather, gatherElements, gatherND, scatterElements, scatterND (mirrors
the reference kernels/gather.py).

Index values are clamped into [-size, size - 1] of their dimension, then negative ones wrap
(index + size). Scatter ops: when several indices address the same element, the update that
comes last in row-major order of `updates` wins (resolved with a `scatter_reduce("amax")` of
update positions, so the result is deterministic and needs no host synchronisation). Values
are moved exactly in their storage dtype.
"""

from __future__ import annotations

import math

import torch

from converter.runtimes.torch.registry import Fn, Node, impl, int64


def normalize(indices: torch.Tensor, size: int | torch.Tensor) -> torch.Tensor:
    """Clamp index values into [-size, size - 1] and wrap negatives: int64 in [0, size)."""
    idx = int64(indices)
    if isinstance(size, int):
        idx = torch.clamp(idx, -size, size - 1)
    else:
        idx = torch.maximum(torch.minimum(idx, size - 1), -size)
    return torch.where(idx < 0, idx + size, idx)


@impl("gather", moves=True)
def gather(node: Node) -> Fn:
    axis = int(node.options["axis"])
    shape = node.operand(0).shape
    size = shape[axis]
    out_shape = node.out_shape

    const = node.constant(1)
    if const is not None:  # constant indices: normalised once, at compile time
        fixed = normalize(const, size).reshape(-1)
        if fixed.numel() == 1:
            i = int(fixed[0])
            return lambda x, indices: [x.select(axis, i).reshape(out_shape)]
        return lambda x, indices: [torch.index_select(x, axis, fixed).reshape(out_shape)]

    def fn(x: torch.Tensor, indices: torch.Tensor) -> list[torch.Tensor]:
        idx = normalize(indices, size).reshape(-1)
        return [torch.index_select(x, axis, idx).reshape(out_shape)]

    return fn


@impl("gatherElements", moves=True)
def gather_elements(node: Node) -> Fn:
    axis = int(node.options["axis"])
    size = node.operand(0).shape[axis]
    return lambda x, indices: [torch.gather(x, axis, normalize(indices, size))]


def _nd_limits(node: Node) -> tuple[int, torch.Tensor]:
    shape = node.operand(0).shape
    k = node.operand(1).shape[-1]
    return k, node.ctx.tensor(list(shape[:k]), torch.int64)


@impl("gatherND", moves=True)
def gather_nd(node: Node) -> Fn:
    k, sizes = _nd_limits(node)

    def fn(x: torch.Tensor, indices: torch.Tensor) -> list[torch.Tensor]:
        idx = normalize(indices, sizes)
        return [x[tuple(idx[..., i] for i in range(k))]]

    return fn


def _last_wins(targets: torch.Tensor, count: int) -> tuple[torch.Tensor, torch.Tensor]:
    """For each of `count` destinations: whether any target hits it, and the position (in
    `targets`) of the last hit (0 when none)."""
    positions = torch.arange(targets.numel(), device=targets.device)
    last = torch.full((count,), -1, dtype=torch.int64, device=targets.device)
    last = last.scatter_reduce(0, targets, positions, reduce="amax", include_self=True)
    return last >= 0, torch.clamp_min(last, 0)


@impl("scatterElements", moves=True)
def scatter_elements(node: Node) -> Fn:
    axis = int(node.options["axis"])
    shape = node.operand(0).shape
    ishape = node.operand(1).shape
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    # Flat offset of every indices element without its `axis` coordinate.
    base = torch.zeros(ishape, dtype=torch.int64)
    for d, n in enumerate(ishape):
        if d != axis:
            view = [1] * len(ishape)
            view[d] = n
            base = base + torch.arange(n).reshape(view) * strides[d]
    base = base.reshape(-1).to(node.ctx.device)
    size, count = shape[axis], math.prod(shape)

    def fn(x: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor
           ) -> list[torch.Tensor]:
        targets = base + normalize(indices, size).reshape(-1) * strides[axis]
        hit, last = _last_wins(targets, count)
        flat = torch.where(hit, updates.reshape(-1)[last], x.reshape(-1))
        return [flat.reshape(shape)]

    return fn


@impl("scatterND", moves=True)
def scatter_nd(node: Node) -> Fn:
    k, sizes = _nd_limits(node)
    shape = node.operand(0).shape
    rows = math.prod(shape[:k])
    tail = tuple(shape[k:])
    row_strides = node.ctx.tensor([math.prod(shape[d + 1:k]) for d in range(k)], torch.int64)

    def fn(x: torch.Tensor, indices: torch.Tensor, updates: torch.Tensor
           ) -> list[torch.Tensor]:
        idx = normalize(indices, sizes).reshape(-1, k)
        targets = (idx * row_strides).sum(dim=1)
        hit, last = _last_wins(targets, rows)
        picked = updates.reshape((-1, *tail))[last]
        mask = hit.reshape((rows,) + (1,) * len(tail))
        out = torch.where(mask, picked, x.reshape((rows, *tail)))
        return [out.reshape(shape)]

    return fn
