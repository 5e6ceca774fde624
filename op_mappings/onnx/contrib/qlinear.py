"""com.microsoft QLinear* element-wise, pooling, concat and softmax ops -> WebNN
dequantizeLinear -> the float op -> quantizeLinear.

Every quantized value has a per-tensor scale (float32) and zero point (the value's type,
uint8 or int8; 0 when omitted): x = (q - zero_point) · scale, q = saturate(roundEven(x / scale)
+ zero_point).
- QLinearAdd / QLinearMul: dequantize A and B, add / mul (numpy broadcasting), quantize with
  C's parameters.
- QLinearSigmoid, QLinearLeakyRelu (`alpha`, default 0.01): the activation of the
  dequantized input, quantized with Y's parameters.
- QLinearAveragePool: ONNX AveragePool (kernel_shape, strides, pads, auto_pad, ceil_mode,
  count_include_pad, 1-3 spatial axes) of the dequantized input; `channels_last` inputs
  (N, spatial..., C) are transposed to channels-first and back.
- QLinearGlobalAveragePool: reduceMean over the spatial axes (channels_last: the axes between
  the batch and the last).
- QLinearConcat (Y_scale, Y_zero_point, then one (tensor, scale, zero point) triple per
  input; `axis` required): each input dequantized, concatenated, quantized once.
- QLinearSoftmax (`axis` default -1, `opset` required): softmax of the dequantized input
  along `axis` (opset >= 13) or over the input flattened to 2-D at `axis` (opset < 13).
- QLinearWhere: where(condition, dequantized X, dequantized Y), quantized with Z's parameters.
- QLinearReduceMean (`axes`, `keepdims` required): reduceMean of the dequantized input.
Numerics follow onnxruntime's CPU kernels, which work in float32: QLinearAdd computes
(a - za)·fl(sa/sc) + (b - zb)·fl(sb/sc), QLinearMul (a - za)·(b - zb)·fl(fl(sa·sb)/sc) (exact
integer product), and every output is quantized as roundEven(fl(y / scale)) + zero point (the
quotient rounded to float32 by a WebNN div, then quantizeLinear with scale 1), as
onnxruntime's QuantizeLinear does. Add, Mul, Sigmoid, LeakyRelu, Concat, GlobalAveragePool
and Softmax then matched onnxruntime bit for bit on the tested inputs (every 8-bit value for
the activations); AveragePool sums its window in a different order than onnxruntime's float32
loop, so an output whose exact value lies within float32 rounding of a .5 tie can differ by
one quantization step (seen on up to ~2% of the elements with irregular scales).
Restrictions: per-tensor parameters only (one element each); uint8 or int8 data.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none, ints, norm_axis
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import attr_float, attr_int, check_arity
from op_mappings.onnx.contrib._quant_common import (
    dequantized,
    per_tensor_params,
    quantized_input,
    requantized,
)
from op_mappings.onnx.pool import pool
from op_mappings.onnx.quantize import shaped

MS = "com.microsoft"


def _ratio(ctx: ImportContext, node: Node, num: list[int], den: int, rank: int) -> MLOperand:
    """Π scale(num) / scale(den) as a float32 [1]*rank operand, rounded after each step in
    float32 like onnxruntime (numpy when the scales are constant)."""
    names = [node.inputs[i] for i in [*num, den]]
    for i, name in zip([*num, den], names, strict=True):
        if int(np.prod(ctx.shape(name), dtype=np.int64)) != 1 or ctx.dtype(name) != "float32":
            raise InvalidModel(f"{node.op_type} scale (input {i}) must be one float32, got "
                               f"{ctx.dtype(name)}{list(ctx.shape(name))}")
    values = [const_or_none(ctx, name) for name in names]
    shape = [1] * rank
    if all(v is not None for v in values):
        f = [np.asarray(v, np.float32).reshape(()) for v in values if v is not None]
        r = f[0] if len(num) == 1 else np.float32(f[0] * f[1])
        return ctx.constant(np.full(shape, np.float32(r / f[-1]), np.float32))
    b = ctx.builder
    ops = [shaped(ctx, name, shape) for name in names]
    prod = ops[0] if len(num) == 1 else b.mul(ops[0], ops[1])
    return b.div(prod, ops[-1])


def _integers(ctx: ImportContext, node: Node, index: int, zp_index: int, scale: MLOperand | None
              ) -> MLOperand:
    """(q - zero point) · scale (scale omitted: 1, the exact integer difference)."""
    x = quantized_input(ctx, node, index, f"input {index}")
    one, zp = per_tensor_params(ctx, node, index + 1, zp_index, x.rank, x.data_type,
                                f"input {index}")
    if scale is not None and scale.rank != x.rank:
        scale = ctx.builder.reshape(scale, [1] * x.rank)
    return ctx.builder.dequantize_linear(
        x, scale if scale is not None else ctx.builder.constant(np.ones([1] * x.rank,
                                                                      np.float32)), zp)


def _binary(ctx: ImportContext, node: Node, method: str) -> list[Any]:
    check_arity(node, (7, 8), required=(0, 1, 3, 4, 6))
    b = ctx.builder
    a = quantized_input(ctx, node, 0, "A")
    b_q = quantized_input(ctx, node, 3, "B")
    if b_q.data_type != a.data_type:
        raise InvalidModel(f"{node.op_type} B has data type {b_q.data_type}, A has "
                           f"{a.data_type}")
    rank = max(a.rank, b_q.rank)
    if method == "add":  # (a - za)·(sa/sc) + (b - zb)·(sb/sc), as onnxruntime rounds it
        x = _integers(ctx, node, 0, 2, _ratio(ctx, node, [1], 6, rank))
        y = _integers(ctx, node, 3, 5, _ratio(ctx, node, [4], 6, rank))
        z = b.add(x, y)
    else:  # (a - za)·(b - zb) exactly, times sa·sb/sc
        z = b.mul(b.mul(_integers(ctx, node, 0, 2, None), _integers(ctx, node, 3, 5, None)),
                  _ratio(ctx, node, [1, 4], 6, rank))
    one, zp = per_tensor_params(ctx, node, 6, 7, z.rank, a.data_type, "output")
    return [b.quantize_linear(z, b.constant(np.ones([1] * z.rank, np.float32)), zp)]


@onnx_op("QLinearAdd", since=1, domain=MS)
def qlinear_add(ctx: ImportContext, node: Node) -> Outputs:
    """QLinearAdd: dequantize, add, quantize (onnxruntime's float32 rounding).
    Restrictions: per-tensor scales and zero points; uint8 or int8 A and B of one type."""
    return _binary(ctx, node, "add")


@onnx_op("QLinearMul", since=1, domain=MS)
def qlinear_mul(ctx: ImportContext, node: Node) -> Outputs:
    """QLinearMul: exact integer product times sa·sb/sc, quantized.
    Restrictions: per-tensor scales and zero points; uint8 or int8 A and B of one type."""
    return _binary(ctx, node, "mul")


def _unary(ctx: ImportContext, node: Node, fn: Any) -> list[Any]:
    check_arity(node, (4, 5), required=(0, 1, 3))
    x = quantized_input(ctx, node, 0, "X")
    y = fn(dequantized(ctx, node, 0, 1, 2, "X"))
    return [requantized(ctx, node, y, 3, 4, x.data_type)]


@onnx_op("QLinearSigmoid", since=1, domain=MS)
def qlinear_sigmoid(ctx: ImportContext, node: Node) -> Outputs:
    """QLinearSigmoid: sigmoid of the dequantized input, quantized.
    Restrictions: per-tensor scales and zero points; uint8 or int8."""
    return _unary(ctx, node, ctx.builder.sigmoid)


@onnx_op("QLinearLeakyRelu", since=1, domain=MS)
def qlinear_leaky_relu(ctx: ImportContext, node: Node) -> Outputs:
    """QLinearLeakyRelu (alpha default 0.01): leakyRelu of the dequantized input, quantized.
    Restrictions: per-tensor scales and zero points; uint8 or int8."""
    alpha = attr_float(node, "alpha", 0.01)
    return _unary(ctx, node, lambda x: ctx.builder.leaky_relu(x, alpha=alpha))


def _channels_first(ctx: ImportContext, x: MLOperand, last: bool) -> MLOperand:
    if not last:
        return x
    return ctx.builder.transpose(x, permutation=[0, x.rank - 1, *range(1, x.rank - 1)])


def _channels_back(ctx: ImportContext, y: MLOperand, last: bool) -> MLOperand:
    if not last:
        return y
    return ctx.builder.transpose(y, permutation=[0, *range(2, y.rank), 1])


def _flag(node: Node, name: str) -> bool:
    value = attr_int(node, name, 0)
    if value not in (0, 1):
        raise InvalidModel(f"{node.op_type} attribute {name!r} must be 0 or 1, got {value}")
    return bool(value)


@onnx_op("QLinearAveragePool", since=1, domain=MS)
def qlinear_average_pool(ctx: ImportContext, node: Node) -> Outputs:
    """QLinearAveragePool: ONNX AveragePool of the dequantized input (channels_last
    transposed), quantized. Restrictions: those of AveragePool (1-3 spatial axes);
    per-tensor scales and zero points; uint8 or int8; may differ from onnxruntime by one
    quantization step at rounding ties."""
    check_arity(node, (4, 5), required=(0, 1, 3))
    q = quantized_input(ctx, node, 0, "X")
    if q.rank < 3:
        raise InvalidModel(f"QLinearAveragePool X must have rank >= 3, got {q.rank}")
    if "kernel_shape" not in node.attrs:
        raise InvalidModel("QLinearAveragePool required attribute 'kernel_shape' is missing")
    last = _flag(node, "channels_last")
    x = _channels_first(ctx, dequantized(ctx, node, 0, 1, 2, "X"), last)
    key = f"{node.name}\x00dequantized"  # the AveragePool mapping reads its input by name
    attrs = {k: v for k, v in node.attrs.items() if k != "channels_last"}
    ctx.operands[key] = x
    try:
        y = pool(ctx, replace(node, op_type="AveragePool", domain="", inputs=(key,),
                              outputs=node.outputs[:1], attrs=attrs))[0]
    finally:
        del ctx.operands[key]
    assert isinstance(y, MLOperand)  # AveragePool of an operand is an operand
    return [requantized(ctx, node, _channels_back(ctx, y, last), 3, 4, q.data_type)]


@onnx_op("QLinearGlobalAveragePool", since=1, domain=MS)
def qlinear_global_average_pool(ctx: ImportContext, node: Node) -> Outputs:
    """QLinearGlobalAveragePool: reduceMean over the spatial axes (channels_last
    supported), quantized. Restrictions: rank >= 3; per-tensor scales and zero points; uint8
    or int8."""
    check_arity(node, (5, 5), required=(0, 1, 3))
    q = quantized_input(ctx, node, 0, "X")
    if q.rank < 3:
        raise InvalidModel(f"QLinearGlobalAveragePool X must have rank >= 3, got {q.rank}")
    last = _flag(node, "channels_last")
    axes = list(range(1, q.rank - 1)) if last else list(range(2, q.rank))
    x = dequantized(ctx, node, 0, 1, 2, "X")
    y = ctx.builder.reduce_mean(x, axes=axes, keep_dimensions=True)
    return [requantized(ctx, node, y, 3, 4, q.data_type)]


@onnx_op("QLinearConcat", since=1, domain=MS)
def qlinear_concat(ctx: ImportContext, node: Node) -> Outputs:
    """QLinearConcat: inputs dequantized, concatenated, quantized once.
    Restrictions: per-tensor scales and zero points; uint8 or int8 inputs of one type."""
    n = len(node.inputs)
    if n < 5 or (n - 2) % 3:
        raise InvalidModel(f"QLinearConcat takes Y_scale, Y_zero_point and (tensor, scale, "
                           f"zero point) triples, the node has {n} inputs")
    if "axis" not in node.attrs:
        raise InvalidModel("QLinearConcat required attribute 'axis' is missing")
    first = quantized_input(ctx, node, 2, "input 0")
    parts = []
    for i in range(2, n, 3):
        x = quantized_input(ctx, node, i, f"input {(i - 2) // 3}")
        if x.data_type != first.data_type:
            raise InvalidModel(f"QLinearConcat inputs mix {first.data_type} and {x.data_type}")
        parts.append(dequantized(ctx, node, i, i + 1, i + 2, f"input {(i - 2) // 3}"))
    axis = norm_axis(attr_int(node, "axis", None), first.rank)
    y = parts[0] if len(parts) == 1 else ctx.builder.concat(parts, axis)
    return [requantized(ctx, node, y, 0, 1, first.data_type)]


@onnx_op("QLinearSoftmax", since=1, domain=MS)
def qlinear_softmax(ctx: ImportContext, node: Node) -> Outputs:
    """QLinearSoftmax: softmax of the dequantized input (opset < 13: over the input
    flattened to 2-D at axis), quantized. Restrictions: per-tensor scales and zero points;
    uint8 or int8."""
    check_arity(node, (5, 5), required=(0, 1, 3, 4))
    b = ctx.builder
    q = quantized_input(ctx, node, 0, "X")
    opset = attr_int(node, "opset", None)
    axis = norm_axis(attr_int(node, "axis", -1), max(q.rank, 1))
    x = dequantized(ctx, node, 0, 1, 2, "X")
    if opset >= 13 or q.rank == 0:
        y = b.softmax(x if q.rank else b.reshape(x, [1]), axis if q.rank else 0)
        y = y if q.rank else b.reshape(y, [])
    else:
        rows = int(np.prod(q.shape[:axis], dtype=np.int64))
        flat = b.reshape(x, [rows, int(np.prod(q.shape[axis:], dtype=np.int64))])
        y = b.reshape(b.softmax(flat, 1), list(q.shape))
    return [requantized(ctx, node, y, 3, 4, q.data_type)]


@onnx_op("QLinearWhere", since=1, domain=MS)
def qlinear_where(ctx: ImportContext, node: Node) -> Outputs:
    """QLinearWhere: X and Y dequantized, where(condition, x, y), quantized with Z's
    parameters (onnxruntime's lookup tables hold exactly these values).
    Restrictions: per-tensor scales and zero points (all required); uint8 or int8 X, Y, Z of
    one type; numpy broadcasting of condition, X and Y."""
    check_arity(node, (9, 9))
    cond = ctx.operand(node.inputs[0])
    if ctx.dtype(node.inputs[0]) not in ("uint8", "bool"):
        raise InvalidModel(f"QLinearWhere condition must be bool, got "
                           f"{ctx.dtype(node.inputs[0])}")
    x = quantized_input(ctx, node, 1, "X")
    y = quantized_input(ctx, node, 4, "Y")
    if x.data_type != y.data_type:
        raise InvalidModel(f"QLinearWhere Y has data type {y.data_type}, X has {x.data_type}")
    b = ctx.builder
    out_rank = max(cond.rank, x.rank, y.rank)
    rank = max(out_rank, 1)  # WebNN (de)quantization parameters need rank >= 1

    def lifted(v: MLOperand) -> MLOperand:
        return v if v.rank == rank else b.reshape(v, [1] * (rank - v.rank) + list(v.shape))

    def dequant(index: int, what: str) -> MLOperand:
        v = quantized_input(ctx, node, index, what)
        v = b.reshape(v, [1]) if v.rank == 0 else v
        scale, zp = per_tensor_params(ctx, node, index + 1, index + 2, v.rank, v.data_type,
                                      what)
        return lifted(b.dequantize_linear(v, scale, zp))

    xf, yf = dequant(1, "X"), dequant(4, "Y")
    z = requantized(ctx, node, b.where(lifted(cond), xf, yf), 7, 8, x.data_type)
    return [z if out_rank else b.reshape(z, [])]


@onnx_op("QLinearReduceMean", since=1, domain=MS)
def qlinear_reduce_mean(ctx: ImportContext, node: Node) -> Outputs:
    """QLinearReduceMean: reduceMean of the dequantized data over `axes`, quantized with the
    reduced parameters. Restrictions: per-tensor scales and zero points; uint8 or int8; axes
    and keepdims required (onnxruntime's schema)."""
    check_arity(node, (4, 5), required=(0, 1, 3))
    q = quantized_input(ctx, node, 0, "data")
    if "axes" not in node.attrs:
        raise InvalidModel("QLinearReduceMean required attribute 'axes' is missing")
    axes = sorted({norm_axis(a, q.rank) for a in ints(node.attrs["axes"], "axes")})
    keep = bool(attr_int(node, "keepdims", None))
    x = dequantized(ctx, node, 0, 1, 2, "data")
    y = ctx.builder.reduce_mean(x, axes=axes, keep_dimensions=keep)
    return [requantized(ctx, node, y, 3, 4, q.data_type)]
