"""Untrusted input through the real CLI, run in a subprocess with a 2 GiB address space: what
reaches stderr. Lying .npy headers are refused before reading, Python warnings are held
back, LiteRT and onnxruntime logging stays off stderr."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.cli.models import tiny_tflite
from tests.cli.untrusted.cli_run import (
    capped_cli,
    invoke,
    one_error,
    one_error_line,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")


# -- what reaches stderr: lying .npy headers, Python warnings, native logs ---------------------

def _lying_npy(shape: tuple[int, ...]) -> bytes:
    """An .npy whose header declares `shape` (float32) over 16 bytes of data."""
    header = repr({"descr": "<f4", "fortran_order": False, "shape": shape}).encode()
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\x00" * 16


@pytest.mark.parametrize("shape", [(1 << 40,), (1 << 14, 1 << 14)], ids=["4TiB", "1GiB"])
def test_lying_npy_headers_are_refused_before_reading(tiny: Path, tmp_path: Path,
                                                      shape: tuple[int, ...]) -> None:
    """An .npy entry whose header claims more than it holds is refused from its header (it
    used to be allocated first: MemoryError)."""
    lying = tmp_path / "lying.npz"
    with zipfile.ZipFile(lying, "w") as z:
        z.writestr("image.npy", _lying_npy(shape))
    words = f"its header declares shape {list(shape)} of float32"
    line = one_error_line(capped_cli("validate", tiny, "--dim", "batch=1", "--inputs", lying))
    assert f"{lying}: array 'image': {words}" in line and "but it holds 16 bytes" in line
    folder = tmp_path / "graph"
    assert invoke("convert", tiny, "--dim", "batch=1", "-o", folder).exit_code == 0
    line = one_error_line(capped_cli("run", folder, "--inputs", lying, "-o",
                                       tmp_path / "o.npz"))
    assert words in line
    npy = tmp_path / "lying.npy"
    npy.write_bytes(_lying_npy(shape))
    line = one_error(invoke("convert", tiny, "--pin", f"image=@{npy}", "-o", tmp_path / "p"))
    assert f"{npy}: {words}" in line


def test_inputs_over_the_constant_budget(tiny: Path) -> None:
    line = one_error(invoke("validate", tiny, "--dim", "batch=1", "--inputs",
                            tiny.parent / "image.npz", "--max-constant-bytes", "1KiB"))
    assert ("array 'image': its header declares shape [1, 3, 16, 16] of float32 (3 KiB), "
            "over the budget of 1 KiB for one array (--max-constant-bytes)") in line


def test_python_warnings_are_held_back(tiny: Path, tmp_path: Path) -> None:
    """A manifest whose offsets count from the data area loads with a UserWarning: one
    `warning:` line when the command succeeds, nothing but the error line when it fails."""
    folder = tmp_path / "graph"
    assert invoke("convert", tiny, "--dim", "batch=1", "-o", folder).exit_code == 0
    manifest = folder / "tiny.manifest.json"
    data = json.loads(manifest.read_text())
    for entry in data["tensors"].values():
        entry["byteOffset"] -= 8
    manifest.write_text(json.dumps(data))
    r = invoke("run", folder, "--inputs", tiny.parent / "image.npz", "-o", tmp_path / "o.npz")
    assert r.exit_code == 0, r.output
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: ") and \
        "byte offsets look relative to the data area" in lines[0], r.stderr
    line = one_error(invoke("run", folder, "--inputs", tmp_path / "missing.npz", "-o",
                            tmp_path / "o2.npz"))
    assert "missing.npz: no such file" in line
    r = invoke("run", folder, "--inputs", tiny.parent / "image.npz", "-o", tmp_path / "o3.npz",
               "--debug")
    assert "UserWarning: " in r.stderr  # --debug shows every warning as Python does


def test_litert_logging_stays_off_stderr(tmp_path: Path) -> None:
    """LiteRT's C++ log line ("INFO: Created TensorFlow Lite XNNPACK delegate for CPU.") is
    written to file descriptor 2 when the interpreter is made."""
    pytest.importorskip("ai_edge_litert.interpreter")
    model = tmp_path / "tiny.tflite"
    tiny_tflite(model)
    proc = capped_cli("validate", model)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", proc.stderr


def test_onnxruntime_logging_stays_off_stderr(tmp_path: Path) -> None:
    """onnxruntime logs a failed allocation ("[E:onnxruntime:...] ... Failed to allocate
    memory") on file descriptor 2 besides raising it: only the error line may show."""
    shape = numpy_helper.from_array(np.array([32768, 32768], np.int64), "s")
    graph = helper.make_graph(
        [helper.make_node("Expand", ["x", "s"], ["y"], name="expand")], "big",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32768, 32768])], [shape])
    model = tmp_path / "big.onnx"
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                      ir_version=8), model)
    folder = tmp_path / "graph"
    assert invoke("convert", model, "-o", folder, "--target", "spec").exit_code == 0
    np.savez(tmp_path / "x.npz", x=np.ones(1, np.float32))
    line = one_error_line(capped_cli("run", folder, "--inputs", tmp_path / "x.npz", "-o",
                                       tmp_path / "o.npz", "--backend", "onnxruntime",
                                       "--max-tensor-bytes", "8GiB"))  # 4 GiB tensor
    assert "onnxruntime could not run the exported graph" in line
