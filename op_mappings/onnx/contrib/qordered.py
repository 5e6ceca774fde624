"""onnxruntime's ordered int8 ops (com.microsoft; the transformers optimizer's QOrdered fusions
for the CUDA EP) in the row-major orders those fusions write -> WebNN dequantizeLinear / the
float op / quantizeLinear.

Orders: 0 ORDER_COL, 1 ORDER_ROW (the fusions' choice for activations), 2 ORDER_COL32, ...;
only ROW activations and (QOrderedMatMul) a COL weight are converted. A COL weight B of shape
[K, N] holds its values column-major (the fusion transposes the bytes and keeps the dims), so
its values are B = reshape(data, [N, K])ᵀ. Every int8 value is q = saturate(roundEven(x / s))
with per-tensor float scales (per-column for QOrderedMatMul's B):
- QuantizeWithOrder / DequantizeWithOrder: x / scale -> int8, int8 · scale -> `to` (float32
  or float16).
- QOrderedMatMul: Y = q(A·B·scale_A·scale_B + bias + C·scale_C; scale_Y).
- QOrderedGelu: q(gelu(X·scale_X); scale_Y) (the erf form).
- QOrderedLayerNormalization: q(LayerNorm(X·scale_X)·scale + B; scale_Y) over `axis` (the last).
The arithmetic is float32 (onnxruntime's CUDA kernels use cublasLt int32 accumulation: the
results agree where float32 holds the integer products, and may differ by one step at
rounding ties).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    attr_epsilon,
    attr_int,
    check_arity,
    float_operand,
    to_type,
)

MS = "com.microsoft"
ORDER_COL, ORDER_ROW = 0, 1
_TYPES = {1: "float32", 10: "float16"}


def _order(node: Node, name: str, want: int, default: int | None = None) -> None:
    value = attr_int(node, name, default)
    if value != want:
        raise UnsupportedAttribute(f"{node.op_type} {name}={value} is not supported (only "
                                   f"{'ORDER_ROW (1)' if want == ORDER_ROW else 'ORDER_COL (0)'})")


def _int8(ctx: ImportContext, node: Node, index: int, what: str) -> MLOperand:
    x = ctx.operand(node.inputs[index])
    if x.data_type != "int8":
        raise UnsupportedDataType(f"{node.op_type} {what} (input {index}) must be int8, got "
                                  f"{x.data_type}")
    return x


def _scale(ctx: ImportContext, node: Node, index: int, rank: int, what: str,
           length: int = 1) -> MLOperand:
    """Float32 scale input `index` ([1] or `length` values) shaped [1, ..., length]."""
    name = node.inputs[index]
    size = int(np.prod(ctx.shape(name), dtype=np.int64))
    if size not in (1, length):
        raise InvalidModel(f"{node.op_type} {what} (input {index}) must have 1"
                           f"{f' or {length}' if length != 1 else ''} values, got {size}")
    shape = [1] * (rank - 1) + [size]
    value = const_or_none(ctx, name)
    if value is not None:
        return ctx.constant(np.asarray(value, np.float32).reshape(shape))
    return ctx.builder.reshape(to_type(ctx, ctx.operand(name), "float32"), shape)


def _dequantize(ctx: ImportContext, x: MLOperand, scale: MLOperand) -> MLOperand:
    zero = ctx.constant(np.zeros(list(scale.shape), np.int8))
    return ctx.builder.dequantize_linear(x, scale, zero)


def _quantize(ctx: ImportContext, y: MLOperand, scale: MLOperand) -> MLOperand:
    """saturate(roundEven(y / scale)) as int8: the quotient rounded to float32 first."""
    b = ctx.builder
    one = ctx.constant(np.ones([1] * y.rank, np.float32))
    return b.quantize_linear(b.div(y, scale), one, ctx.constant(np.zeros([1] * y.rank,
                                                                         np.int8)))


@onnx_op("QuantizeWithOrder", since=1, domain=MS)
def quantize_with_order(ctx: ImportContext, node: Node) -> Outputs:
    """input / scale_input -> int8 (see the module docstring).
    Restrictions: order_input and order_output ORDER_ROW; float32/float16 input."""
    check_arity(node, (2, 2))
    _order(node, "order_input", ORDER_ROW)
    _order(node, "order_output", ORDER_ROW)
    x = float_operand(ctx, node, 0, "input")
    xf = to_type(ctx, x, "float32")
    return [_quantize(ctx, xf, _scale(ctx, node, 1, max(x.rank, 1), "scale_input"))]


@onnx_op("DequantizeWithOrder", since=1, domain=MS)
def dequantize_with_order(ctx: ImportContext, node: Node) -> Outputs:
    """int8 input · scale_input -> `to` (see the module docstring).
    Restrictions: order_input and order_output ORDER_ROW; `to` float32 (1) or float16 (10)."""
    check_arity(node, (2, 2))
    _order(node, "order_input", ORDER_ROW)
    _order(node, "order_output", ORDER_ROW)
    to = attr_int(node, "to", None)
    if to not in _TYPES:
        raise UnsupportedAttribute(f"DequantizeWithOrder to={to} is not float32 (1) or "
                                   "float16 (10)")
    x = _int8(ctx, node, 0, "input")
    y = _dequantize(ctx, x, _scale(ctx, node, 1, x.rank, "scale_input"))
    return [to_type(ctx, y, _TYPES[to])]


def _col_weight(ctx: ImportContext, node: Node, k: int) -> MLOperand:
    """QOrderedMatMul's ORDER_COL B [K, N] (column-major data) as a row-major [K, N] operand."""
    name = node.inputs[2]
    shape = list(ctx.shape(name))
    if len(shape) != 2 or shape[0] != k:
        raise InvalidModel(f"QOrderedMatMul B {shape} must be [K={k}, N] (a 2-D weight)")
    value = const_or_none(ctx, name)
    if value is not None:
        if value.dtype != np.int8:
            raise UnsupportedDataType(f"QOrderedMatMul B must be int8, got {value.dtype}")
        return ctx.constant(np.ascontiguousarray(value.reshape(shape[1], k).T))
    b = ctx.builder
    return b.transpose(b.reshape(_int8(ctx, node, 2, "B"), [shape[1], k]), permutation=[1, 0])


@onnx_op("QOrderedMatMul", since=1, domain=MS)
def qordered_matmul(ctx: ImportContext, node: Node) -> Outputs:
    """q(A·B·scale_A·scale_B + bias + C·scale_C; scale_Y) (see the module docstring).
    Restrictions: order_A / order_Y ORDER_ROW, order_B ORDER_COL; 2-D B; scale_B per-tensor
    or per-column; bias [N]; C of Y's shape."""
    check_arity(node, (5, 8), required=(0, 1, 2, 3, 4))
    _order(node, "order_A", ORDER_ROW)
    _order(node, "order_Y", ORDER_ROW)
    _order(node, "order_B", ORDER_COL)
    b = ctx.builder
    a = _int8(ctx, node, 0, "A")
    if a.rank < 2:
        raise InvalidModel(f"QOrderedMatMul A must have rank >= 2, got {list(a.shape)}")
    k = a.shape[-1]
    w = _col_weight(ctx, node, k)
    n = w.shape[1]
    af = _dequantize(ctx, a, _scale(ctx, node, 1, a.rank, "scale_A"))
    wf = _dequantize(ctx, w, _scale(ctx, node, 3, 2, "scale_B", n))
    y = b.matmul(af, wf)
    if node.input(5):
        bias = float_operand(ctx, node, 5, "bias")
        if list(bias.shape) != [n]:
            raise InvalidModel(f"QOrderedMatMul bias {list(bias.shape)} must be [{n}]")
        y = b.add(y, to_type(ctx, bias, "float32"))
    if node.input(6):
        c = _int8(ctx, node, 6, "C")
        if list(c.shape) != list(y.shape) or not node.input(7):
            raise InvalidModel(f"QOrderedMatMul C {list(c.shape)} must have Y's shape "
                               f"{list(y.shape)} and a scale_C")
        y = b.add(y, _dequantize(ctx, c, _scale(ctx, node, 7, c.rank, "scale_C")))
    return [_quantize(ctx, y, _scale(ctx, node, 4, y.rank, "scale_Y"))]


def _unary(ctx: ImportContext, node: Node, fn: Any) -> MLOperand:
    _order(node, "order_X", ORDER_ROW, ORDER_ROW)
    _order(node, "order_Y", ORDER_ROW, ORDER_ROW)
    x = _int8(ctx, node, 0, "X")
    y = fn(_dequantize(ctx, x, _scale(ctx, node, 1, x.rank, "scale_X")))
    scale_index = 2 if node.op_type == "QOrderedGelu" else 4
    return _quantize(ctx, y, _scale(ctx, node, scale_index, x.rank, "scale_Y"))


@onnx_op("QOrderedGelu", since=1, domain=MS)
def qordered_gelu(ctx: ImportContext, node: Node) -> Outputs:
    """q(gelu(X·scale_X); scale_Y) (see the module docstring).
    Restrictions: order_X / order_Y ORDER_ROW; per-tensor scales."""
    check_arity(node, (3, 3))
    return [_unary(ctx, node, ctx.builder.gelu)]


@onnx_op("QOrderedLayerNormalization", since=1, domain=MS)
def qordered_layer_normalization(ctx: ImportContext, node: Node) -> Outputs:
    """q(LayerNorm(X·scale_X)·scale + B; scale_Y) (see the module docstring).
    Restrictions: order_X / order_Y ORDER_ROW; axis the last; scale and B 1-D of the last
    dimension; per-tensor scale_X / scale_Y."""
    check_arity(node, (5, 5), required=(0, 1, 2, 4))
    x = ctx.operand(node.inputs[0])
    if attr_int(node, "axis", -1) not in (-1, x.rank - 1):
        raise UnsupportedAttribute("QOrderedLayerNormalization normalises the last axis only")
    gamma = float_operand(ctx, node, 2, "scale")
    beta = float_operand(ctx, node, 3, "B") if node.input(3) else None
    for t, what in ((gamma, "scale"), (beta, "B")):
        if t is not None and list(t.shape) != [x.shape[-1]]:
            raise InvalidModel(f"QOrderedLayerNormalization {what} {list(t.shape)} must be "
                               f"[{x.shape[-1]}]")
    eps = attr_epsilon(node, 1e-5)

    def norm(v: MLOperand) -> MLOperand:
        return ctx.builder.layer_normalization(
            v, scale=to_type(ctx, gamma, "float32"),
            bias=None if beta is None else to_type(ctx, beta, "float32"),
            axes=[v.rank - 1], epsilon=eps)

    return [_unary(ctx, node, norm)]
