"""ONNX lowerings: the reduce family, argMin/argMax, cumulativeSum and softmax.

Restrictions and exactness notes:
- `axes = []` reduces nothing but still applies the per-element function (|x| for L1 and L2,
  x² for sumSquare, log for logSum; the others are the identity), as WebNN specifies.
- float16 sums, means, products, norms, cumulative sums and softmax are computed in float32
  and rounded once; reduceMax/reduceMin and argMin/argMax are exact and run on float16.
- Integer types without onnxruntime kernels are widened: uint32 → int64 (exact), uint64 →
  int64 reinterpretation for the modular reductions (sum, product, sumSquare, L1 = sum) and
  cumulativeSum, and an order-preserving offset (x − 2^63 reinterpreted as int64) for
  reduceMax/reduceMin/argMin/argMax. Integer results wrap like the output type.
- argMin/argMax return the first index among ties (ONNX `select_last_index = 0`); ONNX int64
  indices are cast to int32 when `outputDataType` is int32.
"""

from __future__ import annotations

from converter.core.webnn.operand import Operation
from converter.runtimes.onnxruntime.lowering.context import Emitter, lift, lowering

_REDUCE = {"reduceL1": "ReduceL1", "reduceL2": "ReduceL2", "reduceLogSum": "ReduceLogSum",
           "reduceLogSumExp": "ReduceLogSumExp", "reduceMax": "ReduceMax",
           "reduceMean": "ReduceMean", "reduceMin": "ReduceMin", "reduceProduct": "ReduceProd",
           "reduceSum": "ReduceSum", "reduceSumSquare": "ReduceSumSquare"}
_ORDERED = {"reduceMax", "reduceMin", "argMin", "argMax"}


def ordered_int(e: Emitter, name: str, data_type: str) -> tuple[str, str]:
    """A value with an ONNX-supported type whose order matches `name`'s: uint32 → int64,
    uint64 → int64 of x − 2^63 (wrapping), others unchanged. Returns (value, type)."""
    if data_type == "uint32":
        return e.cast(name, "int64"), "int64"
    if data_type == "uint64":
        shifted = e.node("Sub", [name, e.scalar(2**63, "uint64")], "uint64")
        return e.cast(shifted, "int64"), "int64"
    return name, data_type


def unordered_int(e: Emitter, name: str, data_type: str) -> str:
    """Inverse of `ordered_int` for values (not indices)."""
    if data_type == "uint64":
        return e.node("Add", [e.cast(name, "uint64"), e.scalar(2**63, "uint64")], "uint64")
    return e.cast(name, data_type)


def modular_type(data_type: str) -> str:
    """Type for wrapping integer sums/products: exact modulo the width of `data_type`."""
    return {"uint32": "int64", "uint64": "int64", "int8": "int32", "uint8": "int32",
            "float16": "float32"}.get(data_type, data_type)


@lowering(*_REDUCE)
def reduce(e: Emitter, op: Operation) -> list[str]:
    x = op.args[0]
    out = op.outputs[0].data_type
    axes = [int(a) for a in op.options["axes"]]
    keep = 1 if op.options["keepDimensions"] else 0
    name = op.op
    if out.startswith("uint") and name == "reduceL1":
        name = "reduceSum"  # |x| = x for unsigned types
    if not axes:
        v = e.input(x, lift(out))
        ct = e.dtype(v)
        if name in ("reduceL1", "reduceL2"):
            y = e.node("Abs", [v], ct)
        elif name == "reduceSumSquare":
            v = e.input(x, modular_type(out))
            y = e.node("Mul", [v, v], e.dtype(v))
        elif name == "reduceLogSum":
            y = e.node("Log", [v], ct)
        else:
            y = e.node("Identity", [e.input(x)], out)
        return [e.cast(y, out)]
    if name in _ORDERED:
        v, ct = ordered_int(e, e.input(x), out)
        y = e.node(_REDUCE[name], [v, e.ints(axes, "axes")], ct, keepdims=keep)
        return [unordered_int(e, y, out)]
    v = e.input(x, modular_type(out))
    y = e.node(_REDUCE[name], [v, e.ints(axes, "axes")], e.dtype(v), keepdims=keep)
    return [e.cast(y, out)]


@lowering("argMin", "argMax")
def arg_min_max(e: Emitter, op: Operation) -> list[str]:
    x, axis = op.args
    v, ct = ordered_int(e, e.input(x), x.data_type)
    y = e.node("ArgMin" if op.op == "argMin" else "ArgMax", [v], "int64", axis=int(axis),
               keepdims=1 if op.options["keepDimensions"] else 0, select_last_index=0)
    return [e.cast(y, op.outputs[0].data_type)]


@lowering("cumulativeSum")
def cumulative_sum(e: Emitter, op: Operation) -> list[str]:
    x, axis = op.args
    out = op.outputs[0].data_type
    v = e.input(x, modular_type(out))
    y = e.node("CumSum", [v, e.scalar(int(axis), "int64", "axis")], e.dtype(v),
               exclusive=int(bool(op.options["exclusive"])),
               reverse=int(bool(op.options["reversed"])))
    return [e.cast(y, out)]


@lowering("softmax")
def softmax(e: Emitter, op: Operation) -> list[str]:
    x, axis = op.args
    out = op.outputs[0].data_type
    y = e.node("Softmax", [e.input(x, "float32")], "float32", axis=int(axis))
    return [e.cast(y, out)]
