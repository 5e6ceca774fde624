"""CONCATENATION (axis) -> WebNN concat.

The fused activation field is ignored with a warning, as LiteRT's kernels ignore it. Runs on
stored integers when every input shares the output's quantization parameters; otherwise
dequantize -> concat -> quantize.
"""

from __future__ import annotations

from typing import Any

from converter.formats.tflite import TFLiteNode
from converter.importer import ImportContext
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import NONE, data_in, finish, norm_axis


@tflite_op("CONCATENATION", since=1)
def concatenation(ctx: ImportContext, node: TFLiteNode) -> list[Any]:
    """concat along a (possibly negative) axis."""
    if int(node.attrs["fused_activation_function"]) != NONE:
        ctx.warn("fused activation ignored, as LiteRT's CONCATENATION kernel ignores it")
    xs, raw = data_in(ctx, node, list(range(len(node.inputs))))
    axis = norm_axis(int(node.attrs["axis"]), len(xs[0].shape))
    return [finish(ctx, node, ctx.builder.concat(xs, axis), raw)]
