"""WebNN subgraphs lowered as the ONNX ops they were converted from, in the forms onnxruntime
fuses well. The lowerings of `cast` and `mul` ask these matchers first; the nodes of the
WebNN operations a match replaces are left unused and removed by
`fusion.remove_dead_nodes`.

- Dynamic quantization: the importer's DynamicQuantizeLinear arithmetic on a float32 x
  (`op_mappings/onnx/quantize.py: dynamic_uint8`: lo = min(reduceMin(x), 0), hi =
  max(reduceMax(x), 0), scale = (hi − lo) / 255, zero point = clamp(roundEven(−lo / scale),
  0, 255), y = clamp(roundEven(x / scale) + zero point, 0, 255), both cast to uint8) becomes
  one ONNX DynamicQuantizeLinear (the same arithmetic, as onnxruntime computes it); the scale
  operand is rebound to its scale output, so that later readers (the scale products of
  quantized matmuls) read it.
- Integer matmul: `cast(roundEven(matmul(dequantizeLinear(a, 1, za), dequantizeLinear(b, 1,
  zb))), int32)` with int8/uint8 `a` (rank >= 2) and `b` (rank 2), a per-tensor `za` and a
  per-tensor or per-column `zb` becomes ONNX MatMulInteger (exact int32 sums; the float32
  sums it replaces are exact while |sum| < 2^24). onnxruntime then fuses DynamicQuantizeLinear
  + MatMulInteger + Cast + Mul (+ Add) into DynamicQuantizeMatMul / MatMulIntegerToFloat, as
  it does for `quantize_dynamic` models.
- RMS normalization: float32 `mul(x, x)` is lowered as Pow(x, 2) (bit-exact in onnxruntime),
  and `mul(x, reciprocal(sqrt(add(reduceMean(x²), ε))))` as Div(x, sqrt(...)) (one rounding
  instead of two): the chain onnxruntime fuses into SimplifiedLayerNormalization.

- Residual + bias before a layer normalization: `add(add(a, s), bias)` (3-D a and s of one
  shape, a constant bias along the last axis) is lowered as Add(Add(a, bias), s) with `a`
  the operand no matmul produced (onnxruntime would first make a MatMul + bias Add a Gemm):
  the order onnxruntime fuses with the LayerNormalization into SkipLayerNormalization (whose
  kernel adds all three at once).

Restrictions: float32 only (float16 graphs keep their per-operation rounding); the integer
forms need onnxruntime's MatMulInteger type pairs (uint8 x uint8, uint8 x int8, int8 x int8).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence

import numpy as np

from converter.core.webnn.operand import MLOperand, Operation
from converter.runtimes.onnxruntime.lowering.context import Emitter, constant_value

F32 = "float32"
_INT8 = ("uint8", "int8")
_MATMUL_INTEGER_TYPES = {("uint8", "uint8"), ("uint8", "int8"), ("int8", "int8")}

#: Per emitter: id(x operand) -> the (y, scale, zero point) outputs of its
#: DynamicQuantizeLinear node.
_DQL: weakref.WeakKeyDictionary[Emitter, dict[int, list[str]]] = weakref.WeakKeyDictionary()


def _op(operand: object, name: str) -> Operation | None:
    """The operation named `name` that produced `operand`, else None."""
    if not isinstance(operand, MLOperand) or operand.kind != "output":
        return None
    op = operand.operator
    return op if op is not None and op.op == name else None


def _is(operand: object, value: float) -> bool:
    """Whether `operand` is a constant whose every element equals `value`."""
    if not isinstance(operand, MLOperand):
        return False
    v = constant_value(operand)
    return v is not None and v.size > 0 and bool((v == value).all())


def _clamped(operand: object, lo: float, hi: float) -> MLOperand | None:
    """x when `operand` is clamp(x, lo, hi), else None."""
    op = _op(operand, "clamp")
    if op is None or op.options.get("minValue") != lo or op.options.get("maxValue") != hi:
        return None
    x: MLOperand = op.args[0]
    return x


def _reduced(operand: object, reduce: str, pick: str, x: MLOperand) -> bool:
    """Whether `operand` is pick(reduce(x over every axis), 0) (pick: max / min)."""
    op = _op(operand, pick)
    if op is None or not _is(op.args[1], 0.0):
        return False
    red = _op(op.args[0], reduce)
    return (red is not None and red.args[0] is x and not red.options["keepDimensions"]
            and sorted(int(a) for a in red.options["axes"]) == list(range(x.rank)))


def _dql_scale(x: MLOperand, scale: object) -> MLOperand | None:
    """lo when `scale` is (max(reduceMax(x), 0) − lo) / 255 with lo = min(reduceMin(x), 0)."""
    div = _op(scale, "div")
    if div is None or not _is(div.args[1], 255.0):
        return None
    sub = _op(div.args[0], "sub")
    if sub is None:
        return None
    hi, lo = sub.args
    if not (_reduced(hi, "reduceMax", "max", x) and _reduced(lo, "reduceMin", "min", x)):
        return None
    found: MLOperand = lo
    return found


def _dql_zero_point(zero_point: object) -> tuple[MLOperand, MLOperand] | None:
    """(x, scale) when `zero_point` is clamp(roundEven(−lo / scale), 0, 255) of a dynamic
    quantization of float32 x."""
    r = _op(_clamped(zero_point, 0.0, 255.0), "roundEven")
    neg = _op(r.args[0], "neg") if r is not None else None
    div = _op(neg.args[0], "div") if neg is not None else None
    if div is None:
        return None
    lo, scale = div.args
    low = _op(lo, "min")
    red = _op(low.args[0], "reduceMin") if low is not None else None
    if red is None:
        return None
    x = red.args[0]
    if x.data_type != F32 or _dql_scale(x, scale) is not lo:
        return None
    return x, scale


def _dql_values(y: object) -> tuple[MLOperand, MLOperand] | None:
    """(x, scale) when `y` is clamp(roundEven(x / scale) + zero point, 0, 255) of a dynamic
    quantization of float32 x."""
    add = _op(_clamped(y, 0.0, 255.0), "add")
    r = _op(add.args[0], "roundEven") if add is not None else None
    div = _op(r.args[0], "div") if r is not None else None
    if add is None or div is None:
        return None
    x, scale = div.args
    match = _dql_zero_point(add.args[1])
    return (x, scale) if match is not None and match == (x, scale) else None


def _dynamic_quantize(e: Emitter, x: MLOperand, scale: MLOperand) -> list[str]:
    """The outputs (y, scale, zero point) of the one DynamicQuantizeLinear node of x."""
    memo = _DQL.setdefault(e, {})
    if id(x) not in memo:
        outs = e.node_multi("DynamicQuantizeLinear", [e.input(x)], ["uint8", F32, "uint8"])
        e.bind(scale, outs[1])  # later readers of the scale read the node's output
        memo[id(x)] = outs
    return memo[id(x)]


def _zero_point(e: Emitter, operand: MLOperand, shape: Sequence[int]) -> str:
    """The ONNX value of a (de)quantization zero point, reshaped to `shape`."""
    value = constant_value(operand)
    if value is not None:
        return e.const(np.asarray(value).reshape(shape), operand.data_type, "zero_point")
    inner = _op(operand, "reshape")
    if inner is not None and inner.args[0].shape == tuple(shape):
        operand = inner.args[0]
    name = e.input(operand)
    return name if tuple(operand.shape) == tuple(shape) else e.reshape(name, shape)


def _matmul_integer(e: Emitter, op: Operation) -> str | None:
    """MatMulInteger for cast(roundEven(matmul(dequantize(a), dequantize(b))), int32)."""
    r = _op(op.args[0], "roundEven")
    mm = _op(r.args[0], "matmul") if r is not None else None
    if mm is None or mm.outputs[0].data_type != F32:
        return None
    deq = [_op(arg, "dequantizeLinear") for arg in mm.args]
    if deq[0] is None or deq[1] is None:
        return None
    (qa, sa, za), (qb, sb, zb) = deq[0].args, deq[1].args
    if ((qa.data_type, qb.data_type) not in _MATMUL_INTEGER_TYPES or qa.rank < 2
            or qb.rank != 2 or not (_is(sa, 1.0) and _is(sb, 1.0)) or za.descriptor.size != 1):
        return None
    n = qb.shape[1]
    if zb.descriptor.size == 1:
        zb_shape: list[int] = []
    elif tuple(zb.shape) == (1, n):
        zb_shape = [n]
    else:
        return None
    return e.node("MatMulInteger", [e.input(qa), e.input(qb), _zero_point(e, za, []),
                                    _zero_point(e, zb, zb_shape)], "int32")


def lower_cast(e: Emitter, op: Operation) -> str | None:
    """The ONNX value of a `cast` that ends a recognised subgraph, else None."""
    target = op.outputs[0].data_type
    if target == "uint8":
        x = op.args[0]
        values = _dql_values(x)
        if values is not None:
            return _dynamic_quantize(e, *values)[0]
        zp = _dql_zero_point(x)
        if zp is not None:
            return _dynamic_quantize(e, *zp)[2]
        return None
    if target == "int32":
        return _matmul_integer(e, op)
    return None


def _rms_source(r: MLOperand) -> tuple[MLOperand, MLOperand] | None:
    """(x, s) when `r` is reciprocal(s) with s = sqrt(add(reduceMean(x²), ε)), x² being
    mul(x, x) or pow(x, 2)."""
    rec = _op(r, "reciprocal")
    sqrt = _op(rec.args[0], "sqrt") if rec is not None else None
    add = _op(sqrt.args[0], "add") if sqrt is not None else None
    if rec is None or add is None:
        return None
    mean = next((m for m in (_op(a, "reduceMean") for a in add.args) if m is not None), None)
    if mean is None:
        return None
    square = mean.args[0]
    sq = _op(square, "mul")
    if sq is not None and sq.args[0] is sq.args[1]:
        x = sq.args[0]
    else:
        pw = _op(square, "pow")
        if pw is None or not _is(pw.args[1], 2.0):
            return None
        x = pw.args[0]
    return x, rec.args[0]


def lower_mul(e: Emitter, op: Operation) -> str | None:
    """Pow(x, 2) for a float32 mul(x, x); Div(x, s) for mul(x, reciprocal(s)) of an RMS
    normalization (see the module docstring); else None."""
    a, b = op.args
    if op.outputs[0].data_type != F32 or a.data_type != F32 or b.data_type != F32:
        return None
    if a is b:
        return e.node("Pow", [e.input(a), e.scalar(2.0, F32, "two")], F32)
    for x, r in ((a, b), (b, a)):
        found = _rms_source(r)
        if found is not None and found[0] is x and tuple(x.shape) == tuple(op.outputs[0].shape):
            return e.node("Div", [e.input(x), e.input(found[1])], F32)
    return None


def lower_skip_add(e: Emitter, x: MLOperand) -> str | None:
    """Add(Add(a, bias), s) for x = add(add(a, s), bias) read by a layer normalization over
    the last axis (see the module docstring), else None."""
    outer = _op(x, "add")
    if outer is None or x.data_type != F32 or x.rank != 3:
        return None
    for inner, bias in ((outer.args[0], outer.args[1]), (outer.args[1], outer.args[0])):
        value = constant_value(bias)
        add = _op(inner, "add")
        if value is None or add is None or value.size != x.shape[-1]:
            continue
        if value.ndim and value.shape[-1] != x.shape[-1]:
            continue
        a, s = add.args
        if _op(a, "matmul") is not None:  # else onnxruntime makes MatMul + Add a Gemm first
            a, s = s, a
        if a.shape == s.shape == x.shape and a.data_type == s.data_type == F32:
            y = e.node("Add", [e.input(a), e.const(value.reshape(-1), F32, "bias")], F32)
            return e.node("Add", [y, e.input(s)], F32)
    return None

