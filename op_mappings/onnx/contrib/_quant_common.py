"""Helpers shared by the quantized contrib handlers (MatMulNBits, GatherBlockQuantized,
DynamicQuantizeMatMul, MatMulIntegerToFloat, QGemm, the QLinear* ops); not a mapping module.

- `unpack_bits`: uint8 bytes holding `bits`-wide unsigned values, low bits first (the packing
  of MatMulNBits' B and zero points and of GatherBlockQuantized's uint8 data).
- `block_size_attr` / `bits_attr`: the checked `block_size` (a power of two >= 16) and `bits`
  (4 or 8) attributes.
- `four_bit_constant`: a 4-bit (or 8-bit) integer array as a WebNN constant of the narrowest
  type that holds it (uint4 / int4 / uint8 / int8).
- `dequantized`, `requantized`, `per_tensor_params`: the dequantize -> float op -> quantize
  pattern of the QLinear* ops (per-tensor scales and zero points, zero point default 0).
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from op_mappings._common.values import const_or_none
from op_mappings.onnx.contrib._common import attr_int

QUANT_8BIT = ("uint8", "int8")


def unpack_bits(packed: np.ndarray, bits: int, count: int) -> np.ndarray:
    """The first `count` `bits`-wide unsigned values packed along the last axis of uint8
    array `packed` (the first value in the lowest bits of each byte), as uint8."""
    per = 8 // bits
    data = np.ascontiguousarray(packed, dtype=np.uint8)
    mask = (1 << bits) - 1
    parts = [(data >> (bits * i)) & mask for i in range(per)]
    values = np.stack(parts, axis=-1).reshape(*data.shape[:-1], data.shape[-1] * per)
    if count > values.shape[-1]:
        raise InvalidModel(f"{data.shape[-1]} packed bytes hold {values.shape[-1]} {bits}-bit "
                           f"values, {count} are needed")
    return np.ascontiguousarray(values[..., :count]).astype(np.uint8)


def bits_attr(node: Node, default: int = 4) -> int:
    """The `bits` attribute: 4 or 8 (2-bit weights are not supported)."""
    bits = attr_int(node, "bits", default)
    if bits == 2:
        raise UnsupportedAttribute(f"{node.op_type} bits=2 is not supported (4 or 8 are)")
    if bits not in (4, 8):
        raise InvalidModel(f"{node.op_type} bits must be 4 or 8, got {bits}")
    return bits


def block_size_attr(node: Node, default: int | None) -> int:
    """The `block_size` attribute: a power of two >= 16."""
    block = attr_int(node, "block_size", default)
    if block < 16 or block & (block - 1):
        raise InvalidModel(f"{node.op_type} block_size must be a power of two >= 16, got "
                           f"{block}")
    return block


def quant_constant(ctx: ImportContext, values: np.ndarray, bits: int, signed: bool
                   ) -> MLOperand:
    """Integer `values` (in the `bits`-wide signed / unsigned range) as a WebNN constant of
    type int4 / uint4 (bits 4: stored packed when exported) or int8 / uint8 (bits 8)."""
    if bits == 4:
        return ctx.builder.constant(np.asarray(values).astype(np.int8 if signed else np.uint8),
                                    "int4" if signed else "uint4")
    return ctx.builder.constant(np.asarray(values).astype(np.int8 if signed else np.uint8))


# -- QLinear pattern: dequantize -> float op -> quantize ---------------------------------------
def quantized_input(ctx: ImportContext, node: Node, index: int, what: str) -> MLOperand:
    """Input `index`, which must be uint8 or int8."""
    x = ctx.operand(node.inputs[index])
    if x.data_type not in QUANT_8BIT:
        raise UnsupportedDataType(f"{node.op_type} {what} (input {index}) has data type "
                                  f"{x.data_type}; uint8 or int8 is needed")
    return x


def per_tensor_params(ctx: ImportContext, node: Node, scale_index: int, zp_index: int,
                      rank: int, zp_type: str, what: str) -> tuple[MLOperand, MLOperand]:
    """(scale, zero point) of a per-tensor quantized value as rank-`rank` operands of shape
    [1, ..., 1]: float32 scale (input `scale_index`), zero point of `zp_type` (input
    `zp_index`, 0 when omitted). InvalidModel unless each has one element and the zero point
    has type `zp_type`."""
    shape = [1] * rank
    scale_name = node.input(scale_index)
    if not scale_name:
        raise InvalidModel(f"{node.op_type} {what} scale (input {scale_index}) is omitted")
    out = []
    for index, name, dtype in ((scale_index, scale_name, "float32"),
                               (zp_index, node.input(zp_index), zp_type)):
        if not name:
            out.append(ctx.builder.constant(np.zeros(shape, dtype)))
            continue
        size = int(np.prod(ctx.shape(name), dtype=np.int64))
        if size != 1:
            raise InvalidModel(f"{node.op_type} {what} {'scale' if dtype == 'float32' else 'zero point'} "
                               f"(input {index}) must have one element, got shape "
                               f"{list(ctx.shape(name))}")
        if ctx.dtype(name) != dtype:
            raise InvalidModel(f"{node.op_type} input {index} has data type {ctx.dtype(name)}, "
                               f"expected {dtype}")
        value = const_or_none(ctx, name)
        if value is not None:
            out.append(ctx.constant(np.ascontiguousarray(value.reshape(shape))))
        else:
            operand = ctx.operand(name)
            out.append(ctx.builder.reshape(operand, shape))
    return out[0], out[1]


def dequantized(ctx: ImportContext, node: Node, index: int, scale_index: int, zp_index: int,
                what: str) -> MLOperand:
    """dequantizeLinear of per-tensor quantized input `index` (float32)."""
    x = quantized_input(ctx, node, index, what)
    scale, zp = per_tensor_params(ctx, node, scale_index, zp_index, x.rank, x.data_type, what)
    return ctx.builder.dequantize_linear(x, scale, zp)


def requantized(ctx: ImportContext, node: Node, y: MLOperand, scale_index: int,
                zp_index: int, out_type: str) -> MLOperand:
    """Float32 `y` quantized to `out_type` with the per-tensor output parameters as
    onnxruntime does it: the quotient y / scale rounded to float32 first (a WebNN div), then
    quantizeLinear with scale 1 (round half to even, add the zero point, saturate)."""
    b = ctx.builder
    scale, zp = per_tensor_params(ctx, node, scale_index, zp_index, y.rank, out_type, "output")
    return b.quantize_linear(b.div(y, scale), b.constant(np.ones([1] * y.rank, np.float32)), zp)
