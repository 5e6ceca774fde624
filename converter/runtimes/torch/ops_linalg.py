"""Torch implementations: matmul and gemm (mirrors the reference kernels/linalg.py), computed in
float32 (float16 natively on CUDA). gemm's `alpha` and `beta` are first cast to the operand
data type, as the spec requires."""

from __future__ import annotations

import torch

from converter.core.webnn.dtypes import cast_number
from converter.runtimes.torch.registry import Fn, Node, impl


@impl("matmul")
def matmul(node: Node) -> Fn:
    """A rank >= 3 `a` times a rank-2 `b` runs as one 2-D product of `a` with its leading
    dimensions folded into rows: torch.matmul folds only inputs whose strides allow a view,
    and otherwise multiplies batch by batch against an expanded `b` (ten times slower for
    a transposed activation times a weight matrix)."""
    fl = node.fl
    a_shape, b_rank = node.operand(0).shape, node.operand(1).rank
    if len(a_shape) >= 3 and b_rank == 2:
        out_shape = node.out_shape
        k = a_shape[-1]
        return lambda a, b: [torch.mm(fl(a).reshape(-1, k), fl(b)).reshape(out_shape)]
    return lambda a, b: [torch.matmul(fl(a), fl(b))]


@impl("gemm")
def gemm(node: Node) -> Fn:
    dt, fl = node.out_type, node.fl
    a_t, b_t = bool(node.options["aTranspose"]), bool(node.options["bTranspose"])
    alpha = float(cast_number(node.options["alpha"], dt))
    beta = float(cast_number(node.options["beta"], dt))
    c_pos = node.opt("c")

    def fn(a: torch.Tensor, b: torch.Tensor, *rest: torch.Tensor) -> list[torch.Tensor]:
        a, b = fl(a), fl(b)
        y = torch.matmul(a.t() if a_t else a, b.t() if b_t else b)
        if alpha != 1.0:
            y = y * alpha
        if c_pos is not None:
            y = y + beta * fl(rest[0])
        return [y]

    return fn
