"""ONNX Shape, Size -> constants (every WebNN operand has a static shape).

Shape's `start`/`end` (opset 15) slice the shape like Python slicing (negative values count
from the end, out-of-range values are clamped). Results are int64.
"""

from __future__ import annotations

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op


@onnx_op("Shape", since=1)
def shape(ctx: ImportContext, node: Node) -> Outputs:
    dims = ctx.shape(node.inputs[0])
    start = int(node.attrs.get("start", 0))
    end = node.attrs.get("end")
    dims = dims[start:] if end is None else dims[start:int(end)]
    return [np.array(dims, np.int64)]


@onnx_op("Size", since=1)
def size(ctx: ImportContext, node: Node) -> Outputs:
    return [np.array(int(np.prod(ctx.shape(node.inputs[0]), dtype=np.int64)), np.int64)]
