"""com.microsoft DynamicQuantizeMatMul and MatMulIntegerToFloat -> WebNN element-wise ops,
dequantizeLinear and matmul, computed the way onnxruntime's CPU kernels do.

- MatMulIntegerToFloat: Y = ((A - a_zero_point) @ (B - b_zero_point)) · (a_scale · b_scale)
  + bias: the integer differences are exact floats (dequantizeLinear with scale 1), their
  product sums are exact in float32 while |sum| < 2^24 (onnxruntime accumulates in int32), and
  the scale product multiplies the sums once (float32), as onnxruntime does; float16 scales
  give a float16 result (scales and bias widened, computed in float32, rounded once).
- DynamicQuantizeMatMul: A (float32) is first quantized to uint8 exactly as
  DynamicQuantizeLinear does (scale = (max(0, max A) - min(0, min A)) / 255, zero point
  roundEven(-min / scale), values saturate(roundEven(A / scale) + zero point)), then as
  MatMulIntegerToFloat with that scale and zero point.
Parameters: a_scale / a_zero_point per-tensor; b_scale / b_zero_point per-tensor or
per-column (1-D of B's last dimension); missing zero points are 0; bias of B's last dimension.
Restrictions: A and B of rank >= 2 (1-D operands are not supported); int8/uint8 A and B.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import check_arity, float_operand
from op_mappings.onnx.quantize import dequantize_input, dynamic_uint8, shaped

MS = "com.microsoft"


def _ranks(ctx: ImportContext, node: Node, a: str, b: str) -> tuple[int, int]:
    ra, rb = len(ctx.shape(a)), len(ctx.shape(b))
    if ra < 2 or rb < 2:
        raise UnsupportedAttribute(f"{node.op_type} with 1-D operands is not supported "
                                   f"(A rank {ra}, B rank {rb})")
    return ra, rb


def _b_scale(ctx: ImportContext, node: Node, name: str, rank: int, n: int, what: str
             ) -> MLOperand:
    """A per-tensor or per-column float scale as a rank-`rank` operand."""
    size = int(np.prod(ctx.shape(name), dtype=np.int64))
    if size == 1:
        return shaped(ctx, name, [1] * rank)
    if list(ctx.shape(name)) != [n]:
        raise InvalidModel(f"{node.op_type} {what} has shape {list(ctx.shape(name))}; a "
                           f"scalar or [{n}] (per column) is needed")
    return shaped(ctx, name, [1] * (rank - 1) + [n])


def _b_integers(ctx: ImportContext, node: Node, b_index: int, zp_index: int, rb: int
                ) -> MLOperand:
    """B - b_zero_point as exact floats (per-tensor or per-column zero point)."""
    b = ctx.operand(node.inputs[b_index])
    if b.data_type not in ("int8", "uint8"):
        raise UnsupportedDataType(f"{node.op_type} B has data type {b.data_type}; int8 or "
                                  "uint8 is needed")
    zp = node.input(zp_index)
    if zp and ctx.dtype(zp) != b.data_type:
        raise InvalidModel(f"{node.op_type} b_zero_point has data type {ctx.dtype(zp)}, B "
                           f"has {b.data_type}")
    return dequantize_input(ctx, node.inputs[b_index], "", zp, rb - 1)


def _finish(ctx: ImportContext, node: Node, acc: MLOperand, multiplier: MLOperand,
            bias_index: int, n: int, out_type: str) -> MLOperand:
    """acc · multiplier (+ bias), in float32, cast to `out_type`."""
    bld = ctx.builder
    y = bld.mul(acc, multiplier)
    bias_name = node.input(bias_index)
    if bias_name:
        bias = ctx.operand(bias_name)
        if list(bias.shape) != [n] or bias.data_type != out_type:
            raise InvalidModel(f"{node.op_type} bias is {bias.data_type}{list(bias.shape)}, "
                               f"expected {out_type}[{n}]")
        y = bld.add(y, bias if out_type == "float32" else bld.cast(bias, "float32"))
    return y if out_type == "float32" else bld.cast(y, out_type)


@onnx_op("DynamicQuantizeMatMul", since=1, domain=MS)
def dynamic_quantize_matmul(ctx: ImportContext, node: Node) -> Outputs:
    """DynamicQuantizeMatMul: A quantized to uint8 as DynamicQuantizeLinear does, then the
    exact integer matmul scaled like onnxruntime. Restrictions: A float32; A and B of rank
    >= 2; B int8/uint8; b_scale / b_zero_point per-tensor or per-column."""
    check_arity(node, (3, 5))
    bld = ctx.builder
    ra, rb = _ranks(ctx, node, node.inputs[0], node.inputs[1])
    a = float_operand(ctx, node, 0, "A")
    if a.data_type != "float32":
        raise UnsupportedDataType(f"DynamicQuantizeMatMul A has data type {a.data_type}; "
                                  "float32 is needed")
    n = ctx.shape(node.inputs[1])[-1]
    if ctx.dtype(node.inputs[2]) != "float32":
        raise InvalidModel(f"DynamicQuantizeMatMul b_scale has data type "
                           f"{ctx.dtype(node.inputs[2])}, expected float32")
    q, a_scale, a_zp = dynamic_uint8(ctx, a)
    a_int = bld.sub(q, a_zp)  # exact integers in [-255, 255]
    acc = bld.matmul(a_int, _b_integers(ctx, node, 1, 3, rb))
    b_scale = _b_scale(ctx, node, node.inputs[2], max(ra, rb), n, "b_scale")
    multiplier = bld.mul(bld.reshape(a_scale, [1] * b_scale.rank), b_scale)
    return [_finish(ctx, node, acc, multiplier, 4, n, "float32")]


@onnx_op("MatMulIntegerToFloat", since=1, domain=MS)
def matmul_integer_to_float(ctx: ImportContext, node: Node) -> Outputs:
    """MatMulIntegerToFloat: exact integer matmul times a_scale·b_scale (+ bias).
    Restrictions: A and B int8/uint8 of rank >= 2; a_scale / a_zero_point per-tensor;
    b_scale / b_zero_point per-tensor or per-column; float32 or float16 scales."""
    check_arity(node, (4, 7))
    bld = ctx.builder
    ra, rb = _ranks(ctx, node, node.inputs[0], node.inputs[1])
    a = ctx.operand(node.inputs[0])
    if a.data_type not in ("int8", "uint8"):
        raise UnsupportedDataType(f"MatMulIntegerToFloat A has data type {a.data_type}; int8 "
                                  "or uint8 is needed")
    out_type = ctx.dtype(node.inputs[2])
    if out_type not in ("float32", "float16") or ctx.dtype(node.inputs[3]) != out_type:
        raise InvalidModel(f"MatMulIntegerToFloat a_scale and b_scale must both be float32 or "
                           f"float16, got {out_type} and {ctx.dtype(node.inputs[3])}")
    if int(np.prod(ctx.shape(node.inputs[2]), dtype=np.int64)) != 1:
        raise UnsupportedAttribute(f"MatMulIntegerToFloat a_scale of shape "
                                   f"{list(ctx.shape(node.inputs[2]))} (only per-tensor)")
    a_zp = node.input(4)
    if a_zp and int(np.prod(ctx.shape(a_zp), dtype=np.int64)) != 1:
        raise UnsupportedAttribute(f"MatMulIntegerToFloat a_zero_point of shape "
                                   f"{list(ctx.shape(a_zp))} (only per-tensor)")
    if a_zp and ctx.dtype(a_zp) != a.data_type:
        raise InvalidModel(f"MatMulIntegerToFloat a_zero_point has data type "
                           f"{ctx.dtype(a_zp)}, A has {a.data_type}")
    n = ctx.shape(node.inputs[1])[-1]
    a_int = dequantize_input(ctx, node.inputs[0], "", a_zp, ra - 2)
    acc = bld.matmul(a_int, _b_integers(ctx, node, 1, 5, rb))
    rank = max(ra, rb)
    a_scale = shaped(ctx, node.inputs[2], [1] * rank)
    b_scale = _b_scale(ctx, node, node.inputs[3], rank, n, "b_scale")
    if out_type != "float32":
        a_scale, b_scale = bld.cast(a_scale, "float32"), bld.cast(b_scale, "float32")
    multiplier = bld.mul(a_scale, b_scale)
    return [_finish(ctx, node, acc, multiplier, 6, n, out_type)]
