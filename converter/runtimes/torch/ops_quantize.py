"""Torch implementations: quantizeLinear and dequantizeLinear (mirrors the reference
kernels/quantize.py).

scale and zeroPoint are applied blockwise without materialising them: the input is viewed as
(scale_0, block_0, scale_1, block_1, ...) and scale/zeroPoint broadcast over the block axes.
dequantizeLinear computes (input - zeroPoint) exactly in int64 and multiplies in float32 for
8-bit inputs (which gives the correctly rounded product) and in float64 for 32-bit inputs.
quantizeLinear divides in float64, rounds half to even, saturates to the zeroPoint data
type's range (NaN becomes 0). 4-bit operands are int8 / uint8 tensors holding one value per
byte (their constants arrive unpacked from the builder), treated like the 8-bit types.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from converter.core.webnn.dtypes import type_range
from converter.core.webnn.ops.quantize import blocked_views
from converter.runtimes.torch.registry import Fn, Node, impl, int64, to_storage

Blocks = Callable[[torch.Tensor], torch.Tensor]


def _blockwise(node: Node) -> tuple[Blocks, Blocks, tuple[int, ...]]:
    """(view of the input as blocks, view of scale/zeroPoint broadcasting over them,
    input shape)."""
    shape = node.operand(0).shape
    sshape = node.operand(1).shape
    if tuple(sshape) == tuple(shape) or all(s == 1 for s in sshape):
        return (lambda x: x), (lambda p: p), tuple(shape)
    xb, pb = blocked_views(shape, sshape)
    return (lambda x: x.reshape(xb)), (lambda p: p.reshape(pb)), tuple(shape)


@impl("dequantizeLinear")
def dequantize_linear(node: Node) -> Fn:
    blocks, params, shape = _blockwise(node)
    dt = node.in_type
    compute = torch.float32 if dt in ("int8", "uint8", "int4", "uint4") else torch.float64

    def fn(x: torch.Tensor, scale: torch.Tensor, zero_point: torch.Tensor
           ) -> list[torch.Tensor]:
        diff = (blocks(int64(x)) - params(int64(zero_point))).to(compute)
        return [(diff * params(scale).to(compute)).reshape(shape)]

    return fn


@impl("quantizeLinear")
def quantize_linear(node: Node) -> Fn:
    blocks, params, shape = _blockwise(node)
    out_type = node.out_type
    lo, hi = (float(v) for v in type_range(out_type))

    def fn(x: torch.Tensor, scale: torch.Tensor, zero_point: torch.Tensor
           ) -> list[torch.Tensor]:
        q = torch.round(blocks(x.double()) / params(scale.double()))
        q = q + params(zero_point.double())
        q = torch.clamp(torch.nan_to_num(q, nan=0.0), lo, hi)
        return [to_storage(q.reshape(shape).to(torch.int64), out_type)]

    return fn
