"""Writer of the JSON twin of the `.webnn` text (`webnn-graph-json`, format doc section 2).

Writing (`iter_json` / `write_webnn_json`) goes through the text writer's `plan()`: the same
identifiers, the same constant placement (`@scalar` -> `{"kind": "scalar"}`, `@bytes` ->
`{"kind": "inlineBytes"}`, `@weights` -> `{"kind": "weights"}`), the same node layout
(`WebnnPlan.node_parts`: operands in `inputs`, required parameters and every option in
`options`), the same identity nodes for outputs that repeat an operand, version 1 (2 only
with dynamic dims, which MLGraphs do not have) and `quantized`. One object per line for
inputs, constants, nodes and bindings. Layout of the document:

- `inputs` and `consts` in declaration order (`inputs` in the order of `MLGraph.inputs`, the
  order inputs are fed positionally); the reader gives the loaded graph's `inputs` the order
  it reads. The Rust implementation sorts these maps, so other tools may not preserve it.
- `outputs` binds each ORIGINAL output name to its value identifier, in the graph's order.
- `names` (an extension other readers ignore): `{"inputs": {identifier: original}}`, only
  when some graph input name is not a valid identifier.

Numbers: integers as digits, floats in shortest round-trip form; NaN option values are
rejected (`WebnnExportError`), infinite clamp bounds dropped (as in the text), other infinite
values written as `1e999` / `-1e999` (valid JSON number syntax that Python reads back as
infinity; strict parsers such as serde_json reject it).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from converter.core.webnn import MLGraph, MLOperand, Operation
from converter.core.webnn.operators import operator
from converter.io.serialize import safetensors_weights
from converter.io.serialize.errors import WebnnExportError
from converter.io.serialize.lexicon import format_number
from converter.io.serialize.plan import ConstantEntry, WebnnPlan, constant_bytes, plan
from converter.io.serialize.tables import JSON_FORMAT, JSON_SUFFIX
from converter.io.serialize.weights import write_weights


def _dumps(text: str) -> str:
    return json.dumps(text)


def json_value(value: Any, idents: Mapping[int, str], what: str) -> str:
    """One option value as JSON text: operands as their identifier (a string), numbers as in
    the text form (no NaN; infinities as +-1e999)."""
    if isinstance(value, MLOperand):
        return _dumps(idents[id(value)])
    if value is None:
        return "null"
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, str):
        return _dumps(value)
    if isinstance(value, (int, float, np.integer, np.floating)):
        return format_number(value, what)
    if isinstance(value, (list, tuple, np.ndarray)):
        return "[" + ", ".join(json_value(v, idents, what) for v in value) + "]"
    raise WebnnExportError(f"{what}: cannot write a value of type {type(value).__name__}")


def _desc(operand: MLOperand) -> str:
    return (f'"dataType": {_dumps(operand.data_type)}, '
            f'"shape": [{", ".join(str(d) for d in operand.shape)}]')


def _init(c: ConstantEntry) -> str:
    if c.kind == "scalar":
        return f'{{"kind": "scalar", "value": {format_number(c.scalar)}}}'
    if c.kind == "bytes":
        data = constant_bytes(c.operand)
        return f'{{"kind": "inlineBytes", "bytes": [{", ".join(str(b) for b in data)}]}}'
    return f'{{"kind": "weights", "ref": {_dumps(c.ident)}}}'


def _object(entries: list[str], indent: str) -> str:
    if not entries:
        return "{}"
    return "{\n" + ",\n".join(indent + "  " + e for e in entries) + "\n" + indent + "}"


def node_json(p: WebnnPlan, operation: Operation) -> str:
    """One node of `p` as a JSON object on one line."""
    outs, inputs, named = p.node_parts(operation)
    what = operation.op
    options = ", ".join(f"{_dumps(k)}: {json_value(v, p.idents, f'{what}.{k}')}"
                        for k, v in named)
    text = (f'{{"id": {_dumps(outs[0])}, "op": {_dumps(operation.op)}, '
            f'"inputs": [{", ".join(_dumps(i) for i in inputs)}], "options": {{{options}}}')
    if operator(operation.op).returns_list:
        text += f', "outputs": [{", ".join(_dumps(o) for o in outs)}]'
    return text + "}"


def iter_json(p: WebnnPlan) -> Iterable[str]:
    """The `.webnn.json` document of plan `p`, in chunks."""
    g = p.graph
    yield "{\n"
    yield f'  "format": {_dumps(JSON_FORMAT)},\n'
    yield '  "version": 1,\n'
    yield f'  "name": {_dumps(p.name)},\n'
    yield f'  "quantized": {"true" if p.quantized else "false"},\n'
    inputs = [f"{_dumps(p.ident(o))}: {{{_desc(o)}}}" for o in g.inputs.values()]
    yield f'  "inputs": {_object(inputs, "  ")},\n'
    consts = [f"{_dumps(c.ident)}: {{{_desc(c.operand)}, \"init\": {_init(c)}}}"
              for c in p.constants]
    yield f'  "consts": {_object(consts, "  ")},\n'
    yield '  "nodes": ['
    first = True
    for operation in g.operations:
        yield ("\n" if first else ",\n") + "    " + node_json(p, operation)
        first = False
    for ident, source in p.aliases:
        yield (("\n" if first else ",\n") + f'    {{"id": {_dumps(ident)}, "op": "identity", '
               f'"inputs": [{_dumps(source)}], "options": {{}}}}')
        first = False
    yield "\n  ],\n" if not first else "],\n"
    bindings = [f"{_dumps(original)}: {_dumps(ident)}"
                for ident, original in p.output_names.items()]
    renamed = {k: v for k, v in p.input_names.items() if k != v}
    tail = "\n" if not renamed else ",\n"
    yield f'  "outputs": {_object(bindings, "  ")}{tail}'
    if renamed:
        yield f'  "names": {{"inputs": {json.dumps(renamed)}}}\n'
    yield "}\n"


def to_json(graph: MLGraph, name: str = "graph") -> str:
    """The `.webnn.json` text of `graph` (in memory; weights not included)."""
    return "".join(iter_json(plan(graph, name)))


def write_webnn_json(graph: MLGraph, outdir: str | Path, stem: str = "model",
                     name: str | None = None, plan_: WebnnPlan | None = None,
                     weights: str = "blob") -> list[Path]:
    """Write `<stem>.webnn.json` and its weights into `outdir` (which must exist):
    `weights="blob"` adds `<stem>.weights` + `<stem>.manifest.json` (the very files the text
    export writes), `"safetensors"` adds `<stem>.safetensors`. Returns the paths. Files are
    written directly: use `converter.io.export.exporter.export` for all-or-nothing output."""
    if weights not in ("blob", "safetensors"):
        raise ValueError(f"weights must be 'blob' or 'safetensors', got {weights!r}")
    outdir = Path(outdir)
    p = plan_ or plan(graph, name or stem)
    json_path = outdir / f"{stem}{JSON_SUFFIX}"
    with open(json_path, "w", encoding="utf-8", newline="\n") as f:
        for chunk in iter_json(p):
            f.write(chunk)
    if weights == "safetensors":
        return [json_path,
                safetensors_weights.write_safetensors(p, outdir / f"{stem}.safetensors")]
    weights_path = outdir / f"{stem}.weights"
    manifest_path = outdir / f"{stem}.manifest.json"
    with open(weights_path, "wb") as fb:
        write_weights(p, fb)
    manifest_path.write_text(p.manifest_json(), encoding="utf-8")
    return [json_path, weights_path, manifest_path]


__all__ = ["iter_json", "json_value", "node_json", "to_json", "write_webnn_json"]
