"""Torch implementations: matmul and gemm (mirrors the reference kernels/linalg.py), computed in
float32 (float16 natively on CUDA). gemm's `alpha` and `beta` are first cast to the operand
data type, as the spec requires."""

from __future__ import annotations

import torch

from ...webnn.dtypes import cast_number
from .registry import Fn, Node, impl


@impl("matmul")
def matmul(node: Node) -> Fn:
    fl = node.fl
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
