"""The WebNN operators: one `Operator` per spec operator (`OPERATORS`, `operator(name)`).

An operator of the spec is known exactly when an operator-family mixin of `MLGraphBuilder`
(`converter.core.webnn.ops`) has a method for it; its parameters are the method's, its output
arity the method's return type (one operand, or a list), its limits the row of
`limits.OP_LIMITS` and its family the row of `FAMILIES` naming it. Everything else that is
keyed by operator (the runtimes' kernels, implementations and ONNX lowerings, the target
rules' operator lists) registers against this table: an unknown name fails at import time,
and tests/converter/core/webnn/test_operators.py finds a missing registration.

Restrictions: `input`, `constant`, `packed_constant` and `build` are not operators; operator
names are plain camelCase identifiers; every operator has exactly one family and one row of
limits (checked when this module is imported).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from converter.core.webnn.limits import OP_LIMITS, TensorLimits
from converter.core.webnn.ops.conv import ConvOps
from converter.core.webnn.ops.elementwise import ElementwiseOps
from converter.core.webnn.ops.gather import GatherOps
from converter.core.webnn.ops.linalg import LinalgOps
from converter.core.webnn.ops.normalization import NormalizationOps
from converter.core.webnn.ops.pool import PoolOps
from converter.core.webnn.ops.quantize import QuantizeOps
from converter.core.webnn.ops.recurrent import RecurrentOps
from converter.core.webnn.ops.reduce import ReduceOps
from converter.core.webnn.ops.resample import ResampleOps
from converter.core.webnn.ops.shape import ShapeOps


class OperatorMethods(ElementwiseOps, ConvOps, PoolOps, ReduceOps, ShapeOps, GatherOps,
                      LinalgOps, NormalizationOps, RecurrentOps, QuantizeOps, ResampleOps):
    """Every operator method, one mixin per family; MLGraphBuilder adds nothing but `apply`."""


Family = Literal["unary", "binary", "reduce", "axis", "activation", "conv", "pool", "shape",
                 "gather", "linalg", "normalization", "recurrent", "quantize", "resample"]

FAMILIES: Mapping[Family, tuple[str, ...]] = {
    # elementwise operators of one operand (the target rules merge their axes and push
    # transposes through them)
    "unary": ("abs", "cast", "ceil", "clamp", "cos", "elu", "erf", "exp", "floor", "gelu",
              "hardSigmoid", "hardSwish", "identity", "isInfinite", "isNaN", "leakyRelu",
              "linear", "log", "logicalNot", "neg", "reciprocal", "relu", "roundEven",
              "sigmoid", "sign", "sin", "softplus", "softsign", "sqrt", "tan", "tanh"),
    # elementwise operators of two operands (where: three) with bidirectional broadcasting
    "binary": ("add", "div", "equal", "greater", "greaterOrEqual", "lesser", "lesserOrEqual",
               "logicalAnd", "logicalOr", "logicalXor", "max", "min", "mul", "notEqual", "pow",
               "sub", "where"),
    # reductions over `axes`
    "reduce": ("reduceL1", "reduceL2", "reduceLogSum", "reduceLogSumExp", "reduceMax",
               "reduceMean", "reduceMin", "reduceProduct", "reduceSum", "reduceSumSquare"),
    # operators along one `axis`
    "axis": ("argMax", "argMin", "cumulativeSum", "softmax"),
    # an activation with a unidirectionally broadcast slope operand
    "activation": ("prelu",),
    "conv": ("conv2d", "convTranspose2d"),
    "pool": ("averagePool2d", "l2Pool2d", "maxPool2d"),
    "shape": ("concat", "expand", "pad", "reshape", "reverse", "slice", "split", "tile",
              "transpose", "triangular"),
    "gather": ("gather", "gatherElements", "gatherND", "scatterElements", "scatterND"),
    "linalg": ("gemm", "matmul"),
    "normalization": ("batchNormalization", "instanceNormalization", "layerNormalization"),
    "recurrent": ("gru", "gruCell", "lstm", "lstmCell"),
    "quantize": ("dequantizeLinear", "quantizeLinear"),
    "resample": ("resample2d",),
}
"""Each family's operators (spec names, sorted)."""

_SPEC_NAMES = {"gather_nd": "gatherND", "scatter_nd": "scatterND", "is_nan": "isNaN"}
"""Builder methods whose spec name is not their camelCase spelling."""

_FIXED_LIST_OUTPUTS = {"lstmCell": 2}
"""Operators returning a list of a fixed length (the others returning a list vary)."""

_NOT_OPERATORS = frozenset({"input", "constant", "packed_constant", "build"})


@dataclass(frozen=True)
class Param:
    """One builder parameter: spec (camelCase) name, Python name, operand-valued or not, and
    for an option its keyword default (None for positional parameters)."""

    spec_name: str
    py_name: str
    operand: bool
    default: Any = None


@dataclass(frozen=True)
class Operator:
    """One WebNN operator (see the module docstring).

    `positional` are the spec's positional parameters after which `Operation.args` are
    recorded (operands, concat's operand list, or required literals such as `axis`);
    `options` maps each spec option name (camelCase) to its keyword parameter; `outputs` is
    the number of outputs, None when it varies (split, gru, lstm); `limits` maps each operand
    role to its `TensorLimits`.
    """

    name: str
    method: str
    positional: tuple[Param, ...]
    options: Mapping[str, Param]
    outputs: int | None
    family: Family
    limits: Mapping[str, TensorLimits]

    @property
    def operand_options(self) -> frozenset[str]:
        return frozenset(name for name, p in self.options.items() if p.operand)

    @property
    def returns_list(self) -> bool:
        """The builder method returns a list of operands (not one operand)."""
        return self.outputs != 1


def camel(name: str) -> str:
    """`recurrent_weight` -> `recurrentWeight`."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _operator(method: str, family_of: Mapping[str, Family]) -> Operator:
    name = _SPEC_NAMES.get(method, camel(method))
    sig = inspect.signature(getattr(OperatorMethods, method))
    positional, options = [], {}
    for p in list(sig.parameters.values())[1:]:
        operand = "MLOperand" in str(p.annotation)
        if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            positional.append(Param(camel(p.name), p.name, operand))
        elif p.kind is inspect.Parameter.KEYWORD_ONLY:
            options[camel(p.name)] = Param(camel(p.name), p.name, operand, p.default)
    outputs = _FIXED_LIST_OUTPUTS.get(name) if str(sig.return_annotation).startswith(
        "list") else 1
    if name not in family_of:
        raise ValueError(f"WebNN operator {name} has no family in FAMILIES")
    if name not in OP_LIMITS:
        raise ValueError(f"WebNN operator {name} has no row in limits.OP_LIMITS")
    return Operator(name, method, tuple(positional), options, outputs, family_of[name],
                    OP_LIMITS[name])


def _build_table() -> dict[str, Operator]:
    family_of: dict[str, Family] = {}
    for family in get_args(Family):
        for name in FAMILIES[family]:
            if name in family_of:
                raise ValueError(f"WebNN operator {name} is in two families")
            family_of[name] = family
    table: dict[str, Operator] = {}
    for method, _ in inspect.getmembers(OperatorMethods, inspect.isfunction):
        if not method.startswith("_") and method not in _NOT_OPERATORS:
            op = _operator(method, family_of)
            table[op.name] = op
    for what, names in (("FAMILIES", family_of), ("limits.OP_LIMITS", OP_LIMITS)):
        unknown = sorted(set(names) - set(table))
        if unknown:
            raise ValueError(f"{what} names unknown WebNN operators: {', '.join(unknown)}")
    return dict(sorted(table.items()))


OPERATORS: Mapping[str, Operator] = _build_table()
"""Every WebNN operator by spec name, sorted by name."""


def operator(name: str) -> Operator:
    """The operator called `name` (spec spelling); ValueError if there is none. Registries
    keyed by operator call this when they register, so a misspelt name fails at import."""
    op = OPERATORS.get(name)
    if op is None:
        raise ValueError(f"unknown WebNN operator {name!r}")
    return op

