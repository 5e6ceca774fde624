"""ONNX Mod, BitShift, BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot -> WebNN arithmetic.

- Mod fmod=1 (C fmod, sign of the dividend): floats a - b·trunc(a / b); integers
  a - b·(a / b) (WebNN integer division truncates). fmod=0 (integers only in ONNX; sign of
  the divisor): the same remainder plus b where it is non-zero and its sign differs from b's.
- BitShift (unsigned): shifts become integer arithmetic in int64 with constant power-of-two
  tables (gather): LEFT keeps the low (bits - y) bits of x and multiplies by 2^y, RIGHT
  divides by 2^y; shifts >= the bit width give 0.
- BitwiseAnd/Or/Xor: both operands are split into bits along a new trailing axis
  (x / 2^i - 2·(x / 4^i...)), combined with and = a·b, or = a + b - a·b,
  xor = a + b - 2·a·b, and summed back with the powers of two (two's complement for signed
  types via int64). BitwiseNot: (2^bits - 1) - x for unsigned, -1 - x for signed.
Restrictions: bitwise ops on 8- and 32-bit integers (no 64-bit); division by zero is
unspecified in WebNN.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.errors import UnsupportedAttribute, UnsupportedDataType
from converter.formats.onnx import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op
from op_mappings.onnx._helpers_ext import scalar

_BITS = {"uint8": 8, "int8": 8, "uint32": 32, "int32": 32}


@onnx_op("Mod", since=10)
def mod(ctx: ImportContext, node: Node) -> list[Any]:
    b = ctx.builder
    x, y = ctx.inputs(node)
    dt = x.data_type
    q = b.div(x, y)
    if dt in ("float32", "float16"):
        if not int(node.attrs["fmod"]):
            raise UnsupportedAttribute("Mod with fmod=0 is only defined for integers")
        zero = scalar(ctx, 0, dt)
        q = b.where(b.lesser(q, zero), b.ceil(q), b.floor(q))
        return [b.sub(x, b.mul(y, q))]
    r = b.sub(x, b.mul(y, q))
    if int(node.attrs["fmod"]) or dt.startswith("uint"):
        return [r]
    zero = scalar(ctx, 0, dt)
    differ = b.logical_and(b.not_equal(r, zero),
                           b.logical_xor(b.lesser(r, zero), b.lesser(y, zero)))
    return [b.where(differ, b.add(r, y), r)]


def _bits(node: Node, dt: str) -> int:
    if dt not in _BITS:
        raise UnsupportedDataType(f"{node.op_type} on {dt} is not supported (8- and 32-bit "
                                  "integers only)")
    return _BITS[dt]


def _powers(ctx: ImportContext, bits: int) -> Any:
    return ctx.constant(np.array([1 << i for i in range(bits + 1)], np.int64))


@onnx_op("BitShift", since=11)
def bit_shift(ctx: ImportContext, node: Node) -> list[Any]:
    b = ctx.builder
    x, y = ctx.inputs(node)
    dt = x.data_type
    bits = _bits(node, dt)
    if not dt.startswith("uint"):
        raise UnsupportedDataType(f"BitShift on {dt}: ONNX defines it for unsigned types")
    table = _powers(ctx, bits)
    x64 = b.cast(x, "int64")
    shift = b.min(b.cast(y, "int64"), scalar(ctx, bits, "int64"))
    pow_y = b.gather(table, shift)
    if str(node.attrs["direction"]) == "RIGHT":
        return [b.cast(b.div(x64, pow_y), dt)]
    keep = b.gather(table, b.sub(scalar(ctx, bits, "int64"), shift))  # 2^(bits - y)
    low = b.sub(x64, b.mul(b.div(x64, keep), keep))
    return [b.cast(b.mul(low, pow_y), dt)]


def _split_bits(ctx: ImportContext, x: Any, bits: int, signed: bool) -> Any:
    b = ctx.builder
    v = b.cast(x, "int64")
    if signed:
        v = b.where(b.lesser(v, scalar(ctx, 0, "int64")),
                    b.add(v, scalar(ctx, 1 << bits, "int64")), v)
    v = b.reshape(v, [*x.shape, 1])
    powers = ctx.constant(np.array([1 << i for i in range(bits)], np.int64))
    q = b.div(v, powers)
    return b.sub(q, b.mul(b.div(q, scalar(ctx, 2, "int64")), scalar(ctx, 2, "int64")))


@onnx_op(("BitwiseAnd", "BitwiseOr", "BitwiseXor"), since=18)
def bitwise(ctx: ImportContext, node: Node) -> list[Any]:
    b = ctx.builder
    x, y = ctx.inputs(node)
    dt = x.data_type
    bits = _bits(node, dt)
    signed = not dt.startswith("uint")
    ba, bb = _split_bits(ctx, x, bits, signed), _split_bits(ctx, y, bits, signed)
    both = b.mul(ba, bb)
    if node.op_type == "BitwiseAnd":
        out = both
    elif node.op_type == "BitwiseOr":
        out = b.sub(b.add(ba, bb), both)
    else:
        out = b.sub(b.add(ba, bb), b.mul(both, scalar(ctx, 2, "int64")))
    powers = ctx.constant(np.array([1 << i for i in range(bits)], np.int64))
    r = b.reduce_sum(b.mul(out, powers), axes=[out.rank - 1])
    if signed:
        r = b.where(b.greater_or_equal(r, scalar(ctx, 1 << (bits - 1), "int64")),
                    b.sub(r, scalar(ctx, 1 << bits, "int64")), r)
    return [b.cast(r, dt)]


@onnx_op("BitwiseNot", since=18)
def bitwise_not(ctx: ImportContext, node: Node) -> list[Any]:
    x = ctx.operand(node.inputs[0])
    dt = x.data_type
    bits = _bits(node, dt)
    top = (1 << bits) - 1 if dt.startswith("uint") else -1
    return [ctx.builder.sub(scalar(ctx, top, dt), x)]
