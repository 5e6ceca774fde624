"""TRANSPOSE with a constant permutation tensor -> WebNN transpose (stored integers when
quantization parameters match)."""

from __future__ import annotations

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import ints
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import data_in, finish, norm_axis


@tflite_op("TRANSPOSE", since=1, const_inputs=(1,))
def transpose(ctx: ImportContext, node: Node) -> Outputs:
    """transpose({permutation})."""
    (x,), raw = data_in(ctx, node)
    perm = [norm_axis(p, len(x.shape)) for p in ints(ctx.const_input(node, 1))]
    return [finish(ctx, node, ctx.builder.transpose(x, permutation=perm), raw)]
