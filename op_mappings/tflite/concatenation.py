"""CONCATENATION (axis) -> WebNN concat.

The fused activation field is ignored with a warning, as LiteRT's kernels ignore it. Runs on
stored integers when every input shares the output's quantization parameters; otherwise
dequantize -> concat -> quantize. Empty (zero-element) constant inputs are dropped.
"""

from __future__ import annotations

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import NONE, data_in, empty, finish, norm_axis


@tflite_op("CONCATENATION", since=1)
def concatenation(ctx: ImportContext, node: Node) -> Outputs:
    """concat along a (possibly negative) axis."""
    if int(node.attrs["fused_activation_function"]) != NONE:
        ctx.warn("fused activation ignored, as LiteRT's CONCATENATION kernel ignores it")
    keep = [i for i, name in enumerate(node.inputs)
            if not (ctx.is_constant(name) and np.asarray(ctx.const_value(name)).size == 0)]
    if not keep:
        shape = [int(d) for d in node.output_infos[0].shape]
        return [empty(node, shape)]
    xs, raw = data_in(ctx, node, keep)
    axis = norm_axis(int(node.attrs["axis"]), len(xs[0].shape))
    y = ctx.builder.concat(xs, axis) if len(xs) > 1 else ctx.builder.identity(xs[0])
    return [finish(ctx, node, y, raw)]
