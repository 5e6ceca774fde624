"""Torch implementations: concat, expand, pad, reshape, reverse, slice, split, tile, transpose,
triangular (mirrors the reference kernels/shape.py). Pure data movement in the storage dtype;
results may be views of their input (the executor copies graph outputs that would alias
inputs or constants)."""

from __future__ import annotations

import itertools

import torch

from converter.runtimes.torch.registry import Fn, Node, impl


@impl("concat", moves=True)
def concat(node: Node) -> Fn:
    axis = int(node.op.args[1])
    return lambda *xs: [torch.cat(xs, dim=axis)]


@impl("expand", moves=True)
def expand(node: Node) -> Fn:
    shape = tuple(int(d) for d in node.op.args[1])
    return lambda x: [x.expand(shape)]


def _edge_index(n: int, begin: int, end: int) -> torch.Tensor:
    return torch.clamp(torch.arange(-begin, n + end), 0, n - 1)


def _reflect_index(n: int, begin: int, end: int) -> torch.Tensor:
    """numpy "reflect" (mirror without repeating the border), periodic beyond one mirror."""
    idx = torch.arange(-begin, n + end)
    if n == 1:
        return torch.zeros_like(idx)
    period = 2 * (n - 1)
    i = torch.remainder(idx, period)
    return torch.where(i >= n, period - i, i)


@impl("pad", moves=True)
def pad(node: Node) -> Fn:
    """constant: fill with options["value"] (already cast to the data type); edge: repeat
    the border; reflection: mirror excluding the border."""
    begin = [int(b) for b in node.op.args[1]]
    end = [int(e) for e in node.op.args[2]]
    shape = node.operand(0).shape
    mode = node.options["mode"]
    if mode == "constant":
        value = node.options["value"]
        if node.in_type == "uint64" and int(value) >= 2**63:
            value = int(value) - 2**64
        out_shape = node.out_shape
        inner = tuple(slice(b, b + n) for b, n in zip(begin, shape, strict=True))

        def constant(x: torch.Tensor) -> list[torch.Tensor]:
            out = x.new_full(out_shape, value)
            out[inner] = x
            return [out]

        return constant
    make = _edge_index if mode == "edge" else _reflect_index
    tables = [(axis, make(n, b, e).to(node.ctx.device))
              for axis, (n, b, e) in enumerate(zip(shape, begin, end, strict=True)) if b or e]

    def gather(x: torch.Tensor) -> list[torch.Tensor]:
        for axis, idx in tables:
            x = torch.index_select(x, axis, idx)
        return [x]

    return gather


@impl("reshape", moves=True)
def reshape(node: Node) -> Fn:
    shape = tuple(int(d) for d in node.op.args[1])
    return lambda x: [x.reshape(shape)]


@impl("reverse", moves=True)
def reverse(node: Node) -> Fn:
    axes = [int(a) for a in node.options["axes"]]
    if not axes:
        return lambda x: [x]
    return lambda x: [torch.flip(x, axes)]


@impl("slice", moves=True)
def slice_(node: Node) -> Fn:
    index = tuple(slice(int(s), int(s) + int(n), int(k)) for s, n, k in zip(
        node.op.args[1], node.op.args[2], node.options["strides"], strict=True))
    return lambda x: [x[index]]


@impl("split", moves=True)
def split(node: Node) -> Fn:
    """`splits` is either a count of equal parts or the list of part sizes."""
    splits = node.op.args[1]
    axis = int(node.options["axis"])
    dim = node.operand(0).shape[axis]
    sizes = [dim // splits] * splits if isinstance(splits, int) else [int(s) for s in splits]
    assert sum(sizes) == dim and list(itertools.accumulate(sizes))[-1] == dim
    return lambda x: list(torch.split(x, sizes, dim=axis))


@impl("tile", moves=True)
def tile(node: Node) -> Fn:
    reps = tuple(int(r) for r in node.op.args[1])
    if not reps:
        return lambda x: [x]
    return lambda x: [x.repeat(reps)]


@impl("transpose", moves=True)
def transpose(node: Node) -> Fn:
    perm = tuple(int(p) for p in node.options["permutation"])
    return lambda x: [x.permute(perm)]


@impl("triangular", moves=True)
def triangular(node: Node) -> Fn:
    """Element (i, j) of each trailing matrix is kept when j - i >= diagonal (upper) or
    j - i <= diagonal (lower), otherwise set to 0."""
    rows, cols = node.operand(0).shape[-2:]
    offset = torch.arange(cols)[None, :] - torch.arange(rows)[:, None]
    diagonal = int(node.options["diagonal"])
    keep = (offset >= diagonal if node.options["upper"] else offset <= diagonal)
    keep = keep.to(node.ctx.device)
    return lambda x: [torch.where(keep, x, torch.zeros((), dtype=x.dtype, device=x.device))]
