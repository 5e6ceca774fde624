"""MEAN, SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD, REDUCE_ANY, REDUCE_ALL.

Axes come from a constant int32 tensor (negative and repeated entries are normalised);
`keep_dims` from ReducerOptions. REDUCE_ANY / REDUCE_ALL reduce the 0/1 booleans with
reduceMax / reduceMin. REDUCE_MAX / REDUCE_MIN run on the stored integers when input and
output share quantization parameters; other quantized reductions dequantize.
"""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import data_in, fin_required, finish, fout, norm_axes

_METHODS = {"MEAN": "reduce_mean", "SUM": "reduce_sum", "REDUCE_MAX": "reduce_max",
            "REDUCE_MIN": "reduce_min", "REDUCE_PROD": "reduce_product",
            "REDUCE_ANY": "reduce_max", "REDUCE_ALL": "reduce_min"}


@tflite_op(tuple(_METHODS), since=1, const_inputs=(1,))
def reduce(ctx: ImportContext, node: Node) -> Outputs:
    """Reduction over constant axes."""
    method = _METHODS[node.op_type]
    keep = bool(node.attrs["keep_dims"])
    if node.op_type in ("REDUCE_MAX", "REDUCE_MIN", "REDUCE_ANY", "REDUCE_ALL"):
        (x,), raw = data_in(ctx, node)
    else:
        x, raw = fin_required(ctx, node, 0), False
    axes = norm_axes(ctx.const_input(node, 1), len(x.shape))
    if not axes:
        return [finish(ctx, node, ctx.builder.identity(x), raw)]
    y = getattr(ctx.builder, method)(x, axes=axes, keep_dimensions=keep)
    return [finish(ctx, node, y, raw) if raw else fout(ctx, node, 0, y)]
