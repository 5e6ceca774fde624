"""`.safetensors` weights (format doc section 5): what is written (keys, dtypes, names
metadata), bit-exact round trips with the text and the JSON forms, file discovery order,
BF16 widening, every rejection (missing key, dtype / shape mismatch, truncated or garbage
file), all-or-nothing export, and the CLI (`convert --format webnn-json --weights
safetensors`, then `run`)."""

from __future__ import annotations

import importlib.util
import json
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from safetensors import safe_open
from safetensors.numpy import save_file

import converter
from cli.main import cli
from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.io.export import exporter as api
from converter.io.export.exporter import export, load
from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.safetensors_weights import NAMES_METADATA_KEY, SAFETENSORS_DTYPES
from tests.cli.models import tiny_cnn
from tests.converter.io.export.graphs import FAMILIES, HOSTILE_NAMES, assert_same_outputs

HAS_ONNX_EXPORT = importlib.util.find_spec("converter.runtimes.onnxruntime.to_onnx") is not None
RNG = np.random.default_rng(11)


def _every_dtype() -> tuple[MLGraph, dict[str, np.ndarray]]:
    """One large non-uniform constant of each safetensors dtype, each fed through an op."""
    b = MLGraphBuilder(ML().create_context())
    outs = {}
    for dt in SAFETENSORS_DTYPES:
        if np.dtype(dt).kind == "f":
            arr = RNG.standard_normal((3, 7)).astype(dt)
        else:
            info = np.iinfo(dt)
            arr = RNG.integers(info.min, info.max, (3, 7), dtype=dt, endpoint=True)
            arr[0, :2] = [info.min, info.max]
        outs[dt] = b.identity(b.constant(arr))
    x = b.input("x", [3, 7], "float32")
    outs["sum"] = b.add(x, b.constant(RNG.standard_normal((3, 7)).astype(np.float32)))
    return b.build(outs), {"x": RNG.standard_normal((3, 7)).astype(np.float32)}


def _run(graph: MLGraph, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return graph.context.compute(graph, feeds)


# -- writing --------------------------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["webnn", "webnn-json"])
def test_every_dtype_is_written_and_read_bit_exact(tmp_path: Path, fmt: str) -> None:
    graph, feeds = _every_dtype()
    paths = export(graph, tmp_path, format=fmt, weights="safetensors")
    graph_file = "model.webnn" if fmt == "webnn" else "model.webnn.json"
    assert sorted(p.name for p in paths) == sorted([graph_file, "model.safetensors"])
    with safe_open(str(tmp_path / "model.safetensors"), framework="np") as f:
        dtypes = {f.get_slice(k).get_dtype() for k in f.keys()}
        assert f.metadata() is None  # every name is an identifier: no names table
        keys = set(f.keys())
    assert dtypes == set(SAFETENSORS_DTYPES.values())
    # The keys are exactly the @weights references of the graph file.
    text = (tmp_path / graph_file).read_text()
    if fmt == "webnn":
        refs = {line.split('@weights("')[1].split('"')[0] for line in text.splitlines()
                if "@weights(" in line}
    else:
        refs = {c["init"]["ref"] for c in json.loads(text)["consts"].values()
                if c["init"]["kind"] == "weights"}
    assert refs == keys
    loaded = load(tmp_path)
    assert_same_outputs(_run(graph, feeds), _run(loaded, feeds))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_graphs_round_trip_through_text_and_safetensors(tmp_path: Path,
                                                              family: str) -> None:
    ex = FAMILIES[family]()
    export(ex.graph, tmp_path, format="webnn", weights="safetensors")
    loaded = load(tmp_path / "model.webnn")
    assert list(loaded.inputs) == list(ex.graph.inputs)
    assert list(loaded.outputs) == list(ex.graph.outputs)
    assert_same_outputs(_run(ex.graph, ex.feeds), _run(loaded, ex.feeds))


def test_hostile_names_travel_in_the_metadata(tmp_path: Path) -> None:
    ex = FAMILIES["hostile"]()
    export(ex.graph, tmp_path, format="webnn", weights="safetensors")
    with safe_open(str(tmp_path / "model.safetensors"), framework="np") as f:
        names = json.loads(f.metadata()[NAMES_METADATA_KEY])
    assert names["inputs"]["x_0"] == "x:0"
    assert set(names["outputs"].values()) <= {*HOSTILE_NAMES, "repeat of first"}
    loaded = load(tmp_path)
    assert sorted(loaded.inputs) == sorted(HOSTILE_NAMES)
    assert list(loaded.outputs) == [*HOSTILE_NAMES, "repeat of first"]


def test_converted_model_blob_and_safetensors_agree(tmp_path: Path) -> None:
    result = converter.convert(str(tiny_cnn(tmp_path / "t.onnx")), free_dims={"batch": 1})
    feeds = {"image": RNG.standard_normal((1, 3, 16, 16)).astype(np.float32)}
    export(result, tmp_path / "blob", format="webnn")
    export(result, tmp_path / "st", format="webnn", weights="safetensors")
    assert (tmp_path / "blob" / "model.webnn").read_text() == \
        (tmp_path / "st" / "model.webnn").read_text()
    want = _run(result.graph, feeds)
    assert_same_outputs(want, _run(load(tmp_path / "blob"), feeds))
    assert_same_outputs(want, _run(load(tmp_path / "st"), feeds))


def test_js_with_safetensors_still_writes_the_blob_the_module_reads(tmp_path: Path) -> None:
    graph, _ = _every_dtype()
    paths = export(graph, tmp_path, format="js", weights="safetensors")
    assert sorted(p.name for p in paths) == ["model.html", "model.js", "model.safetensors",
                                             "model.webnn", "model.weights"]
    assert (tmp_path / "model.weights").read_bytes()[:4] == b"WGWT"


@pytest.mark.skipif(not HAS_ONNX_EXPORT, reason="converter.runtimes.onnxruntime.to_onnx is not available")
def test_all_with_safetensors(tmp_path: Path) -> None:
    graph, feeds = _every_dtype()
    paths = export(graph, tmp_path, format="all", weights="safetensors")
    assert sorted(p.name for p in paths) == ["model.html", "model.js", "model.onnx",
                                             "model.safetensors", "model.webnn",
                                             "model.weights"]
    assert_same_outputs(_run(graph, feeds), _run(load(tmp_path), feeds))


def test_failed_export_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from converter.io.serialize import safetensors_weights

    def boom(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    graph, _ = _every_dtype()
    monkeypatch.setattr(safetensors_weights, "write_safetensors", boom)
    for fmt in ("webnn", "webnn-json"):
        with pytest.raises(OSError, match="disk full"):
            export(graph, tmp_path / "out", format=fmt, weights="safetensors")
    assert list(tmp_path.iterdir()) == []
    assert api.WEIGHTS == ("blob", "safetensors")


# -- discovery ------------------------------------------------------------------------------
def _one_weight_graph(value: float) -> MLGraph:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [5], "float32")
    w = b.constant(np.array([1, 2, 3, 4, 5], np.float32) * value)
    return b.build({"y": b.add(x, w)})


def test_discovery_order(tmp_path: Path) -> None:
    """model.safetensors, then <stem>.safetensors, then <stem>.weights, then model.weights."""
    x = {"x": np.zeros(5, np.float32)}
    export(_one_weight_graph(1), tmp_path, stem="g")                        # g.weights
    export(_one_weight_graph(10), tmp_path, stem="model", force=True)       # model.weights
    (tmp_path / "model.webnn").unlink()
    assert _run(load(tmp_path / "g.webnn"), x)["y"][0] == 1
    (tmp_path / "g.weights").unlink()
    (tmp_path / "g.manifest.json").unlink()
    assert _run(load(tmp_path / "g.webnn"), x)["y"][0] == 10                # model.weights
    export(_one_weight_graph(100), tmp_path / "s", stem="g", weights="safetensors")
    (tmp_path / "s" / "g.safetensors").rename(tmp_path / "g.safetensors")
    assert _run(load(tmp_path / "g.webnn"), x)["y"][0] == 100               # g.safetensors
    export(_one_weight_graph(1000), tmp_path / "m", weights="safetensors")
    (tmp_path / "m" / "model.safetensors").rename(tmp_path / "model.safetensors")
    assert _run(load(tmp_path / "g.webnn"), x)["y"][0] == 1000              # model.safetensors
    # An explicit path wins, a blob or a safetensors file told apart by content.
    got = load(tmp_path / "g.webnn", weights_path=tmp_path / "g.safetensors")
    assert _run(got, x)["y"][0] == 100
    got = load(tmp_path / "g.webnn", weights_path=tmp_path / "model.weights",
               manifest_path=tmp_path / "model.manifest.json")
    assert _run(got, x)["y"][0] == 10


# -- reading hand-made archives -------------------------------------------------------------
GRAPH = """webnn_graph "g" v1 {
  consts { w: f32[2, 3] @weights("enc::w.0"); }
  nodes { y = neg(w); }
  outputs { y; }
}
"""


def _write(tmp_path: Path, tensors: dict[str, np.ndarray], metadata: Any = None) -> Path:
    (tmp_path / "g.webnn").write_text(GRAPH)
    save_file(tensors, str(tmp_path / "g.safetensors"), metadata=metadata)
    return tmp_path / "g.webnn"


def test_sanitised_key_is_accepted(tmp_path: Path) -> None:
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    graph = load(_write(tmp_path, {"enc__w_0": w}))
    np.testing.assert_array_equal(_run(graph, {})["y"], -w)


def test_bf16_is_accepted_for_float32(tmp_path: Path) -> None:
    values = [1.0, -2.5, 0.15625, 2.0**127, -0.0, 2.0**-130]  # all exact in bfloat16
    bits = np.array(values, np.float32).view(np.uint32) >> 16
    header = json.dumps({"enc::w.0": {"dtype": "BF16", "shape": [2, 3],
                                      "data_offsets": [0, 12]}}).encode()
    (tmp_path / "g.webnn").write_text(GRAPH)
    (tmp_path / "g.safetensors").write_bytes(struct.pack("<Q", len(header)) + header
                                             + bits.astype("<u2").tobytes())
    out = _run(load(tmp_path / "g.webnn"), {})["y"]
    np.testing.assert_array_equal(out, -np.array(values, np.float32).reshape(2, 3))


@pytest.mark.parametrize(("tensors", "message"), [
    ({"other": np.zeros((2, 3), np.float32)}, "weights key 'enc::w.0' is not in .*g.safetensors"),
    ({"enc::w.0": np.zeros((2, 3), np.float16)},
     r"tensor 'enc::w.0' is F16, the declaration is float32 \(needs F32\)"),
    ({"enc::w.0": np.zeros((2, 3), np.int32)}, "is I32, the declaration is float32"),
    ({"enc::w.0": np.zeros((3, 2), np.float32)},
     r"has shape \[3, 2\], the declaration \[2, 3\]"),
    ({"enc::w.0": np.zeros((6,), np.float32)}, r"has shape \[6\]"),
])
def test_mismatches_are_reported_at_the_declaration(tmp_path: Path, tensors: dict,
                                                    message: str) -> None:
    with pytest.raises(WebnnFormatError, match=message) as info:
        load(_write(tmp_path, tensors))
    assert info.value.path.endswith("g.webnn") and info.value.line == 2


def test_bf16_for_a_float16_constant_is_refused(tmp_path: Path) -> None:
    header = json.dumps({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}}).encode()
    (tmp_path / "g.webnn").write_text(
        'webnn_graph "g" v1 { consts { w: f16[2]; } nodes { y = neg(w); } outputs { y; } }')
    (tmp_path / "g.safetensors").write_bytes(struct.pack("<Q", len(header)) + header
                                             + b"\x80\x3f\x00\x40")
    with pytest.raises(WebnnFormatError, match=r"is BF16, the declaration is float16"):
        load(tmp_path / "g.webnn")


def test_truncated_and_garbage_files_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, {"enc::w.0": np.zeros((2, 3), np.float32)})
    data = (tmp_path / "g.safetensors").read_bytes()
    (tmp_path / "g.safetensors").write_bytes(data[:-5])
    with pytest.raises(WebnnFormatError, match="not a valid safetensors file") as info:
        load(path)
    assert info.value.path.endswith("g.safetensors")
    (tmp_path / "g.safetensors").write_bytes(data[:6])
    with pytest.raises(WebnnFormatError, match="not a valid safetensors file"):
        load(path)
    # A header claiming a huge length: refused without allocating it.
    (tmp_path / "g.safetensors").write_bytes(struct.pack("<Q", 1 << 60) + b"{}")
    with pytest.raises(WebnnFormatError, match="not a valid safetensors file"):
        load(path)
    # A header whose tensor claims more data than the file holds.
    header = json.dumps({"enc::w.0": {"dtype": "F32", "shape": [1 << 20, 1 << 20],
                                      "data_offsets": [0, 1 << 42]}}).encode()
    (tmp_path / "g.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 8)
    with pytest.raises(WebnnFormatError, match="not a valid safetensors file"):
        load(path)


def test_malformed_names_metadata_is_refused(tmp_path: Path) -> None:
    tensors = {"enc::w.0": np.zeros((2, 3), np.float32)}
    path = _write(tmp_path, tensors, {NAMES_METADATA_KEY: "{not json"})
    with pytest.raises(WebnnFormatError, match="invalid JSON"):
        load(path)
    path = _write(tmp_path, tensors, {NAMES_METADATA_KEY: json.dumps({"inputs": {"a": 1}})})
    with pytest.raises(WebnnFormatError, match="inputs must map identifiers"):
        load(path)
    path = _write(tmp_path, tensors, {NAMES_METADATA_KEY: json.dumps({"outputs": {"y": "Y"}})})
    assert list(load(path).outputs) == ["Y"]


# -- CLI ------------------------------------------------------------------------------------
def test_cli_convert_webnn_json_with_safetensors(tmp_path: Path) -> None:
    model = tiny_cnn(tmp_path / "tiny.onnx")
    out = tmp_path / "out"
    r = CliRunner().invoke(cli, ["convert", str(model), "-o", str(out), "--dim", "batch=1",
                                 "--format", "webnn-json", "--weights", "safetensors",
                                 "--stem", "model"])
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in out.iterdir()) == [".webnn-converter.json",
                                                     "model.safetensors", "model.webnn.json"]
    result = converter.convert(str(model), free_dims={"batch": 1})
    feeds = {"image": RNG.standard_normal((1, 3, 16, 16)).astype(np.float32)}
    loaded = converter.load(out / "model.webnn.json")
    assert_same_outputs(_run(result.graph, feeds), _run(loaded, feeds))
    # `run` executes the JSON graph too.
    np.savez(tmp_path / "in.npz", **feeds)
    r = CliRunner().invoke(cli, ["run", str(out / "model.webnn.json"), "--inputs",
                                 str(tmp_path / "in.npz"), "-o", str(tmp_path / "o.npz")])
    assert r.exit_code == 0, r.output
    with np.load(tmp_path / "o.npz") as got:
        np.testing.assert_array_equal(got["probs"], _run(result.graph, feeds)["probs"])
