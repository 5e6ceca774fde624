"""onnxruntime FusedConv (com.microsoft) -> WebNN conv2d (+ add Z) + the fused activation.

FusedConv is Conv (same inputs X, W, B and attributes) with an optional fourth input Z added
to the convolution result and an `activation` applied last:
activation(conv(X, W) + B + Z). The activations are those of onnxruntime's CPU kernel
(MLAS): Relu, Tanh, Sigmoid, LeakyRelu (activation_params [alpha]), Clip ([min, max]) and
HardSigmoid ([alpha, beta]), each a native WebNN op.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx._spatial import conv as conv_nd
from op_mappings.onnx.contrib._common import (
    attr_floats,
    attr_str,
    check_arity,
    check_same_type,
    check_shape,
    float_operand,
)

MS = "com.microsoft"

# activation name -> (number of activation_params it needs, builder call)
_ACTIVATIONS: dict[str, tuple[int, Callable[[Any, Any, list[float]], Any]]] = {
    "Relu": (0, lambda b, x, p: b.relu(x)),
    "Tanh": (0, lambda b, x, p: b.tanh(x)),
    "Sigmoid": (0, lambda b, x, p: b.sigmoid(x)),
    "LeakyRelu": (1, lambda b, x, p: b.leaky_relu(x, alpha=p[0])),
    "Clip": (2, lambda b, x, p: b.clamp(x, min_value=p[0], max_value=p[1])),
    "HardSigmoid": (2, lambda b, x, p: b.hard_sigmoid(x, alpha=p[0], beta=p[1])),
}


@onnx_op("FusedConv", since=1, domain=MS)
def fused_conv(ctx: ImportContext, node: Node) -> Outputs:
    """activation(Conv(X, W, B) + Z) (see the module docstring).
    Restrictions: those of Conv (1-D to 3-D spatial, float32/float16); Z must have the
    convolution's output shape; activation one of Relu, Tanh, Sigmoid, LeakyRelu, Clip,
    HardSigmoid, with exactly the activation_params onnxruntime requires (1, 2, 2 for the
    last three)."""
    check_arity(node, (2, 4))
    x = float_operand(ctx, node, 0, "X")
    w = float_operand(ctx, node, 1, "W")
    bias = float_operand(ctx, node, 2, "B") if node.input(2) else None
    z = float_operand(ctx, node, 3, "Z") if node.input(3) else None
    return [fused_conv_operands(ctx, node, x, w, bias, z)]


def fused_conv_operands(ctx: ImportContext, node: Node, x: Any, w: Any, bias: Any, z: Any
                        ) -> Any:
    """activation(conv(x, w) + bias + z) for channels-first `x` / OIHW `w` under the node's
    Conv and activation attributes (z may be None)."""
    check_same_type(node, [(x, "X"), (w, "W"), (bias, "B"), (z, "Z")])
    activation = attr_str(node, "activation", "")
    params = attr_floats(node, "activation_params")
    act = None
    if activation:
        if activation not in _ACTIVATIONS:
            raise UnsupportedAttribute(f"{node.op_type} activation {activation!r} is not one "
                                       f"of {', '.join(_ACTIVATIONS)}")
        count, act = _ACTIVATIONS[activation]
        if count and (params is None or len(params) != count):
            raise InvalidModel(f"{node.op_type} activation {activation} needs {count} "
                               f"activation_params, got {params}")
    y = conv_nd(ctx, node, x, w, bias)
    b = ctx.builder
    if z is not None:
        check_shape(node, z, list(y.shape), "Z")
        y = b.add(y, z)
    if act is not None:
        y = act(b, y, params or [])
    return y
