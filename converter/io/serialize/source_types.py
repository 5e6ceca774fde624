"""The `sourceDataTypes` table of an export: the types callers hold a graph's narrowed or
widened inputs and outputs in, read back onto a loaded graph.

A graph lowered for a target (`converter.passes.targets`) may take int32 where its callers hold
int64 (rule narrow-int64) or int32 where they hold int8 (rule widen-io); `MLGraph.narrowed_inputs`
/ `narrowed_outputs` record it, and the feeds (`converter.core.feeds`) and the generated
JavaScript convert the values. The `.webnn` text and its JSON twin only hold the graph's own
types, so the writers put the table beside the renamed-names table (`WebnnPlan.manifest`:
the manifest's `"sourceDataTypes"`, the `.safetensors` metadata's `webnn.sourceDataTypes`):
`{"inputs": {identifier: type}, "outputs": {identifier: type}}`, long data type names.

Restrictions (a `WebnnFormatError` naming the file): each section maps identifiers to
integer data type names; a type must be one the graph's declared type carries exactly (int64
/ uint64 for int32 / uint32, or an integer type the declared one holds every value of, e.g.
int8 for int32); identifiers must be declared inputs / listed outputs.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import numpy as np

from converter.core.webnn import MLGraph
from converter.core.webnn.dtypes import NARROWED_TYPES
from converter.io.serialize.errors import WebnnFormatError

SOURCE_TYPES_KEY = "sourceDataTypes"
"""The manifest key of the table (the safetensors metadata key is `webnn.` + this)."""
SOURCE_TYPES_METADATA_KEY = f"webnn.{SOURCE_TYPES_KEY}"

SourceTypes = tuple[Mapping[str, str], Mapping[str, str]]
"""(inputs, outputs): identifier -> caller-side data type."""

_INTEGER_TYPES = ("int8", "uint8", "int32", "uint32", "int64", "uint64")


def parse_source_types(data: Any, path: str, where: str = SOURCE_TYPES_KEY) -> SourceTypes:
    """The (inputs, outputs) maps of a parsed `sourceDataTypes` value (absent sections are
    empty); `WebnnFormatError` naming `path` and `where` when it is malformed."""
    if not isinstance(data, dict):
        raise WebnnFormatError(f"{where} must be an object", path)
    maps: list[dict[str, str]] = []
    for section in ("inputs", "outputs"):
        m = data.get(section, {})
        if not isinstance(m, dict) or not all(isinstance(k, str) and v in _INTEGER_TYPES
                                              for k, v in m.items()):
            raise WebnnFormatError(f"{where}.{section} must map identifiers to integer data "
                                   f"types ({', '.join(_INTEGER_TYPES)})", path)
        maps.append(dict(m))
    return maps[0], maps[1]


def source_types_metadata(text: str | None, path: str) -> SourceTypes | None:
    """The table from safetensors metadata text (None when absent)."""
    if text is None:
        return None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise WebnnFormatError(f"metadata {SOURCE_TYPES_METADATA_KEY}: invalid JSON ({e})",
                               path) from None
    return parse_source_types(data, path, f"metadata {SOURCE_TYPES_METADATA_KEY}")


def carries(graph_type: str, source_type: str) -> bool:
    """Whether a graph operand of `graph_type` can carry a caller's `source_type` values:
    the 32-bit type of a narrowed 64-bit one, or an integer type holding every value."""
    if NARROWED_TYPES.get(source_type) == graph_type:
        return True
    try:
        g, s = np.dtype(graph_type), np.dtype(source_type)
    except TypeError:
        return False
    return g.kind in "iu" and s.kind in "iu" and np.can_cast(s, g, "safe")


def with_source_types(graph: MLGraph, types: SourceTypes | None,
                      names: tuple[Mapping[str, str], Mapping[str, str]], path: str
                      ) -> MLGraph:
    """`graph` with `narrowed_inputs` / `narrowed_outputs` set from `types` (keyed by
    identifier; `names` maps identifiers to the graph's input / output names where they
    differ). The same graph when `types` is None or empty."""
    if not types or not (types[0] or types[1]):
        return graph
    tables: list[dict[str, str]] = []
    for section, table, renamed, operands in (("inputs", types[0], names[0], graph.inputs),
                                              ("outputs", types[1], names[1], graph.outputs)):
        out: dict[str, str] = {}
        for ident, source in table.items():
            name = renamed.get(ident, ident)
            operand = operands.get(name)
            if operand is None:
                raise WebnnFormatError(f"{SOURCE_TYPES_KEY}.{section} names {ident!r}, which "
                                       f"is not a graph {section[:-1]}", path)
            if not carries(operand.data_type, source):
                raise WebnnFormatError(f"{SOURCE_TYPES_KEY}.{section}: {ident!r} is "
                                       f"{operand.data_type}, which cannot carry {source}",
                                       path)
            out[name] = source
        tables.append(out)
    return dataclasses.replace(graph, narrowed_inputs=tables[0], narrowed_outputs=tables[1])


__all__ = ["SOURCE_TYPES_KEY", "SOURCE_TYPES_METADATA_KEY", "SourceTypes", "carries",
           "parse_source_types", "source_types_metadata", "with_source_types"]
