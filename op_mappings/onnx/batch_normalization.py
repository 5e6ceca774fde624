"""ONNX BatchNormalization (inference) -> WebNN batchNormalization along axis 1.

Restrictions: `training_mode = 0` and only the first output (Y); float32/float16; input
rank >= 2 (channels at axis 1).
"""

from __future__ import annotations

from typing import Any

from converter.formats.onnx import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op


@onnx_op("BatchNormalization", since=7)
def batch_normalization(ctx: ImportContext, node: Node) -> list[Any]:
    if node.attrs.get("training_mode", 0) or any(node.outputs[1:]):
        raise ctx.unsupported("training mode (running mean/var outputs) is not supported",
                              hint="export the model in inference mode")
    x, scale, bias, mean, var = ctx.inputs(node)
    return [ctx.builder.batch_normalization(x, mean, var, scale=scale, bias=bias, axis=1,
                                            epsilon=node.attrs["epsilon"])]
