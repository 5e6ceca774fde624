"""Untrusted input through the real CLI: validation of every option that takes a file or a
value (--inputs archives, --dim pins, numeric options); each bad one is one `error: ` line
with exit code 2."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tests.cli.untrusted.cli_run import (
    IMAGE,
    invoke,
    one_error,
)

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")


# -- option values -----------------------------------------------------------------------------


def _npz_files(folder: Path) -> dict[str, Path]:
    files = {}
    files["text"] = folder / "text.npz"
    files["text"].write_text("not an archive\n")
    files["zip"] = folder / "zip.npz"
    with zipfile.ZipFile(files["zip"], "w") as z:
        z.writestr("readme.txt", "hello")
    files["corrupt"] = folder / "corrupt.npz"
    files["corrupt"].write_bytes(b"PK\x03\x04" + os.urandom(100))
    files["pickle"] = folder / "pickle.npz"
    np.savez(files["pickle"], image=np.array([{"a": 1}], dtype=object))
    files["names"] = folder / "names.npz"
    np.savez(files["names"], picture=IMAGE)
    files["shape"] = folder / "shape.npz"
    np.savez(files["shape"], image=IMAGE[0])
    files["strings"] = folder / "strings.npz"
    np.savez(files["strings"], image=np.full(IMAGE.shape, "a"))
    files["complex"] = folder / "complex.npz"
    np.savez(files["complex"], image=IMAGE.astype(np.complex64))
    files["missing"] = folder / "missing.npz"
    return files


INPUT_WORDS = {"text": "not an .npz archive", "zip": "not a .npy array",
               "corrupt": "not a readable .npz", "pickle": "pickled",
               "names": "picture", "shape": "shape", "strings": "<U1",
               "complex": "complex64", "missing": "no such file"}


@pytest.mark.parametrize("kind", sorted(INPUT_WORDS))
def test_bad_inputs_files(tiny: Path, tmp_path: Path, kind: str) -> None:
    path = _npz_files(tmp_path)[kind]
    line = one_error(invoke("validate", tiny, "--dim", "batch=1", "--inputs", path))
    assert INPUT_WORDS[kind] in line, line
    folder = tmp_path / "graph"
    assert invoke("convert", tiny, "--dim", "batch=1", "-o", folder).exit_code == 0
    line = one_error(invoke("run", folder, "--inputs", path, "-o", tmp_path / "o.npz"))
    assert INPUT_WORDS[kind] in line or kind == "shape", line
    assert not (tmp_path / "o.npz").exists()


def _shape_input_model(path: Path) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Reshape", ["x", "s"], ["y"], name="r")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("s", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 2])])
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                      ir_version=8), path)
    return path


PIN_CASES = {
    "deep": ("[" * 100000 + "]" * 100000, "nested deeper"),
    "deep_ok_but_ragged": ("[1,[2]]", "rectangular"),
    "huge_int": ("9" * 5000, "int64"),
    "big_int": ("99999999999999999999999999", "int64"),
    "huge_float": ("1e999", "float64 range"),
    "string": ('"x"', "not a number"),
    "word": ("abc", "not a number"),
    "object": ("{}", "not a number"),
    "empty": ("", "not a number"),
    "nested_in_commas": ("1,[2]", "not a number"),
    "nan_for_int": ("NaN,2", "non-integer"),
    "fraction_for_int": ("3.5,2", "non-integer"),
    "out_of_range": ("3,1e30", "range of int64"),
    "npz": ("@NPZ", "not a .npy"),
    "pickle": ("@PICKLE", "pickled"),
    "text_npy": ("@TEXT", "not a .npy"),
    "missing": ("@missing.npy", "no such file"),
}


@pytest.mark.parametrize("case", sorted(PIN_CASES))
def test_bad_pins(tmp_path: Path, case: str) -> None:
    value, word = PIN_CASES[case]
    np.savez(tmp_path / "p.npz", s=np.array([3, 2]))
    np.save(tmp_path / "obj.npy", np.array([{}], dtype=object), allow_pickle=True)
    (tmp_path / "text.npy").write_text("3,2")
    value = (value.replace("@NPZ", f"@{tmp_path / 'p.npz'}")
             .replace("@PICKLE", f"@{tmp_path / 'obj.npy'}")
             .replace("@TEXT", f"@{tmp_path / 'text.npy'}"))
    model = _shape_input_model(tmp_path / "m.onnx")
    line = one_error(invoke("convert", model, "-o", tmp_path / "o", "--pin", f"s={value}"))
    assert word in line and len(line) < 1000, line


def test_good_pins_still_work(tmp_path: Path) -> None:
    model = _shape_input_model(tmp_path / "m.onnx")
    np.save(tmp_path / "s.npy", np.array([3, 2]))
    for value in ("3,2", "[3, 2]", f"@{tmp_path / 's.npy'}", "[3.0, 2]"):
        r = invoke("convert", model, "-o", tmp_path / "o", "--force", "--pin", f"s={value}")
        assert r.exit_code == 0, r.output


@pytest.mark.parametrize("args", [
    ["--dim", "batch=0"], ["--dim", "batch=2147483648"], ["--dim", "batch=\u0663"],
    ["--dim", "image:\u00b2=1"], ["--dim", "batch=" + "9" * 5000], ["--dim", "batch"],
    ["--shape", "image=1,3,16,1e3"], ["--shape", "image=1,3,16,99999999999"],
    ["--shape", "image=1,3,16,-16"], ["--shape", "image"],
    ["--rtol", "-1"], ["--rtol", "nan"], ["--atol", "inf"], ["--atol", "-0.5"],
])
def test_bad_option_values(tiny: Path, args: list[str]) -> None:
    line = one_error(invoke("validate", tiny, *args))
    assert args[0] in line or "not free dimensions" in line  # image:² is a name
