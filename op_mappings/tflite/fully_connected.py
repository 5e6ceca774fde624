"""FULLY_CONNECTED -> gemm(reshape(x, [-1, K]), W[N, K], bTranspose, c = bias) + activation.

K comes from the weights (the input need not be 2-D nor end in K); keep_num_dims reshapes
the result to the input's leading dims + [N]. Weights may be non-constant. Quantized and
hybrid (int8 weights, float activations) models run as dequantize -> float gemm ->
quantize; hybrid results are slightly more accurate than LiteRT's on-the-fly quantization.
Restrictions: SHUFFLED4x16INT8 weights are rejected; weights must be 2-D [N, K] with K > 0.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._checks import rank
from op_mappings.tflite._util import activation, fin, fout


@tflite_op("FULLY_CONNECTED", since=1)
def fully_connected(ctx: ImportContext, node: Node) -> Outputs:
    """y = x·Wᵀ + b."""
    a = node.attrs
    if int(a.get("weights_format", 0)) != 0:
        raise UnsupportedAttribute("SHUFFLED4x16INT8 weights are not supported")
    x, w = fin(ctx, node, 0), fin(ctx, node, 1)
    bias = fin(ctx, node, 2) if len(node.inputs) > 2 else None
    assert x is not None and w is not None
    b = ctx.builder
    rank(w, 2, "weights (input 1)")
    n, k = w.shape
    if k == 0:
        raise InvalidModel("weights (input 1) have 0 columns (K = 0)")
    total = int(np.prod(x.shape, dtype=np.int64))
    if total % k:
        raise InvalidModel(f"input of {total} elements cannot be flattened to [-1, {k}]")
    x2 = x if len(x.shape) == 2 and x.shape[1] == k else b.reshape(x, [total // k, k])
    y = b.gemm(x2, w, c=bias, b_transpose=True)
    y = activation(ctx, y, a["fused_activation_function"])
    if a.get("keep_num_dims") and len(x.shape) != 2:
        y = b.reshape(y, list(x.shape[:-1]) + [n])
    out = node.output_infos[0]
    if not a.get("keep_num_dims") and len(out.shape) not in (0, 2) and int(
            np.prod(out.shape)) == int(np.prod(y.shape)):
        y = b.reshape(y, list(out.shape))
    return [fout(ctx, node, 0, y)]
