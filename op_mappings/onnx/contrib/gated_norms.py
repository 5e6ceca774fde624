"""onnxruntime's gated and branch-wise RMS norms and gated add (com.microsoft; the genai model
builder's Mamba2 / gated DeltaNet / hyper-connection blocks) -> WebNN element-wise ops and
reductions, computed in float32 as onnxruntime does.

- GatedRMSNorm: Y = X · rsqrt(mean(X², last C values) + epsilon) · scale · act(gate), C the
  length of `scale` (X's last dimension a multiple of C: one norm per group of C), act silu
  (alias swish) or sigmoid.
- BranchwiseRMSNorm: RMS normalisation over the last axis H of each branch of X (..., C, H),
  or of X (..., C·H) split in `num_branches` = C branches; the optional scale has shape
  (C·H), (C, H) or (H).
- GatedAdd: X + Y · gate, gate (..., 1) broadcast over the last axis (the product rounded to
  X's type first).
"""

from __future__ import annotations

from typing import Any

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    attr_epsilon,
    attr_int,
    attr_str,
    check_arity,
    check_same_type,
    float_operand,
    scalar,
    to_type,
)

MS = "com.microsoft"


def _rms(ctx: ImportContext, x: Any, eps: float) -> Any:
    """x · rsqrt(mean(x², last axis) + eps), float32 x."""
    b = ctx.builder
    mean = b.reduce_mean(b.mul(x, x), axes=[x.rank - 1], keep_dimensions=True)
    return b.div(x, b.sqrt(b.add(mean, scalar(ctx, eps, "float32"))))


@onnx_op("GatedRMSNorm", since=1, domain=MS)
def gated_rms_norm(ctx: ImportContext, node: Node) -> Outputs:
    """RMS norm over groups of C = len(scale), times scale and act(gate) (see the module
    docstring). Restrictions: float32/float16; scale 1-D; X's last dimension a multiple of
    C; gate of X's shape."""
    check_arity(node, (3, 3))
    b = ctx.builder
    x = float_operand(ctx, node, 0, "X")
    scale = float_operand(ctx, node, 1, "scale")
    gate = float_operand(ctx, node, 2, "gate")
    check_same_type(node, [(x, "X"), (scale, "scale"), (gate, "gate")])
    act = attr_str(node, "activation", "silu")
    if act not in ("silu", "swish", "sigmoid"):
        raise UnsupportedAttribute(f"GatedRMSNorm activation {act!r} is not silu, swish or "
                                   "sigmoid")
    if scale.rank != 1 or x.rank == 0 or x.shape[-1] % scale.shape[0]:
        raise InvalidModel(f"GatedRMSNorm scale {list(scale.shape)} must be 1-D with a length "
                           f"dividing X's last dimension ({list(x.shape)})")
    if list(gate.shape) != list(x.shape):
        raise InvalidModel(f"GatedRMSNorm gate {list(gate.shape)} must have X's shape "
                           f"{list(x.shape)}")
    c = scale.shape[0]
    shape = list(x.shape)
    grouped = shape[:-1] + [shape[-1] // c, c]
    xf = b.reshape(to_type(ctx, x, "float32"), grouped)
    y = b.reshape(b.mul(_rms(ctx, xf, attr_epsilon(node, 1e-5)), to_type(ctx, scale, "float32")),
                  shape)
    g = to_type(ctx, gate, "float32")
    g = b.sigmoid(g) if act == "sigmoid" else b.mul(g, b.sigmoid(g))
    return [to_type(ctx, b.mul(y, g), x.data_type)]


@onnx_op("BranchwiseRMSNorm", since=1, domain=MS)
def branchwise_rms_norm(ctx: ImportContext, node: Node) -> Outputs:
    """RMS norm over the last axis of each branch (see the module docstring).
    Restrictions: float32/float16; with num_branches, X's last dimension a multiple of it."""
    check_arity(node, (1, 2))
    b = ctx.builder
    x = float_operand(ctx, node, 0, "X")
    branches = attr_int(node, "num_branches", 0)
    shape = list(x.shape)
    if branches:
        if x.rank < 1 or shape[-1] % branches:
            raise InvalidModel(f"BranchwiseRMSNorm num_branches {branches} must divide X's "
                               f"last dimension ({shape})")
        grouped = shape[:-1] + [branches, shape[-1] // branches]
    else:
        if x.rank < 2:
            raise InvalidModel(f"BranchwiseRMSNorm X must be (..., C, H) without num_branches, "
                               f"got {shape}")
        grouped = shape
    c, h = grouped[-2:]
    y = _rms(ctx, b.reshape(to_type(ctx, x, "float32"), grouped), attr_epsilon(node, 1e-5))
    if node.input(1):
        scale = float_operand(ctx, node, 1, "scale")
        if list(scale.shape) not in ([c * h], [c, h], [h]):
            raise InvalidModel(f"BranchwiseRMSNorm scale {list(scale.shape)} must be "
                               f"[{c * h}], [{c}, {h}] or [{h}]")
        s = to_type(ctx, scale, "float32")
        y = b.mul(y, b.reshape(s, [c, h]) if scale.rank == 1 and scale.shape[0] != h else s)
    return [to_type(ctx, b.reshape(y, shape), x.data_type)]


@onnx_op("GatedAdd", since=1, domain=MS)
def gated_add(ctx: ImportContext, node: Node) -> Outputs:
    """X + Y · gate (see the module docstring).
    Restrictions: float32/float16; Y of X's shape, gate (..., 1) with X's leading shape."""
    check_arity(node, (3, 3))
    b = ctx.builder
    x = float_operand(ctx, node, 0, "X")
    y = float_operand(ctx, node, 1, "Y")
    gate = float_operand(ctx, node, 2, "gate")
    check_same_type(node, [(x, "X"), (y, "Y"), (gate, "gate")])
    if list(y.shape) != list(x.shape) or list(gate.shape) != list(x.shape[:-1]) + [1]:
        raise InvalidModel(f"GatedAdd Y {list(y.shape)} and gate {list(gate.shape)} must be "
                           f"{list(x.shape)} and {list(x.shape[:-1]) + [1]}")
    return [b.add(x, b.mul(y, gate))]
