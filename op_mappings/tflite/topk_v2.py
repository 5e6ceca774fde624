"""TOPK_V2 (inputs: x, k) -> rank-by-comparison decomposition
(`converter.core.webnn.decompose.top_k`): values and indices of the k largest entries along the
last axis, sorted largest first, equal values in index order (lower index first), as
LiteRT's kernel.

The pairwise comparison tensor has n² elements per row (n = last dimension). Quantized
inputs are ranked on the stored integers (the values output has the input's parameters).
Restrictions: k must be a constant (the output shape depends on it) and >= 1 (k = 0 gives
empty tensors, which WebNN cannot represent); int32 index output (LiteRT's int16 variant has
no WebNN type).
"""

from __future__ import annotations

from converter.core.errors import InvalidModel, UnsupportedAttribute, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import decompose as dc
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints, data_in, finish, out_info


@tflite_op("TOPK_V2", since=1, const_inputs=(1,))
def topk_v2(ctx: ImportContext, node: Node) -> Outputs:
    """top_k along the last axis, ties in index order. Restrictions: constant k >= 1; int32
    indices; n² comparisons per row."""
    (x,), raw = data_in(ctx, node)
    ks = const_ints(ctx, node, 1)
    if len(ks) != 1:
        raise InvalidModel(f"TOPK_V2 k must hold one value, got {ks}")
    k, n = ks[0], x.shape[-1] if x.shape else 0
    if not x.shape:
        raise InvalidModel("TOPK_V2 input must have rank >= 1")
    if k == 0:
        raise UnsupportedAttribute("TOPK_V2 with k = 0 produces empty tensors, which WebNN "
                                   "cannot represent")
    if not 0 < k <= n:
        raise InvalidModel(f"TOPK_V2 k={k} is outside 1..{n} (the last dimension)")
    info = out_info(node, 1)
    if info is not None and info.dtype != "int32":
        raise UnsupportedDataType(f"TOPK_V2 index output type {info.dtype} is not supported "
                                  "(int32 only)")
    values, idx = dc.top_k(ctx.builder, x, k, -1, True)
    return [finish(ctx, node, values, raw), idx]
