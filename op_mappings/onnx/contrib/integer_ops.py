"""onnxruntime's integer arithmetic contrib ops (com.microsoft) -> WebNN dequantizeLinear /
cast + the op, exact in int32.

- MulInteger: C (int32) = (A - A_zero_point) · (B - B_zero_point), numpy broadcasting,
  8-bit A and B (zero points per tensor, 0 when omitted). The differences are exact in
  float32 (dequantizeLinear with scale 1), and so is their product (|product| <= 2^16), cast
  to int32.
- ReduceSumInteger: the int32 sum of 8-bit `data` over `axes` (both attributes required):
  a cast to int32, then reduceSum.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import ints, norm_axis
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import attr_int, check_arity
from op_mappings.onnx.contrib._quant_common import quantized_input

MS = "com.microsoft"


@onnx_op("MulInteger", since=1, domain=MS)
def mul_integer(ctx: ImportContext, node: Node) -> Outputs:
    """(A - A_zero_point) · (B - B_zero_point) in int32 (see the module docstring).
    Restrictions: uint8/int8 A and B of one type; per-tensor zero points."""
    check_arity(node, (2, 4), required=(0, 2))
    b = ctx.builder
    a = quantized_input(ctx, node, 0, "A")
    bq = quantized_input(ctx, node, 2, "B")
    if a.data_type != bq.data_type:
        raise InvalidModel(f"MulInteger B has data type {bq.data_type}, A has {a.data_type}")
    diffs = []
    for index, x in ((0, a), (2, bq)):
        one = b.constant(np.ones([1] * x.rank, np.float32))
        zp_name = node.input(index + 1)
        if zp_name:
            if int(np.prod(ctx.shape(zp_name), dtype=np.int64)) != 1:
                raise InvalidModel(f"MulInteger zero point (input {index + 1}) must have one "
                                   f"element, got shape {list(ctx.shape(zp_name))}")
            if ctx.dtype(zp_name) != x.data_type:
                raise InvalidModel(f"MulInteger input {index + 1} has data type "
                                   f"{ctx.dtype(zp_name)}, expected {x.data_type}")
            zp = b.reshape(ctx.operand(zp_name), [1] * x.rank)
        else:
            zp = b.constant(np.zeros([1] * x.rank, x.data_type))
        diffs.append(b.dequantize_linear(x, one, zp))
    return [b.cast(b.mul(diffs[0], diffs[1]), "int32")]


@onnx_op("ReduceSumInteger", since=1, domain=MS)
def reduce_sum_integer(ctx: ImportContext, node: Node) -> Outputs:
    """int32 sum of 8-bit data over `axes` (see the module docstring).
    Restrictions: uint8/int8 data; axes and keepdims required (onnxruntime's schema)."""
    check_arity(node, (1, 1))
    x = quantized_input(ctx, node, 0, "data")
    if "axes" not in node.attrs:
        raise InvalidModel("ReduceSumInteger required attribute 'axes' is missing")
    axes = sorted({norm_axis(a, x.rank) for a in ints(node.attrs["axes"], "axes")})
    keep = attr_int(node, "keepdims", None)
    y = ctx.builder.reduce_sum(ctx.builder.cast(x, "int32"), axes=axes,
                               keep_dimensions=bool(keep))
    return [y]


