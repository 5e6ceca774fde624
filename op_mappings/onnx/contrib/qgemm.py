"""com.microsoft QGemm -> WebNN dequantizeLinear (scale 1) + gemm + scaling (+ quantizeLinear),
computed as onnxruntime's CPU kernel does.

acc = (A - a_zero_point)ᵀ? · (B - b_zero_point)ᵀ? + C (transA / transB; C int32, broadcast
to [M, N], added to the integer sums), then with the output scale
s = alpha · a_scale · b_scale (per tensor or per column of B), divided by y_scale when the
output is quantized:
- float output (no y_scale / y_zero_point): Y = acc · s;
- quantized output: Y = saturate(roundEven(acc · s) + y_zero_point) (uint8 / int8).
The integer differences are exact floats and the sums exact in float32 while |acc| < 2^24
(onnxruntime accumulates in int32); s is rounded once to float32 like onnxruntime's.
Restrictions: A and B rank 2; a_scale, a_zero_point, y_scale, y_zero_point per-tensor;
b_scale / b_zero_point per-tensor or per-column ([N]); A uint8 with B uint8/int8, or A and B
int8 (onnxruntime's kernels).
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import const_or_none
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import attr_float, attr_int, check_arity
from op_mappings.onnx.contrib._quant_common import quantized_input
from op_mappings.onnx.quantize import dequantize_input, shaped

MS = "com.microsoft"


def _one(ctx: ImportContext, node: Node, index: int, what: str) -> None:
    name = node.input(index)
    if name and int(np.prod(ctx.shape(name), dtype=np.int64)) != 1:
        raise InvalidModel(f"QGemm {what} (input {index}) must have one element, got shape "
                           f"{list(ctx.shape(name))}")


def _flag(node: Node, name: str) -> bool:
    value = attr_int(node, name, 0)
    if value not in (0, 1):
        raise InvalidModel(f"QGemm attribute {name!r} must be 0 or 1, got {value}")
    return bool(value)


def _output_scale(ctx: ImportContext, node: Node, alpha: float, n: int) -> MLOperand:
    """alpha · a_scale · b_scale (/ y_scale) as a [1, 1] or [1, N] float32 operand, computed
    in onnxruntime's order and rounding (numpy float32 when every scale is constant)."""
    names = [node.inputs[1], node.inputs[4], node.input(7)]
    b_size = int(np.prod(ctx.shape(names[1]), dtype=np.int64))
    shape = [1, n] if b_size > 1 else [1, 1]
    values = [const_or_none(ctx, name) if name else None for name in names]
    if all(v is not None for v in values[:2]) and (not names[2] or values[2] is not None):
        a_s, b_s, y_s = values
        assert a_s is not None and b_s is not None
        s = (np.float32(alpha) * a_s.astype(np.float32).reshape(())) * \
            b_s.astype(np.float32).reshape(shape)
        if y_s is not None:
            s = s / y_s.astype(np.float32).reshape(())
        return ctx.constant(np.ascontiguousarray(s.astype(np.float32)))
    b = ctx.builder
    out = b.mul(b.mul(ctx.builder.constant(np.full([1, 1], alpha, np.float32)),
                      shaped(ctx, names[0], [1, 1])), shaped(ctx, names[1], shape))
    if names[2]:
        out = b.div(out, shaped(ctx, names[2], [1, 1]))
    return out


@onnx_op("QGemm", since=1, domain=MS)
def qgemm(ctx: ImportContext, node: Node) -> Outputs:
    """QGemm: exact integer gemm (+ int32 C) times alpha·a_scale·b_scale (/ y_scale,
    quantized). Restrictions: 2-D A and B; a_*, y_* per-tensor, b_* per-tensor or
    per-column; uint8 A with uint8/int8 B, or int8 A and B."""
    check_arity(node, (6, 9), required=(0, 1, 3, 4))
    bld = ctx.builder
    trans_a, trans_b = _flag(node, "transA"), _flag(node, "transB")
    alpha = attr_float(node, "alpha", 1.0)
    a = quantized_input(ctx, node, 0, "A")
    b = quantized_input(ctx, node, 3, "B")
    if a.rank != 2 or b.rank != 2:
        raise InvalidModel(f"QGemm A and B must be 2-D, got shapes {list(a.shape)} and "
                           f"{list(b.shape)}")
    if a.data_type == "int8" and b.data_type != "int8":
        raise UnsupportedDataType("QGemm with int8 A needs int8 B (onnxruntime's kernels)")
    m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
    k_b, n = (b.shape[1], b.shape[0]) if trans_b else b.shape
    if k != k_b:
        raise InvalidModel(f"QGemm inner dimensions differ: A {list(a.shape)} (transA="
                           f"{int(trans_a)}), B {list(b.shape)} (transB={int(trans_b)})")
    for index, what in ((1, "a_scale"), (2, "a_zero_point"), (7, "y_scale"),
                        (8, "y_zero_point")):
        _one(ctx, node, index, what)
    for index, what in ((4, "b_scale"), (5, "b_zero_point")):
        name = node.input(index)
        if name and int(np.prod(ctx.shape(name), dtype=np.int64)) not in (1, n):
            raise InvalidModel(f"QGemm {what} has shape {list(ctx.shape(name))}; one element "
                               f"or [{n}] (per column) is needed")
    for index, q in ((2, a), (5, b)):
        name = node.input(index)
        if name and ctx.dtype(name) != q.data_type:
            raise InvalidModel(f"QGemm input {index} has data type {ctx.dtype(name)}, "
                               f"expected {q.data_type}")
    if bool(node.input(7)) != bool(node.input(8)):
        raise InvalidModel("QGemm y_scale and y_zero_point must be given together")
    a_int = dequantize_input(ctx, node.inputs[0], "", node.input(2), 0)
    b_int = dequantize_input(ctx, node.inputs[3], "", node.input(5), 0 if trans_b else 1)
    c = None
    if node.input(6):
        c_op = ctx.operand(node.input(6))
        if c_op.data_type != "int32":
            raise InvalidModel(f"QGemm C has data type {c_op.data_type}, int32 is needed")
        c = bld.cast(c_op, "float32")
    acc = bld.gemm(a_int, b_int, c=c, a_transpose=trans_a, b_transpose=trans_b)
    y = bld.mul(acc, _output_scale(ctx, node, alpha, n))
    if not node.input(7):
        return [y]
    zp = shaped(ctx, node.input(8), [1, 1])
    if zp.data_type != a.data_type:
        raise InvalidModel(f"QGemm y_zero_point has data type {zp.data_type}, A has "
                           f"{a.data_type}")
    one = bld.constant(np.ones([1, 1], np.float32))
    return [bld.quantize_linear(y, one, zp)]
