"""ONNX BatchNormalization -> WebNN batchNormalization along axis 1.

Inference (training_mode = 0): the given mean and variance. Training mode (opset 14+,
training_mode = 1): the batch statistics over every axis but 1 (mean = reduceMean(x),
var = reduceMean((x - mean)²), the population variance as in ONNX) normalise x; the optional
outputs running_mean = mean_in·momentum + mean·(1 - momentum) and likewise running_var.
Restrictions: float32/float16; input rank >= 2 (channels at axis 1); the extra outputs of
opsets 7-13 (saved mean/variance of the old training form) are not supported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op


@onnx_op("BatchNormalization", since=7)
def batch_normalization(ctx: ImportContext, node: Node) -> Outputs:
    if node.attrs.get("training_mode", 0) or any(node.outputs[1:]):
        raise ctx.unsupported("training mode (running mean/var outputs) is not supported",
                              hint="export the model in inference mode")
    x, scale, bias, mean, var = ctx.inputs(node)
    return [ctx.builder.batch_normalization(x, mean, var, scale=scale, bias=bias, axis=1,
                                            epsilon=node.attrs["epsilon"])]


@onnx_op("BatchNormalization", since=14)
def batch_normalization14(ctx: ImportContext, node: Node) -> Outputs:
    if not node.attrs.get("training_mode", 0):
        return batch_normalization(ctx, node)
    b = ctx.builder
    x, scale, bias, mean_in, var_in = ctx.inputs(node)
    axes = [i for i in range(x.rank) if i != 1]
    mean = b.reduce_mean(x, axes=axes)
    shape = [1] * x.rank
    shape[1] = x.shape[1]
    centred = b.sub(x, b.reshape(mean, shape))
    var = b.reduce_mean(b.mul(centred, centred), axes=axes)
    y = b.batch_normalization(x, mean, var, scale=scale, bias=bias, axis=1,
                              epsilon=node.attrs["epsilon"])
    outs: list[Any] = [y]
    if any(node.outputs[1:]):
        m = float(node.attrs.get("momentum", 0.9))
        dt = x.data_type
        keep = ctx.constant(np.asarray(m, dtype=dt))
        new = ctx.constant(np.asarray(1.0 - m, dtype=dt))
        outs.append(b.add(b.mul(mean_in, keep), b.mul(mean, new)))
        outs.append(b.add(b.mul(var_in, keep), b.mul(var, new)))
    return outs
