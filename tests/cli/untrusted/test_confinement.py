"""Untrusted input through the real CLI: folder confinement of the files a model refers to
(`--allow-root`): external data and graph files symlinked or pointing outside the model's
folder are refused with one error line. Oracle: the outputs of the same graph run before its
files were moved."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.cli.untrusted.cli_run import (
    invoke,
    one_error,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")


def _move_out(path: Path, outside: Path) -> Path:
    """Move `path` into `outside`, leaving a symlink to it in its place."""
    outside.mkdir(exist_ok=True)
    target = outside / path.name
    shutil.move(str(path), target)
    path.symlink_to(target)
    return target


# -- folder confinement -----------------------------------------------------------------------


def _external_model(folder: Path, location: str = "w.bin") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    w = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])], [w])
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
    return path


def test_external_data_symlinked_to_a_canary_is_refused(tmp_path: Path) -> None:
    model = _external_model(tmp_path / "model")
    canary = tmp_path / "canary"
    canary.write_bytes(b"CANARY-SECRET!!!" + b"\0" * 8)  # 24 bytes, as w.bin
    (model.parent / "w.bin").unlink()
    (model.parent / "w.bin").symlink_to(canary)
    for command in ("convert", "validate"):
        line = one_error(invoke(command, model, *(["-o", tmp_path / "o"]
                                                   if command == "convert" else [])))
        assert "'w.bin'" in line and str(canary.resolve()) in line
        assert "outside the model's folder" in line and "--allow-root DIR" in line
        assert "CANARY" not in line
    assert not (tmp_path / "o").exists()


def test_external_data_outside_passes_with_allow_root(tmp_path: Path) -> None:
    model = _external_model(tmp_path / "model")
    outside = tmp_path / "shared"
    _move_out(model.parent / "w.bin", outside)
    r = invoke("convert", model, "-o", tmp_path / "o", "--allow-root", outside)
    assert r.exit_code == 0, r.output
    r = invoke("validate", model, "--allow-root", outside)
    assert r.exit_code == 0 and "verdict: PASS" in r.stdout, r.output
    assert invoke("inspect", model, "--allow-root", outside).exit_code == 0
    # another folder allowed does not allow this one
    one_error(invoke("validate", model, "--allow-root", tmp_path / "model"))
    # --allow-root takes an existing folder
    one_error(invoke("validate", model, "--allow-root", tmp_path / "nothing"))


@pytest.mark.parametrize("location", ["../w.bin", "sub/../../w.bin", "ABSOLUTE"])
def test_dotdot_and_absolute_external_data_are_refused(tmp_path: Path, location: str) -> None:
    model = _external_model(tmp_path / "model")
    shutil.copy(model.parent / "w.bin", tmp_path / "w.bin")
    if location == "ABSOLUTE":
        location = str(tmp_path / "w.bin")
    _external_model(tmp_path / "model", location)
    line = one_error(invoke("convert", model, "-o", tmp_path / "o", "--allow-root", tmp_path))
    assert "absolute path" in line or "'..'" in line


GRAPH_CASES = [("webnn", "blob", "weights"), ("webnn", "blob", "manifest.json"),
               ("webnn", "safetensors", "safetensors"), ("webnn-json", "blob", "weights"),
               ("webnn-json", "blob", "manifest.json"),
               ("webnn-json", "safetensors", "safetensors"), ("webnn", "blob", "webnn")]


@pytest.mark.parametrize(("fmt", "weights", "suffix"), GRAPH_CASES)
def test_run_refuses_graph_files_symlinked_outside(tiny: Path, tmp_path: Path, fmt: str,
                                                   weights: str, suffix: str) -> None:
    folder = tmp_path / "graph"
    r = invoke("convert", tiny, "--dim", "batch=1", "-o", folder, "--format", fmt,
               "--weights", weights)
    assert r.exit_code == 0, r.output
    inputs = tiny.parent / "image.npz"
    assert invoke("run", folder, "--inputs", inputs, "-o", tmp_path / "a.npz").exit_code == 0
    outside = tmp_path / "elsewhere"
    moved = _move_out(folder / f"tiny.{suffix}", outside)
    line = one_error(invoke("run", folder, "--inputs", inputs, "-o", tmp_path / "b.npz"))
    assert moved.name in line and "outside the model's folder" in line
    assert "--allow-root DIR" in line and not (tmp_path / "b.npz").exists()
    r = invoke("run", folder, "--inputs", inputs, "-o", tmp_path / "b.npz", "--allow-root",
               outside)
    assert r.exit_code == 0, r.output
    with np.load(tmp_path / "a.npz") as a, np.load(tmp_path / "b.npz") as b:
        np.testing.assert_array_equal(a["probs"], b["probs"])


def test_run_refuses_a_weights_symlink_to_a_canary(tiny: Path, tmp_path: Path) -> None:
    folder = tmp_path / "graph"
    assert invoke("convert", tiny, "--dim", "batch=1", "-o", folder).exit_code == 0
    canary = tmp_path / "canary"
    canary.write_bytes(b"CANARY" * 100)
    (folder / "tiny.weights").unlink()
    (folder / "tiny.weights").symlink_to(canary)
    line = one_error(invoke("run", folder / "tiny.webnn", "--inputs",
                            tiny.parent / "image.npz", "-o", tmp_path / "b.npz"))
    assert "tiny.weights" in line and "CANARY" not in line
