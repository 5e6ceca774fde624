"""Reader of the JSON twin of the `.webnn` text (`webnn-graph-json`, format doc section 2).

Reading (`parse_json`, `loads_json`, `load_webnn_json`) converts the document into the text
reader's syntax tree and replays it through the same builder, so both forms are validated
alike. Checks (each a `WebnnFormatError` naming the file and the JSON location): `format` is
`"webnn-graph-json"`, `version` 1 or 2, fields of the right JSON types, dimensions
non-negative integers or `{"name", "maxSize"}` objects (inputs only), `init` of a known kind,
`inlineBytes` values 0-255, no duplicate keys in any object (two constants or inputs of one
name), node ids unique, `inputs` and option references declared before
use, `outputs` non-empty, object-valued options refused (no text form), `NaN`/`Infinity`
literals refused; then everything the text reader checks (shapes against the spec maximum
before any allocation, weights entries against the declaration and the file, builder
validation). Two bindings of the same value are read through an added `identity`. A UTF-8
byte order mark is skipped. The loaded graph's `inputs` keep the document's order.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeGuard

from converter.core.webnn import ML, MLContext, MLGraph
from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.graph_builder import GraphBuilder
from converter.io.serialize.loader import build_graph, read_file
from converter.io.serialize.syntax import (
    Arg,
    ConstDecl,
    Dim,
    GraphText,
    InputDecl,
    NodeDecl,
    Ref,
    TypeSpec,
)
from converter.io.serialize.tables import (
    DEFAULT_MAX_SCALAR_BYTES,
    JSON_FORMAT,
    LONG_DTYPES,
    MAX_NESTING,
    MAX_TEXT_BYTES,
    SUPPORTED_JSON_VERSIONS,
)
from converter.io.serialize.tokenizer import Source
from converter.io.serialize.weights import WeightsBlob, parse_manifest

_BOM = b"\xef\xbb\xbf"


class _JsonSource(Source):
    """Error positions of a JSON document: `pos` indexes a list of JSON locations."""

    def __init__(self, path: str) -> None:
        self.text = ""
        self.path = path
        self._newlines: list[int] = []
        self.locations: list[str] = []

    def at(self, location: str) -> int:
        self.locations.append(location)
        return len(self.locations) - 1

    def where(self, pos: int) -> tuple[int, int]:  # pragma: no cover - not line-based
        return 0, 0

    def error(self, message: str, pos: int) -> WebnnFormatError:
        return WebnnFormatError(f"{self.locations[pos]}: {message}", self.path)


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not valid JSON (write numbers only)")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r} in an object")
        out[key] = value
    return out


class _JsonParser:
    """Checks a decoded document and converts it into the syntax tree (`parse()`)."""

    def __init__(self, data: Any, path: str) -> None:
        self.data = data
        self.src = _JsonSource(path)

    def fail(self, where: str, message: str) -> WebnnFormatError:
        return WebnnFormatError(f"{where}: {message}", self.src.path)

    def field(self, obj: dict[str, Any], key: str, where: str, kind: type, what: str,
              default: Any = ...) -> Any:
        """`obj[key]`, checked to be a `kind` (`default` when absent; required without)."""
        if key not in obj:
            if default is ...:
                raise self.fail(where or "document", f"missing {key!r} ({what})")
            return default
        value = obj[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
            raise self.fail(f"{where}.{key}" if where else key,
                            f"must be {what}, got {_kind(value)}")
        return value

    def parse(self) -> tuple[GraphText, dict[str, str], dict[str, str]]:
        d = self.data
        if not isinstance(d, dict):
            raise self.fail("document", f"must be a JSON object, got {_kind(d)}")
        fmt = d.get("format")
        if fmt != JSON_FORMAT:
            raise self.fail("format", f"format is {fmt!r}, expected {JSON_FORMAT!r}")
        version = d.get("version")
        if not _is_int(version) or version not in SUPPORTED_JSON_VERSIONS:
            raise self.fail("version", f"unsupported version {version!r} (supported: 1, 2)")
        name = self.field(d, "name", "", str, "a string", "graph")
        quantized = self.field(d, "quantized", "", bool, "a boolean", False)
        inputs = self.field(d, "inputs", "", dict, "an object", {})
        consts = self.field(d, "consts", "", dict, "an object", {})
        nodes = self.field(d, "nodes", "", list, "an array")
        outputs = self.field(d, "outputs", "", dict, "an object")
        in_decls = [self._input(k, v) for k, v in inputs.items()]
        const_decls = [self._const(k, v) for k, v in consts.items()]
        node_decls = self._nodes(nodes)
        declared = ({i.name for i in in_decls} | {c.name for c in const_decls}
                    | {o for n in node_decls for o in n.outputs})
        out_list, out_names = self._outputs(outputs, node_decls, declared)
        in_names = self._names(d.get("names", {}), {i.name for i in in_decls})
        doc = GraphText(name, version, quantized, tuple(in_decls), tuple(const_decls),
                        tuple(node_decls), tuple(out_list), self.src)
        return doc, in_names, out_names

    def _type(self, entry: Any, where: str, allow_dyn: bool) -> TypeSpec:
        if not isinstance(entry, dict):
            raise self.fail(where, f"must be an object with dataType and shape, got "
                            f"{_kind(entry)}")
        dt = self.field(entry, "dataType", where, str, "a data type name")
        if dt not in LONG_DTYPES.values():
            raise self.fail(f"{where}.dataType", f"unknown data type {dt!r} (expected one of "
                            f"{', '.join(LONG_DTYPES.values())})")
        shape = self.field(entry, "shape", where, list, "an array")
        dims: list[Dim] = []
        for i, d in enumerate(shape):
            at = f"{where}.shape[{i}]"
            if _is_int(d) and d >= 0:
                dims.append(Dim(d))
            elif isinstance(d, dict) and allow_dyn:
                dname, dmax = d.get("name"), d.get("maxSize")
                if (set(d) != {"name", "maxSize"} or not isinstance(dname, str)
                        or not _is_int(dmax) or dmax < 0):
                    raise self.fail(at, "a dynamic dimension is {\"name\": string, "
                                    f"\"maxSize\": non-negative integer}}, got {_show(d)}")
                dims.append(Dim(dmax, dname))
            elif isinstance(d, dict):
                raise self.fail(at, "dynamic dimensions are only allowed in inputs")
            else:
                raise self.fail(at, f"a dimension must be a non-negative integer, got "
                                f"{_show(d)}")
        return TypeSpec(dt, tuple(dims))

    def _input(self, name: str, entry: Any) -> InputDecl:
        where = f"inputs.{name}"
        return InputDecl(name, self._type(entry, where, True), self.src.at(where))

    def _const(self, name: str, entry: Any) -> ConstDecl:
        where = f"consts.{name}"
        ty = self._type(entry, where, False)
        init = self.field(entry, "init", where, dict, "an object")
        kind = init.get("kind")
        at = f"{where}.init"
        if kind == "weights":
            key = self.field(init, "ref", at, str, "the weights key (a string)")
            value: Any = key
        elif kind == "scalar":
            value = init.get("value")
            if not _is_number(value):
                raise self.fail(f"{at}.value", f"must be a number, got {_show(value)}")
        elif kind == "inlineBytes":
            raw = self.field(init, "bytes", at, list, "an array of bytes")
            if not all(_is_int(b) and 0 <= b <= 255 for b in raw):
                bad = next(b for b in raw if not (_is_int(b) and 0 <= b <= 255))
                raise self.fail(f"{at}.bytes", f"value {_show(bad)} is not a byte (0-255)")
            value, kind = tuple(raw), "bytes"
        else:
            raise self.fail(f"{at}.kind", f"unknown init kind {kind!r} (expected weights, "
                            "scalar or inlineBytes)")
        return ConstDecl(name, ty, kind, value, self.src.at(where))

    def _nodes(self, nodes: list[Any]) -> list[NodeDecl]:
        out: list[NodeDecl] = []
        ids: set[str] = set()
        for i, node in enumerate(nodes):
            where = f"nodes[{i}]"
            if not isinstance(node, dict):
                raise self.fail(where, f"must be an object, got {_kind(node)}")
            nid = self.field(node, "id", where, str, "a string")
            if not nid:
                raise self.fail(f"{where}.id", "must not be empty")
            where = f"nodes[{i}] (id {nid!r})"
            if nid in ids:
                raise self.fail(where, f"duplicate node id {nid!r}")
            ids.add(nid)
            op = self.field(node, "op", where, str, "an operator name")
            if not op:
                raise self.fail(f"{where}.op", "must not be empty")
            inputs = self.field(node, "inputs", where, list, "an array of operand names", [])
            options = self.field(node, "options", where, dict, "an object", {})
            outputs = self.field(node, "outputs", where, list, "an array of names", None)
            if outputs is not None and (not outputs or not all(
                    isinstance(o, str) and o for o in outputs)):
                raise self.fail(f"{where}.outputs", "must be a non-empty array of non-empty "
                                "strings")
            pos = self.src.at(where)
            args: list[Arg] = []
            for j, ref in enumerate(inputs):
                if not isinstance(ref, str):
                    raise self.fail(f"{where}.inputs[{j}]", f"must be an operand name (a "
                                    f"string), got {_show(ref)}")
                args.append(Arg(None, Ref(ref, pos), pos))
            for key, value in options.items():
                args.append(Arg(key, self._option(value, f"{where}.options.{key}", 0), pos))
            names = tuple(outputs) if outputs is not None else (nid,)
            out.append(NodeDecl(names, op, tuple(args), pos, outputs is not None))
        return out

    def _option(self, value: Any, where: str, depth: int) -> Any:
        if isinstance(value, dict):
            raise self.fail(where, f"object values are not supported (no text form), got "
                            f"{_show(value)}")
        if isinstance(value, list):
            if depth >= MAX_NESTING:
                raise self.fail(where, f"arrays nested deeper than {MAX_NESTING} levels")
            return [self._option(v, where, depth + 1) for v in value]
        return value

    def _outputs(self, outputs: dict[str, Any], nodes: list[NodeDecl], declared: set[str]
                 ) -> tuple[list[tuple[str, int]], dict[str, str]]:
        if not outputs:
            raise self.fail("outputs", "the graph has no outputs (outputs must be non-empty)")
        out_list: list[tuple[str, int]] = []
        out_names: dict[str, str] = {}
        bound: set[str] = set()
        fresh = 0
        for binding, value in outputs.items():
            if not isinstance(value, str):
                raise self.fail(f"outputs.{binding}", f"must name a value (a string), got "
                                f"{_show(value)}")
            pos = self.src.at(f"outputs.{binding}")
            if value in bound:
                while f"__binding_{fresh}" in declared:
                    fresh += 1
                alias = f"__binding_{fresh}"
                declared.add(alias)
                nodes.append(NodeDecl((alias,), "identity", (Arg(None, Ref(value, pos), pos),),
                                      pos, False))
                value = alias
            bound.add(value)
            out_list.append((value, pos))
            out_names[value] = binding
        return out_list, out_names

    def _names(self, names: Any, inputs: set[str]) -> dict[str, str]:
        if not isinstance(names, dict) or not isinstance(names.get("inputs", {}), dict):
            raise self.fail("names", "must be {\"inputs\": {identifier: original name}}")
        m = names.get("inputs", {})
        for k, v in m.items():
            if not isinstance(v, str) or not v:
                raise self.fail(f"names.inputs.{k}", "must be a non-empty string")
            if k not in inputs:
                raise self.fail(f"names.inputs.{k}", f"{k!r} is not a declared input")
        return dict(m)


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean",
            type(None): "null", int: "an integer", float: "a number"}.get(type(value),
                                                                          type(value).__name__)


def _show(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def parse_json(text: str | bytes, path: str = "<string>"
               ) -> tuple[GraphText, dict[str, str], dict[str, str]]:
    """Parse and check a `.webnn.json` document; returns the syntax tree the text reader
    builds from, and the (input, output) renaming tables."""
    if len(text) > MAX_TEXT_BYTES:
        raise WebnnFormatError(f"the document is larger than {MAX_TEXT_BYTES} bytes", path)
    if isinstance(text, bytes) and text.startswith(_BOM):
        text = text[len(_BOM):]
    try:
        data = json.loads(text, parse_constant=_reject_constant,
                          object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as e:
        raise WebnnFormatError(f"invalid JSON: {e.msg}", path, e.lineno, e.colno) from None
    except (ValueError, RecursionError) as e:
        raise WebnnFormatError(f"invalid JSON: {e}", path) from None
    return _JsonParser(data, path).parse()


def loads_json(text: str | bytes, weights: bytes | None = None,
               manifest: str | bytes | None = None, *, context: MLContext | None = None,
               free_dims: Mapping[str, int] | None = None,
               max_scalar_bytes: int = DEFAULT_MAX_SCALAR_BYTES, path: str = "<string>"
               ) -> MLGraph:
    """Build an MLGraph from an in-memory `.webnn.json` document (and optionally the WGWT
    weights bytes and manifest JSON)."""
    doc, in_names, out_names = parse_json(text, path)
    man = parse_manifest(manifest, f"{path} (manifest)",
                         weights_bytes=None if weights is None else len(weights)) \
        if manifest is not None else None
    blob = (WeightsBlob(bytes(weights), None, len(weights), f"{path} (weights)")
            if weights is not None else None)
    graph = GraphBuilder(doc, man, blob, context or ML().create_context(), free_dims or {},
                     max_scalar_bytes, (in_names, out_names)).run()
    return _in_read_order(graph, doc, in_names)


def _in_read_order(graph: MLGraph, doc: GraphText, in_names: Mapping[str, str]) -> MLGraph:
    """`graph` with its inputs in the order the document declares them (the builder lists
    them in the order the outputs reach them)."""
    order = [in_names.get(d.name, d.name) for d in doc.inputs]
    inputs = {name: graph.inputs[name] for name in order if name in graph.inputs}
    if list(inputs) == list(graph.inputs):
        return graph
    return dataclasses.replace(graph, inputs=inputs)


def is_json_document(head: bytes) -> bool:
    """True when a graph file's first bytes look like JSON (an object), not `.webnn` text."""
    head = head[len(_BOM):] if head.startswith(_BOM) else head
    return head.lstrip(b" \t\r\n")[:1] == b"{"


def load_webnn_json(path: str | os.PathLike[str], *, weights_path: str | Path | None = None,
                    manifest_path: str | Path | None = None,
                    context: MLContext | None = None,
                    free_dims: Mapping[str, int] | None = None,
                    max_scalar_bytes: int = DEFAULT_MAX_SCALAR_BYTES) -> MLGraph:
    """Load `<stem>.webnn.json` into an MLGraph, with its weights found next to it unless
    given (same discovery as the text form: `model.safetensors`, `<stem>.safetensors`,
    `<stem>.weights` + manifest, `model.weights` + manifest). `free_dims` sets dynamic
    dimensions by name (default: their maximum)."""
    path = Path(path)
    raw = read_file(path, MAX_TEXT_BYTES, "the graph file")
    doc, in_names, out_names = parse_json(raw, str(path))
    graph = build_graph(doc, path, weights_path=weights_path, manifest_path=manifest_path,
                        context=context, free_dims=free_dims,
                        max_scalar_bytes=max_scalar_bytes, names=(in_names, out_names))
    return _in_read_order(graph, doc, in_names)


__all__ = ["is_json_document", "load_webnn_json", "loads_json", "parse_json"]
