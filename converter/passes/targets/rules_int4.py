"""Rule for 4-bit weights on a target without 4-bit types: `dequantize-nibbles` (limits; see
`converter.passes.targets.passes`).

dequantizeLinear of an int4 / uint4 constant (MatMulNBits, DequantizeLinear, GatherBlockQuantized
weights), where the target's `dequantizeLinear` and `constant` take neither int4 nor uint4
(where one of them is taken, `rules_quant.dequantize-uint4` keeps the weight 4-bit): the
packed bytes ship as they are, as a uint8 constant (two values per byte: the weights file
stays the size of the original's 4-bit initializers), and the graph splits the nibbles. WebNN
has no bitwise operators, so the split is exact float arithmetic on the bytes b (0..255,
exact in float16 and float32):

    hi = floor(b * 1/16)        lo = b - 16 * hi

interleaved (concat of [M, 1] columns to [M, 2], reshaped: the first value of each byte is
its low nibble, as WebNN packs 4-bit data). int4 bytes are read with bit 3 of each nibble
flipped (XOR 0x88, done on the bytes at conversion time), which maps a signed nibble s to the
unsigned s + 8; the zero point is flipped the same way, so (q + 8) - (z + 8) = q - z. Then
dequantizeLinear's own arithmetic, (q - z) * scale in scale's data type: q - z is a small
integer (exact), and its product with the scale rounds once, as the spec's dequantizeLinear
does, so the result equals the original operation's bit for bit (float16 scales included:
`--precision float16`). Blockwise scales (one per block of an axis, as MatMulNBits' [N,
K / block] scales are) divide that axis into [blocks, block] so the scale broadcasts; the
result is reshaped back.

A zero point whose values are all equal (MatMulNBits' default 8, or 0 with float zero points)
becomes one float number (a rank-0 constant: no bytes in the weights file), other zero points
are split like the weight (1/block the weight's bytes).

The cast of the uint8 bytes to float is recorded without the rules: `fold-constant-cast`
would fold it into a float constant, four times the bytes of the weight it replaces (uint8 ->
float casts of 0..255 are exact on every backend). The whole composition is kept only when
every operation it emits fits the target's limits (`fitting.attempt`), else the rules after
it (`dequantize-uint4`: one value per byte) apply.

Cost: the split runs at every inference (backends do not fold operations on constants):
about eight elementwise operations over the weight, on top of dequantizeLinear's own.

Restrictions: the input and the zero point must be constants (the scale may be computed); the
split axes add ranks (MatMulNBits' [N, K]: 3), which the target's rank limits must allow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from converter.core.webnn import MLOperand
from converter.core.webnn.dtypes import FOUR_BIT_TYPES, pack_4bit
from converter.core.webnn.operand import Operation
from converter.core.webnn.ops.quantize import blocked_views
from converter.passes.targets.fitting import attempt
from converter.passes.targets.rewrite import Rewrite, rule

NAME = "dequantize-nibbles"
SIGN_FLIP = np.uint8(0x88)
"""XOR with this maps both int4 nibbles of a byte to their value + 8 as uint4."""


def _four_bit_usable(rw: Rewrite) -> bool:
    """Whether the target's dequantizeLinear (input and zero point) and constants take int4
    or uint4."""
    entry = rw.limits.get("constant")
    types = entry.get("dataTypes") if isinstance(entry, Mapping) else None
    return any(rw.supports("dequantizeLinear", "input", t) and
               rw.supports("dequantizeLinear", "zeroPoint", t) and
               (not isinstance(types, Sequence) or t in types) for t in FOUR_BIT_TYPES)


def unsigned_bytes(operand: MLOperand) -> np.ndarray:
    """The packed bytes of 4-bit constant `operand` (as given, or packed from its values),
    int4 nibbles flipped to their value + 8: uint8 [ceil(count / 2)], the values of an
    unsigned 4-bit tensor."""
    packed = operand.packed
    if packed is None:
        assert operand.value is not None
        packed = np.frombuffer(pack_4bit(operand.value), np.uint8)
    if operand.data_type == "int4":
        flipped: np.ndarray = np.bitwise_xor(packed, SIGN_FLIP)
        flipped.setflags(write=False)
        return flipped
    return packed


def uniform_value(data: np.ndarray, count: int) -> int | None:
    """The common value of the `count` unsigned nibbles packed in `data` (low nibble first),
    or None when they differ."""
    if count == 0:
        return None
    lo, hi = data[:(count + 1) // 2] & 0x0F, data[:count // 2] >> 4
    first = int(lo[0])
    return first if bool(np.all(lo == first)) and bool(np.all(hi == first)) else None


def _split(rw: Rewrite, data: np.ndarray, count: int, shape: list[int], float_type: str
           ) -> MLOperand:
    """The `count` unsigned nibbles packed in `data` as a `float_type` operand of `shape`,
    computed in the graph from a uint8 constant of the bytes."""
    m = int(data.size)
    raw = rw.b.constant(data.reshape(m, 1), "uint8")
    b = rw.call("cast", [raw, float_type], {})[0]  # not folded: see the module docstring
    hi = rw.emit1("floor", rw.emit1("mul", b, rw.const(1 / 16, float_type)))
    lo = rw.emit1("sub", b, rw.emit1("mul", hi, rw.const(16, float_type)))
    pairs = rw.emit1("concat", [lo, hi], 1)  # [m, 2]: byte i holds values 2i, 2i + 1
    if 2 * m == count:
        return rw.emit1("reshape", pairs, shape)
    flat = rw.emit1("slice", rw.emit1("reshape", pairs, [2 * m]), [0], [count])
    return rw.emit1("reshape", flat, shape)


def _nibbles(rw: Rewrite, operand: MLOperand, shape: list[int], float_type: str,
             fold_uniform: bool) -> MLOperand:
    """The values of 4-bit constant `operand` (+ 8 for int4) as `float_type` of `shape`: one
    number (a rank-0 constant, which broadcasts) when `fold_uniform` and they are all equal,
    else split in the graph."""
    data = unsigned_bytes(operand)
    count = math.prod(operand.shape)
    common = uniform_value(data, count) if fold_uniform else None
    if common is not None:
        return rw.const(common, float_type)
    return _split(rw, data, count, shape, float_type)


def _dequantized(rw: Rewrite, x: MLOperand, scale: MLOperand, zero: MLOperand) -> MLOperand:
    float_type = scale.data_type
    values, blocked = blocked_views(x.shape, scale.shape)
    q = _nibbles(rw, x, values, float_type, fold_uniform=False)
    z = _nibbles(rw, zero, blocked, float_type, fold_uniform=True)
    if scale.kind == "constant" and scale.value is not None:
        s = rw.b.constant(np.ascontiguousarray(scale.value).reshape(blocked), float_type)
    else:
        s = rw.emit1("reshape", scale, blocked)
    w = rw.emit1("mul", rw.emit1("sub", q, z), s)
    return w if list(w.shape) == list(x.shape) else rw.emit1("reshape", w, list(x.shape))


@rule(NAME, "dequantizeLinear", limits=True,
      why="outside the target's opSupportLimits() (no int4 or uint4)")
def dequantize_nibbles(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """dequantizeLinear of a 4-bit constant with a 4-bit constant zero point, where the
    target takes neither int4 nor uint4: the packed bytes as a uint8 constant, split into
    nibbles in the graph (see the module docstring)."""
    x, scale, zero = operation.args
    if not rw.limits or x.data_type not in FOUR_BIT_TYPES or x.kind != "constant" or \
            zero.kind != "constant" or _four_bit_usable(rw):
        return None
    return attempt(rw, operation, NAME,
                   f"{x.data_type} constants shipped packed as uint8 bytes, two values per "
                   f"byte, split in the graph (floor(b / 16), b - 16 * floor(b / 16))",
                   lambda: [_dequantized(rw, x, scale, zero)])
