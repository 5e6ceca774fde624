"""ai.onnx.ml Binarizer and ArrayFeatureExtractor -> WebNN element-wise ops / gather.

- Binarizer: where(x > threshold, 1, 0) in the input's type.
- ArrayFeatureExtractor: gather along the last axis with the (flattened) indices; a 1-D
  input is treated as [1, n] (output [1, k]), as the ONNX reference does.
Restrictions: numeric (non-string) inputs; Binarizer on float32/float16/int32/int64.
"""

from __future__ import annotations

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op

ML = "ai.onnx.ml"


@onnx_op("Binarizer", since=1, domain=ML)
def binarizer(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    dt = x.data_type
    t = float(node.attrs.get("threshold", 0.0))
    # integers: x > t <=> x > floor(t)
    threshold = ctx.constant(np.asarray(t if dt.startswith("float") else np.floor(t), dtype=dt))
    one, zero = ctx.constant(np.ones((), dt)), ctx.constant(np.zeros((), dt))
    return [b.where(b.greater(x, threshold), one, zero)]


@onnx_op("ArrayFeatureExtractor", since=1, domain=ML)
def array_feature_extractor(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x, idx = ctx.inputs(node)
    if x.rank == 1:
        x = b.reshape(x, [1, x.shape[0]])
    count = int(np.prod(idx.shape, dtype=np.int64))
    flat = b.reshape(idx, [count]) if list(idx.shape) != [count] else idx
    return [b.gather(x, flat, axis=x.rank - 1)]
