"""`webnn-convert convert / inspect / validate` on files and folders the converter does not
read: each gets one `error:` line (exit 2, no traceback) saying what it is and what to do.

Every file is generated here: a safetensors file (the `safetensors` package), zip archives
(Keras, PyTorch, TorchScript, plain), an HDF5 header, pickles, a TensorFlow GraphDef and a
SavedModel folder serialized by hand as protobuf bytes, and WebNN graphs written by
`converter.io.export`.
"""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from safetensors.numpy import save_file

import converter
from cli.main import cli
from tests.cli.models import tiny_cnn

COMMANDS = ("convert", "inspect", "validate")


def invoke(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def run_all(model: Path, tmp_path: Path) -> list[str]:
    """Run every command on `model`; each must fail with exit 2 and one stderr line, which is
    the same for all three. Returns that line."""
    lines = []
    for command in COMMANDS:
        extra = ["-o", tmp_path / "out"] if command == "convert" else []
        r = invoke(command, model, *extra)
        assert r.exit_code == 2, (command, r.output)
        assert "Traceback" not in r.output
        err = r.stderr.strip()
        assert err.startswith("error: ") and "\n" not in err, (command, r.stderr)
        lines.append(err)
        assert not (tmp_path / "out").exists()
    assert len(set(lines)) == 1, lines
    return lines[0]


# -- protobuf bytes by hand -----------------------------------------------------------------


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def graphdef() -> bytes:
    """GraphDef {node: x = Placeholder(dtype=DT_FLOAT), y = Relu(x); versions {producer: 27}}."""
    attr = field(5, field(1, b"dtype") + field(2, varint(6 << 3) + varint(1)))
    x = field(1, b"x") + field(2, b"Placeholder") + attr
    y = field(1, b"y") + field(2, b"Relu") + field(3, b"x")
    return field(1, x) + field(1, y) + field(4, varint(1 << 3) + varint(27))


def saved_model(folder: Path) -> Path:
    """saved_model.pb (schema version 1, one MetaGraphDef tagged "serve" holding the
    GraphDef) and an empty variables/ folder."""
    meta = field(1, field(4, b"serve")) + field(2, graphdef())
    folder.mkdir()
    (folder / "saved_model.pb").write_bytes(varint(1 << 3) + varint(1) + field(2, meta))
    (folder / "variables").mkdir()
    (folder / "variables" / "variables.index").write_bytes(b"")
    return folder


# -- the kinds ------------------------------------------------------------------------------


def test_frozen_graphdef(tmp_path: Path) -> None:
    pb = tmp_path / "model.pb"
    pb.write_bytes(graphdef())
    line = run_all(pb, tmp_path)
    assert line.startswith(f"error: {pb} is a TensorFlow frozen graph (GraphDef), not ONNX or "
                           "TFLite: export it to ONNX with tf2onnx first (python -m "
                           f"tf2onnx.convert --graphdef {pb} ")
    assert "TFLite converter" in line


def test_graphdef_renamed_to_onnx_is_still_a_graphdef(tmp_path: Path) -> None:
    renamed = tmp_path / "model.onnx"
    renamed.write_bytes(graphdef())
    assert "is a TensorFlow frozen graph (GraphDef)" in run_all(renamed, tmp_path)


def test_saved_model_folder_and_its_graph_file(tmp_path: Path) -> None:
    folder = saved_model(tmp_path / "sm")
    line = run_all(folder, tmp_path)
    assert line.startswith(f"error: {folder} is a TensorFlow SavedModel, not ONNX or TFLite")
    assert f"python -m tf2onnx.convert --saved-model {folder} --output model.onnx" in line
    assert "from_saved_model" in line
    line = run_all(folder / "saved_model.pb", tmp_path)
    assert "graph file of a TensorFlow SavedModel" in line
    assert f"--saved-model {folder} " in line


def test_safetensors(tmp_path: Path) -> None:
    st = tmp_path / "weights.safetensors"
    save_file({"w": np.zeros((2, 3), np.float32)}, str(st))
    line = run_all(st, tmp_path)
    assert line.startswith(f"error: {st} is a safetensors file (tensors only, no graph), not "
                           "ONNX or TFLite")
    assert "torch.onnx.export" in line


@pytest.fixture(scope="module")
def webnn_exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("exports")
    result = converter.convert(tiny_cnn(d / "tiny.onnx"), free_dims={"batch": 1})
    converter.export(result, d / "text", format="webnn")
    converter.export(result, d / "json", format="webnn-json", weights="safetensors")
    return {"webnn": d / "text" / "model.webnn", "weights": d / "text" / "model.weights",
            "manifest": d / "text" / "model.manifest.json",
            "json": d / "json" / "model.webnn.json",
            "safetensors": d / "json" / "model.safetensors", "folder": d / "json"}


@pytest.mark.parametrize("key", ["webnn", "json"])
def test_webnn_graph(webnn_exports: dict[str, Path], tmp_path: Path, key: str) -> None:
    graph = webnn_exports[key]
    line = run_all(graph, tmp_path)
    assert line.startswith(f"error: {graph} is already a WebNN graph")
    assert f"use `webnn-convert run {graph} --inputs" in line


def test_webnn_weights_and_folder(webnn_exports: dict[str, Path], tmp_path: Path) -> None:
    for key in ("weights", "manifest"):
        line = run_all(webnn_exports[key], tmp_path)
        assert "of a WebNN graph, not a model to convert" in line and "webnn-convert run" in line
    line = run_all(webnn_exports["safetensors"], tmp_path)
    assert "is the weights (.safetensors) of a WebNN graph" in line
    assert f"webnn-convert run {webnn_exports['json']} " in line
    line = run_all(webnn_exports["folder"], tmp_path)
    assert "holding a WebNN graph" in line and f"webnn-convert run {webnn_exports['json']}" \
        in line


def test_keras_and_hdf5(tmp_path: Path) -> None:
    keras = tmp_path / "model.keras"
    with zipfile.ZipFile(keras, "w") as z:
        z.writestr("metadata.json", json.dumps({"keras_version": "3.6.0"}))
        z.writestr("config.json", json.dumps({"class_name": "Sequential"}))
        z.writestr("model.weights.h5", b"\x89HDF\r\n\x1a\n")
    assert "is a Keras model (.keras archive), not ONNX or TFLite" in run_all(keras, tmp_path)
    h5 = tmp_path / "model.h5"
    h5.write_bytes(b"\x89HDF\r\n\x1a\n" + bytes(504))
    line = run_all(h5, tmp_path)
    assert "is an HDF5 file (a Keras .h5 model or weights?)" in line and "tf2onnx" in line


def test_pytorch(tmp_path: Path) -> None:
    pt = tmp_path / "model.pt"
    with zipfile.ZipFile(pt, "w") as z:  # the layout of torch.save (zip format)
        z.writestr("model/data.pkl", pickle.dumps({"w": 1}, protocol=2))
        z.writestr("model/byteorder", "little")
        z.writestr("model/version", "3\n")
    line = run_all(pt, tmp_path)
    assert "is a PyTorch checkpoint (torch.save)" in line
    assert "export it with torch.onnx.export" in line
    scripted = tmp_path / "scripted.pt"
    with zipfile.ZipFile(scripted, "w") as z:  # torch.jit.save
        z.writestr("scripted/data.pkl", b"")
        z.writestr("scripted/constants.pkl", b"")
        z.writestr("scripted/code/__torch__/m.py", "")
    assert "is a TorchScript module" in run_all(scripted, tmp_path)
    legacy = tmp_path / "legacy.pth"  # the pre-1.6 format: a pickle of torch's magic number
    legacy.write_bytes(b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19." + bytes(16))
    assert "is a PyTorch checkpoint" in run_all(legacy, tmp_path)
    pth = tmp_path / "state.pth"
    pth.write_bytes(pickle.dumps({"weight": [1.0]}))
    assert "is a PyTorch checkpoint" in run_all(pth, tmp_path)
    other = tmp_path / "model.pkl"
    other.write_bytes(pickle.dumps({"weight": [1.0]}))
    assert "is a Python pickle" in run_all(other, tmp_path)


def test_zip_archives(tmp_path: Path) -> None:
    plain = tmp_path / "bundle.zip"
    with zipfile.ZipFile(plain, "w") as z:
        z.writestr("readme.txt", "hi")
        z.writestr("labels.txt", "cat\ndog\n")
    line = run_all(plain, tmp_path)
    assert line == (f"error: {plain} is a zip archive (entries: labels.txt, readme.txt), not "
                    "ONNX or TFLite: unpack it and pass the model file in it")
    holding = tmp_path / "release.zip"
    with zipfile.ZipFile(holding, "w") as z:
        z.writestr("release/model.tflite", b"")
    line = run_all(holding, tmp_path)
    assert "a zip archive holding release/model.tflite" in line
    npz = tmp_path / "inputs.npz"
    np.savez(npz, x=np.zeros(3, np.float32))
    assert "is a NumPy archive (.npz" in run_all(npz, tmp_path)


def test_folders(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run_all(empty, tmp_path) == (f"error: {empty} is a folder, not a model file: pass "
                                        "the model file itself (ONNX or TFLite)")
    holding = tmp_path / "holding"
    holding.mkdir()
    tiny_cnn(holding / "tiny.onnx")
    line = run_all(holding, tmp_path)
    assert f"pass the model file in it ({holding / 'tiny.onnx'})" in line


def test_readable_models_still_convert(tmp_path: Path) -> None:
    """Content decides: an ONNX model without its suffix still converts."""
    model = tmp_path / "model.bin"
    model.write_bytes(tiny_cnn(tmp_path / "tiny.onnx").read_bytes())
    r = invoke("convert", model, "-o", tmp_path / "out", "--dim", "batch=1")
    assert r.exit_code == 0, r.output
