"""ONNX GatherElements, GatherND, ScatterElements, ScatterND, Scatter -> WebNN gatherElements,
gatherND, scatterElements, scatterND.

GatherND `batch_dims > 0`: the batch coordinates are prepended to the indices (a constant
grid concatenated on the last axis), then gatherND with batch_dims 0.
Scatter (opsets 9-10) is ScatterElements. Negative indices are allowed (WebNN wraps them).
Reductions (add, mul, max, min; indices may be computed in the graph): ScatterElements is
first rewritten as a ScatterND of single elements (coordinates = the position in `indices`
with the axis coordinate replaced). Up to SEQUENTIAL_MAX index tuples are applied one at a
time in index order (gatherND the current slice, combine, scatterND it back: exactly ONNX's
definition, duplicates included); more use a one-hot form: linear positions, a [K, M] match
matrix, `where` of the updates against the reduction's neutral element, reduceSum /
reduceProduct / reduceMax / reduceMin over K, combined with the data where any update hit.
Restrictions: with reduction "none" duplicate indices are unspecified in WebNN; the one-hot
form is limited to ONE_HOT_MAX_ELEMENTS elements and adds float updates in a different order
than ONNX (rounding may differ in the last bit); mul on int8/uint8 is not available there
(reduceProduct types).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import attr_in_range
from op_mappings._common.values import norm_axis
from op_mappings.onnx import onnx_op


@onnx_op("GatherElements", since=11)
def gather_elements(ctx: ImportContext, node: Node) -> Outputs:
    x, idx = ctx.inputs(node)
    return [ctx.builder.gather_elements(x, idx, axis=norm_axis(node.attrs["axis"], x.rank))]


@onnx_op("GatherND", since=11)
def gather_nd(ctx: ImportContext, node: Node) -> Outputs:
    x, idx = ctx.inputs(node)
    b = ctx.builder
    if idx.rank < 1 or x.rank < 1:
        raise InvalidModel(f"data {list(x.shape)} and indices {list(idx.shape)} must have "
                           "rank 1 or more")
    bd = int(attr_in_range(node, "batch_dims", 0, min(x.rank, idx.rank) - 1))
    if list(x.shape[:bd]) != list(idx.shape[:bd]):
        raise InvalidModel(f"the first {bd} (batch_dims) axes of data {list(x.shape)} and "
                           f"indices {list(idx.shape)} differ")
    if idx.shape[-1] > x.rank - bd:
        raise InvalidModel(f"indices {list(idx.shape)} index {idx.shape[-1]} axes, data "
                           f"{list(x.shape)} has {x.rank - bd} after the batch axes")
    if bd:
        lead = list(idx.shape[:-1])
        grid = np.indices(lead[:bd], dtype=idx.data_type)  # [bd, *batch]
        grid = np.moveaxis(grid, 0, -1).reshape(lead[:bd] + [1] * (len(lead) - bd) + [bd])
        grid = np.broadcast_to(grid, lead + [bd])
        idx = b.concat([ctx.constant(np.ascontiguousarray(grid)), idx], idx.rank - 1)
    return [b.gather_nd(x, idx)]


SEQUENTIAL_MAX = 32
"""Scatter reductions with at most this many index tuples are unrolled one update at a time
(exact ONNX order); larger ones use the one-hot form."""

ONE_HOT_MAX_ELEMENTS = 1 << 24
"""Largest [updates, positions, slice] tensor the one-hot form may build."""

_COMBINE = {"add": "add", "mul": "mul", "max": "max", "min": "min"}


def _reduction(node: Node) -> str:
    reduction = str(node.attrs.get("reduction", "none"))
    if reduction != "none" and reduction not in _COMBINE:
        raise UnsupportedAttribute(f"{node.op_type} reduction {reduction!r} is unknown")
    return reduction


def _neutral(reduction: str, dt: str) -> float | int:
    if reduction == "add":
        return 0
    if reduction == "mul":
        return 1
    if dt in FLOAT_TYPES:
        return -np.inf if reduction == "max" else np.inf
    info = np.iinfo(dt)
    return int(info.min) if reduction == "max" else int(info.max)


def scatter_reduce(ctx: ImportContext, x: Any, coords: Any, upd: Any, reduction: str) -> Any:
    """ScatterND with a reduction: `coords` [K, q] (index tuples into x's leading q axes,
    negative ones wrap), `upd` [K, *x.shape[q:]]."""
    b = ctx.builder
    k, q = coords.shape
    combine = getattr(b, _COMBINE[reduction])
    slice_shape = list(x.shape[q:])
    if k <= SEQUENTIAL_MAX:
        # one update at a time, in index order (ONNX's definition, duplicates included)
        for i in range(k):
            ik = b.slice(coords, [i, 0], [1, q])
            cur = b.gather_nd(x, ik)
            ui = b.slice(upd, [i] + [0] * len(slice_shape), [1, *slice_shape])
            x = b.scatter_nd(x, ik, combine(cur, ui))
        return x
    m = int(np.prod(x.shape[:q], dtype=np.int64))
    size = int(np.prod(slice_shape, dtype=np.int64))
    if k * m * size > ONE_HOT_MAX_ELEMENTS:
        raise UnsupportedAttribute(
            f"scatter reduction {reduction!r} with {k} updates into {m} positions of {size} "
            f"elements is too large to decompose (limit {ONE_HOT_MAX_ELEMENTS} elements)")
    # one-hot form: linear position of every update, [K, M] match matrix, reduce over K
    it = coords.data_type
    dims = ctx.constant(np.array(x.shape[:q], dtype=it).reshape(1, q))
    zero = ctx.constant(np.zeros((), dtype=it))
    wrapped = b.add(coords, b.where(b.lesser(coords, zero), dims, zero))
    strides = np.array([int(np.prod(x.shape[j + 1:q], dtype=np.int64)) for j in range(q)],
                       dtype=it).reshape(1, q)
    lin = b.reduce_sum(b.mul(wrapped, ctx.constant(strides)), axes=[1], keep_dimensions=True)
    match = b.equal(lin, ctx.constant(np.arange(m, dtype=it).reshape(1, m)))  # [K, M]
    neutral = ctx.constant(np.asarray(_neutral(reduction, x.data_type), dtype=x.data_type))
    filled = b.where(b.reshape(match, [k, m, 1]), b.reshape(upd, [k, 1, size]), neutral)
    reducer = {"add": b.reduce_sum, "mul": b.reduce_product, "max": b.reduce_max,
               "min": b.reduce_min}[reduction]
    red = reducer(filled, axes=[0])
    hit = b.reshape(b.reduce_max(match, axes=[0]), [m, 1])
    flat = b.reshape(x, [m, size])
    return b.reshape(b.where(hit, combine(flat, red), flat), list(x.shape))


@onnx_op(("ScatterElements", "Scatter"), since=9)
def scatter_elements(ctx: ImportContext, node: Node) -> Outputs:
    reduction = _reduction(node)
    x, idx, upd = ctx.inputs(node)
    axis = norm_axis(node.attrs["axis"], x.rank)
    b = ctx.builder
    if reduction == "none":
        return [b.scatter_elements(x, idx, upd, axis=axis)]
    # element coordinates: the position in `indices` with the axis coordinate replaced
    shape = list(idx.shape)
    grid = np.indices(shape, dtype=idx.data_type)
    cols = [ctx.constant(np.ascontiguousarray(grid[j].reshape(-1, 1))) if j != axis
            else b.reshape(idx, [int(np.prod(shape)), 1])
            for j in range(x.rank)]
    coords = b.concat(cols, 1)
    flat_upd = b.reshape(upd, [int(np.prod(shape))])
    return [scatter_reduce(ctx, x, coords, flat_upd, reduction)]


@onnx_op("ScatterND", since=11)
def scatter_nd(ctx: ImportContext, node: Node) -> Outputs:
    reduction = _reduction(node)
    x, idx, upd = ctx.inputs(node)
    b = ctx.builder
    if reduction == "none":
        return [b.scatter_nd(x, idx, upd)]
    q = idx.shape[-1]
    k = int(np.prod(idx.shape[:-1], dtype=np.int64))
    coords = b.reshape(idx, [k, q]) if idx.rank != 2 else idx
    slice_shape = list(x.shape[q:])
    upd2 = b.reshape(upd, [k, *slice_shape]) if list(upd.shape) != [k, *slice_shape] else upd
    return [scatter_reduce(ctx, x, coords, upd2, reduction)]
