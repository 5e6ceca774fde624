"""BUCKETIZE (boundaries option) -> comparison count: index = #{b in boundaries: b <= x},
computed as K - reduceSum(cast(lesser(x[..., None], boundaries), int32), last axis), which is
LiteRT's `std::upper_bound` (NaN lands in the last bucket, K).

Integer inputs are compared in float32 as the kernel's `value < boundary` does (int32/int64
promoted to float). Output int32, the input's shape. x.size·K comparisons.
Restrictions: boundaries sorted ascending (LiteRT requires it); float64 inputs have no WebNN
type.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedDataType
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op


@tflite_op("BUCKETIZE", since=1)
def bucketize(ctx: ImportContext, node: Node) -> Outputs:
    """K - Σ (x < boundary) (upper_bound). Restrictions: sorted boundaries; x.size·K
    comparisons."""
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    bounds = np.asarray(node.attrs.get("boundaries") or (), np.float32).reshape(-1)
    if np.any(np.diff(bounds) < 0):
        raise InvalidModel(f"BUCKETIZE boundaries {bounds.tolist()} are not sorted")
    if x.data_type not in ("float32", "float16", "int32", "int64"):
        raise UnsupportedDataType(f"BUCKETIZE input type {x.data_type} is not supported "
                                  "(float32, int32, int64)")
    k = int(bounds.size)
    if k == 0:
        return [np.zeros(x.shape, np.int32)]
    if x.data_type != "float32":
        x = b.cast(x, "float32")
    below = b.lesser(b.reshape(x, [*x.shape, 1]), ctx.constant(bounds))
    count = b.reduce_sum(b.cast(below, "int32"), axes=[len(x.shape)])
    return [b.sub(b.constant(np.array(k, np.int32)), count)]
