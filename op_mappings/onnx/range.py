"""ONNX Range -> a constant (start, limit and delta must be constant).

n = max(ceil((limit - start) / delta), 0) elements start + i * delta, in the inputs' type.
Restrictions: constant inputs only; empty ranges cannot enter the graph.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from converter.importer import ImportContext
from converter.ir import Node
from op_mappings.onnx import onnx_op


@onnx_op("Range", since=11, const_inputs=(0, 1, 2))
def range_(ctx: ImportContext, node: Node) -> list[Any]:
    start, limit, delta = (np.asarray(ctx.const_input(node, i)).reshape(()) for i in range(3))
    n = max(math.ceil((float(limit) - float(start)) / float(delta)), 0)
    ctx.check_constant(n, start.dtype)
    return [(start + np.arange(n, dtype=start.dtype) * delta).astype(start.dtype)]
