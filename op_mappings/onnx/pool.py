"""ONNX MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool ->
WebNN maxPool2d / averagePool2d / l2Pool2d (reductions for global pools).

- auto_pad -> explicit padding; 1-D pools are lifted to 2-D.
- 3-D pools are separable: a 2-D pool over (H, W) of [N, C·D, H, W], then a (kD, 1) pool
  over D of [N, C, D, Ho·Wo]. Exact for max and for the padding-excluding average (every
  window's real cells form a box, so the mean over it is the mean of the per-slice means).
- ceil_mode: ONNX drops a last window that would start in the end padding, WebNN's ceil
  formula does not; so the ONNX output size is computed and reached with floor rounding and
  extra end padding (padding never contributes to max/average/L2).
- AveragePool count_include_pad = 1: explicit zero `pad` of the model's pads, then pooling
  whose only padding is the ceil_mode extra (not counted, as in ONNX).
- LpPool: p = 2 on 1-D/2-D is l2Pool2d; any other p (and 3-D) is (Σ|x|^p)^(1/p) where the
  window sum is averagePool2d of the zero-padded |x|^p times the window size (every window is
  then full). GlobalLpPool: reduceL1 / reduceL2 / (reduceSum(|x|^p))^(1/p).
- Global pools on 1-D or 3-D inputs: reduceMax / reduceMean over the spatial axes.
- MaxPool's Indices output: per kernel tap (in ONNX's row-major scan order), the strided
  slice of the input padded with -inf (dtype minimum for integers) is compared with the
  pooled maximum; a `where` chain run from the last tap to the first keeps the first tap
  that holds the maximum (ONNX and onnxruntime keep the first strictly greater value). Taps
  that fall in the padding are masked. The flat index is (n·C + c)·Π(spatial) plus the
  spatial offset, row-major (storage_order = 0) or column-major (storage_order = 1, first
  spatial axis fastest). One `slice` + `equal` + `where` per tap (kernel volume).
Restrictions: 1-, 2- or 3-D spatial; average/Lp pools take float32/float16; storage_order
only changes the Indices output.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.errors import UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import ints
from op_mappings.onnx import onnx_op
from op_mappings.onnx._spatial import resolve_pads, webnn_padding

_METHODS = {"MaxPool": "max_pool2d", "AveragePool": "average_pool2d", "LpPool": "l2_pool2d",
            "GlobalMaxPool": "max_pool2d", "GlobalAveragePool": "average_pool2d",
            "GlobalLpPool": "l2_pool2d"}


def _check_rank(op: str, rank: int) -> None:
    if rank not in (3, 4, 5):
        raise UnsupportedAttribute(f"{op} with {rank - 2} spatial dimensions is not supported "
                                   "(1-, 2- and 3-D pools only)")


def _lift(ctx: ImportContext, x: Any) -> tuple[Any, bool]:
    if x.rank == 3:
        return ctx.builder.reshape(x, [*x.shape, 1]), True
    return x, False


def _drop(ctx: ImportContext, y: Any, lifted: bool) -> Any:
    return ctx.builder.reshape(y, list(y.shape[:-1])) if lifted else y


def pool_nd(ctx: ImportContext, method: str, x: Any, kernel: Sequence[int],
            strides: Sequence[int], dilations: Sequence[int],
            pads: Sequence[tuple[int, int]]) -> Any:
    """A WebNN 2-D pool `method` (max_pool2d / average_pool2d / l2_pool2d, padding excluded)
    over the 1, 2 or 3 trailing spatial axes of NC... `x` (3-D: separable, max/average)."""
    b = ctx.builder
    pool = getattr(b, method)
    n = x.rank - 2
    if n == 3:
        nb, c, d, h, w = x.shape
        y = pool(b.reshape(x, [nb, c * d, h, w]), window_dimensions=list(kernel[1:]),
                 padding=webnn_padding(pads[1:]), strides=list(strides[1:]),
                 dilations=list(dilations[1:]))
        ho, wo = y.shape[2], y.shape[3]
        y = pool(b.reshape(y, [nb, c, d, ho * wo]), window_dimensions=[kernel[0], 1],
                 padding=[pads[0][0], pads[0][1], 0, 0], strides=[strides[0], 1],
                 dilations=[dilations[0], 1])
        return b.reshape(y, [nb, c, y.shape[2], ho, wo])
    x, lifted = _lift(ctx, x)
    kernel, strides, dilations, pads = list(kernel), list(strides), list(dilations), list(pads)
    if lifted:
        kernel, strides, dilations, pads = ([*kernel, 1], [*strides, 1], [*dilations, 1],
                                            [*pads, (0, 0)])
    y = pool(x, window_dimensions=kernel, padding=webnn_padding(pads), strides=strides,
             dilations=dilations)
    return _drop(ctx, y, lifted)


def _zero_pad(ctx: ImportContext, x: Any, pads: Sequence[tuple[int, int]]) -> Any:
    if not any(v for p in pads for v in p):
        return x
    return ctx.builder.pad(x, [0, 0, *(p[0] for p in pads)], [0, 0, *(p[1] for p in pads)])


def _pow_abs(ctx: ImportContext, x: Any, p: float) -> Any:
    """|x|^p (x·x for p = 2, |x| for p = 1)."""
    b = ctx.builder
    if p == 2:
        return b.mul(x, x)
    ax = b.abs(x)
    return ax if p == 1 else b.pow(ax, ctx.constant(np.asarray(p, dtype=x.data_type)))


def _root(ctx: ImportContext, s: Any, p: float) -> Any:
    b = ctx.builder
    if p == 1:
        return s
    if p == 2:
        return b.sqrt(s)
    return b.pow(s, ctx.constant(np.asarray(1.0 / p, dtype=s.data_type)))


@onnx_op(("MaxPool", "AveragePool", "LpPool"), since=1)
def pool(ctx: ImportContext, node: Node) -> Outputs:
    a = node.attrs
    want_indices = node.op_type == "MaxPool" and len(node.outputs) > 1 and bool(node.outputs[1])
    storage_order = int(a.get("storage_order", 0))
    if storage_order not in (0, 1):
        raise ctx.unsupported(f"storage_order = {storage_order} is not 0 or 1")
    p = float(a.get("p", 2)) if node.op_type == "LpPool" else 2.0
    if p <= 0:
        raise ctx.unsupported(f"LpPool p = {a['p']} must be positive")
    x = ctx.operand(node.inputs[0])
    _check_rank(node.op_type, x.rank)
    n = x.rank - 2
    kernel = ints(a["kernel_shape"])
    strides = ints(a["strides"]) if "strides" in a else [1] * n
    dilations = ints(a["dilations"]) if "dilations" in a else [1] * n
    in_sizes = list(x.shape[2:])
    model_pads = resolve_pads(a.get("auto_pad", "NOTSET"), in_sizes, kernel, strides,
                              dilations, ints(a["pads"]) if "pads" in a else None)
    pads = list(model_pads)
    if a.get("ceil_mode", 0):
        adjusted = []
        for i in range(n):
            dk = (kernel[i] - 1) * dilations[i] + 1
            pb, pe = pads[i]
            out = math.ceil((in_sizes[i] + pb + pe - dk) / strides[i]) + 1
            if (out - 1) * strides[i] >= in_sizes[i] + pb:
                out -= 1
            adjusted.append((pb, max(pe, (out - 1) * strides[i] + dk - in_sizes[i] - pb)))
        pads = adjusted
    b = ctx.builder
    if node.op_type == "LpPool" and (p != 2 or n == 3):
        # window sums of |x|^p: zero-pad everything, average full windows, times the size
        xp = _zero_pad(ctx, _pow_abs(ctx, x, p), pads)
        avg = pool_nd(ctx, "average_pool2d", xp, kernel, strides, dilations, [(0, 0)] * n)
        size = ctx.constant(np.asarray(float(np.prod(kernel)), dtype=x.data_type))
        return [_root(ctx, b.mul(avg, size), p)]
    if node.op_type == "AveragePool" and a.get("count_include_pad", 0):
        # the model's pads count (explicit zeros); the ceil_mode extra does not
        x = _zero_pad(ctx, x, model_pads)
        pads = [(0, pe - me) for (_, pe), (_, me) in zip(pads, model_pads, strict=True)]
    y = pool_nd(ctx, _METHODS[node.op_type], x, kernel, strides, dilations, pads)
    if want_indices:
        return [y, _max_indices(ctx, x, y, kernel, strides, dilations, pads, storage_order)]
    return [y]


def _max_indices(ctx: ImportContext, x: Any, y: Any, kernel: Sequence[int],
                 strides: Sequence[int], dilations: Sequence[int],
                 pads: Sequence[tuple[int, int]], storage_order: int) -> Any:
    """MaxPool's int64 Indices output (flat index of the first maximum of each window)."""
    b = ctx.builder
    n = x.rank - 2
    nb, c = x.shape[0], x.shape[1]
    sizes = list(x.shape[2:])
    out = list(y.shape[2:])
    dt = x.data_type
    fill: float | int = -math.inf if dt.startswith("float") else int(np.iinfo(dt).min)
    if any(v for p in pads for v in p):
        xp = b.pad(x, [0, 0, *(p[0] for p in pads)], [0, 0, *(p[1] for p in pads)],
                   value=fill)
    else:
        xp = x
    # spatial strides of the flat index: row-major, or column-major for storage_order 1
    order = range(n - 1, -1, -1) if storage_order == 0 else range(n)
    flat_stride = [0] * n
    acc_stride = 1
    for i in order:
        flat_stride[i] = acc_stride
        acc_stride *= sizes[i]
    taps = list(itertools.product(*(range(k) for k in kernel)))
    result: Any = None
    for tap in reversed(taps):
        # input coordinate of this tap per output position, per axis
        coords = [np.arange(out[i]) * strides[i] - pads[i][0] + tap[i] * dilations[i]
                  for i in range(n)]
        grids = np.meshgrid(*coords, indexing="ij")
        index = sum(g * flat_stride[i] for i, g in enumerate(grids))
        inside = np.ones(out, dtype=bool)
        for i, g in enumerate(grids):
            inside &= (g >= 0) & (g < sizes[i])
        index_op = ctx.constant(np.asarray(index, dtype=np.int64).reshape([1, 1, *out]))
        if result is None:
            result = index_op
            continue
        window = b.slice(xp, [0, 0, *(tap[i] * dilations[i] for i in range(n))],
                         [nb, c, *((out[i] - 1) * strides[i] + 1 for i in range(n))],
                         strides=[1, 1, *strides])
        hit = b.equal(window, y)
        if not inside.all():
            hit = b.logical_and(hit, ctx.constant(inside.reshape([1, 1, *out])))
        result = b.where(hit, index_op, result)
    base = (np.arange(nb * c, dtype=np.int64) * int(np.prod(sizes))).reshape([nb, c] + [1] * n)
    return b.add(result, ctx.constant(base))


@onnx_op(("GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"), since=1)
def global_pool(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    if x.rank < 3:
        raise UnsupportedAttribute(f"{node.op_type} needs an N, C, spatial... input, got "
                                   f"rank {x.rank}")
    b = ctx.builder
    p = float(node.attrs.get("p", 2)) if node.op_type == "GlobalLpPool" else 2.0
    if x.rank == 4 and p == 2:
        return [getattr(b, _METHODS[node.op_type])(x)]
    axes = list(range(2, x.rank))
    if node.op_type == "GlobalMaxPool":
        return [b.reduce_max(x, axes=axes, keep_dimensions=True)]
    if node.op_type == "GlobalAveragePool":
        return [b.reduce_mean(x, axes=axes, keep_dimensions=True)]
    if p == 1:
        return [b.reduce_l1(x, axes=axes, keep_dimensions=True)]
    if p == 2:
        return [b.reduce_l2(x, axes=axes, keep_dimensions=True)]
    s = b.reduce_sum(_pow_abs(ctx, x, p), axes=axes, keep_dimensions=True)
    return [_root(ctx, s, p)]
