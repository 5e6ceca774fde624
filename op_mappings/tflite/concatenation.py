"""CONCATENATION (axis, fused activation) -> WebNN concat.

Runs on stored integers when every input shares the output's quantization parameters and
there is no fused activation; otherwise dequantize -> concat -> (activation) -> quantize.
"""

from __future__ import annotations

from typing import Any

from converter.formats.tflite import TFLiteNode
from converter.importer import ImportContext
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import NONE, activation, data_in, fin, fout, norm_axis


@tflite_op("CONCATENATION", since=1)
def concatenation(ctx: ImportContext, node: TFLiteNode) -> list[Any]:
    """concat along a (possibly negative) axis."""
    act = int(node.attrs["fused_activation_function"])
    idx = list(range(len(node.inputs)))
    if act == NONE:
        xs, raw = data_in(ctx, node, idx)
    else:
        xs, raw = [fin(ctx, node, i) for i in idx], False  # type: ignore[misc]
    axis = norm_axis(int(node.attrs["axis"]), len(xs[0].shape))
    y = ctx.builder.concat(xs, axis)
    if raw:
        return [y]
    return [fout(ctx, node, 0, activation(ctx, y, act))]
