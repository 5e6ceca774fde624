"""ONNX Range -> a constant (start, limit and delta must be constant).

n = max(ceil((limit - start) / delta), 0) elements start + i * delta, in the inputs' type.
start, limit and delta are one finite number each, delta not 0 (else an invalid model).
Restrictions: constant inputs only; empty ranges cannot enter the graph.
"""

from __future__ import annotations

import math

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import finite_scalar
from op_mappings.onnx import onnx_op


@onnx_op("Range", since=11, const_inputs=(0, 1, 2))
def range_(ctx: ImportContext, node: Node) -> Outputs:
    start, limit, delta = (finite_scalar(ctx, node, i, what)
                           for i, what in enumerate(("start", "limit", "delta")))
    return [constant_range(ctx, start, limit, delta)]


def constant_range(ctx: ImportContext, start: np.ndarray, limit: np.ndarray,
                   delta: np.ndarray) -> np.ndarray:
    """start + i * delta for i < max(ceil((limit - start) / delta), 0), in start's type
    (also com.microsoft Range); InvalidModel for delta 0 or a range of no finite length."""
    if float(delta) == 0:
        raise InvalidModel("delta (input 2) is 0: the range would never end")
    span = (float(limit) - float(start)) / float(delta)
    if not math.isfinite(span):
        raise InvalidModel(f"the range from {start} to {limit} by {delta} has no finite length")
    n = max(math.ceil(span), 0)
    ctx.check_constant(n, start.dtype)
    out: np.ndarray = (start + np.arange(n, dtype=start.dtype) * delta).astype(start.dtype)
    return out
