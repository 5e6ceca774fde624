"""The WebNN operators: each operator's builder method and parameters (`op_signature`).

An operator of the spec is known exactly when an operator-family mixin of `MLGraphBuilder`
(`converter.core.webnn.ops`) has a method for it, and its parameters are the method's.
Restrictions: `input`, `constant` and `build` are not operators; operator names must be plain
camelCase identifiers (`[A-Za-z][A-Za-z0-9]*`).
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass

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


MULTI_OUTPUT_OPS = frozenset({"split", "gru", "lstm", "lstmCell"})
"""Operators that return a list of operands."""

_OP_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*\Z")


@dataclass(frozen=True)
class Param:
    """One builder parameter: spec (camelCase) name, Python name, operand-valued or not."""

    spec_name: str
    py_name: str
    operand: bool


@dataclass(frozen=True)
class OpSignature:
    """How a spec operator maps to its MLGraphBuilder method.

    `positional` are the spec's positional parameters after which `Operation.args` are
    recorded (operands, concat's operand list, or required literals such as `axis`);
    `options` maps each spec option name (camelCase) to its keyword parameter.
    """

    op: str
    method: str
    positional: tuple[Param, ...]
    options: Mapping[str, Param]

    @property
    def operand_options(self) -> frozenset[str]:
        return frozenset(name for name, p in self.options.items() if p.operand)


def camel(name: str) -> str:
    """`recurrent_weight` -> `recurrentWeight`."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@functools.cache
def _methods() -> dict[str, str]:
    out: dict[str, str] = {}
    for name, _ in inspect.getmembers(OperatorMethods, inspect.isfunction):
        if name.startswith("_") or name in ("input", "constant", "packed_constant", "build"):
            continue
        out[name.replace("_", "").lower()] = name
    return out


@functools.cache
def op_signature(op: str) -> OpSignature | None:
    """The builder method of spec operator `op` and its parameters, or None if unknown."""
    if not isinstance(op, str) or not _OP_NAME_RE.match(op):
        return None
    method = _methods().get(op.lower())
    if method is None:
        return None
    params = list(inspect.signature(getattr(OperatorMethods, method)).parameters.values())[1:]
    positional, options = [], {}
    for p in params:
        operand = "MLOperand" in str(p.annotation)
        param = Param(camel(p.name), p.name, operand)
        if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD:
            positional.append(param)
        elif p.kind is inspect.Parameter.KEYWORD_ONLY:
            options[param.spec_name] = param
    return OpSignature(op, method, tuple(positional), options)


def known_ops() -> list[str]:
    """Builder method names of every operator (snake_case)."""
    return sorted(_methods().values())


