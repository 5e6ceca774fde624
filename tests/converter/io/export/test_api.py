"""export()/load(): formats, conversion results, all-or-nothing writes, folder loading."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import converter
from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.io.export import exporter as api
from converter.io.export.exporter import export, load
from converter.io.serialize.errors import WebnnFormatError
from tests.converter.io.export.graphs import FAMILIES, assert_same_outputs

HAS_ONNX_EXPORT = importlib.util.find_spec("converter.runtimes.onnxruntime.to_onnx") is not None


def _simple() -> tuple[MLGraph, dict[str, np.ndarray]]:
    """conv2d + relu + softmax with awkward names (every op has an ONNX lowering)."""
    b = MLGraphBuilder(ML().create_context())
    rng = np.random.default_rng(7)
    x = b.input("pixel values:0", [1, 2, 5, 5], "float32")
    w = b.constant(rng.standard_normal((3, 2, 3, 3)).astype(np.float32))
    y = b.relu(b.conv2d(x, w, padding=[1, 1, 1, 1], bias=b.constant(np.ones(3, np.float32))))
    probs = b.softmax(b.reshape(y, [1, 75]), 1)
    graph = b.build({"probs</script>": probs, "features": y})
    return graph, {"pixel values:0": rng.standard_normal((1, 2, 5, 5)).astype(np.float32)}


def test_webnn_export_and_load(tmp_path: Path) -> None:
    graph, feeds = _simple()
    paths = export(graph, tmp_path / "out")
    assert sorted(p.name for p in paths) == ["model.manifest.json", "model.webnn",
                                             "model.weights"]
    assert all(p.parent == tmp_path / "out" and p.is_file() for p in paths)
    loaded = load(tmp_path / "out" / "model.webnn")
    assert_same_outputs(graph.context.compute(graph, feeds), loaded.context.compute(loaded,
                                                                                     feeds))
    loaded_from_folder = load(tmp_path / "out")
    assert list(loaded_from_folder.outputs) == ["probs</script>", "features"]


def test_js_export_writes_module_page_and_weights(tmp_path: Path) -> None:
    graph, _ = _simple()
    paths = export(graph, tmp_path, format="js", stem="net")
    assert sorted(p.name for p in paths) == ["net.html", "net.js", "net.manifest.json",
                                             "net.webnn", "net.weights"]
    assert (tmp_path / "net.weights").read_bytes()[:4] == b"WGWT"
    assert "export async function buildGraph(context, weights)" in (
        tmp_path / "net.js").read_text()


@pytest.mark.skipif(not HAS_ONNX_EXPORT, reason="converter.runtimes.onnxruntime.to_onnx is not available")
def test_onnx_export_runs_in_onnxruntime(tmp_path: Path) -> None:
    import onnxruntime as ort

    graph, feeds = _simple()
    paths = export(graph, tmp_path, format="onnx")
    assert [p.name for p in paths] == ["model.onnx"]
    session = ort.InferenceSession(str(paths[0]), providers=["CPUExecutionProvider"])
    got = dict(zip([o.name for o in session.get_outputs()], session.run(None, feeds),
                   strict=True))
    want = graph.context.compute(graph, feeds)
    assert set(got) == set(want)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(not HAS_ONNX_EXPORT, reason="converter.runtimes.onnxruntime.to_onnx is not available")
def test_all_formats(tmp_path: Path) -> None:
    graph, _ = _simple()
    paths = export(graph, tmp_path / "all", format="all")
    assert sorted(p.name for p in paths) == ["model.html", "model.js", "model.manifest.json",
                                             "model.onnx", "model.webnn", "model.weights"]


def test_all_without_onnx_exporter_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    monkeypatch.setattr(api, "_onnx_module", lambda: None)
    graph, _ = _simple()
    with pytest.warns(UserWarning, match="skipped the ONNX file"):
        paths = export(graph, tmp_path, format="all")
    assert "model.onnx" not in [p.name for p in paths]
    with pytest.raises(NotImplementedError, match="ONNX exporter"):
        export(graph, tmp_path / "o", format="onnx")
    assert not (tmp_path / "o").exists()


def test_accepts_a_conversion_result(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    node = helper.make_node("Relu", ["in:0"], ["out/0"])
    model = helper.make_model(
        helper.make_graph([node], "g", [helper.make_tensor_value_info("in:0", TensorProto.FLOAT,
                                                                      [2, 3])],
                          [helper.make_tensor_value_info("out/0", TensorProto.FLOAT, [2, 3])]),
        opset_imports=[helper.make_opsetid("", 17)])
    result = converter.convert(model)
    export(result, tmp_path)
    loaded = load(tmp_path / "model.webnn")
    x = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    out = loaded.context.compute(loaded, {"in:0": x})
    np.testing.assert_array_equal(out["out/0"], np.maximum(x, 0))


def test_failure_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(api, "write_javascript", boom)
    graph, _ = _simple()
    with pytest.raises(RuntimeError, match="disk full"):
        export(graph, tmp_path / "new", format="js")
    assert list(tmp_path.iterdir()) == []
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "model.webnn").write_text("old")
    with pytest.raises(RuntimeError, match="disk full"):
        export(graph, existing, format="js", force=True)
    assert [p.name for p in existing.iterdir()] == ["model.webnn"]
    assert (existing / "model.webnn").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing"]


def test_existing_folder_files_are_replaced(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    (tmp_path / "model.webnn").write_text("old")
    graph, feeds = _simple()
    export(graph, tmp_path, force=True)  # a folder export() did not write needs force
    assert (tmp_path / "keep.txt").read_text() == "mine"
    assert (tmp_path / "model.webnn").read_text().startswith('webnn_graph "model" v1 {')
    assert sorted(p.name for p in tmp_path.iterdir()) == [api.MARKER, "keep.txt",
                                                          "model.manifest.json",
                                                          "model.webnn", "model.weights"]


def test_bad_arguments(tmp_path: Path) -> None:
    graph, _ = _simple()
    with pytest.raises(ValueError, match="format 'tflite'"):
        export(graph, tmp_path, format="tflite")
    with pytest.raises(ValueError, match="plain file name"):
        export(graph, tmp_path, stem="../escape")
    with pytest.raises(TypeError, match="expected an MLGraph"):
        export(object(), tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        export(graph, tmp_path / "file")


def test_export_error_for_unwritable_graph_leaves_nothing(tmp_path: Path) -> None:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [2], "float32")
    graph = b.build({"y": b.pad(x, [1], [1], value=float("nan"))})
    with pytest.raises(ValueError, match="NaN"):
        export(graph, tmp_path / "nan")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("weights", ["blob", "safetensors"])
def test_js_export_carries_nan_and_leaves_the_text_out(tmp_path: Path, weights: str) -> None:
    """The .webnn text has no NaN: format "js" writes the module (NaN, Infinity as
    JavaScript literals) and the weights it reads, leaves the text out and says so;
    "webnn" and "all" refuse the graph."""
    from converter.io.serialize.errors import NotRepresentable

    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [2], "float32")
    w = b.constant(np.arange(6, dtype=np.float32))  # a weights-blob constant
    graph = b.build({"y": b.pad(x, [1], [1], value=float("nan")),
                     "z": b.pad(b.add(b.reshape(w, [6]), b.pad(x, [2], [2])), [1], [0],
                                value=float("-inf"))})
    with pytest.warns(UserWarning, match=r"model\.webnn left out: pad #0: option value is "
                                         r"NaN.*model\.js carries it"):
        paths = export(graph, tmp_path / "js", format="js", weights=weights)
    names = sorted(p.name for p in paths)
    assert "model.webnn" not in names and not (tmp_path / "js" / "model.webnn").exists()
    assert {"model.js", "model.html", "model.weights"} <= set(names)
    module = (tmp_path / "js" / "model.js").read_text()
    assert "value: NaN" in module and "value: -Infinity" in module
    for fmt in ("webnn", "all"):
        with pytest.raises(NotRepresentable, match=r"pad\.value: NaN"):
            export(graph, tmp_path / fmt, format=fmt)


def test_load_folder_needs_one_graph(tmp_path: Path) -> None:
    graph, _ = _simple()
    export(graph, tmp_path, stem="a")
    assert list(load(tmp_path).outputs) == ["probs</script>", "features"]
    export(graph, tmp_path, stem="b", force=True)  # force: merge (else a replaces b)
    with pytest.raises(WebnnFormatError, match="exactly one .webnn"):
        load(tmp_path)
    export(graph, tmp_path, stem="model", force=True)
    assert load(tmp_path).outputs


def test_every_family_through_the_api(tmp_path: Path) -> None:
    for family, make in FAMILIES.items():
        ex = make()
        export(ex.graph, tmp_path / family, name=family)
        loaded = load(tmp_path / family)
        assert_same_outputs(ex.context.compute(ex.graph, ex.feeds),
                            loaded.context.compute(loaded, ex.feeds))
