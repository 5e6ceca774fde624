"""Rules for quantized data types outside a target's `opSupportLimits()`: dequantizeLinear of
uint4 constants where the target has int4 or uint8 (see `converter.passes.targets.passes`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from converter.core.webnn import MLOperand
from converter.core.webnn.operand import Operation
from converter.passes.targets.rewrite import Rewrite, rule

UINT4_SHIFT = 8
"""uint4 value - 8 is an int4 value: [0, 15] -> [-8, 7]."""


def _constant(operand: MLOperand) -> np.ndarray | None:
    return operand.value if operand.kind == "constant" and operand.value is not None else None


def _as_int4(rw: Rewrite, operand: MLOperand) -> MLOperand:
    """A uint4 constant as the int4 constant of its values - 8. Packed bytes stay packed:
    flipping bit 3 of each nibble (XOR 0x88) maps q to q - 8 in two's complement, with the
    padding nibble of an odd count kept as it was."""
    packed = operand.packed if operand.kind == "constant" else None
    if packed is None:
        q = _constant(operand)
        assert q is not None
        return rw.b.constant((q.astype(np.int16) - UINT4_SHIFT).astype(np.int8), "int4")
    flipped = np.bitwise_xor(packed, np.uint8(0x88))
    if math.prod(operand.shape) % 2:
        flipped[-1] = (flipped[-1] & 0x0F) | (packed[-1] & 0xF0)
    return rw.b.packed_constant(flipped, "int4", list(operand.shape))


@rule("dequantize-uint4", "dequantizeLinear", limits=True,
      why="outside the target's opSupportLimits() (no uint4)")
def dequantize_uint4(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """dequantizeLinear of a uint4 constant with a uint4 constant zero point, where the target
    lacks uint4: both shifted by -8 to int4 ((q - 8) - (z - 8) = q - z; packed bytes stay
    packed, two values per byte, never unpacked) where the target's dequantizeLinear and
    constants take int4, else both widened to uint8 (the same values, one per byte).

    Restrictions: the input and the zero point must be constants (as MatMulNBits and
    DequantizeLinear of uint4 initializers give them)."""
    x, scale, zero = operation.args
    if not rw.limits or x.data_type != "uint4" or zero.data_type != "uint4":
        return None
    if x.kind != "constant" or zero.kind != "constant" or _usable(rw, "uint4"):
        return None
    if _usable(rw, "int4"):
        new_q, new_z = _as_int4(rw, x), _as_int4(rw, zero)
        rw.note("dequantize-uint4", "uint4 constants as int4, values and zero point - 8")
    elif _usable(rw, "uint8"):
        q, z = _constant(x), _constant(zero)
        assert q is not None and z is not None
        new_q = rw.b.constant(q.astype(np.uint8), "uint8")
        new_z = rw.b.constant(z.astype(np.uint8), "uint8")
        rw.note("dequantize-uint4", "uint4 constants as uint8")
    else:
        return None
    return rw.emit("dequantizeLinear", [new_q, scale, new_z], operation.options)


def _usable(rw: Rewrite, data_type: str) -> bool:
    """Whether the target's dequantizeLinear takes `data_type` constants (input and zero
    point, and the limits' `constant` entry)."""
    entry = rw.limits.get("constant")
    types = entry.get("dataTypes") if isinstance(entry, Mapping) else None
    return rw.supports("dequantizeLinear", "input", data_type) and \
        rw.supports("dequantizeLinear", "zeroPoint", data_type) and \
        (not isinstance(types, Sequence) or data_type in types)


def _smallest_divisor(n: int) -> int:
    """The smallest divisor of `n` above 1 (`n` itself when prime)."""
    return next((d for d in range(2, int(n ** 0.5) + 1) if n % d == 0), n)


@rule("dequantize-blocks", "dequantizeLinear",
      why="Chromium (LiteRT) fails to build a graph whose non-square dequantizeLinear with "
          "one scale per row (scale [N, 1] of an [N, K] input) feeds a matmul")
def dequantize_blocks(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """dequantizeLinear of an [N, K] input (N != K, both above 1) with a constant scale and
    zero point of shape [N, 1] (one per row, as MatMulNBits with K = block size gives): both
    repeated into [N, d] (blocks of K / d; d the smallest divisor of K above 1), the same
    value for every element. Other shapes (per-channel convolution filters, ...) build in
    Chromium and are left alone."""
    x, scale, zero = operation.args
    s, z = _constant(scale), _constant(zero)
    if s is None or z is None or x.rank != 2 or list(scale.shape) != [x.shape[0], 1]:
        return None
    n, k = (int(d) for d in x.shape)
    if n == k or n < 2 or k < 2:
        return None
    d = _smallest_divisor(k)
    s, z = np.repeat(s, d, axis=1), np.repeat(z, d, axis=1)
    new_s = rw.b.constant(np.ascontiguousarray(s), scale.data_type)
    new_z = rw.b.constant(np.ascontiguousarray(z), zero.data_type)
    rw.note("dequantize-blocks", "one scale per row as two or more equal blocks")
    return rw.emit("dequantizeLinear", [x, new_s, new_z], operation.options)
