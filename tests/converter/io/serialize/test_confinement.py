"""Folder confinement of the files a model or graph refers to (`converter.core.confine`): the
weights blob, manifest and `.safetensors` file found next to a `.webnn` / `.webnn.json` graph,
the graph file found in a folder given to `load()`, and ONNX external data. A file that is a
symlink leaving the folder is refused (`PathOutsideFolder`, one line naming the file, where it
resolves to and the rule) unless `allow_roots` names the folder it lies in; `..` and absolute
external-data locations are always refused. Oracle: the values computed from the graph
exported in place (before any file was moved)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from converter.api import convert, load, validate
from converter.core.confine import allowed_roots, check_relative, confined
from converter.core.errors import InvalidModel, PathOutsideFolder
from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.io.export.exporter import export

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")

RNG = np.random.default_rng(7)
FEEDS = {"x": RNG.standard_normal((4, 16)).astype(np.float32)}


def _graph() -> MLGraph:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [4, 16], "float32")
    w = b.constant(RNG.standard_normal((16, 8)).astype(np.float32))
    return b.build({"y": b.relu(b.matmul(x, w))})


def _outputs(graph: MLGraph) -> dict[str, np.ndarray]:
    return graph.context.compute(graph, FEEDS)


def _move_out(path: Path, outside: Path) -> Path:
    """Move `path` into `outside` and leave a symlink to it in its place; the new place."""
    outside.mkdir(exist_ok=True)
    target = outside / path.name
    shutil.move(str(path), target)
    path.symlink_to(target)
    return target


def _one_line(exc: BaseException) -> str:
    text = str(exc)
    assert text.isprintable() and "\n" not in text, text
    return text


CASES = [("webnn", "blob", "model.weights"), ("webnn", "blob", "model.manifest.json"),
         ("webnn", "safetensors", "model.safetensors"),
         ("webnn-json", "blob", "model.weights"), ("webnn-json", "blob", "model.manifest.json"),
         ("webnn-json", "safetensors", "model.safetensors")]


@pytest.mark.parametrize(("fmt", "weights", "moved"), CASES)
def test_a_companion_file_symlinked_outside_is_refused(tmp_path: Path, fmt: str, weights: str,
                                                       moved: str) -> None:
    graph = _graph()
    expected = _outputs(graph)
    folder = tmp_path / "model"
    export(graph, folder, format=fmt, weights=weights)
    outside = tmp_path / "elsewhere"
    _move_out(folder / moved, outside)
    with pytest.raises(PathOutsideFolder) as info:
        load(folder)
    text = _one_line(info.value)
    assert moved in text and "outside the model's folder" in text
    assert str(outside.resolve()) in text and "allow_roots" in text
    loaded = load(folder, allow_roots=[outside])
    np.testing.assert_array_equal(_outputs(loaded)["y"], expected["y"])


def test_a_symlink_inside_the_folder_is_fine(tmp_path: Path) -> None:
    graph = _graph()
    folder = tmp_path / "model"
    export(graph, folder)
    (folder / "model.weights").rename(folder / "real.bin")
    (folder / "model.weights").symlink_to("real.bin")
    np.testing.assert_array_equal(_outputs(load(folder))["y"], _outputs(graph)["y"])


def test_a_symlinked_folder_of_the_graph_is_its_folder(tmp_path: Path) -> None:
    """The folder is the one the graph is named in, resolved: a symlink to the whole folder
    keeps its files inside."""
    graph = _graph()
    export(graph, tmp_path / "real")
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    np.testing.assert_array_equal(_outputs(load(tmp_path / "alias" / "model.webnn"))["y"],
                                  _outputs(graph)["y"])


def test_the_graph_file_found_in_a_folder_is_confined(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    export(_graph(), folder)
    _move_out(folder / "model.webnn", tmp_path / "elsewhere")
    with pytest.raises(PathOutsideFolder, match="the graph file"):
        load(folder)


def test_explicit_weights_are_read_wherever_they_are(tmp_path: Path) -> None:
    graph = _graph()
    folder = tmp_path / "model"
    export(graph, folder)
    target = _move_out(folder / "model.weights", tmp_path / "elsewhere")
    (folder / "model.weights").unlink()
    loaded = load(folder / "model.webnn", weights_path=target)
    np.testing.assert_array_equal(_outputs(loaded)["y"], _outputs(graph)["y"])


def test_allowed_roots_nest_and_reset() -> None:
    from converter.core.confine import current_roots

    with allowed_roots(["/a"]):
        with allowed_roots("/b"):
            assert current_roots() == (Path("/a").resolve(), Path("/b").resolve())
        assert current_roots() == (Path("/a").resolve(),)
    assert current_roots() == ()


def test_confined_and_check_relative(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "f").write_text("x")
    assert confined(tmp_path / "in" / "f", tmp_path / "in", "the file") == \
        (tmp_path / "in" / "f").resolve()
    with pytest.raises(PathOutsideFolder):
        confined(tmp_path / "in" / ".." / "g", tmp_path / "in", "the file")
    for bad in ("/etc/passwd", "C:\\x", "\\\\server\\share", "a/../../b", "..\\b"):
        with pytest.raises(PathOutsideFolder):
            check_relative(bad, "location")
    check_relative("sub/w.bin", "location")


# -- ONNX external data ---------------------------------------------------------------------


def _external_model(folder: Path, location: str = "w.bin") -> tuple[Path, np.ndarray]:
    folder.mkdir(parents=True, exist_ok=True)
    w = RNG.standard_normal((2, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              ir_version=8)
    path = folder / "ext.onnx"
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="w.bin", size_threshold=0)
    if location != "w.bin":
        proto = onnx.load(path, load_external_data=False)
        for entry in proto.graph.initializer[0].external_data:
            if entry.key == "location":
                entry.value = location
        onnx.save_model(proto, path)
    return path, w


def test_external_data_symlinked_outside_is_refused_unless_allowed(tmp_path: Path) -> None:
    path, w = _external_model(tmp_path / "model")
    outside = tmp_path / "elsewhere"
    _move_out(path.parent / "w.bin", outside)
    with pytest.raises(PathOutsideFolder) as info:
        convert(path)
    text = _one_line(info.value)
    assert "'w.bin'" in text and "outside the model's folder" in text and "allow_roots" in text
    assert "--allow-root DIR" in info.value.render("cli")
    result = convert(path, allow_roots=[outside])
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(result.run({"x": x})["y"], x + w)
    assert validate(path, allow_roots=[outside]).passed


@pytest.mark.parametrize("location", ["../w.bin", "sub/../../w.bin", "/ABSOLUTE/w.bin"])
def test_dotdot_and_absolute_locations_are_refused_even_when_allowed(tmp_path: Path,
                                                                      location: str) -> None:
    path, _ = _external_model(tmp_path / "model")
    shutil.copy(path.parent / "w.bin", tmp_path / "w.bin")
    location = location.replace("/ABSOLUTE", str(tmp_path))
    _external_model(tmp_path / "model", location)
    with pytest.raises(PathOutsideFolder, match=r"absolute path|\.\.") as info:
        convert(path, allow_roots=[tmp_path])
    assert isinstance(info.value, InvalidModel)
    _one_line(info.value)
