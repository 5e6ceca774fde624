"""com.microsoft QAttention -> WebNN: the quantized packed Q/K/V projection, computed as
onnxruntime's CPU kernel does, then com.microsoft Attention's multi-head self-attention
(`contrib.attention.packed_self_attention`: mask_index forms, unidirectional, past ->
present, scale, mask_filter_value).

The projection: the exact integer product (input - input_zero_point) @ (weight -
weight_zero_point) (the differences are exact floats, the sums exact in float32 while
|sum| < 2^24; onnxruntime accumulates in int32), times input_scale · weight_scale (rounded once
to float32, one multiplier per column when weight_scale is per-column), plus bias; as in
MatMulIntegerToFloat. onnxruntime's optimizer + dynamic quantization writes it after a
DynamicQuantizeLinear of the layer's input (`transformers_bert_optimized_int8` in the
transformer zoo).
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._attention_common import (
    check_arity,
    flag_attr,
    int_attr,
    require,
    shape_of,
)
from op_mappings.onnx.contrib._quant_common import QUANT_8BIT
from op_mappings.onnx.contrib.attention import packed_self_attention
from op_mappings.onnx.quantize import dequantize_input, shaped

_INPUTS = ("input", "weight", "bias", "input_scale", "weight_scale", "mask_index",
           "input_zero_point", "weight_zero_point", "past")


def _size(ctx: ImportContext, name: str) -> int:
    return int(np.prod(ctx.shape(name), dtype=np.int64))


def _integers(ctx: ImportContext, node: Node, index: int, zp_index: int, axis: int
              ) -> MLOperand:
    """Input `index` minus its zero point (per-tensor, or per-column along `axis` of the
    weight) as exact floats."""
    name = node.inputs[index]
    dtype = ctx.dtype(name)
    if dtype not in QUANT_8BIT:
        raise UnsupportedDataType(f"{_INPUTS[index]} has data type {dtype}; uint8 or int8 "
                                  "is needed")
    zp = node.input(zp_index)
    if zp and ctx.dtype(zp) != dtype:
        raise InvalidModel(f"{_INPUTS[zp_index]} has data type {ctx.dtype(zp)}, "
                           f"{_INPUTS[index]} has {dtype}")
    return dequantize_input(ctx, name, "", zp, axis)


@onnx_op("QAttention", since=1, domain="com.microsoft")
def qattention(ctx: ImportContext, node: Node) -> Outputs:
    """com.microsoft QAttention: quantized input [B, S, D] and weight [D, 3·hidden] (uint8 /
    int8) with scales and zero points, bias [3·hidden], then the Attention semantics.
    input_scale / input_zero_point per-tensor; weight_scale / weight_zero_point per-tensor or
    per-column [3·hidden]; mask_index as com.microsoft Attention (key lengths [B], end/start
    positions [2B], 0/1 masks [B, T] and [B, S, T], [B, 1, M, M]); past [2, B, N, P, H] ->
    present; unidirectional, scale, mask_filter_value. Restrictions: float32/float16 scales
    and bias (float16 is computed in float32); no past_present_share_buffer, no do_rotary,
    no [3B+2] mask_index."""
    b = ctx.builder
    check_arity(node, (5, 9), (1, 2))
    heads = int_attr(node, "num_heads")
    if heads <= 0:
        raise InvalidModel(f"num_heads must be positive, got {heads}")
    if flag_attr(node, "do_rotary"):
        raise UnsupportedAttribute("do_rotary=1 is not supported")
    if flag_attr(node, "past_present_share_buffer"):
        raise UnsupportedAttribute("past_present_share_buffer=1 is not supported")
    for i in range(5):
        require(node, i, _INPUTS[i])
    x_shape = shape_of(ctx, node.inputs[0], (3,), "input")
    w_shape = shape_of(ctx, node.inputs[1], (2,), "weight")
    if w_shape[0] != x_shape[2]:
        raise InvalidModel(f"weight of shape {list(w_shape)} does not match the input hidden "
                           f"size {x_shape[2]}")
    total = w_shape[1]
    if total % 3 or (total // 3) % heads:
        raise InvalidModel(f"weight dimension 1 ({total}) is not 3·hidden_size with "
                           f"hidden_size divisible by num_heads {heads}")
    out_type = ctx.dtype(node.inputs[2])
    for i in (2, 3, 4):
        if ctx.dtype(node.inputs[i]) != out_type or out_type not in ("float32", "float16"):
            raise InvalidModel(f"bias, input_scale and weight_scale must all be float32 or "
                               f"all float16, got {ctx.dtype(node.inputs[2])}, "
                               f"{ctx.dtype(node.inputs[3])}, {ctx.dtype(node.inputs[4])}")
    if shape_of(ctx, node.inputs[2], (1,), "bias") != (total,):
        raise InvalidModel(f"bias of shape {list(ctx.shape(node.inputs[2]))} must be "
                           f"[{total}]")
    for i in (3, 6):
        if node.input(i) and _size(ctx, node.inputs[i]) != 1:
            raise UnsupportedAttribute(f"{_INPUTS[i]} of shape {list(ctx.shape(node.inputs[i]))}"
                                       " (only per-tensor)")
    for i in (4, 7):
        name = node.input(i)
        if name and _size(ctx, name) != 1 and tuple(ctx.shape(name)) != (total,):
            raise InvalidModel(f"{_INPUTS[i]} of shape {list(ctx.shape(name))} must be a "
                               f"scalar or [{total}] (per column)")
    x_int = _integers(ctx, node, 0, 6, 2)
    w_int = _integers(ctx, node, 1, 7, 1)
    acc = b.matmul(x_int, w_int)  # [B, S, 3·hidden], exact integer sums
    per_column = _size(ctx, node.inputs[4]) != 1
    in_scale = shaped(ctx, node.inputs[3], [1, 1, 1])
    w_scale = shaped(ctx, node.inputs[4], [1, 1, total] if per_column else [1, 1, 1])
    bias = ctx.operand(node.inputs[2])
    if out_type != "float32":
        in_scale, w_scale = b.cast(in_scale, "float32"), b.cast(w_scale, "float32")
        bias = b.cast(bias, "float32")
    qkv = b.add(b.mul(acc, b.mul(in_scale, w_scale)), bias)
    if out_type != "float32":
        qkv = b.cast(qkv, out_type)
    hidden = total // 3
    return packed_self_attention(ctx, node, qkv, [hidden] * 3, heads,
                                 mask_name=node.input(5), past_name=node.input(8),
                                 bias_name="")
