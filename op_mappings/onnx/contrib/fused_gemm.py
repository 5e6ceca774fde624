"""onnxruntime's Gemm / MatMul + activation fusions (com.microsoft) -> WebNN gemm / matmul + the
activation.

- FusedGemm (onnxruntime's CPU Gemm + activation fusion): ONNX Gemm (alpha, beta, transA,
  transB, optional C) followed by `activation`, whose parameters are the fused node's
  attributes renamed activation_alpha / activation_beta / activation_gamma.
- FusedMatMulActivation (the DirectML fusion): FusedMatMul (alpha, transA/B, transBatchA/B)
  followed by `activation`, parameters as above.
The activations are those of onnxruntime's fused-activation kernels: Relu, Tanh, Sigmoid,
LeakyRelu (alpha, default 0.01), HardSigmoid (alpha 0.2, beta 0.5), Elu (alpha 1),
ThresholdedRelu (alpha 1), Selu (alpha 1.67326, gamma 1.0507), Softplus, Softsign,
ScaledTanh (alpha · tanh(beta · x)), ParametricSoftplus (alpha · ln(1 + exp(beta · x))), each a
WebNN op or two (ONNX's defaults where a parameter is omitted; onnxruntime's kernels require
the parameters). `activation` is required (onnxruntime's FusedGemm kernel refuses a node
without one).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    attr_float,
    attr_int,
    attr_str,
    check_arity,
    check_same_type,
    float_operand,
    scalar,
)
from op_mappings.onnx.contrib.fused_matmul import fused_matmul
from op_mappings.onnx.gemm import gemm

MS = "com.microsoft"

Act = Callable[[ImportContext, Any, Callable[[str, float], float]], Any]


def _thresholded(ctx: ImportContext, x: Any, p: Callable[[str, float], float]) -> Any:
    b = ctx.builder
    return b.where(b.greater(x, scalar(ctx, p("alpha", 1.0), x.data_type)), x,
                   scalar(ctx, 0.0, x.data_type))


def _selu(ctx: ImportContext, x: Any, p: Callable[[str, float], float]) -> Any:
    b = ctx.builder
    elu = b.elu(x, alpha=p("alpha", 1.6732632423543772))
    return b.mul(elu, scalar(ctx, p("gamma", 1.0507009873554805), x.data_type))


def _scaled(ctx: ImportContext, x: Any, p: Callable[[str, float], float], fn: str) -> Any:
    b = ctx.builder
    inner = getattr(b, fn)(b.mul(x, scalar(ctx, p("beta", 1.0), x.data_type)))
    return b.mul(inner, scalar(ctx, p("alpha", 1.0), x.data_type))


_ACTIVATIONS: dict[str, Act] = {
    "Relu": lambda ctx, x, p: ctx.builder.relu(x),
    "Tanh": lambda ctx, x, p: ctx.builder.tanh(x),
    "Sigmoid": lambda ctx, x, p: ctx.builder.sigmoid(x),
    "LeakyRelu": lambda ctx, x, p: ctx.builder.leaky_relu(x, alpha=p("alpha", 0.01)),
    "HardSigmoid": lambda ctx, x, p: ctx.builder.hard_sigmoid(x, alpha=p("alpha", 0.2),
                                                              beta=p("beta", 0.5)),
    "Elu": lambda ctx, x, p: ctx.builder.elu(x, alpha=p("alpha", 1.0)),
    "ThresholdedRelu": _thresholded,
    "Selu": _selu,
    "Softplus": lambda ctx, x, p: ctx.builder.softplus(x),
    "Softsign": lambda ctx, x, p: ctx.builder.softsign(x),
    "ScaledTanh": lambda ctx, x, p: _scaled(ctx, x, p, "tanh"),
    "ParametricSoftplus": lambda ctx, x, p: _scaled(ctx, x, p, "softplus"),
}


def _activate(ctx: ImportContext, node: Node, y: Any) -> Any:
    name = attr_str(node, "activation", None)
    if name not in _ACTIVATIONS:
        raise UnsupportedAttribute(f"{node.op_type} activation {name!r} is not one of "
                                   f"{', '.join(_ACTIVATIONS)}")

    def param(key: str, default: float) -> float:
        value = attr_float(node, f"activation_{key}", default)
        if not math.isfinite(value):
            raise InvalidModel(f"{node.op_type} activation_{key} must be finite")
        return value

    return _ACTIVATIONS[name](ctx, y, param)


@onnx_op("FusedGemm", since=1, domain=MS)
def fused_gemm(ctx: ImportContext, node: Node) -> Outputs:
    """activation(Gemm(A, B, C)) (see the module docstring).
    Restrictions: float32/float16; 2-D A and B (ONNX Gemm's rule); C broadcastable to the
    output; activation (required) one of those listed in the module docstring."""
    check_arity(node, (2, 3))
    a = float_operand(ctx, node, 0, "A")
    b = float_operand(ctx, node, 1, "B")
    c = float_operand(ctx, node, 2, "C") if node.input(2) else None
    check_same_type(node, [(a, "A"), (b, "B"), (c, "C")])
    if a.rank != 2 or b.rank != 2:
        raise InvalidModel(f"FusedGemm A and B must be 2-D, got shapes {list(a.shape)} and "
                           f"{list(b.shape)}")
    attrs = {"alpha": attr_float(node, "alpha", 1.0), "beta": attr_float(node, "beta", 1.0),
             "transA": attr_int(node, "transA", 0), "transB": attr_int(node, "transB", 0)}
    y = gemm(ctx, replace(node, op_type="Gemm", domain="", version=13, attrs=attrs))[0]
    return [_activate(ctx, node, y)]


@onnx_op("FusedMatMulActivation", since=1, domain=MS)
def fused_matmul_activation(ctx: ImportContext, node: Node) -> Outputs:
    """activation(FusedMatMul(A, B)) (see the module docstring).
    Restrictions: those of FusedMatMul; activation (required) one of those listed in the
    module docstring."""
    y = fused_matmul(ctx, node)[0]
    return [_activate(ctx, node, y)]
