"""ONE_HOT (indices, constant depth, on_value, off_value; axis) -> where(equal(indices,
arange(depth)), on, off). Out-of-range indices give all off_value."""

from __future__ import annotations

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints


@tflite_op("ONE_HOT", since=1, const_inputs=(1,))
def one_hot(ctx: ImportContext, node: Node) -> Outputs:
    """One-hot encoding along `axis` (-1 = last)."""
    b = ctx.builder
    idx = ctx.operand(node.inputs[0])
    depth = const_ints(ctx, node, 1)[0]
    ctx.check_constant(depth, 8, "the one-hot index table would take")
    rank = len(idx.shape) + 1
    axis = int(node.attrs["axis"])
    axis = axis + rank if axis < 0 else axis
    shape = list(idx.shape)
    shape.insert(axis, 1)
    r_shape = [1] * rank
    r_shape[axis] = depth
    eq = b.equal(b.reshape(idx, shape),
                 b.constant(np.arange(depth).reshape(r_shape).astype(idx.data_type)))
    on, off = ctx.operand(node.inputs[2]), ctx.operand(node.inputs[3])
    if len(on.shape):
        on = b.reshape(on, [])
    if len(off.shape):
        off = b.reshape(off, [])
    return [b.where(eq, on, off)]
