"""The per-operator tensor limits table: allowed data types and rank ranges per operand.

This one table feeds both builder validation (`check`) and `MLContext.op_support_limits()`, so
the two can never disagree. Keys are spec operator names (camelCase) and the member names of
the spec's `ML*SupportLimits` dictionaries. Constraints that relate operands to each other
("b has a's data type", "indices rank equals input rank") are checked by each operator.

The optional 4-bit types int4/uint4 (see `dtypes.py`) appear where Chromium and the WPT use
them: `constant` (not graph inputs), dequantizeLinear's input and zeroPoint, and
quantizeLinear's zeroPoint and output. Graph outputs of a 4-bit type need a backend that lists
them (`output_data_types`, e.g. the reference backend; `op_support_limits()["output"]`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from converter.core.webnn.dtypes import ALL_DATA_TYPES, DATA_TYPES, MAX_RANK, MAX_TENSOR_BYTE_LENGTH
from converter.core.webnn.errors import MLTypeError


@dataclass(frozen=True)
class TensorLimits:
    """Allowed data types and inclusive rank range of one operand of one operator."""

    data_types: tuple[str, ...]
    min_rank: int = 0
    max_rank: int = MAX_RANK

    def to_spec(self) -> dict[str, Any]:
        return {"dataTypes": list(self.data_types),
                "rankRange": {"min": self.min_rank, "max": self.max_rank}}


ANY = DATA_TYPES
F = ("float32", "float16")
F_I64_I32_I8 = ("float32", "float16", "int64", "int32", "int8")
CUMSUM_TYPES = ("float32", "float16", "int32", "uint32", "int64", "uint64")
QUANT_INT = ("uint8", "int8", "uint32", "int32", "int4", "uint4")
INDICES = ("int32", "uint32", "int64")
U8 = ("uint8",)
N = MAX_RANK


def _t(types: tuple[str, ...], lo: int = 0, hi: int = N) -> TensorLimits:
    return TensorLimits(types, lo, hi)


def _single(types: tuple[str, ...], lo: int = 0, hi: int = N,
            out: tuple[str, ...] | None = None, out_lo: int | None = None) -> dict[str, TensorLimits]:
    return {"input": _t(types, lo, hi),
            "output": _t(out or types, lo if out_lo is None else out_lo, hi)}


def _binary(types: tuple[str, ...], lo: int = 0, out: tuple[str, ...] | None = None
            ) -> dict[str, TensorLimits]:
    return {"a": _t(types, lo), "b": _t(types, lo), "output": _t(out or types, lo)}


def _build_table() -> dict[str, dict[str, TensorLimits]]:
    t: dict[str, dict[str, TensorLimits]] = {}
    for op in ("add", "sub", "mul", "div", "max", "min", "pow"):
        t[op] = _binary(ANY)
    for op in ("equal", "notEqual", "greater", "greaterOrEqual", "lesser", "lesserOrEqual"):
        t[op] = _binary(ANY, out=U8)
    for op in ("logicalAnd", "logicalOr", "logicalXor"):
        t[op] = _binary(U8)
    t["logicalNot"] = {"a": _t(U8), "output": _t(U8)}
    for op in ("isNaN", "isInfinite"):
        t[op] = {"a": _t(F), "output": _t(U8)}
    for op in ("abs", "neg", "sign"):
        t[op] = _single(F_I64_I32_I8)
    t["identity"] = _single(ANY)
    for op in ("ceil", "cos", "erf", "exp", "floor", "log", "reciprocal", "roundEven", "sin",
               "sqrt", "tan"):
        t[op] = _single(F)
    for op in ("elu", "gelu", "hardSigmoid", "hardSwish", "leakyRelu", "linear", "sigmoid",
               "softplus", "softsign", "tanh"):
        t[op] = _single(F)
    t["relu"] = _single(F_I64_I32_I8)
    t["prelu"] = {"input": _t(F_I64_I32_I8), "slope": _t(F_I64_I32_I8),
                  "output": _t(F_I64_I32_I8)}
    t["clamp"] = _single(ANY)
    t["cast"] = _single(ANY)
    t["where"] = {"condition": _t(U8), "trueValue": _t(ANY), "falseValue": _t(ANY),
                  "output": _t(ANY)}
    for op in ("argMin", "argMax"):
        t[op] = _single(ANY, 1, out=("int32", "int64"), out_lo=0)
    t["batchNormalization"] = {"input": _t(F, 1), "mean": _t(F, 1, 1), "variance": _t(F, 1, 1),
                               "scale": _t(F, 1, 1), "bias": _t(F, 1, 1), "output": _t(F, 1)}
    t["concat"] = {"inputs": _t(ANY, 1), "output": _t(ANY, 1)}
    t["split"] = {"input": _t(ANY, 1), "outputs": _t(ANY, 1)}
    for op in ("conv2d", "convTranspose2d"):
        t[op] = {"input": _t(F, 4, 4), "filter": _t(F, 4, 4), "bias": _t(F, 1, 1),
                 "output": _t(F, 4, 4)}
    t["cumulativeSum"] = _single(CUMSUM_TYPES, 1)
    t["dequantizeLinear"] = {"input": _t(QUANT_INT), "scale": _t(F), "zeroPoint": _t(QUANT_INT),
                             "output": _t(F)}
    t["quantizeLinear"] = {"input": _t(F), "scale": _t(F), "zeroPoint": _t(QUANT_INT),
                           "output": _t(QUANT_INT)}
    t["expand"] = _single(ANY)
    t["gather"] = {"input": _t(ANY, 1), "indices": _t(INDICES), "output": _t(ANY)}
    t["gatherElements"] = {"input": _t(ANY, 1), "indices": _t(INDICES, 1),
                           "output": _t(ANY, 1)}
    t["gatherND"] = {"input": _t(ANY, 1), "indices": _t(INDICES, 1), "output": _t(ANY)}
    t["scatterElements"] = {"input": _t(ANY, 1), "indices": _t(INDICES, 1),
                            "updates": _t(ANY, 1), "output": _t(ANY, 1)}
    t["scatterND"] = {"input": _t(ANY, 1), "indices": _t(INDICES, 1), "updates": _t(ANY),
                      "output": _t(ANY, 1)}
    t["gemm"] = {"a": _t(F, 2, 2), "b": _t(F, 2, 2), "c": _t(F, 0, 2), "output": _t(F, 2, 2)}
    t["matmul"] = _binary(F, 2)
    t["gru"] = {"input": _t(F, 3, 3), "weight": _t(F, 3, 3), "recurrentWeight": _t(F, 3, 3),
                "bias": _t(F, 2, 2), "recurrentBias": _t(F, 2, 2),
                "initialHiddenState": _t(F, 3, 3), "output0": _t(F, 3, 3),
                "output1": _t(F, 4, 4)}
    t["gruCell"] = {"input": _t(F, 2, 2), "weight": _t(F, 2, 2), "recurrentWeight": _t(F, 2, 2),
                    "hiddenState": _t(F, 2, 2), "bias": _t(F, 1, 1),
                    "recurrentBias": _t(F, 1, 1), "output": _t(F, 2, 2)}
    t["lstm"] = {"input": _t(F, 3, 3), "weight": _t(F, 3, 3), "recurrentWeight": _t(F, 3, 3),
                 "bias": _t(F, 2, 2), "recurrentBias": _t(F, 2, 2),
                 "peepholeWeight": _t(F, 2, 2), "initialHiddenState": _t(F, 3, 3),
                 "initialCellState": _t(F, 3, 3), "output0": _t(F, 3, 3),
                 "output1": _t(F, 3, 3), "output2": _t(F, 4, 4)}
    t["lstmCell"] = {"input": _t(F, 2, 2), "weight": _t(F, 2, 2),
                     "recurrentWeight": _t(F, 2, 2), "hiddenState": _t(F, 2, 2),
                     "cellState": _t(F, 2, 2), "bias": _t(F, 1, 1),
                     "recurrentBias": _t(F, 1, 1), "peepholeWeight": _t(F, 1, 1),
                     "output0": _t(F, 2, 2), "output1": _t(F, 2, 2)}
    t["instanceNormalization"] = {"input": _t(F, 4, 4), "scale": _t(F, 1, 1),
                                  "bias": _t(F, 1, 1), "output": _t(F, 4, 4)}
    t["layerNormalization"] = {"input": _t(F), "scale": _t(F), "bias": _t(F), "output": _t(F)}
    t["pad"] = _single(ANY)
    for op in ("averagePool2d", "l2Pool2d"):
        t[op] = _single(F, 4, 4)
    t["maxPool2d"] = _single(ANY, 4, 4)
    for op in ("reduceL1", "reduceSum", "reduceSumSquare", "reduceProduct"):
        t[op] = _single(CUMSUM_TYPES)
    for op in ("reduceL2", "reduceLogSum", "reduceLogSumExp", "reduceMean"):
        t[op] = _single(F)
    for op in ("reduceMax", "reduceMin"):
        t[op] = _single(ANY)
    t["resample2d"] = _single(("float32", "float16", "uint8", "int8"), 4, 4)
    for op in ("reshape", "reverse", "slice", "tile", "transpose"):
        t[op] = _single(ANY)
    t["softmax"] = _single(F, 1)
    t["triangular"] = _single(ANY, 2)
    return t


OP_LIMITS: dict[str, dict[str, TensorLimits]] = _build_table()

# Limits that apply to every graph input and output, and to every constant.
IO_LIMITS = TensorLimits(DATA_TYPES, 0, MAX_RANK)
CONSTANT_LIMITS = TensorLimits(ALL_DATA_TYPES, 0, MAX_RANK)


def check(op: str, role: str, data_type: str, rank: int) -> None:
    """Raise MLTypeError unless (data_type, rank) lies inside the table for op's operand role."""
    lim = OP_LIMITS[op][role]
    if data_type not in lim.data_types:
        raise MLTypeError(f"{op}: {role} data type {data_type} is not one of "
                          f"{', '.join(lim.data_types)}")
    if not lim.min_rank <= rank <= lim.max_rank:
        raise MLTypeError(f"{op}: {role} rank {rank} is outside the supported range "
                          f"[{lim.min_rank}, {lim.max_rank}]")


def op_support_limits(preferred_input_layout: str = "nchw",
                      output_types: tuple[str, ...] = DATA_TYPES) -> dict[str, Any]:
    """The spec's `MLOpSupportLimits` dictionary generated from OP_LIMITS; `output_types` are
    the data types the context's graphs can output (a backend may add the 4-bit types)."""
    out: dict[str, Any] = {
        "preferredInputLayout": preferred_input_layout,
        "maxTensorByteLength": MAX_TENSOR_BYTE_LENGTH,
        "input": IO_LIMITS.to_spec(),
        "constant": CONSTANT_LIMITS.to_spec(),
        "output": TensorLimits(output_types, 0, MAX_RANK).to_spec(),
    }
    for op, roles in OP_LIMITS.items():
        out[op] = {role: lim.to_spec() for role, lim in roles.items()}
    return out


def check_io(what: str, data_type: str, rank: int, *, constant: bool = False,
             output_types: tuple[str, ...] | None = None) -> None:
    """Raise MLTypeError unless a graph input/output (or, with `constant`, a constant)
    descriptor is supported; `output_types`: a graph output's allowed data types (the
    context's, see `op_support_limits`)."""
    lim = CONSTANT_LIMITS if constant else IO_LIMITS
    if output_types is not None:
        lim = TensorLimits(output_types, 0, MAX_RANK)
    if data_type not in lim.data_types or not lim.min_rank <= rank <= lim.max_rank:
        raise MLTypeError(f"{what}: data type {data_type} with rank {rank} is not supported "
                          f"(data types {', '.join(lim.data_types)}; rank range "
                          f"[{lim.min_rank}, {lim.max_rank}])")
