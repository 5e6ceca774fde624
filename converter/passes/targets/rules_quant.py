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


# -- dequantizeLinear -> operator -> quantizeLinear, as Chromium's LiteRT backend fuses it ---


def _per_tensor(scale: MLOperand, zero: MLOperand) -> tuple[float, int] | None:
    """(scale, zero point) of constant one-element quantization parameters, else None."""
    s, z = _constant(scale), _constant(zero)
    if s is None or z is None or s.size != 1 or z.size != 1:
        return None
    return float(s.ravel()[0]), int(z.ravel()[0])


def _dequantized(operand: MLOperand) -> Operation | None:
    """The dequantizeLinear operation producing `operand` from int8 / uint8 / int32 values
    with constant scale and zero point, else None."""
    op = operand.operator
    if op is None or op.op != "dequantizeLinear":
        return None
    _, scale, zero = op.args
    if _constant(scale) is None or _constant(zero) is None:
        return None
    return op


UNFUSED = frozenset({"reduceMax", "reduceMin", "transpose", "slice", "split", "softmax"})
"""Operators whose fused integer kernel in Chromium 153 does not compute the spec's answer
unless the input and output quantization parameters are equal (softmax: unless a uint8
output has scale 1/256 and zero point 0, what LiteRT's SOFTMAX assumes)."""
SOFTMAX_UINT8 = (1.0 / 256.0, 0)


@rule("quantize-unfuse", "quantizeLinear",
      why="Chromium (LiteRT) fuses dequantizeLinear -> reduceMax / reduceMin / transpose / "
          "slice / split -> quantizeLinear into integer kernels that do not requantize (wrong "
          "values, or no build) when the output's scale or zero point differs from the "
          "input's, and softmax -> uint8 into a kernel that assumes scale 1/256, zero point 0")
def quantize_unfuse(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """quantizeLinear of an `UNFUSED` operator's result whose input is dequantized with
    other per-tensor parameters (softmax: whose uint8 output parameters are not LiteRT's):
    a reshape to the same shape goes between the operator and the quantizeLinear, so Chromium
    runs the operator in float (DEQUANTIZE -> operator -> RESHAPE -> QUANTIZE), the spec's
    computation. Restrictions: per-tensor parameters on both sides (Chromium fuses nothing
    else)."""
    x, scale, zero = operation.args
    producer = x.operator
    if producer is None or producer.op not in UNFUSED:
        return None
    source = producer.args[0]
    dq = _dequantized(source) if isinstance(source, MLOperand) else None
    out = _per_tensor(scale, zero)
    if dq is None or out is None or dq.args[0].data_type not in ("int8", "uint8"):
        return None
    given = _per_tensor(dq.args[1], dq.args[2])
    if given is None:
        return None
    if producer.op == "softmax":
        if zero.data_type != "uint8" or out == SOFTMAX_UINT8:
            return None
    elif (np.float32(given[0]), given[1]) == (np.float32(out[0]), out[1]):
        return None
    y = rw.call("reshape", [x, list(x.shape)], {})[0]
    rw.note("quantize-unfuse", f"{producer.op} kept in float before its quantizeLinear")
    return rw.emit("quantizeLinear", [y, scale, zero], operation.options)


def _expand(values: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """`values` repeated blockwise to `shape` (the spec's blockwise broadcasting)."""
    for axis, (have, want) in enumerate(zip(values.shape, shape, strict=True)):
        if have != want:
            values = np.repeat(values, want // have, axis=axis)
    return values


def _folded(rw: Rewrite, dq: Operation) -> MLOperand:
    """The float constant a dequantizeLinear of constants computes ((q - z) * s, float64
    rounded once to the scale's type, as the reference runtime does)."""
    q, s, z = (_constant(a) for a in dq.args)
    assert q is not None and s is not None and z is not None
    shape = q.shape
    value = (q.astype(np.float64) - _expand(z.astype(np.float64), shape)) * \
        _expand(s.astype(np.float64), shape)
    return rw.b.constant(value.astype(dq.args[1].data_type), dq.args[1].data_type)


BIAS_RTOL = 1e-6
"""How far a bias scale may be from input scale x filter scale for the fused kernel (which
uses the product, not the bias scale) to compute the spec's answer: float32 rounding."""


@rule("quantize-bias", "conv2d", "convTranspose2d", "gemm",
      why="Chromium (LiteRT/XNNPACK) fuses a dequantized int32 bias into integer "
          "convolutions and FULLY_CONNECTED when its scale is within 2% of input scale x "
          "filter scale, then uses that product instead (wrong values), and fails to "
          "allocate tensors for a per-tensor bias scale with per-channel filter scales")
def quantize_bias(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """conv2d / convTranspose2d (bias) or gemm (c) whose input and filter are dequantized and
    whose bias is a dequantizeLinear of int32 constants with scales other than input scale
    x filter scale (per output channel): the bias folded to the float32 constant it
    dequantizes to, so Chromium runs the operator in float. Restrictions: a bias whose scale
    equals the product is left alone (the fused kernel is right then)."""
    key = "c" if operation.op == "gemm" else "bias"
    bias = operation.options.get(key)
    if not isinstance(bias, MLOperand):
        return None
    dq_b, dq_x, dq_w = (_dequantized(v) for v in (bias, *operation.args[:2]))
    if dq_b is None or dq_x is None or dq_w is None or dq_b.args[0].data_type != "int32" or \
            _constant(dq_b.args[0]) is None:
        return None
    xs, ws, bs = (_constant(d.args[1]) for d in (dq_x, dq_w, dq_b))
    assert xs is not None and ws is not None and bs is not None
    if xs.size != 1:
        return None
    product = (xs.astype(np.float64).ravel() * ws.astype(np.float64).ravel()).astype(
        np.float32).astype(np.float64)
    flat = bs.astype(np.float64).ravel()
    if flat.size in (1, product.size) and product.size in (1, flat.size) and \
            bool(np.all(np.abs(flat - product) <= BIAS_RTOL * np.abs(product))):
        return None
    options = dict(operation.options)
    options[key] = _folded(rw, dq_b)
    rw.note("quantize-bias", f"{operation.op} bias dequantized at conversion (its scale is "
                             "not input scale x filter scale)")
    return rw.emit(operation.op, list(operation.args), options)


@rule("quantize-gemm-channel", "gemm",
      why="Chromium (LiteRT) fails to build a gemm whose b is a per-channel dequantized "
          "constant without bTranspose (scale [1, N]): it transposes the quantized tensor")
def quantize_gemm_channel(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """gemm without bTranspose whose b is dequantizeLinear(q, scale, zero point) of constants
    with scale of shape [1, N] (N > 1): b stored transposed (q, scale and zero point
    transposed, [N, K] with scale [N, 1]) and bTranspose set; the same values, and the
    per-channel layout LiteRT's FULLY_CONNECTED takes."""
    a, b = operation.args
    dq = _dequantized(b)
    if operation.options.get("bTranspose") or dq is None:
        return None
    q, s, z = dq.args
    qv, sv, zv = _constant(q), _constant(s), _constant(z)
    if qv is None or sv is None or zv is None or sv.ndim != 2 or sv.shape[0] != 1 or \
            sv.shape[1] < 2 or q.packed is not None:
        return None
    t = [rw.b.constant(np.ascontiguousarray(v.T), o.data_type)
         for v, o in ((qv, q), (sv, s), (zv, z))]
    new_b = rw.emit("dequantizeLinear", t, dq.options)[0]
    rw.note("quantize-gemm-channel", "per-channel quantized b stored transposed")
    return rw.emit("gemm", [a, new_b], {**operation.options, "bTranspose": True})


@rule("quantize-integers", "concat", "resample2d",
      why="Chromium (LiteRT) fails to build an int8 concat of tensors that carry quantization "
          "parameters (quantizeLinear results: 'Failed to allocate tensors') and gives wrong "
          "values for uint8 ones; its resample2d takes no int8 / uint8")
def quantize_integers(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """concat of int8 / uint8 operands any of which an operation computes (a quantizeLinear
    result, as the TFLite importer concatenates quantized tensors on their integers): the
    operands cast to int32, concatenated, cast back (exact). resample2d "nearest-neighbor" of
    int8 / uint8: the same through float32, which holds every value (nearest neighbours copy
    values, so this is exact). Restrictions: linear resample2d of integers is left alone (no
    graph the importers write has it)."""
    if operation.op == "concat":
        inputs = operation.args[0]
        if inputs[0].data_type not in ("int8", "uint8") or \
                all(x.operator is None for x in inputs):
            return None
        wide = "int32"
    else:
        inputs = [operation.args[0]]
        if inputs[0].data_type not in ("int8", "uint8") or \
                operation.options.get("mode") != "nearest-neighbor":
            return None
        wide = "float32"
    narrow = inputs[0].data_type
    cast = [rw.cast(x, wide) for x in inputs]  # constants widened here
    args = [cast, *operation.args[1:]] if operation.op == "concat" else \
        [cast[0], *operation.args[1:]]
    y = rw.emit(operation.op, args, operation.options)[0]
    rw.note("quantize-integers", f"{narrow} {operation.op} on {wide}")
    return [rw.emit1("cast", y, narrow)]
