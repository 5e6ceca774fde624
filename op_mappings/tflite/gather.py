"""GATHER (axis, batch_dims), GATHER_ND, EMBEDDING_LOOKUP -> WebNN gather / gatherND.

GATHER with batch_dims > 0 is emulated with gatherND over batch-index-augmented indices
(constant indices only). TFLite rejects negative indices (WebNN would wrap them); indices
are passed through as int32/int64. Stored integers are gathered when quantization
parameters match.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import RequiresConstantInput
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import data_in, finish, norm_axis


@tflite_op("GATHER", since=1)
def gather(ctx: ImportContext, node: Node) -> Outputs:
    """gather along `axis`; batch_dims via gatherND."""
    (x,), raw = data_in(ctx, node)
    idx_name = node.inputs[1]
    rank = len(x.shape)
    axis = norm_axis(int(node.attrs["axis"]), rank)
    bd = int(node.attrs.get("batch_dims", 0))
    idx_shape = ctx.shape(idx_name)
    if bd < 0:
        bd += len(idx_shape)
    if bd == 0:
        return [finish(ctx, node, ctx.builder.gather(x, ctx.operand(idx_name), axis=axis), raw)]
    if not ctx.is_constant(idx_name):
        raise RequiresConstantInput("GATHER with batch_dims > 0 needs constant indices")
    if axis != bd:
        from converter.core.errors import UnsupportedAttribute

        raise UnsupportedAttribute(f"GATHER batch_dims {bd} with axis {axis} != batch_dims")
    idx = np.asarray(ctx.const_value(idx_name)).astype(np.int64)
    grids = np.meshgrid(*[np.arange(d) for d in idx.shape], indexing="ij")
    full = np.stack([grids[i] for i in range(bd)] + [idx], axis=-1)
    y = ctx.builder.gather_nd(x, ctx.builder.constant(full.astype(np.int32)))
    return [finish(ctx, node, y, raw)]


@tflite_op("GATHER_ND", since=1)
def gather_nd(ctx: ImportContext, node: Node) -> Outputs:
    """gatherND(params, indices)."""
    (x,), raw = data_in(ctx, node)
    return [finish(ctx, node, ctx.builder.gather_nd(x, ctx.operand(node.inputs[1])), raw)]


@tflite_op("EMBEDDING_LOOKUP", since=1)
def embedding_lookup(ctx: ImportContext, node: Node) -> Outputs:
    """EMBEDDING_LOOKUP(ids, table) = gather(table, ids, axis 0)."""
    (table,), raw = data_in(ctx, node, (1,))
    return [finish(ctx, node, ctx.builder.gather(table, ctx.operand(node.inputs[0]), axis=0),
                   raw)]
