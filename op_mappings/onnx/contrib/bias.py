"""onnxruntime's bias fusions (com.microsoft) -> WebNN add / softmax.

- BiasAdd (diffusion models): X + bias + skip.
- BiasSoftmax: softmax(data + bias) over the flattened dimensions [axis, rank). With
  batch = prod(data[:axis]) and E = prod(data[axis:]), the bias holds R = size/E rows:
  is_inner_broadcast=1 reads data as [R, batch/R, E] and bias as [R, 1, E] (an additive
  mask [B, 1, 1, S] on scores [B, N, S, S]); is_inner_broadcast=0 reads data as
  [batch/R, R, E] and bias as [1, R, E] (a bias [1, N, S, S] shared by the batch). Lowered
  to reshape + add + softmax over one axis + reshape.
"""

from __future__ import annotations

import math

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import norm_axis
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    attr_int,
    check_arity,
    check_same_type,
    check_shape,
    float_operand,
)

MS = "com.microsoft"


@onnx_op("BiasAdd", since=1, domain=MS)
def bias_add(ctx: ImportContext, node: Node) -> Outputs:
    """X + bias + skip.
    Restrictions: float32/float16; X 3-D (N, S, C), bias 1-D (C), skip of X's shape (the
    CUDA kernel's further limits on C do not apply)."""
    check_arity(node, (3, 3))
    x = float_operand(ctx, node, 0, "X")
    bias = float_operand(ctx, node, 1, "bias")
    skip = float_operand(ctx, node, 2, "skip")
    if x.rank != 3:
        raise InvalidModel(f"BiasAdd input X must be 3-D (N, S, C), got shape "
                           f"{list(x.shape)}")
    check_shape(node, bias, [x.shape[-1]], "bias")
    check_shape(node, skip, list(x.shape), "skip")
    check_same_type(node, [(x, "X"), (bias, "bias"), (skip, "skip")])
    b = ctx.builder
    return [b.add(b.add(x, bias), skip)]


@onnx_op("BiasSoftmax", since=1, domain=MS)
def bias_softmax(ctx: ImportContext, node: Node) -> Outputs:
    """softmax(data + bias) over dimensions [axis, rank) (see the module docstring).
    Restrictions: float32/float16; is_inner_broadcast is required; the bias size must be a
    multiple R of E = prod(data[axis:]) with R dividing prod(data[:axis])."""
    check_arity(node, (2, 2))
    x = float_operand(ctx, node, 0, "data")
    bias = float_operand(ctx, node, 1, "bias")
    check_same_type(node, [(x, "data"), (bias, "bias")])
    axis = norm_axis(attr_int(node, "axis", 1), x.rank, "BiasSoftmax axis")
    inner = attr_int(node, "is_inner_broadcast", None)
    if inner not in (0, 1):
        raise InvalidModel(f"BiasSoftmax is_inner_broadcast must be 0 or 1, got {inner}")
    batch = math.prod(x.shape[:axis])
    elems = math.prod(x.shape[axis:])
    size = math.prod(bias.shape)
    rows = size // elems if elems else 0
    if elems == 0 or size % elems or rows == 0 or batch % rows:
        raise InvalidModel(f"BiasSoftmax bias of shape {list(bias.shape)} does not broadcast "
                           f"to data {list(x.shape)} with axis {axis} (its size must be a "
                           f"multiple of {elems} dividing {batch * elems})")
    b = ctx.builder
    if inner:
        xs, bs = [rows, batch // rows, elems], [rows, 1, elems]
    else:
        xs, bs = [batch // rows, rows, elems], [1, rows, elems]
    s = b.add(b.reshape(x, xs), b.reshape(bias, bs))
    return [b.reshape(b.softmax(s, 2), list(x.shape))]
