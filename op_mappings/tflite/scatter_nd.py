"""SCATTER_ND (inputs: indices, updates, shape) -> zeros + scatter with duplicates SUMMED.

The shape must be constant. Constant indices that are provably unique -> WebNN scatterND
into zeros. Otherwise (duplicates or computed indices) the sum is built exactly as a one-hot
matrix product: equal(linear index, arange(cells)) cast to float, transposed, matmul with the
flattened updates (float tensors; integer updates are computed in float32, exact below 2^24).
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints, fin, fout


@tflite_op("SCATTER_ND", since=1, const_inputs=(2,))
def scatter_nd(ctx: ImportContext, node: Node) -> Outputs:
    """zeros(shape) with updates added at indices."""
    b = ctx.builder
    shape = const_ints(ctx, node, 2)
    upd = fin(ctx, node, 1)
    assert upd is not None
    idx_name = node.inputs[0]
    idx_shape = ctx.shape(idx_name)
    k = idx_shape[-1]
    if k > len(shape):
        raise InvalidModel(f"indices depth {k} exceeds output rank {len(shape)}")
    n = int(np.prod(idx_shape[:-1], dtype=np.int64))
    inner = shape[k:]
    cells = int(np.prod(shape[:k], dtype=np.int64))
    slice_size = int(np.prod(inner, dtype=np.int64))
    ctx.check_constant(shape, upd.data_type, "the zeros the updates scatter into would take")
    ctx.check_constant(n * cells, 4, "the scatter index mask would take")
    if ctx.is_constant(idx_name):
        idx = np.asarray(ctx.const_value(idx_name)).astype(np.int64).reshape(n, k)
        if np.any(idx < 0) or np.any(idx >= np.array(shape[:k])):
            raise InvalidModel("SCATTER_ND index out of range")
        linear = np.ravel_multi_index(idx.T, shape[:k]) if k else np.zeros(n, np.int64)
        if len(np.unique(linear)) == n:
            zeros = b.constant(np.zeros(shape, dtype=upd.data_type))
            y = b.scatter_nd(zeros, ctx.operand(idx_name), upd)
            return [fout(ctx, node, 0, y)]
        lin = b.constant(linear.astype(np.int32).reshape(n, 1))
    else:
        strides = np.array([int(np.prod(shape[i + 1:k], dtype=np.int64)) for i in range(k)],
                           np.int32)
        idx_op = ctx.operand(idx_name)
        if idx_op.data_type != "int32":
            idx_op = b.cast(idx_op, "int32")
        idx2 = b.reshape(idx_op, [n, k])
        lin = b.reduce_sum(b.mul(idx2, b.constant(strides.reshape(1, k))), axes=[1],
                           keep_dimensions=True)
    dt = upd.data_type if upd.data_type in FLOAT_TYPES else "float32"
    onehot = b.cast(b.equal(lin, b.constant(np.arange(cells, dtype=np.int32).reshape(1, -1))),
                    dt)
    u = upd if upd.data_type == dt else b.cast(upd, dt)
    u2 = b.reshape(u, [n, slice_size])
    y = b.reshape(b.matmul(b.transpose(onehot), u2), shape)
    if dt != upd.data_type:
        y = b.cast(y, upd.data_type)
    return [fout(ctx, node, 0, y)]
