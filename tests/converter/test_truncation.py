"""A model file or its external data truncated while it is converted (issue 27.3): the
readers copy what they read (`converter.core.files`), never memory-map a user's file, so a file
that ends early is one error naming it, never a SIGBUS (exit 135, no line, a temporary
export folder left behind).

The library tests truncate deterministically at the moment that mattered: after the file
was opened and its size taken, before its bytes are read. The CLI test truncates at sampled
moments of a real `webnn-convert convert` run; its assertions hold wherever the truncation
lands (a run that read everything before it succeeds)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import converter
import converter.core.files
from converter.core.errors import InvalidModel
from converter.frontends.onnx import tensors

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD_S = 300


def chain_model(folder: Path, *, layers: int = 4, width: int = 64, external: bool = True
                ) -> tuple[Path, Path]:
    """x [1, width] -> MatMul(w0) -> ... -> MatMul(w{layers-1}) -> y, the weights in
    `m.data` (external) or in the model file; (model path, the file the weights are in)."""
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array(rng.standard_normal((width, width)).astype(np.float32),
                                       f"w{i}") for i in range(layers)]
    nodes = [helper.make_node("MatMul", ["x" if i == 0 else f"h{i}", f"w{i}"],
                              ["y" if i == layers - 1 else f"h{i + 1}"], name=f"mm{i}")
             for i in range(layers)]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, width])], weights)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    path = folder / "m.onnx"
    if external:
        onnx.save_model(model, path, save_as_external_data=True, location="m.data",
                        size_threshold=0)
        return path, folder / "m.data"
    onnx.save_model(model, path)
    return path, path


def _cut(path: Path | str) -> None:
    os.truncate(path, os.path.getsize(path) // 2)


def test_external_data_cut_after_its_size_was_checked(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The range check passed (the file was whole), then the file is cut before the read."""
    model, data = chain_model(tmp_path)
    real = tensors.array_at

    def cut_then_read(f: BinaryIO, offset: int, *args: Any) -> np.ndarray:
        _cut(data)
        return real(f, offset, *args)

    monkeypatch.setattr(tensors, "array_at", cut_then_read)
    with pytest.raises(InvalidModel) as exc:
        converter.convert(str(model))
    text = str(exc.value)
    assert "m.data" in text and "ends early" in text and "\n" not in text, text


def test_external_data_cut_once_opened(tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Cut between the open and the size check: the check sees the size of the open file."""
    model, data = chain_model(tmp_path)
    real = tensors.open_regular

    def open_then_cut(path: Any, what: str = "the file") -> BinaryIO:
        f = real(path, what)
        _cut(data)
        return f

    monkeypatch.setattr(tensors, "open_regular", open_then_cut)
    with pytest.raises(InvalidModel) as exc:
        converter.convert(str(model))
    assert "m.data" in str(exc.value) and "lies outside" in str(exc.value), exc.value


class _CutOnRead:
    """An open file whose first read cuts the file (after its size was taken)."""

    def __init__(self, f: BinaryIO, path: Path) -> None:
        self.f, self.path = f, path

    def fileno(self) -> int:
        return self.f.fileno()

    def read(self, *args: Any) -> bytes:
        _cut(self.path)
        return self.f.read(*args)

    def __enter__(self) -> _CutOnRead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.f.close()


@pytest.mark.parametrize("kind", ["onnx", "tflite"])
def test_model_file_cut_while_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   kind: str) -> None:
    """A cut protobuf may still parse as a smaller model: a read shorter than the size the
    open file had is an error, not a different model."""
    if kind == "onnx":
        model, _ = chain_model(tmp_path, external=False)
    else:
        from tests.cli.models import tiny_tflite

        model = tmp_path / "m.tflite"
        tiny_tflite(model)
    real = converter.core.files.open_regular
    opened: Callable[..., Any] = lambda path, what="the file": _CutOnRead(  # noqa: E731
        real(path, what), Path(path)) if Path(path) == model else real(path, what)
    monkeypatch.setattr(converter.core.files, "open_regular", opened)
    with pytest.raises(InvalidModel) as exc:
        converter.convert(str(model))
    text = str(exc.value)
    assert model.name in text and "ends early" in text and "\n" not in text, text


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


@pytest.mark.parametrize("external", [True, False], ids=["external-data", "model-file"])
def test_convert_with_the_file_cut_at_any_moment(tmp_path: Path, external: bool) -> None:
    """`webnn-convert convert` while the weights' file is cut at sampled moments: it either
    read everything first (exit 0) or stops with one line naming the file (exit 2); never
    a SIGBUS (135 / -7), never a temporary export folder left."""
    src = tmp_path / "src"
    src.mkdir()
    chain_model(src, layers=24, width=768, external=external)  # 54 MiB of weights
    start = time.monotonic()
    whole = subprocess.run([sys.executable, "-m", "cli.entry", "convert", str(src / "m.onnx"),
                            "-o", str(tmp_path / "whole")], env=_env(), capture_output=True,
                           text=True, timeout=HANG_GUARD_S)
    length = time.monotonic() - start
    assert whole.returncode == 0, whole.stderr
    for i in range(8):
        work = tmp_path / f"run{i}"
        work.mkdir()
        model, data = chain_model(work, layers=24, width=768, external=external)
        proc = subprocess.Popen([sys.executable, "-m", "cli.entry", "convert", str(model),
                                 "-o", str(work / "out")], env=_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(length * (0.3 + 0.7 * i / 7))
            os.truncate(data, os.path.getsize(data) // 3)
            _, err = proc.communicate(timeout=HANG_GUARD_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode in (0, 2), (proc.returncode, err)
        if proc.returncode == 2:
            assert err.startswith("error: ") and err.count("\n") == 1, err
            assert data.name in err, err
            assert not (work / "out").exists()
        assert [p.name for p in work.iterdir() if ".export-" in p.name] == [], i
        shutil.rmtree(work)  # 54 MiB each
