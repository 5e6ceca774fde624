"""onnxruntime's dropout fusions (com.microsoft), inference only -> add or no operation.

- BiasDropout / BitmaskBiasDropout: Dropout(data + bias) + residual, which in inference is
  data + bias (+ residual): WebNN adds. bias is 1-D of data's last dimension, residual of
  data's shape.
- BitmaskDropout: Dropout(data), in inference data itself.
Inference means `training_mode` absent or a constant false, or `ratio` a constant 0
(onnxruntime's kernels copy the input then). The optional mask output is then all true: a
bool tensor of data's shape (BiasDropout), or for the Bitmask ops a uint32 tensor of
ceil(size / 32) words with every bit set, as onnxruntime's CUDA kernels write it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import one_value
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    add_bias,
    check_arity,
    check_same_type,
    check_shape,
    float_operand,
)

MS = "com.microsoft"


def _check_inference(ctx: ImportContext, node: Node, ratio: int, training: int) -> None:
    """UnsupportedAttribute unless the node runs in inference mode (see the module
    docstring)."""
    name = node.input(training)
    if not name or not bool(one_value(ctx.const_input(node, training),
                                      f"training_mode (input {training})")):
        return
    if node.input(ratio) and ctx.is_constant(node.input(ratio)) \
            and float(one_value(ctx.const_input(node, ratio), "ratio")) == 0.0:
        return
    raise UnsupportedAttribute(f"{node.op_type} in training mode is not supported "
                               "(training_mode must be absent or a constant false)")


def _mask(node: Node, shape: tuple[int, ...], bitmask: bool) -> list[Any]:
    if len(node.outputs) < 2 or not node.outputs[1]:
        return []
    if not bitmask:
        return [np.ones(shape, np.bool_)]
    words = -(-int(np.prod(shape, dtype=np.int64)) // 32)
    return [np.full([words], 0xFFFFFFFF, np.uint32)]


def _bias_dropout(ctx: ImportContext, node: Node, bitmask: bool) -> Outputs:
    check_arity(node, (2, 5), outputs=(1, 2))
    _check_inference(ctx, node, 3, 4)
    x = float_operand(ctx, node, 0, "data")
    y = add_bias(ctx, node, x, 1)
    if node.input(2):
        residual = float_operand(ctx, node, 2, "residual")
        check_shape(node, residual, list(x.shape), "residual")
        check_same_type(node, [(x, "data"), (residual, "residual")])
        y = ctx.builder.add(y, residual)
    return [y, *_mask(node, x.shape, bitmask)]


@onnx_op("BiasDropout", since=1, domain=MS)
def bias_dropout(ctx: ImportContext, node: Node) -> Outputs:
    """data + bias (+ residual); mask all true (see the module docstring).
    Restrictions: inference only; float32/float16; bias 1-D of data's last dimension,
    residual of data's shape."""
    return _bias_dropout(ctx, node, False)


@onnx_op("BitmaskBiasDropout", since=1, domain=MS)
def bitmask_bias_dropout(ctx: ImportContext, node: Node) -> Outputs:
    """data + bias (+ residual); bitmask all ones (see the module docstring).
    Restrictions: inference only; float32/float16; bias 1-D of data's last dimension,
    residual of data's shape."""
    return _bias_dropout(ctx, node, True)


@onnx_op("BitmaskDropout", since=1, domain=MS)
def bitmask_dropout(ctx: ImportContext, node: Node) -> Outputs:
    """data unchanged; bitmask all ones (see the module docstring).
    Restrictions: inference only."""
    check_arity(node, (1, 3), outputs=(1, 2))
    _check_inference(ctx, node, 1, 2)
    name = node.inputs[0]
    y: Any = ctx.const_value(name) if ctx.is_constant(name) else ctx.operand(name)
    return [y, *_mask(node, tuple(ctx.shape(name)), True)]
