"""SOFTMAX (beta) and LOG_SOFTMAX over the last axis.

SOFTMAX = softmax(beta * x); LOG_SOFTMAX = (x - max) - log(sum(exp(x - max))) (never
log(softmax)). Quantized tensors run through dequantize/quantize.
"""

from __future__ import annotations

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import fin, fout


@tflite_op("SOFTMAX", since=1)
def softmax(ctx: ImportContext, node: Node) -> Outputs:
    """softmax(beta * x, last axis)."""
    x = fin(ctx, node, 0)
    assert x is not None
    beta = float(node.attrs["beta"])
    if beta != 1.0:
        x = ctx.builder.mul(x, ctx.builder.constant(np.array(beta, dtype=x.data_type)))
    return [fout(ctx, node, 0, ctx.builder.softmax(x, len(x.shape) - 1))]


@tflite_op("LOG_SOFTMAX", since=1)
def log_softmax(ctx: ImportContext, node: Node) -> Outputs:
    """Numerically stable log-softmax over the last axis."""
    x = fin(ctx, node, 0)
    assert x is not None
    b = ctx.builder
    last = [len(x.shape) - 1]
    y = b.sub(x, b.reduce_max(x, axes=last, keep_dimensions=True))
    s = b.reduce_sum(b.exp(y), axes=last, keep_dimensions=True)
    return [fout(ctx, node, 0, b.sub(y, b.log(s)))]
