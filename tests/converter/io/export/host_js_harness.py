"""One-node ONNX models run by onnxruntime and by the JavaScript host runtime
(`converter.io.export.host_js`) in node, for tests/converter/io/export/test_host_js*.py: a
`Case` is a node with its input arrays; `run_cases` writes one module per case and runs all of
them in ONE node process; `check` compares each output with onnxruntime's (exact for integer
and bool outputs, float within 1e-6 relative)."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx.helper as oh
import onnxruntime as ort
from onnx import numpy_helper

from converter.io.export.host_js import host_steps_js
from tests.converter.io.export.node_harness import _node

DATA_TYPES: dict[np.dtype[Any], str] = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
              np.dtype(np.float16): "float16", np.dtype(np.int8): "int8",
              np.dtype(np.uint8): "uint8", np.dtype(np.int16): "int16",
              np.dtype(np.uint16): "uint16", np.dtype(np.int32): "int32",
              np.dtype(np.uint32): "uint32", np.dtype(np.int64): "int64",
              np.dtype(np.uint64): "uint64", np.dtype(np.bool_): "bool"}
NUMPY: dict[str, np.dtype[Any]] = {v: k for k, v in DATA_TYPES.items()}
ARRAYS = {"float32": "Float32Array", "float64": "Float64Array", "float16": "Uint16Array",
          "int8": "Int8Array", "uint8": "Uint8Array", "int16": "Int16Array",
          "uint16": "Uint16Array", "int32": "Int32Array", "uint32": "Uint32Array",
          "int64": "BigInt64Array", "uint64": "BigUint64Array", "bool": "Uint8Array"}


@dataclass(frozen=True)
class Case:
    """`op` with `inputs` (name -> array; None = omitted optional input), `outputs` count,
    `attributes`; `constants`: input names given as host-step constants (base64) instead of
    run-time values; `narrow`: int64 values handed over as Int32Array (a graph narrowed
    for its target) instead of BigInt64Array; `sort_last`: compare outputs sorted along their
    last axis (an order onnxruntime leaves unspecified); `outer`: inputs the node does not take
    but its subgraphs read (If branches' outer-scope values)."""

    id: str
    op: str
    inputs: Mapping[str, np.ndarray | None]
    outputs: int = 1
    attributes: Mapping[str, Any] = field(default_factory=dict)
    opset: int = 17
    constants: tuple[str, ...] = ()
    narrow: bool = False
    sort_last: bool = False
    outer: tuple[str, ...] = ()


def tensor_json(array: np.ndarray) -> dict[str, Any]:
    arr = np.asarray(array, order="C")
    return {"dataType": DATA_TYPES[arr.dtype], "shape": list(arr.shape),
            "base64": base64.b64encode(arr.tobytes()).decode("ascii")}


def _float_json(x: float) -> float | str:
    return x if math.isfinite(x) else ("NaN" if math.isnan(x) else
                                       "Infinity" if x > 0 else "-Infinity")


def attribute_json(a: onnx.AttributeProto) -> dict[str, Any]:
    """The contract's typed JSON of an ONNX attribute."""
    value = oh.get_attribute_value(a)
    kind = a.type
    if kind == onnx.AttributeProto.INT:
        return {"int": int(value)}
    if kind == onnx.AttributeProto.FLOAT:
        return {"float": _float_json(float(value))}
    if kind == onnx.AttributeProto.STRING:
        return {"string": value.decode()}
    if kind == onnx.AttributeProto.INTS:
        return {"ints": [int(v) for v in value]}
    if kind == onnx.AttributeProto.FLOATS:
        return {"floats": [_float_json(float(v)) for v in value]}
    if kind == onnx.AttributeProto.STRINGS:
        return {"strings": [v.decode() for v in value]}
    if kind == onnx.AttributeProto.TENSOR:
        return {"tensor": tensor_json(numpy_helper.to_array(value))}
    if kind == onnx.AttributeProto.GRAPH:  # an If branch (no initializers in these tests)
        return {"graph": {"inputs": [i.name for i in value.input],
                          "outputs": [o.name for o in value.output],
                          "nodes": [node_json(n) for n in value.node]}}
    raise AssertionError(f"attribute type {kind}")


def node_json(node: onnx.NodeProto) -> dict[str, Any]:
    """The contract's JSON of an ONNX node."""
    return {"name": node.name, "op": node.op_type, "domain": node.domain,
            "inputs": list(node.input), "outputs": list(node.output),
            "attributes": {a.name: attribute_json(a) for a in node.attribute}}


def node_of(case: Case) -> onnx.NodeProto:
    names = [n if a is not None else "" for n, a in case.inputs.items() if n not in case.outer]
    while names and names[-1] == "":
        names.pop()
    return oh.make_node(case.op, names, [f"out{i}" for i in range(case.outputs)],
                        name=f"/{case.id}", **{
                            k: numpy_helper.from_array(v) if isinstance(v, np.ndarray) else v
                            for k, v in case.attributes.items()})


def onnxruntime_outputs(case: Case) -> list[np.ndarray]:
    node = node_of(case)
    given = {n: a for n, a in case.inputs.items() if a is not None}
    graph = oh.make_graph(
        [node], case.id,
        [oh.make_tensor_value_info(n, oh.np_dtype_to_tensor_dtype(a.dtype), a.shape)
         for n, a in given.items()],
        [onnx.ValueInfoProto(name=o) for o in node.output])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", case.opset)])
    model.ir_version = 8
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return [np.asarray(o) for o in session.run(None, given)]


def host_json(case: Case) -> dict[str, Any]:
    node = node_of(case)
    given = {n: a for n, a in case.inputs.items() if a is not None}
    return {
        "format": "webnn-host-steps", "version": 1, "opsets": {"": case.opset},
        "inputs": [{"name": n, "source": "input"} for n in given if n not in case.constants],
        "outputs": list(node.output),
        "constants": {n: tensor_json(given[n]) for n in case.constants},
        "nodes": [node_json(node)],
    }


DRIVER = r"""
import fs from "node:fs";
const cases = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const bytes = (b64) => Uint8Array.from(Buffer.from(b64, "base64")).buffer;
const results = [];
for (const c of cases) {
  try {
    const mod = await import(c.module);
    const values = {};
    for (const [name, v] of Object.entries(c.values)) {
      values[name] = {dataType: v.dataType, shape: v.shape, data: new globalThis[v.array](bytes(v.base64))};
    }
    const out = mod.runHostSteps(values);
    results.push({ok: true, outputs: Object.entries(out).map(([name, t]) => ({name,
      dataType: t.dataType, shape: t.shape, array: t.data.constructor.name,
      base64: Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).toString("base64")}))});
  } catch (error) {
    results.push({ok: false, error: String(error.message)});
  }
}
fs.writeFileSync(process.argv[3], JSON.stringify(results));
"""


def _value(array: np.ndarray, narrow: bool) -> dict[str, Any]:
    arr = np.asarray(array, order="C")
    data_type = DATA_TYPES[arr.dtype]
    if data_type == "int64" and narrow:
        arr = arr.astype(np.int32)
        array_name = "Int32Array"
    else:
        array_name = ARRAYS[data_type]
    return {"dataType": data_type, "shape": list(arr.shape), "array": array_name,
            "base64": base64.b64encode(arr.tobytes()).decode("ascii")}


def run_cases(cases: Sequence[Case], folder: Path) -> list[dict[str, Any]]:
    """Every case's host-steps module run in one node process: [{ok, outputs | error}]."""
    rows = []
    for i, case in enumerate(cases):
        module = folder / f"case{i}.mjs"
        module.write_text(host_steps_js(host_json(case)), encoding="utf-8")
        rows.append({"module": module.as_uri(), "values": {
            n: _value(a, case.narrow) for n, a in case.inputs.items()
            if a is not None and n not in case.constants}})
    (folder / "cases.json").write_text(json.dumps(rows))
    (folder / "driver.mjs").write_text(DRIVER)
    run = _node(folder / "driver.mjs", folder / "cases.json", folder / "results.json")
    assert run.returncode == 0, run.stderr
    results: list[dict[str, Any]] = json.loads((folder / "results.json").read_text())
    return results


def check(case: Case, result: dict[str, Any]) -> None:
    """The JavaScript outputs of `case` equal onnxruntime's (shapes and types too)."""
    assert result["ok"], result.get("error")
    expected = onnxruntime_outputs(case)
    got = result["outputs"]
    assert len(got) == len(expected)
    for ref, out in zip(expected, got, strict=True):
        data_type = DATA_TYPES[ref.dtype]
        assert out["dataType"] == data_type, (out["dataType"], data_type)
        assert out["array"] == {"float16": "Uint16Array"}.get(data_type, ARRAYS[data_type])
        raw = base64.b64decode(out["base64"])
        dtype: np.dtype[Any] = np.dtype(np.uint8) if data_type == "bool" else NUMPY[data_type]
        value = np.frombuffer(raw, dtype)
        value = value.astype(bool) if data_type == "bool" else value
        value = value.reshape(out["shape"])
        assert list(value.shape) == list(ref.shape), (value.shape, ref.shape)
        if case.sort_last:
            value, ref = np.sort(value, axis=-1), np.sort(ref, axis=-1)
        if data_type in ("float32", "float64", "float16"):
            # relative to the values' scale: a sum that cancels is rounded differently
            scale = float(np.max(np.abs(ref), initial=0.0))
            np.testing.assert_allclose(value, ref, rtol=1e-6, atol=1e-6 * scale)
        else:
            np.testing.assert_array_equal(value, ref)
