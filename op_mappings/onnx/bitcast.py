"""ONNX BitCast (26) -> exact integer / float arithmetic (WebNN has no reinterpreting cast).

- Same-width integers (int8 <-> uint8, int32 <-> uint32) and bool -> uint8: the two's
  complement pattern, computed in int64 (x + 2^bits for negative x; x - 2^bits for
  x >= 2^(bits-1)).
- float32 -> int32/uint32: sign, biased exponent and mantissa are computed exactly: the
  exponent e = floor(log2|x|) is estimated with log and corrected against a constant table of
  the powers 2^-149 .. 2^127 (gather), the mantissa is (|x| / 2^e - 1)·2^23 (divisions by
  powers of two are exact); subnormals use |x|·2^126·2^23; ±0 (the sign of -0 from
  1/x = -inf), ±inf; NaN becomes the canonical quiet NaN 0x7FC00000 (payloads and the NaN
  sign are not kept).
- int32/uint32 -> float32: fields from integer division by 2^23, value
  (2^23 + mantissa)·2^(exponent - 150) (or mantissa·2^-149 for subnormals) with the table,
  exponent 255 gives ±inf or NaN.
Restrictions: 8- and 32-bit types only (no 64-bit, float16 or 16-bit types); subnormal
float32 values need a backend without flush-to-zero.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import helper

from converter.core.errors import UnsupportedDataType
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op

_WIDTH = {"int8": 8, "uint8": 8, "int32": 32, "uint32": 32, "float32": 32, "bool": 8}


def _c(ctx: ImportContext, value: float | int, dt: str) -> Any:
    return ctx.constant(np.asarray(value, dtype=dt))


def _powers(ctx: ImportContext) -> Any:
    """float32 [2^-149, ..., 2^127] (index k holds 2^(k - 149))."""
    return ctx.constant(np.ldexp(np.float32(1.0), np.arange(-149, 128)).astype(np.float32))


def _signed_bits(ctx: ImportContext, u: Any, bits: int) -> Any:
    """int64 pattern in [0, 2^bits) -> its signed value."""
    b = ctx.builder
    return b.where(b.greater_or_equal(u, _c(ctx, 1 << (bits - 1), "int64")),
                   b.sub(u, _c(ctx, 1 << bits, "int64")), u)


def _unsigned_bits(ctx: ImportContext, v: Any, bits: int) -> Any:
    """int64 signed value -> its pattern in [0, 2^bits)."""
    b = ctx.builder
    return b.where(b.lesser(v, _c(ctx, 0, "int64")), b.add(v, _c(ctx, 1 << bits, "int64")), v)


def _float_to_bits(ctx: ImportContext, x: Any) -> Any:
    """float32 -> int64 bit pattern in [0, 2^32)."""
    b = ctx.builder
    table = _powers(ctx)
    one = _c(ctx, 1.0, "float32")
    zero = _c(ctx, 0.0, "float32")
    a = b.abs(x)
    nan = b.is_nan(x)
    inf = b.is_infinite(x)
    negative = b.logical_or(b.lesser(x, zero),
                            b.logical_and(b.equal(x, zero), b.lesser(b.reciprocal(x), zero)))
    regular = b.logical_not(b.logical_or(b.logical_or(nan, inf), b.equal(a, zero)))
    safe = b.where(regular, a, one)
    # exponent estimate, then one correction step against exact powers of two
    est = b.floor(b.div(b.log(safe), _c(ctx, float(np.log(2.0)), "float32")))
    est = b.min(b.max(est, _c(ctx, -149.0, "float32")), _c(ctx, 127.0, "float32"))
    e = b.cast(est, "int32")
    k = b.add(e, _c(ctx, 149, "int32"))
    p_here = b.gather(table, k)
    p_next = b.gather(table, b.min(b.add(k, _c(ctx, 1, "int32")), _c(ctx, 276, "int32")))
    e = b.where(b.greater(p_here, safe), b.sub(e, _c(ctx, 1, "int32")),
                b.where(b.logical_and(b.lesser_or_equal(p_next, safe),
                                      b.lesser(e, _c(ctx, 127, "int32"))),
                        b.add(e, _c(ctx, 1, "int32")), e))
    normal = b.greater_or_equal(e, _c(ctx, -126, "int32"))
    e_safe = b.max(e, _c(ctx, -126, "int32"))
    scaled = b.div(safe, b.gather(table, b.add(e_safe, _c(ctx, 149, "int32"))))
    m_normal = b.mul(b.sub(scaled, one), _c(ctx, float(1 << 23), "float32"))
    m_sub = b.mul(b.mul(safe, _c(ctx, 2.0 ** 126, "float32")), _c(ctx, float(1 << 23), "float32"))
    mant = b.cast(b.where(normal, m_normal, m_sub), "int64")
    field = b.where(normal, b.cast(b.add(e_safe, _c(ctx, 127, "int32")), "int64"),
                    _c(ctx, 0, "int64"))
    bits = b.add(b.mul(field, _c(ctx, 1 << 23, "int64")), mant)
    bits = b.where(regular, bits, b.where(inf, _c(ctx, 0x7F800000, "int64"),
                                          _c(ctx, 0, "int64")))
    bits = b.add(bits, b.where(negative, _c(ctx, 1 << 31, "int64"), _c(ctx, 0, "int64")))
    return b.where(nan, _c(ctx, 0x7FC00000, "int64"), bits)


def _bits_to_float(ctx: ImportContext, u: Any) -> Any:
    """int64 bit pattern in [0, 2^32) -> float32."""
    b = ctx.builder
    two31 = _c(ctx, 1 << 31, "int64")
    two23 = _c(ctx, 1 << 23, "int64")
    negative = b.greater_or_equal(u, two31)
    mag = b.where(negative, b.sub(u, two31), u)
    field = b.div(mag, two23)
    mant = b.sub(mag, b.mul(field, two23))
    zero = _c(ctx, 0, "int64")
    sub = b.equal(field, zero)
    full = b.where(sub, mant, b.add(mant, two23))
    idx = b.cast(b.max(b.sub(field, _c(ctx, 1, "int64")), zero), "int32")
    value = b.mul(b.cast(full, "float32"), b.gather(_powers(ctx), b.min(
        idx, _c(ctx, 276, "int32"))))
    special = b.equal(field, _c(ctx, 255, "int64"))
    inf_or_nan = b.where(b.equal(mant, zero), _c(ctx, np.inf, "float32"),
                         _c(ctx, np.nan, "float32"))
    value = b.where(special, inf_or_nan, value)
    return b.where(negative, b.neg(value), value)


@onnx_op("BitCast", since=26)
def bitcast(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    name = node.inputs[0]
    x = ctx.operand(name)
    src = "bool" if x.data_type == "uint8" and ctx.is_bool(name) else x.data_type
    to = np.dtype(helper.tensor_dtype_to_np_dtype(int(node.attrs["to"]))).name
    if src not in _WIDTH or to not in _WIDTH or _WIDTH[src] != _WIDTH[to] or to == "bool":
        raise UnsupportedDataType(f"BitCast from {src} to {to} is not supported (8- and "
                                  "32-bit integer and float32 types; bool only as source)")
    bits = _WIDTH[to]
    if src == to or (src == "bool" and to == "uint8"):
        return [b.identity(x)]
    if src == "float32":
        pattern = _float_to_bits(ctx, x)
    elif src.startswith("uint") or src == "bool":
        pattern = b.cast(x, "int64")
    else:
        pattern = _unsigned_bits(ctx, b.cast(x, "int64"), bits)
    if to == "float32":
        return [_bits_to_float(ctx, pattern)]
    if to.startswith("uint"):
        return [b.cast(pattern, to)]
    return [b.cast(_signed_bits(ctx, pattern, bits), to)]
