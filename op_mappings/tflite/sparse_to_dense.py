"""SPARSE_TO_DENSE (inputs: indices, output_shape, values, default_value) -> WebNN
scatterND into expand(default_value, output_shape).

indices [N, R] (or [N] for a 1-D output, or a scalar) and output_shape must be constants;
values ([N] or a scalar) and default_value may be computed. Repeated indices keep the last
value, as LiteRT's kernel writes in order: the indices are de-duplicated at conversion time
and the kept values gathered. Values are copied as stored (quantized tensors stay
integers).
Restrictions: constant indices in range; int8/uint8/int32/int64/float values.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints


@tflite_op("SPARSE_TO_DENSE", since=1, const_inputs=(0, 1))
def sparse_to_dense(ctx: ImportContext, node: Node) -> Outputs:
    """scatterND(expand(default, shape), unique indices, values); last duplicate wins.
    Restrictions: constant indices and output_shape."""
    b = ctx.builder
    shape = const_ints(ctx, node, 1)
    if ctx.folding:
        ctx.check_constant(shape, 8)
    rank = len(shape)
    idx = np.asarray(ctx.const_input(node, 0)).astype(np.int64)
    if idx.ndim > 2:
        raise InvalidModel(f"SPARSE_TO_DENSE indices must be 0-D, 1-D or 2-D, got shape "
                           f"{list(idx.shape)}")
    idx = idx.reshape(-1, rank) if idx.ndim < 2 else idx
    if idx.shape[1] != rank:
        raise InvalidModel(f"SPARSE_TO_DENSE indices have {idx.shape[1]} coordinates, the "
                           f"output has rank {rank}")
    n = idx.shape[0]
    if n and (np.any(idx < 0) or np.any(idx >= np.array(shape))):
        raise InvalidModel(f"SPARSE_TO_DENSE index out of range for output shape {shape}")
    values, default = ctx.operand(node.inputs[2]), ctx.operand(node.inputs[3])
    if values.data_type != default.data_type:
        raise InvalidModel(f"SPARSE_TO_DENSE values ({values.data_type}) and default value "
                           f"({default.data_type}) differ in type")
    if int(np.prod(default.shape, dtype=np.int64)) != 1:
        raise InvalidModel("SPARSE_TO_DENSE default_value must be a scalar")
    dense = b.expand(b.reshape(default, []), shape)
    if n == 0:
        return [dense]
    scalar_values = int(np.prod(values.shape, dtype=np.int64)) == 1 and len(values.shape) <= 1
    if not scalar_values and list(values.shape) != [n]:
        raise InvalidModel(f"SPARSE_TO_DENSE has {n} indices but values of shape "
                           f"{list(values.shape)}")
    linear: np.ndarray = np.ravel_multi_index(tuple(idx.T), shape)  # one array per axis
    # last occurrence of each index: unique over the reversed list
    _, first_rev = np.unique(linear[::-1], return_index=True)
    keep = np.sort(n - 1 - first_rev)
    if scalar_values:
        upd = b.expand(b.reshape(values, []), [len(keep)])
    elif len(keep) == n:
        upd = values
    else:
        upd = b.gather(values, ctx.constant(keep.astype(np.int32)), axis=0)
    table = ctx.constant(idx[keep].astype(np.int32))
    return [b.scatter_nd(dense, table, upd)]
