"""onnxruntime contrib GELU family (com.microsoft) -> WebNN gelu or decompositions.

- Gelu: x·Φ(x) (erf form) -> WebNN gelu.
- BiasGelu: gelu(A + B), B a 1-D vector of A's last dimension -> add + gelu.
- FastGelu: the tanh approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) of x (+ the
  optional 1-D bias), decomposed (mul/add/tanh).
- QuickGelu: x·sigmoid(alpha·x), alpha 1.702 by default.
- BiasSplitGelu: (X + bias) split in two halves along the last axis, left · gelu(right).
- ScaledSiLU: Z · sigmoid(Z), Z = scale · X (the scale input, else the alpha attribute).
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    add_bias,
    attr_float,
    check_arity,
    fast_gelu,
    float_operand,
    scalar,
    to_type,
)

MS = "com.microsoft"


@onnx_op("Gelu", since=1, domain=MS)
def gelu(ctx: ImportContext, node: Node) -> Outputs:
    """Restrictions: float32/float16 (WebNN gelu)."""
    check_arity(node, (1, 1))
    return [ctx.builder.gelu(float_operand(ctx, node, 0, "X"))]


@onnx_op("BiasGelu", since=1, domain=MS)
def bias_gelu(ctx: ImportContext, node: Node) -> Outputs:
    """Restrictions: float32/float16; B must be 1-D with A's last dimension (onnxruntime's
    rule)."""
    check_arity(node, (2, 2))
    a = float_operand(ctx, node, 0, "A")
    return [ctx.builder.gelu(add_bias(ctx, node, a, 1, "B"))]


@onnx_op("FastGelu", since=1, domain=MS)
def fast_gelu_op(ctx: ImportContext, node: Node) -> Outputs:
    """Restrictions: float32/float16, computed in the input's type; the optional bias must be
    1-D with X's last dimension (onnxruntime's rule)."""
    check_arity(node, (1, 2))
    x = float_operand(ctx, node, 0, "X")
    return [fast_gelu(ctx, add_bias(ctx, node, x, 1))]


@onnx_op("QuickGelu", since=1, domain=MS)
def quick_gelu(ctx: ImportContext, node: Node) -> Outputs:
    """Restrictions: float32/float16."""
    check_arity(node, (1, 1))
    x = float_operand(ctx, node, 0, "X")
    alpha = attr_float(node, "alpha", 1.702)
    b = ctx.builder
    z = x if alpha == 1.0 else b.mul(x, scalar(ctx, alpha, x.data_type))
    return [b.mul(x, b.sigmoid(z))]


@onnx_op("BiasSplitGelu", since=1, domain=MS)
def bias_split_gelu(ctx: ImportContext, node: Node) -> Outputs:
    """Restrictions: float32/float16; X is 3-D (N, S, D) with D even and bias is 1-D (D)
    (onnxruntime's CUDA kernel also limits D to 2560, 5120 or 10240; any even D converts)."""
    check_arity(node, (2, 2))
    x = float_operand(ctx, node, 0, "X")
    if x.rank != 3:
        raise InvalidModel(f"BiasSplitGelu input X must be 3-D (N, S, D), got shape "
                           f"{list(x.shape)}")
    d = x.shape[-1]
    if d % 2:
        raise InvalidModel(f"BiasSplitGelu hidden size {d} is odd: it cannot be split in two "
                           "halves")
    b = ctx.builder
    left, right = b.split(add_bias(ctx, node, x, 1), 2, axis=2)
    return [b.mul(left, b.gelu(right))]


@onnx_op("ScaledSiLU", since=1, domain=MS)
def scaled_silu(ctx: ImportContext, node: Node) -> Outputs:
    """Z · sigmoid(Z) with Z = s · X, s the optional scalar `scale` input, else the `alpha`
    attribute (default 1); computed in X's type.
    Restrictions: float32/float16; scale one value of X's type."""
    check_arity(node, (1, 2))
    b = ctx.builder
    x = float_operand(ctx, node, 0, "X")
    if node.input(1):
        s = float_operand(ctx, node, 1, "scale")
        if int(np.prod(s.shape, dtype=np.int64)) != 1:
            raise InvalidModel(f"ScaledSiLU scale must be one value, got shape {list(s.shape)}")
        s = b.reshape(to_type(ctx, s, x.data_type), [])
    else:
        s = scalar(ctx, attr_float(node, "alpha", 1.0), x.data_type)
    z = b.mul(x, s)
    return [b.mul(z, b.sigmoid(z))]
