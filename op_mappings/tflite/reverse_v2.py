"""REVERSE_V2 (constant axes tensor) -> WebNN reverse (stored integers when quantized)."""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import data_in, finish, norm_axes


@tflite_op("REVERSE_V2", since=1, const_inputs=(1,))
def reverse_v2(ctx: ImportContext, node: Node) -> Outputs:
    """reverse({axes})."""
    (x,), raw = data_in(ctx, node)
    axes = norm_axes(ctx.const_input(node, 1), len(x.shape))
    return [finish(ctx, node, ctx.builder.reverse(x, axes=axes), raw)]
