"""ONNX BitShift, BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot -> WebNN integer arithmetic.

- BitShift (every integer type; ONNX 28 semantics: arithmetic RIGHT shift for signed
  types, shift counts < 0 or >= the bit width give the sign fill -1 / 0): integer
  arithmetic with constant power-of-two tables (gather) that never overflows. 8/32-bit
  types in int64: LEFT keeps the low (bits - y) bits of the two's complement pattern and
  multiplies by 2^y (re-signed), RIGHT is floor(x / 2^y). uint64 in uint64 (x / 2^y;
  (x mod 2^(64-y))·2^y); int64: RIGHT floor division (y = 63 is the sign fill), LEFT
  (x mod 2^(63-y))·2^y plus bit (63-y) of x times -2^63.
- BitwiseAnd/Or/Xor: both operands are split into two's complement bits along a new
  trailing axis (x / 2^i mod 2; for signed types the bits below the sign bit come from
  x + 2^(bits-1) when x < 0, the sign bit from x < 0), combined with and = a·b,
  or = a + b - a·b, xor = a + b - 2·a·b, and summed back with weights 2^i (-2^(bits-1) for
  the sign bit of signed types) in int64 (uint64 for uint64). BitwiseNot: (2^bits - 1) - x
  for unsigned, -1 - x for signed.
Restrictions: the uint64 paths need exact uint64 arithmetic in the backend.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import UnsupportedDataType
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import scalar
from op_mappings.onnx import onnx_op

_BITS = {"uint8": 8, "int8": 8, "uint32": 32, "int32": 32, "uint64": 64, "int64": 64}


def _bits(node: Node, dt: str) -> int:
    if dt not in _BITS:
        raise UnsupportedDataType(f"{node.op_type} on {dt} is not supported (integers only)")
    return _BITS[dt]


def _work(dt: str) -> str:
    """The exact working type: uint64 for uint64, int64 for everything else."""
    return "uint64" if dt == "uint64" else "int64"


def _table(ctx: ImportContext, dt: str, top: int) -> Any:
    """[2^0, ..., 2^top] as a constant of `dt`."""
    return ctx.constant(np.array([1 << i for i in range(top + 1)], dtype=dt))


def _pow2(ctx: ImportContext, table: Any, index: Any) -> Any:
    return ctx.builder.gather(table, ctx.builder.cast(index, "int32"))


def _floor_div(ctx: ImportContext, x: Any, d: Any) -> tuple[Any, Any]:
    """(floor(x / d), x - floor(x / d)·d) for signed x and d >= 1, without overflow (WebNN
    integer division truncates; a negative remainder moves the quotient down by one)."""
    b = ctx.builder
    q = b.div(x, d)
    r = b.sub(x, b.mul(q, d))
    neg = b.lesser(r, scalar(ctx, 0, x.data_type))
    return (b.where(neg, b.sub(q, scalar(ctx, 1, x.data_type)), q),
            b.where(neg, b.add(r, d), r))


@onnx_op("BitShift", since=11)
def bit_shift(ctx: ImportContext, node: Node) -> Outputs:
    """Shift counts outside [0, bits) give the sign fill (-1 for a RIGHT shift of a negative
    value, else 0) as ONNX 28 defines for every type."""
    b = ctx.builder
    x, y = ctx.inputs(node)
    dt = x.data_type
    bits = _bits(node, dt)
    signed = not dt.startswith("uint")
    right = str(node.attrs["direction"]) == "RIGHT"
    wt = _work(dt)
    xw, s = b.cast(x, wt), b.cast(y, wt)
    zero = scalar(ctx, 0, wt)
    top = bits - 1
    valid = b.lesser(s, scalar(ctx, bits, wt))
    if signed:
        valid = b.logical_and(valid, b.greater_or_equal(s, zero))
    sc = b.min(b.max(s, zero) if signed else s, scalar(ctx, top, wt))  # in [0, bits)
    if bits == 64:
        # 2^63 fits neither int64 nor (as a shift of int64) the signed range: tables stop at
        # 2^62 for int64 (a RIGHT shift by 63 is the sign fill, a LEFT one keeps one bit)
        table = _table(ctx, wt, 63 if wt == "uint64" else 62)
    else:
        table = _table(ctx, wt, bits)
    if right:
        if signed:
            if bits == 64:
                valid = b.logical_and(valid, b.lesser(s, scalar(ctx, 63, wt)))
                sc = b.min(sc, scalar(ctx, 62, wt))
            q, _ = _floor_div(ctx, xw, _pow2(ctx, table, sc))
            fill = b.where(b.lesser(xw, zero), scalar(ctx, -1, wt), zero)
        else:
            q, fill = b.div(xw, _pow2(ctx, table, sc)), zero
        return [b.cast(b.where(valid, q, fill), dt)]
    if bits == 64 and signed:
        # keep k = 63 - s low bits (m) and bit k (the new sign bit):
        # x·2^s mod 2^64 = m·2^s + bit_k·(-2^63)
        k = b.sub(scalar(ctx, 63, wt), sc)
        qf, m = _floor_div(ctx, xw, _pow2(ctx, table, b.min(k, scalar(ctx, 62, wt))))
        two = scalar(ctx, 2, wt)
        bit = b.abs(b.sub(qf, b.mul(b.div(qf, two), two)))
        r = b.add(b.mul(m, _pow2(ctx, table, b.min(sc, scalar(ctx, 62, wt)))),
                  b.mul(bit, scalar(ctx, -(1 << 63), wt)))
        r = b.where(b.equal(sc, zero), xw, r)
    elif bits == 64:
        # uint64: keep the low 64 - s bits (x mod 2^(64 - s)), then multiply by 2^s
        keep = _pow2(ctx, table, b.sub(scalar(ctx, 64, wt), b.max(sc, scalar(ctx, 1, wt))))
        low = b.sub(xw, b.mul(b.div(xw, keep), keep))
        r = b.where(b.equal(sc, zero), xw, b.mul(low, _pow2(ctx, table, sc)))
    else:
        # 8/32 bits in int64: the two's complement pattern u in [0, 2^bits), its low
        # (bits - s) bits times 2^s, reinterpreted as signed
        u = xw
        if signed:
            u = b.where(b.lesser(xw, zero), b.add(xw, scalar(ctx, 1 << bits, wt)), xw)
        keep = _pow2(ctx, table, b.sub(scalar(ctx, bits, wt), sc))
        low = b.sub(u, b.mul(b.div(u, keep), keep))
        r = b.mul(low, _pow2(ctx, table, sc))
        if signed:
            r = b.where(b.greater_or_equal(r, scalar(ctx, 1 << top, wt)),
                        b.sub(r, scalar(ctx, 1 << bits, wt)), r)
    return [b.cast(b.where(valid, r, zero), dt)]


def _split_bits(ctx: ImportContext, x: Any, bits: int, signed: bool) -> Any:
    """The two's complement bits of x (0/1 in the working type) on a new trailing axis,
    least significant first."""
    b = ctx.builder
    wt = _work(x.data_type)
    v = b.cast(x, wt)
    low_bits = bits
    neg = None
    if signed:
        # bits below the sign bit: x + 2^(bits-1) for negative x (two steps for 64 bits)
        neg = b.lesser(v, scalar(ctx, 0, wt))
        half = 1 << (bits - 2)
        v = b.where(neg, b.add(b.add(v, scalar(ctx, half, wt)), scalar(ctx, half, wt)), v)
        low_bits = bits - 1
    v = b.reshape(v, [*x.shape, 1])
    powers = ctx.constant(np.array([1 << i for i in range(low_bits)], dtype=wt))
    q = b.div(v, powers)
    two = scalar(ctx, 2, wt)
    out = b.sub(q, b.mul(b.div(q, two), two))
    if neg is not None:
        out = b.concat([out, b.cast(b.reshape(neg, [*x.shape, 1]), wt)], out.rank - 1)
    return out


@onnx_op(("BitwiseAnd", "BitwiseOr", "BitwiseXor"), since=18)
def bitwise(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x, y = ctx.inputs(node)
    dt = x.data_type
    bits = _bits(node, dt)
    signed = not dt.startswith("uint")
    wt = _work(dt)
    ba, bb = _split_bits(ctx, x, bits, signed), _split_bits(ctx, y, bits, signed)
    both = b.mul(ba, bb)
    if node.op_type == "BitwiseAnd":
        out = both
    elif node.op_type == "BitwiseOr":
        out = b.sub(b.add(ba, bb), both)
    else:
        out = b.sub(b.add(ba, bb), b.mul(both, scalar(ctx, 2, wt)))
    # weights 2^i, the sign bit weighing -2^(bits-1) for signed types
    weights = [1 << i for i in range(bits)]
    if signed:
        weights[-1] = -weights[-1]
    r = b.reduce_sum(b.mul(out, ctx.constant(np.array(weights, dtype=wt))),
                     axes=[out.rank - 1])
    return [b.cast(r, dt)]


@onnx_op("BitwiseNot", since=18)
def bitwise_not(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    dt = x.data_type
    bits = _bits(node, dt)
    top = (1 << bits) - 1 if dt.startswith("uint") else -1
    return [ctx.builder.sub(scalar(ctx, top, dt), x)]
