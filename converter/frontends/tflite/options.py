"""TFLite schema tables and builtin-options decoding with the core `tflite` package.

The `tflite` package (a core dependency) ships the flatbuffer accessor classes of the TFLite
schema, without the object API (`*T` classes). Options tables are decoded here by walking
each accessor class's field getters in schema order, which gives exactly what the object
API of `ai_edge_litert.schema_py_generated` gave (the reader used it before; see
`tests/test_extras.py`): plain dicts with the schema's snake_case field names
(`fused_activation_function`, `stride_w`, ...), every schema default filled in, enums as
ints, scalar vectors as tuples (None when the table does not store the vector), strings as
`str`.

The schema moved on after the `tflite` package's release: the few entries it lacks
(`_NEWER_*` below: one operator, one options table, one options field, two quantization
details and the `Tensor.external_buffer` field) are read here from the raw tables. Anything
newer still (an options type neither knows) is decoded with `ai_edge_litert`'s schema when
LiteRT is installed; without it the reader keeps the operator without options and warns,
naming the extra that would decode them.

Restrictions: options fields that are sub-tables or vectors of tables/strings are not
decoded (no options table of the schema has one); they would come back as accessor objects
or tuples of raw values.
"""

from __future__ import annotations

import functools
import re
from types import ModuleType
from typing import Any, NamedTuple

import flatbuffers
import numpy as np
import tflite
from flatbuffers import number_types as N
from flatbuffers.table import Table

EXTRA = "tflite"
"""The extra that installs the newest TFLite schema (and the LiteRT interpreter); its
command is `converter.core.install.install_hint(EXTRA)`."""


def _enum(cls: Any) -> dict[int, str]:
    return {v: k for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)}


class _Field(NamedTuple):
    """An options field the `tflite` package has no getter for: its snake_case name, vtable
    offset, whether it is a vector, the flatbuffers number type and the scalar default."""

    name: str
    slot: int
    vector: bool
    flags: Any
    default: Any = None


_NEWER_BUILTINS = {209: "STABLEHLO_CASE"}
_NEWER_OPTIONS: dict[int, str] = {}
_NEWER_OPTIONS2 = {23: "StablehloCaseOptions"}
_NEWER_DETAILS = {2: "BlockwiseQuantization", 3: "MultiAxisQuantization"}
_NEWER_FIELDS: dict[str, tuple[_Field, ...]] = {
    "FullyConnectedOptions": (_Field("quant_spec", 14, True, N.Uint8Flags),),
    "StablehloCaseOptions": (_Field("branch_subgraph_indices", 4, True, N.Int32Flags),),
}
"""Options tables (or their trailing fields) newer than the `tflite` package, in schema
order after the fields the package knows."""

_TENSOR_EXTERNAL_BUFFER = _Field("external_buffer", 24, False, N.Uint32Flags, 0)

BUILTIN_NAMES: dict[int, str] = {**_enum(tflite.BuiltinOperator), **_NEWER_BUILTINS}
"""Builtin operator code -> name."""
OPTIONS_NAMES: dict[int, str] = {**_enum(tflite.BuiltinOptions), **_NEWER_OPTIONS}
"""`BuiltinOptions` union tag -> options table name."""
OPTIONS2_NAMES: dict[int, str] = {**_enum(tflite.BuiltinOptions2), **_NEWER_OPTIONS2}
"""`BuiltinOptions2` union tag -> options table name."""
QUANTIZATION_DETAILS: dict[int, str] = {**_enum(tflite.QuantizationDetails), **_NEWER_DETAILS}
"""`QuantizationDetails` union tag -> table name."""


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@functools.cache
def litert_schema() -> ModuleType | None:
    """`ai_edge_litert.schema_py_generated` when LiteRT is installed, else None."""
    try:
        import ai_edge_litert.schema_py_generated as module
    except ImportError:
        return None
    found: ModuleType = module
    return found


def builtin_name(code: int) -> str:
    """The name of builtin operator `code` (`BUILTIN_<code>` when no schema knows it)."""
    name = BUILTIN_NAMES.get(code)
    if name is None and (schema := litert_schema()) is not None:
        name = _enum(schema.BuiltinOperator).get(code)
    return name or f"BUILTIN_{code}"


_SKIP = re.compile(r"^(GetRootAs.*|.*BufferHasIdentifier|Init)$")


@functools.cache
def _getters(cls: type) -> tuple[tuple[str, str, bool], ...]:
    """(getter, snake_case field name, is a vector) of accessor class `cls`, schema order."""
    names = [n for n in vars(cls) if not n.startswith("_") and not _SKIP.match(n)]
    vectors = {n for n in names if n + "IsNone" in names and n + "Length" in names}
    helpers = {v + s for v in vectors for s in ("AsNumpy", "Length", "IsNone")}
    return tuple((n, _snake(n), n in vectors) for n in names if n not in helpers)


def _read(acc: Any, getter: str, vector: bool) -> Any:
    if vector:
        if getattr(acc, getter + "IsNone")():
            return None
        as_numpy = getattr(acc, getter + "AsNumpy", None)
        if as_numpy is not None:
            return tuple(np.asarray(as_numpy()).tolist())
        return tuple(getattr(acc, getter)(j) for j in range(getattr(acc, getter + "Length")()))
    value = getattr(acc, getter)()
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _read_raw(table: Table, field: _Field) -> Any:
    off = table.Offset(field.slot)
    if off == 0:
        return None if field.vector else field.default
    if field.vector:
        return tuple(table.GetVectorAsNumpy(field.flags, off).tolist())
    return table.Get(field.flags, off + table.Pos)


def unknown_options_note() -> str:
    """What to add to the warning about an options type no installed schema knows: the
    extra whose newer schema may know it (empty when LiteRT is installed)."""
    if litert_schema() is not None:
        return ""
    from converter.core.install import install_hint

    return (" (its options are not read; LiteRT's newer schema may know it: "
            f"{install_hint(EXTRA)})")


def decode(table_name: str, table: Table) -> dict[str, Any] | None:
    """The fields of options table `table_name` stored at `table`, every default filled in.

    Tables the core schema does not know are decoded with LiteRT's schema when it is
    installed; None when neither knows them."""
    cls = getattr(tflite, table_name, None)
    out: dict[str, Any] = {}
    if cls is not None:
        acc = cls()
        acc.Init(table.Bytes, table.Pos)
        out = {key: _read(acc, getter, vector) for getter, key, vector in _getters(cls)}
    elif table_name not in _NEWER_FIELDS:
        return _decode_litert(table_name, table)
    for field in _NEWER_FIELDS.get(table_name, ()):
        out[field.name] = _read_raw(table, field)
    return out


def _decode_litert(table_name: str, table: Table) -> dict[str, Any] | None:
    schema = litert_schema()
    if schema is None or not hasattr(schema, table_name + "T"):
        return None
    acc = getattr(schema, table_name)()
    acc.Init(table.Bytes, table.Pos)
    out: dict[str, Any] = {}
    for key, value in vars(getattr(schema, table_name + "T").InitFromObj(acc)).items():
        if isinstance(value, np.ndarray):
            value = tuple(value.tolist())
        elif isinstance(value, list):
            value = tuple(value)
        elif isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        out[_snake(key)] = value
    return out


@functools.cache
def _empty_table() -> Table:
    builder = flatbuffers.Builder(16)
    builder.StartObject(0)
    builder.Finish(builder.EndObject())
    buf = builder.Output()
    return Table(buf, flatbuffers.encode.Get(N.UOffsetTFlags.packer_type, buf, 0))


def defaults(table_name: str) -> dict[str, Any] | None:
    """The schema defaults of options table `table_name` (what an operator without an
    options table means); None when no installed schema knows the table."""
    return decode(table_name, _empty_table())


def tensor_external_buffer(tensor: Any) -> int:
    """`Tensor.external_buffer` of a `tflite.Tensor` accessor (0: the data is not in an
    external buffer file)."""
    return int(_read_raw(tensor._tab, _TENSOR_EXTERNAL_BUFFER))


def sparse_vector_class(kind: int) -> type | None:
    """The accessor class of `SparseIndexVector` union member `kind` (None: unknown)."""
    return {1: tflite.Int32Vector, 2: tflite.Uint16Vector, 3: tflite.Uint8Vector}.get(kind)


__all__ = ["BUILTIN_NAMES", "EXTRA", "OPTIONS2_NAMES", "OPTIONS_NAMES",
           "QUANTIZATION_DETAILS", "builtin_name", "decode", "defaults", "litert_schema",
           "sparse_vector_class", "tensor_external_buffer", "unknown_options_note"]
