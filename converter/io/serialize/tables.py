"""The tables every reader and writer of the webnn-graph format shares: file constants and
limits, data type names, keywords, operator signatures and option aliases.

Operator signatures are derived from `MLGraphBuilder` itself (`op_signature`): an operator of
the WebNN spec is known exactly when the builder has a method for it, and its parameters are
the method's. Restrictions: `input`, `constant` and `build` are not operators; operator names
must be plain camelCase identifiers (`[A-Za-z][A-Za-z0-9]*`).
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Mapping
from dataclasses import dataclass

from converter.core.webnn import MLGraphBuilder

# -- files ----------------------------------------------------------------------------------
WEIGHTS_MAGIC = b"WGWT"
WEIGHTS_VERSION = 1
WEIGHTS_HEADER_BYTES = 8
MANIFEST_FORMAT = "wg-weights-manifest"
JSON_FORMAT = "webnn-graph-json"
JSON_SUFFIX = ".webnn.json"
SUPPORTED_VERSIONS = (1, 2)
SUPPORTED_JSON_VERSIONS = (1, 2)

# -- reader limits (hostile input) ----------------------------------------------------------
MAX_NESTING = 32
MAX_NUMBER_CHARS = 400
MAX_TEXT_BYTES = 1 << 30
MAX_MANIFEST_BYTES = 256 << 20
DEFAULT_MAX_SCALAR_BYTES = 1 << 30

# -- data types and keywords ----------------------------------------------------------------
SHORT_DTYPES: dict[str, str] = {
    "float32": "f32", "float16": "f16", "int32": "i32", "uint32": "u32", "int64": "i64",
    "uint64": "u64", "int8": "i8", "uint8": "u8", "int4": "i4", "uint4": "u4",
}
LONG_DTYPES: dict[str, str] = {short: long for long, short in SHORT_DTYPES.items()}
UNSUPPORTED_DTYPES = ("int4", "uint4")
KEYWORDS = frozenset({"webnn_graph", "inputs", "consts", "nodes", "outputs", "true", "false",
                      "null", "dyn", "v", *SHORT_DTYPES.values()})

# -- operators and options ------------------------------------------------------------------
MULTI_OUTPUT_OPS = frozenset({"split", "gru", "lstm", "lstmCell"})
OPERAND_KEYS_ANY = frozenset({"scale", "bias", "c", "recurrentBias", "peepholeWeight",
                              "initialHiddenState", "initialCellState"})
"""Argument names whose value, when it names a declared value, is read as that operand."""
DTYPE_VALUE_KEYS = frozenset({"dataType", "outputDataType", "to"})
"""Arguments whose value is a data type name (short names such as `f32` are accepted)."""
LEGACY_OPTIONS = {"roundingType": "outputShapeRounding"}
"""Option names older producers write, mapped to the current spec names."""

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
    for name, _ in inspect.getmembers(MLGraphBuilder, inspect.isfunction):
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
    params = list(inspect.signature(getattr(MLGraphBuilder, method)).parameters.values())[1:]
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


__all__ = ["DEFAULT_MAX_SCALAR_BYTES", "DTYPE_VALUE_KEYS", "JSON_FORMAT", "JSON_SUFFIX",
           "KEYWORDS", "LEGACY_OPTIONS", "LONG_DTYPES", "MANIFEST_FORMAT", "MAX_MANIFEST_BYTES",
           "MAX_NESTING", "MAX_NUMBER_CHARS", "MAX_TEXT_BYTES", "MULTI_OUTPUT_OPS",
           "OPERAND_KEYS_ANY", "SHORT_DTYPES", "SUPPORTED_JSON_VERSIONS", "SUPPORTED_VERSIONS",
           "UNSUPPORTED_DTYPES", "WEIGHTS_HEADER_BYTES", "WEIGHTS_MAGIC", "WEIGHTS_VERSION",
           "OpSignature", "Param", "camel", "known_ops", "op_signature"]
