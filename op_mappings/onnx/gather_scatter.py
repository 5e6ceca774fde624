"""ONNX GatherElements, GatherND, ScatterElements, ScatterND, Scatter -> WebNN gatherElements,
gatherND, scatterElements, scatterND.

GatherND `batch_dims > 0`: the batch coordinates are prepended to the indices (a constant
grid concatenated on the last axis), then gatherND with batch_dims 0.
Scatter (opsets 9-10) is ScatterElements. Negative indices are allowed (WebNN wraps them).
Restrictions: `reduction` other than "none" is rejected (WebNN scatters only overwrite);
duplicate indices are unspecified in WebNN.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.errors import UnsupportedAttribute
from converter.formats.onnx import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import norm_axis


@onnx_op("GatherElements", since=11)
def gather_elements(ctx: ImportContext, node: Node) -> list[Any]:
    x, idx = ctx.inputs(node)
    return [ctx.builder.gather_elements(x, idx, axis=norm_axis(node.attrs["axis"], x.rank))]


@onnx_op("GatherND", since=11)
def gather_nd(ctx: ImportContext, node: Node) -> list[Any]:
    x, idx = ctx.inputs(node)
    b = ctx.builder
    bd = int(node.attrs.get("batch_dims", 0))
    if bd:
        lead = list(idx.shape[:-1])
        grid = np.indices(lead[:bd], dtype=idx.data_type)  # [bd, *batch]
        grid = np.moveaxis(grid, 0, -1).reshape(lead[:bd] + [1] * (len(lead) - bd) + [bd])
        grid = np.broadcast_to(grid, lead + [bd])
        idx = b.concat([ctx.constant(np.ascontiguousarray(grid)), idx], idx.rank - 1)
    return [b.gather_nd(x, idx)]


def _no_reduction(node: Node) -> None:
    reduction = str(node.attrs.get("reduction", "none"))
    if reduction != "none":
        raise UnsupportedAttribute(f"{node.op_type} reduction {reduction!r}: WebNN scatters "
                                   "only overwrite")


@onnx_op(("ScatterElements", "Scatter"), since=9)
def scatter_elements(ctx: ImportContext, node: Node) -> list[Any]:
    _no_reduction(node)
    x, idx, upd = ctx.inputs(node)
    return [ctx.builder.scatter_elements(x, idx, upd,
                                         axis=norm_axis(node.attrs["axis"], x.rank))]


@onnx_op("ScatterND", since=11)
def scatter_nd(ctx: ImportContext, node: Node) -> list[Any]:
    _no_reduction(node)
    x, idx, upd = ctx.inputs(node)
    return [ctx.builder.scatter_nd(x, idx, upd)]
