"""The JSON twin (`webnn-graph-json`): bit-exact round trips (a converted ONNX model, every
operator family, multi-output split, float16 / int8 constants, hostile names), equivalence with
the text form, the example of the format document (section 2) checked against numpy, dynamic
dimensions, and every reader rejection rule."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import converter
from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.io.export.exporter import export, load
from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.json_reader import is_json_document, load_webnn_json, loads_json
from converter.io.serialize.json_writer import to_json
from converter.io.serialize.loader import loads
from converter.io.serialize.tables import JSON_FORMAT, MAX_NESTING
from converter.io.serialize.text_writer import to_webnn
from tests.cli.models import tiny_cnn
from tests.converter.io.export.graphs import FAMILIES, HOSTILE_NAMES, assert_same_outputs


def _structure(graph: MLGraph) -> list[tuple[str, dict[str, Any]]]:
    """Operations with their plain (non-operand) options, in order."""
    return [(o.op, {k: v for k, v in o.options.items() if not hasattr(v, "descriptor")})
            for o in graph.operations]


def _outputs(graph: MLGraph, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return graph.context.compute(graph, feeds)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The tiny ONNX CNN of converter/zoo/models/make_tiny_cnn.py, converted."""
    path = tiny_cnn(tmp_path_factory.mktemp("onnx") / "tiny.onnx")
    result = converter.convert(str(path), free_dims={"batch": 2})
    feeds = {"image": np.random.default_rng(3).standard_normal((2, 3, 16, 16))
             .astype(np.float32)}
    return result, feeds


# -- round trips ----------------------------------------------------------------------------
@pytest.mark.parametrize("weights", ["blob", "safetensors"])
def test_converted_onnx_model_round_trips_bit_exact(tiny: Any, tmp_path: Path,
                                                    weights: str) -> None:
    result, feeds = tiny
    paths = export(result, tmp_path / "out", format="webnn-json", weights=weights)
    names = {"blob": ["model.manifest.json", "model.webnn.json", "model.weights"],
             "safetensors": ["model.safetensors", "model.webnn.json"]}[weights]
    assert sorted(p.name for p in paths) == names
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [".webnn-converter.json",
                                                                    *names]
    doc = json.loads((tmp_path / "out" / "model.webnn.json").read_text())
    assert doc["format"] == JSON_FORMAT and doc["version"] == 1 and doc["name"] == "model"
    assert doc["quantized"] is False and doc["outputs"] == {"probs": "probs"}
    assert [n["op"] for n in doc["nodes"]] == [o.op for o in result.graph.operations]
    assert all(c["init"]["kind"] == "weights" for c in doc["consts"].values())
    for loaded in (load(tmp_path / "out"), load(tmp_path / "out" / "model.webnn.json")):
        assert list(loaded.inputs) == list(result.graph.inputs)
        assert loaded.input_descriptors == result.graph.input_descriptors
        assert loaded.output_descriptors == result.graph.output_descriptors
        assert _structure(loaded) == _structure(result.graph)
        assert_same_outputs(_outputs(result.graph, feeds), _outputs(loaded, feeds))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_graphs_round_trip_bit_exact(family: str) -> None:
    """Every operator family, float16 and int8 constants (@scalar / @bytes / @weights), the
    recurrent multi-output ops and hostile names, via the in-memory reader."""
    ex = FAMILIES[family]()
    files = to_webnn(ex.graph)
    text = to_json(ex.graph)
    loaded = loads_json(text, files.weights, files.manifest, context=ex.context)
    assert list(loaded.inputs) == list(ex.graph.inputs)
    assert list(loaded.outputs) == list(ex.graph.outputs)
    assert loaded.input_descriptors == ex.graph.input_descriptors
    assert loaded.output_descriptors == ex.graph.output_descriptors
    assert_same_outputs(_outputs(ex.graph, ex.feeds), _outputs(loaded, ex.feeds))
    # The text form of the same plan reads back to the same graph.
    from_text = loads(files.text, files.weights, files.manifest, context=ex.context)
    assert _structure(from_text) == _structure(loaded)


def test_constant_kinds_and_dtypes_in_the_document() -> None:
    ex = FAMILIES["constants"]()
    doc = json.loads(to_json(ex.graph))
    kinds = {(c["dataType"], c["init"]["kind"]) for c in doc["consts"].values()}
    assert ("int8", "weights") in kinds and ("float16", "weights") in kinds
    assert ("float16", "scalar") in kinds and ("float16", "inlineBytes") in kinds
    assert ("uint8", "scalar") in kinds and ("int64", "weights") in kinds
    assert ("float32", "scalar") in kinds
    scalar = next(c for c in doc["consts"].values()
                  if c["dataType"] == "float32" and c["init"]["kind"] == "scalar"
                  and c["shape"] == [64, 64])
    assert scalar["init"]["value"] == float(np.float32(0.1))


def test_multi_output_split_graph(tmp_path: Path) -> None:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [2, 6], "float32")
    a, c, d = b.split(x, [1, 2, 3], axis=1)
    left, right = b.split(b.relu(x), 2, axis=1)
    graph = b.build({"a": a, "c": c, "d": d, "right": right, "left": left})
    export(graph, tmp_path, format="webnn-json")
    doc = json.loads((tmp_path / "model.webnn.json").read_text())
    splits = [n for n in doc["nodes"] if n["op"] == "split"]
    assert [n["outputs"] for n in splits] == [["a", "c", "d"], ["left", "right"]]
    assert [n["id"] for n in splits] == ["a", "left"]
    assert splits[0]["options"] == {"splits": [1, 2, 3], "axis": 1}
    assert list(doc["outputs"]) == ["a", "c", "d", "right", "left"]
    loaded = load(tmp_path)
    feeds = {"x": np.arange(12, dtype=np.float32).reshape(2, 6) - 5}
    got = _outputs(loaded, feeds)
    assert list(got) == ["a", "c", "d", "right", "left"]
    np.testing.assert_array_equal(got["d"], feeds["x"][:, 3:])
    np.testing.assert_array_equal(got["left"], np.maximum(feeds["x"][:, :3], 0))


def test_hostile_names_and_repeated_outputs(tmp_path: Path) -> None:
    ex = FAMILIES["hostile"]()
    export(ex.graph, tmp_path, format="webnn-json", weights="safetensors")
    doc = json.loads((tmp_path / "model.webnn.json").read_text())
    assert list(doc["outputs"]) == [*HOSTILE_NAMES, "repeat of first"]
    assert doc["names"]["inputs"]["x_0"] == "x:0"
    loaded = load(tmp_path / "model.webnn.json")
    assert list(loaded.inputs) == list(ex.graph.inputs)
    assert list(loaded.outputs) == list(ex.graph.outputs)
    assert_same_outputs(_outputs(ex.graph, ex.feeds), _outputs(loaded, ex.feeds))


def test_input_order_is_kept_as_written() -> None:
    b = MLGraphBuilder(ML().create_context())
    z = b.input("z", [2], "float32")
    a = b.input("a", [2], "float32")
    m = b.input("m", [2], "float32")
    graph = b.build({"y": b.sub(b.mul(z, a), m)})
    text = to_json(graph)
    assert list(json.loads(text)["inputs"]) == ["z", "a", "m"]
    assert list(loads_json(text).inputs) == ["z", "a", "m"]
    # ... and the reader keeps whatever order it reads.
    doc = json.loads(text)
    doc["inputs"] = {k: doc["inputs"][k] for k in ("m", "z", "a")}
    assert list(loads_json(json.dumps(doc)).inputs) == ["m", "z", "a"]


def test_text_and_json_exports_are_equivalent(tiny: Any, tmp_path: Path) -> None:
    """Both forms in one folder share the weights files; both load to the same graph."""
    result, feeds = tiny
    export(result, tmp_path, format="webnn")
    blob = (tmp_path / "model.weights").read_bytes()
    export(result, tmp_path, format="webnn-json", force=True)  # force: keep the text form
    assert (tmp_path / "model.weights").read_bytes() == blob
    from_text = load(tmp_path / "model.webnn")
    from_json = load(tmp_path / "model.webnn.json")
    assert load(tmp_path).operations[0].op == from_text.operations[0].op
    assert from_text.input_descriptors == from_json.input_descriptors
    assert from_text.output_descriptors == from_json.output_descriptors
    assert _structure(from_text) == _structure(from_json)
    assert_same_outputs(_outputs(from_text, feeds), _outputs(from_json, feeds))


def test_json_is_detected_by_content_not_suffix(tiny: Any, tmp_path: Path) -> None:
    result, feeds = tiny
    export(result, tmp_path, format="webnn-json", stem="net")
    (tmp_path / "net.webnn.json").rename(tmp_path / "net.webnn")
    assert is_json_document((tmp_path / "net.webnn").read_bytes()[:16])
    loaded = load(tmp_path / "net.webnn")
    assert_same_outputs(_outputs(result.graph, feeds), _outputs(loaded, feeds))
    assert not is_json_document(b"# comment\nwebnn_graph")


def test_size_compared_with_the_text_form(tiny: Any, tmp_path: Path) -> None:
    result, _ = tiny
    export(result, tmp_path, format="webnn")
    export(result, tmp_path, format="webnn-json", force=True)  # force: keep the text form
    text = (tmp_path / "model.webnn").stat().st_size
    doc = (tmp_path / "model.webnn.json").stat().st_size
    assert text < doc < 3 * text  # one object per line, no padding: ~1.8x for this model


# -- the example of the format document, section 2 ------------------------------------------
SECTION_2_EXAMPLE = """{
  "format": "webnn-graph-json",
  "version": 2,
  "name": "tiny_cnn",
  "quantized": false,
  "inputs": {
    "x": { "dataType": "float32", "shape": [{ "name": "batch", "maxSize": 8 }, 3, 32, 32] }
  },
  "consts": {
    "w": { "dataType": "float32", "shape": [8, 3, 3, 3], "init": { "kind": "weights", "ref": "w" } },
    "b": { "dataType": "float32", "shape": [8], "init": { "kind": "scalar", "value": 0.0 } },
    "k": { "dataType": "uint8", "shape": [2], "init": { "kind": "inlineBytes", "bytes": [1, 0] } }
  },
  "nodes": [
    { "id": "conv", "op": "conv2d", "inputs": ["x", "w"],
      "options": { "bias": "b", "padding": [1, 1, 1, 1] } },
    { "id": "left", "op": "split", "inputs": ["conv"],
      "options": { "splits": 2, "axis": 1 }, "outputs": ["left", "right"] }
  ],
  "outputs": { "left": "left", "right": "right" }
}
"""  # noqa: E501 - copied verbatim


def _conv_oracle(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """conv2d, NCHW / OIHW, stride 1, padding 1, float64 (written from the definition)."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    n, _, h, wd = x.shape
    out = np.zeros((n, w.shape[0], h, wd))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i:i + h, j:j + wd], w[:, :, i, j])
    return out


@pytest.mark.parametrize("weights", ["blob", "safetensors"])
def test_section_2_example_parses_and_computes(tmp_path: Path, weights: str) -> None:
    from safetensors.numpy import save_file

    w = np.random.default_rng(5).standard_normal((8, 3, 3, 3)).astype(np.float32)
    (tmp_path / "tiny.webnn.json").write_text(SECTION_2_EXAMPLE)
    if weights == "blob":
        (tmp_path / "tiny.weights").write_bytes(b"WGWT" + struct.pack("<I", 1) + w.tobytes())
        (tmp_path / "tiny.manifest.json").write_text(json.dumps({
            "format": "wg-weights-manifest", "version": 1, "endianness": "little",
            "tensors": {"w": {"dataType": "float32", "shape": [8, 3, 3, 3], "byteOffset": 8,
                              "byteLength": 864, "layout": "row-major"}}}))
    else:
        save_file({"w": w}, str(tmp_path / "tiny.safetensors"))
    graph = load(tmp_path / "tiny.webnn.json", free_dims={"batch": 2})
    assert graph.input_descriptors["x"].shape == (2, 3, 32, 32)
    assert list(graph.outputs) == ["left", "right"]
    x = np.random.default_rng(6).standard_normal((2, 3, 32, 32)).astype(np.float32)
    out = _outputs(graph, {"x": x})
    want = _conv_oracle(x, w)
    np.testing.assert_allclose(out["left"], want[:, :4], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["right"], want[:, 4:], rtol=1e-5, atol=1e-5)
    # Without free_dims the dynamic dimension takes its maximum.
    assert load(tmp_path / "tiny.webnn.json").input_descriptors["x"].shape == (8, 3, 32, 32)


def test_dynamic_dims_match_the_text_form() -> None:
    text = """webnn_graph "g" v2 {
  inputs { ids: i32[dyn("seq", 6)]; x: f32[dyn("seq", 6), 2]; }
  consts { s: f32[2] @bytes([0, 0, 128, 63, 0, 0, 0, 192]); }
  nodes { y = mul(x, s); n = cast(ids, dataType="float32"); }
  outputs { y; n; }
}"""
    doc = {"format": JSON_FORMAT, "version": 2,
           "inputs": {"ids": {"dataType": "int32", "shape": [{"name": "seq", "maxSize": 6}]},
                      "x": {"dataType": "float32",
                            "shape": [{"name": "seq", "maxSize": 6}, 2]}},
           "consts": {"s": {"dataType": "float32", "shape": [2],
                            "init": {"kind": "inlineBytes", "bytes": [0, 0, 128, 63, 0, 0, 0,
                                                                      192]}}},
           "nodes": [{"id": "y", "op": "mul", "inputs": ["x", "s"]},
                     {"id": "n", "op": "cast", "inputs": ["ids"],
                      "options": {"dataType": "float32"}}],
           "outputs": {"y": "y", "n": "n"}}
    for free in ({}, {"seq": 3}):
        a = loads(text, free_dims=free)
        b = loads_json(json.dumps(doc), free_dims=free)
        assert a.input_descriptors == b.input_descriptors
        assert _structure(a) == _structure(b)
        n = a.input_descriptors["ids"].shape[0]
        feeds = {"ids": np.arange(n, dtype=np.int32),
                 "x": np.arange(2 * n, dtype=np.float32).reshape(n, 2)}
        assert_same_outputs(_outputs(a, feeds), _outputs(b, feeds))
        np.testing.assert_array_equal(_outputs(b, feeds)["y"], feeds["x"] * [1.0, -2.0])


def test_two_bindings_of_one_value() -> None:
    doc = {"format": JSON_FORMAT, "version": 1,
           "inputs": {"x": {"dataType": "float32", "shape": [3]}},
           "nodes": [{"id": "r", "op": "relu", "inputs": ["x"]}],
           "outputs": {"first": "r", "second": "r", "input copy": "x"}}
    graph = loads_json(json.dumps(doc))
    out = _outputs(graph, {"x": np.array([-1, 0, 2], np.float32)})
    assert list(out) == ["first", "second", "input copy"]
    np.testing.assert_array_equal(out["second"], [0, 0, 2])
    np.testing.assert_array_equal(out["input copy"], [-1, 0, 2])


# -- rejections -----------------------------------------------------------------------------
def _doc() -> dict[str, Any]:
    return {"format": JSON_FORMAT, "version": 1, "name": "g",
            "inputs": {"x": {"dataType": "float32", "shape": [2, 3]}},
            "consts": {"w": {"dataType": "float32", "shape": [2, 3],
                             "init": {"kind": "weights", "ref": "w"}}},
            "nodes": [{"id": "y", "op": "add", "inputs": ["x", "w"]},
                      {"id": "z", "op": "relu", "inputs": ["y"]}],
            "outputs": {"z": "z"}}


W = np.arange(6, dtype=np.float32)
BLOB = b"WGWT" + struct.pack("<I", 1) + W.tobytes()
MANIFEST = {"tensors": {"w": {"dataType": "float32", "shape": [2, 3], "byteOffset": 8,
                              "byteLength": 24}}}


def _set(path: str, value: Any) -> Any:
    """A change to `_doc()`: set the value at a dotted path (list indices as digits)."""
    def change(d: dict[str, Any]) -> dict[str, Any]:
        keys = path.split(".")
        target: Any = d
        for k in keys[:-1]:
            target = target[int(k)] if isinstance(target, list) else target[k]
        last = keys[-1]
        if value is DELETE:
            del target[last]
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
        return d
    return change


DELETE = object()
HUGE = [100_000, 100_000, 100_000, 100_000]


@pytest.mark.parametrize(("change", "message"), [
    (_set("format", "webnn-graph"), "format is 'webnn-graph', expected 'webnn-graph-json'"),
    (_set("format", DELETE), "format is None"),
    (_set("version", 3), r"unsupported version 3 \(supported: 1, 2\)"),
    (_set("version", True), "unsupported version True"),
    (_set("version", "1"), "unsupported version '1'"),
    (_set("name", 5), "name: must be a string"),
    (_set("quantized", "yes"), "quantized: must be a boolean"),
    (_set("inputs", []), "inputs: must be an object"),
    (_set("nodes", DELETE), "missing 'nodes'"),
    (_set("nodes.1.id", "y"), r"nodes\[1\] \(id 'y'\): duplicate node id 'y'"),
    (_set("nodes.1.id", ""), r"nodes\[1\].id: must not be empty"),
    (_set("nodes.1.op", ""), r"nodes\[1\] \(id 'z'\).op: must not be empty"),
    (_set("nodes.1.inputs", ["nope"]), r"nodes\[1\] \(id 'z'\): relu: 'nope' is not declared"),
    (_set("nodes.0.inputs", ["x", "z"]), r"add: 'z' is not declared before this use"),
    (_set("nodes.1.inputs", [3]), r"inputs\[0\]: must be an operand name"),
    (_set("nodes.1.op", "frobnicate"), "unknown operator 'frobnicate'"),
    (_set("nodes.1.options", {"alpha": 1}), "relu: unknown option 'alpha'"),
    (_set("nodes.1.options", {"x": {"name": "n", "maxSize": 2}}), "object values are not"),
    (_set("nodes.1.outputs", []), "outputs: must be a non-empty array"),
    (_set("nodes.1.outputs", ["a", "b"]), "relu returns 1 output"),
    (_set("nodes.1.id", "x"), "'x' is already declared"),
    (_set("outputs", {}), "the graph has no outputs"),
    (_set("outputs", DELETE), "missing 'outputs'"),
    (_set("outputs", {"z": "ghost"}), "output 'ghost' is not declared"),
    (_set("outputs", {"z": 1}), "outputs.z: must name a value"),
    (_set("inputs.x.dataType", "f32"), "unknown data type 'f32'"),
    (_set("inputs.x.dataType", "int4"), "int4 is not supported"),
    (_set("inputs.x.shape", [2, -3]), r"shape\[1\]: a dimension must be a non-negative"),
    (_set("inputs.x.shape", [{"name": "n"}]), "a dynamic dimension is"),
    (_set("consts.w.shape", [{"name": "n", "maxSize": 2}, 3]), "only allowed in inputs"),
    (_set("consts.w.init", {"kind": "file"}), "unknown init kind 'file'"),
    (_set("consts.w.init", DELETE), "missing 'init'"),
    (_set("consts.w.init", {"kind": "weights", "ref": "other"}),
     "weights key 'other' is not in the manifest"),
    (_set("consts.w.init", {"kind": "scalar", "value": "1"}), "value: must be a number"),
    (_set("consts.w.init", {"kind": "inlineBytes", "bytes": [1, 256]}),
     "value 256 is not a byte"),
    (_set("consts.w.init", {"kind": "inlineBytes", "bytes": [1, 2]}),
     r"has 2 bytes, float32\[2, 3\] needs 24"),
    (_set("consts.w.shape", [3, 2]), r"manifest shape \[2, 3\] differs from the declared"),
    (_set("consts.w.dataType", "int32"), "the manifest says float32, the declaration int32"),
    (_set("consts.w.shape", HUGE), "exceed the maximum tensor byte length"),
    (_set("consts.w.shape", [2**31, 1]), "dimension 2147483648 exceeds"),
    (_set("names", {"inputs": {"q": "orig"}}), "names.inputs.q: 'q' is not a declared input"),
])
def test_rejections(change: Any, message: str) -> None:
    doc = change(_doc())
    with pytest.raises(WebnnFormatError, match=message) as info:
        loads_json(json.dumps(doc), BLOB, json.dumps(MANIFEST), path="g.webnn.json")
    assert str(info.value).startswith("g.webnn.json: ")


def test_valid_base_document_loads() -> None:
    graph = loads_json(json.dumps(_doc()), BLOB, json.dumps(MANIFEST))
    x = np.linspace(-9, 9, 6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(_outputs(graph, {"x": x})["z"],
                                  np.maximum(x + W.reshape(2, 3), 0))


@pytest.mark.parametrize(("text", "message"), [
    ('{"format": "webnn-graph-json",\n "version": }', r"invalid JSON: Expecting value"),
    ('[1, 2]', "document: must be a JSON object"),
    ('{"format": "webnn-graph-json", "version": 1, "nodes": [], "outputs": {"a": "x"}, '
     '"inputs": {"x": {"dataType": "float32", "shape": [NaN]}}}', "NaN is not valid JSON"),
    ("[" * 100_000 + "]" * 100_000, "invalid JSON"),
    ('{"format": "webnn-graph-json", "version": 1, "nodes": [], "outputs": {"a": "x"}, '
     '"inputs": {"x": {"dataType": "float32", "shape": [1]}, '
     '"x": {"dataType": "int32", "shape": [1]}}}', "duplicate key 'x' in an object"),
])
def test_malformed_json(text: str, message: str) -> None:
    with pytest.raises(WebnnFormatError, match=message):
        loads_json(text, path="bad.json")


def test_invalid_json_reports_its_line(tmp_path: Path) -> None:
    (tmp_path / "g.webnn.json").write_text('{\n  "format": "webnn-graph-json",\n  "version": ,\n}')
    with pytest.raises(WebnnFormatError, match="invalid JSON") as info:
        load_webnn_json(tmp_path / "g.webnn.json")
    assert info.value.line == 3


def test_option_nesting_is_bounded() -> None:
    doc = _doc()
    deep: Any = 1
    for _ in range(MAX_NESTING + 1):
        deep = [deep]
    doc["nodes"][1]["options"] = {"padding": deep}
    with pytest.raises(WebnnFormatError, match="nested deeper"):
        loads_json(json.dumps(doc), BLOB, json.dumps(MANIFEST))


def test_lying_byte_length_is_refused_before_reading(tmp_path: Path) -> None:
    """A manifest entry and declaration claiming a huge tensor: an error, not a MemoryError
    (nothing is allocated before the byte length is checked against the weights file)."""
    doc = _doc()
    doc["consts"]["w"]["shape"] = [1 << 30, 4]  # 16 GiB declared, within the spec maximum
    manifest = {"tensors": {"w": {"dataType": "float32", "shape": [1 << 30, 4],
                                  "byteOffset": 8, "byteLength": 1 << 34}}}
    (tmp_path / "g.webnn.json").write_text(json.dumps(doc))
    (tmp_path / "g.weights").write_bytes(BLOB)
    (tmp_path / "g.manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(WebnnFormatError, match="outside the data area"):
        load(tmp_path / "g.webnn.json")
    manifest["tensors"]["w"]["byteLength"] = 24  # the length disagrees with the shape
    (tmp_path / "g.manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(WebnnFormatError, match="byteLength 24 differs from 17179869184"):
        load(tmp_path / "g.webnn.json")


def test_huge_scalar_and_weights_without_files_are_refused() -> None:
    doc = _doc()
    doc["consts"]["w"] = {"dataType": "float32", "shape": [1 << 20, 1 << 10],
                          "init": {"kind": "scalar", "value": 1.0}}
    with pytest.raises(WebnnFormatError, match="max_scalar_bytes"):
        loads_json(json.dumps(doc), max_scalar_bytes=1 << 20)
    with pytest.raises(WebnnFormatError, match="needs a weights file"):
        loads_json(json.dumps(_doc()))


@pytest.mark.parametrize("value", [10 ** 400, -(10 ** 400)], ids=["huge", "-huge"])
def test_scalar_integers_beyond_float64_saturate(value: int) -> None:
    """A @scalar integer beyond float64 goes through float32 as the reference importer
    does: +-inf (an int32 constant saturates), never an OverflowError."""
    doc = _doc()
    doc["consts"]["w"] = {"dataType": "float32", "shape": [2, 3],
                          "init": {"kind": "scalar", "value": value}}
    graph = loads_json(json.dumps(doc))
    out = graph.context.compute(graph, {"x": np.zeros((2, 3), np.float32)})["z"]
    assert np.all(out == (np.inf if value > 0 else 0.0))


def test_export_rejects_unknown_weights_kind(tmp_path: Path) -> None:
    ex = FAMILIES["float16"]()
    with pytest.raises(ValueError, match="weights 'zip' is not one of blob, safetensors"):
        export(ex.graph, tmp_path / "o", format="webnn-json", weights="zip")
    assert not (tmp_path / "o").exists()
