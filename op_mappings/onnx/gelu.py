"""ONNX Gelu -> WebNN gelu (approximate="none"), or for approximate="tanh" the decomposition
0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))).

Restrictions: float32/float16 inputs.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op


@onnx_op("Gelu", since=20)
def gelu(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    b = ctx.builder
    mode = node.attrs["approximate"]
    if mode == "none":
        return [b.gelu(x)]
    if mode != "tanh":
        raise ctx.unsupported(f"Gelu approximate={mode!r} is not 'none' or 'tanh'")

    def c(v: float) -> Any:
        return ctx.constant(np.array(v, x.data_type))

    cube = b.mul(b.mul(x, x), x)
    inner = b.mul(c(math.sqrt(2.0 / math.pi)), b.add(x, b.mul(c(0.044715), cube)))
    return [b.mul(b.mul(c(0.5), x), b.add(c(1.0), b.tanh(inner)))]
