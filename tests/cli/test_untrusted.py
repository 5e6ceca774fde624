"""Untrusted input through the real CLI (`webnn-convert`): folder confinement of the files a
model refers to (`--allow-root`), one-line escaped error messages, validation of every option
that takes a file or a value, clean load failures of onnxruntime / LiteRT, and clean
interruption (SIGINT -> 130, SIGTERM -> 143, no traceback, no temporary output).

Every failure must be exactly one `error: ` line on stderr holding only printable characters
(`one_error`), with exit code 2 (130 / 143 when interrupted). Oracles: the outputs of the
same graph run before its files were moved (confinement), the file system (leftovers)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from click.testing import CliRunner, Result
from onnx import TensorProto, helper, numpy_helper

from cli.main import cli
from tests.cli.models import ROOT, tiny_cnn, tiny_tflite
from tests.timing import HANG_GUARD_S, cpu_seconds, wait_for

pytestmark = pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symlinks")

IMAGE = np.random.default_rng(3).random((1, 3, 16, 16), dtype=np.float32)


def invoke(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_error(r: Result, code: int = 2) -> str:
    """The only stderr line of a failed command: `error: ...`, printable characters only."""
    assert r.exit_code == code, (r.exit_code, r.output)
    assert "Traceback" not in r.output
    assert r.stderr.endswith("\n") and r.stderr.count("\n") == 1, repr(r.stderr)
    line = r.stderr[:-1]
    assert line.startswith("error: ") and line.isprintable(), repr(line)
    return line


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("untrusted")
    path = tiny_cnn(d / "tiny.onnx")
    np.savez(d / "image.npz", image=IMAGE)
    return path


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


# -- one-line messages ------------------------------------------------------------------------


def _relu_model(path: Path, *, domain: str = "", opset: int = 13, name: str = "relu",
                op: str = "Relu") -> Path:
    node = helper.make_node(op, ["x"], ["y"], name=name, domain=domain)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    opsets = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(domain, 1)]
                                                 if domain else [])
    onnx.save_model(helper.make_model(graph, opset_imports=opsets, ir_version=8), path)
    return path


HOSTILE = {"newline": "com.ex\nample", "u2028": "com.ex\u2028ample", "u2029": "a\u2029b",
           "escape": "a\x1b[31mred", "cr": "a\rb", "nel": "a\x85b", "bidi": "a\u202eb",
           "nul": "a\x00b", "tab": "a\tb"}


@pytest.mark.parametrize("key", sorted(HOSTILE))
def test_hostile_domains_and_names_are_escaped(tmp_path: Path, key: str) -> None:
    text = HOSTILE[key]
    model = _relu_model(tmp_path / "m.onnx", domain=text, name=f"node{text}")
    line = one_error(invoke("convert", model, "-o", tmp_path / "o"))
    assert "could not be converted" in line
    escaped = text.encode("ascii", "backslashreplace").decode().replace("\\x0a", "\\n")
    assert repr(text)[1:-1] in line or escaped in line, line
    line = one_error(invoke("inspect", model))
    assert "unsupported op type" in line


def test_long_names_keep_head_and_tail(tmp_path: Path) -> None:
    name = "head_" + "x" * 20000 + "_tail"
    model = _relu_model(tmp_path / "m.onnx", domain="com.x", name=name)
    line = one_error(invoke("convert", model, "-o", tmp_path / "o"))
    assert "'head_" in line and "_tail'" in line and "characters cut" in line
    assert len(line) < 1000


def test_many_failed_nodes_are_counted_not_listed(tmp_path: Path) -> None:
    nodes = [helper.make_node("Frob", ["x"], [f"t{i}"], name=f"n{i}", domain="com.x")
             for i in range(60)]
    graph = helper.make_graph(nodes, "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info(f"t{i}", TensorProto.FLOAT, [2])
                               for i in range(60)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.x", 1)])
    onnx.save_model(model, tmp_path / "m.onnx")
    line = one_error(invoke("convert", tmp_path / "m.onnx", "-o", tmp_path / "o"))
    assert "60 node(s)" in line and "and 40 more (--json lists every one)" in line
    r = invoke("convert", tmp_path / "m.onnx", "-o", tmp_path / "o", "--json")
    assert len(json.loads(r.stdout)["error"]["errors"]) == 60


@pytest.mark.parametrize("command", ["convert", "inspect", "validate"])
def test_an_opset_beyond_int64_is_one_line(tmp_path: Path, command: str) -> None:
    model = _relu_model(tmp_path / "m.onnx", opset=2**63 - 1)
    line = one_error(invoke(command, model))
    assert "opset 9223372036854775807" in line


def test_hostile_file_names_are_escaped(tmp_path: Path) -> None:
    line = one_error(invoke("convert", tmp_path / "no\nsuch\u2028file.onnx"))
    assert "no\\nsuch\\u2028file.onnx" in line
    bad = tmp_path / "bad\x1bname.onnx"
    bad.write_bytes(b"\x08\x07" + os.urandom(64))
    assert "\\x1b" in one_error(invoke("convert", bad, "-o", tmp_path / "o"))


def test_a_truncated_model_is_one_line(tiny: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(tiny.read_bytes()[:200])
    assert "cut.onnx" in one_error(invoke("convert", cut, "-o", tmp_path / "o"))


def _raiser(exc: BaseException) -> Any:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise exc
    return boom


@pytest.mark.parametrize("exc", [
    onnx.checker.ValidationError("Field 'type' of 'value_info' is required\n\n==> Context: "
                                 "Bad node spec for node.\u2028Name: x"),
    ValueError("setting an array element with a sequence.\n  The requested array\r\n x"),
    KeyError("a\nb"),
    RuntimeError("internal\ntrouble\x1b[2J"),
    OSError(5, "I/O\nerror", "/tmp/x\ny"),
], ids=["checker", "numpy", "keyerror", "internal", "oserror"])
def test_multi_line_foreign_messages_become_one_line(tiny: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     exc: BaseException) -> None:
    from google.protobuf.message import DecodeError

    import converter.api

    monkeypatch.setattr(converter.api, "convert", _raiser(exc))
    one_error(invoke("convert", tiny, "--dim", "batch=1", "-o", tmp_path / "o"))
    r = invoke("convert", tiny, "--dim", "batch=1", "-o", tmp_path / "o", "--json")
    one_error(r)
    assert json.loads(r.stdout)["error"]["message"]
    monkeypatch.setattr(converter.api, "convert", _raiser(DecodeError("bad\nwire type")))
    one_error(invoke("convert", tiny, "--dim", "batch=1", "-o", tmp_path / "o"))


@pytest.mark.parametrize("args", [["--rtol", "abc"], ["--nope"], ["--backend", "x\ny"],
                                  ["--seed", "1.5"]])
def test_usage_errors_are_one_line(tiny: Path, args: list[str]) -> None:
    line = one_error(invoke("validate", tiny, *args))
    assert "--help" in line
    one_error(invoke("no\nsuch-command"))


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


# -- load failures of the frameworks ------------------------------------------------------------


def test_onnxruntime_load_failures_are_one_line(tiny: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime as ort

    real = ort.InferenceSession

    def session(model: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(model, str):  # the original model, by path
            raise RuntimeError("[ONNXRuntimeError] : 10 : INVALID_GRAPH :\n Load model failed")
        return real(model, *args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", session)
    line = one_error(invoke("validate", tiny, "--dim", "batch=1"))
    assert f"onnxruntime could not load {tiny}: [ONNXRuntimeError]" in line

    def exported(model: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(model, bytes):  # the exported graph
            raise RuntimeError("Fail:\nType Error")
        return real(model, *args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", exported)
    line = one_error(invoke("validate", tiny, "--dim", "batch=1", "--backend", "onnxruntime"))
    assert "onnxruntime could not load the exported graph: Fail: Type Error" in line


def test_litert_load_failures_are_one_line(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    interpreter = pytest.importorskip("ai_edge_litert.interpreter")
    model = tmp_path / "tiny.tflite"
    tiny_tflite(model)
    monkeypatch.setattr(interpreter, "Interpreter",
                        _raiser(ValueError("Could not\u2028open\n'x'.")))
    line = one_error(invoke("validate", model))
    assert f"LiteRT could not load {model}: Could not\\u2028open 'x'." in line


# -- interruption ------------------------------------------------------------------------------

SLOW = """
import sys, time
from pathlib import Path
flag = Path(sys.argv[1])
def slow(*args, **kwargs):
    flag.write_text("started")
    time.sleep(60)
TARGET
from cli.main import main
main(sys.argv[2:])
"""

TARGETS = {
    "convert": "import converter.api as m; m.convert = slow",
    "validate": "import converter.validate.core as m; m.run_source = slow",
    "zoo": "import converter.zoo.runner as m; m.run_entry = slow",
    # the outputs' temporary file exists while an array of it is written
    "run": ("import numpy.lib.format as m\nreal = m.write_array\n"
            "def write_array(f, *a, **kw):\n    real(f, *a, **kw)\n    slow()\n"
            "m.write_array = write_array"),
}


def _cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("command", sorted(TARGETS))
def test_interruption_exits_cleanly(tiny: Path, tmp_path: Path, command: str,
                                    sig: signal.Signals) -> None:
    work = tmp_path / "work"
    work.mkdir()
    if command == "convert":
        args = ["convert", tiny, "--dim", "batch=1", "-o", work / "out"]
    elif command == "validate":
        args = ["validate", tiny, "--dim", "batch=1"]
    elif command == "zoo":
        manifest = work / "zoo.toml"
        manifest.write_text(f'[[model]]\nname = "tiny"\npath = "{tiny.as_posix()}"\n'
                            'free_dims = { batch = 1 }\n')
        args = ["zoo", manifest, "--report", work / "report"]
    else:
        assert invoke("convert", tiny, "--dim", "batch=1", "-o", work / "graph").exit_code == 0
        args = ["run", work / "graph", "--inputs", tiny.parent / "image.npz", "-o",
                work / "out.npz"]
    before = sorted(p.name for p in work.iterdir())
    flag = tmp_path / "started"
    script = tmp_path / "slow.py"
    script.write_text(SLOW.replace("TARGET", TARGETS[command]))
    proc = subprocess.Popen([sys.executable, str(script), str(flag), *map(str, args)],
                            env=_cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(lambda: flag.exists() or proc.poll() is not None)
    assert flag.exists(), proc.communicate()[1]
    if command == "run":
        assert sorted(p.name for p in work.iterdir()) != before  # the temporary file
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode == 128 + sig, err
    word = "interrupted" if sig == signal.SIGINT else "terminated"
    assert err.decode() == f"error: {word}\n"
    assert sorted(p.name for p in work.iterdir()) == before


# -- what reaches stderr: lying .npy headers, Python warnings, native logs ---------------------

_CAPPED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from cli.main import main
sys.argv = ["webnn-convert", *sys.argv[1:]]
main()
"""
"""The CLI in a subprocess (native libraries write to the real file descriptor 2) whose
address space is capped at 2 GiB."""


def _capped_cli(*args: object) -> subprocess.CompletedProcess[str]:
    env = _cli_env()
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", _CAPPED, *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=HANG_GUARD_S)


def _one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    return lines[0]


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
    line = _one_error_line(_capped_cli("validate", tiny, "--dim", "batch=1", "--inputs", lying))
    assert f"{lying}: array 'image': {words}" in line and "but it holds 16 bytes" in line
    folder = tmp_path / "graph"
    assert invoke("convert", tiny, "--dim", "batch=1", "-o", folder).exit_code == 0
    line = _one_error_line(_capped_cli("run", folder, "--inputs", lying, "-o",
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
    proc = _capped_cli("validate", model)
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
    assert invoke("convert", model, "-o", folder).exit_code == 0
    np.savez(tmp_path / "x.npz", x=np.ones(1, np.float32))
    line = _one_error_line(_capped_cli("run", folder, "--inputs", tmp_path / "x.npz", "-o",
                                       tmp_path / "o.npz", "--backend", "onnxruntime",
                                       "--max-tensor-bytes", "8GiB"))  # 4 GiB tensor
    assert "onnxruntime could not run the exported graph" in line


# -- the run-time memory budget: checked before anything runs a graph -------------------------


def _expand_model(path: Path, rows: int) -> Path:
    """The fuzzer's reproducer (seed 20, onnx-00844): Expand of x[3, 1] by an initializer
    shape [rows, 3, 4]; nothing is folded, so conversion passes whatever `rows` is."""
    shape = numpy_helper.from_array(np.array([rows, 3, 4], np.int64), "shape")
    graph = helper.make_graph(
        [helper.make_node("Expand", ["x", "shape"], ["y"])], "expand",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [shape])
    onnx.save_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                                      ir_version=8), path)
    return path


@pytest.fixture
def sessions(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """onnxruntime sessions started in this process (each one recorded, then made)."""
    import onnxruntime

    made: list[str] = []
    real = onnxruntime.InferenceSession

    def session(*args: Any, **kwargs: Any) -> Any:
        made.append(str(args[0])[:60])
        return real(*args, **kwargs)

    monkeypatch.setattr(onnxruntime, "InferenceSession", session)
    return made


HUGE_WORDS = ("the output of expand (operation #1 of 1, graph output 'y'; float32 "
              "[2147483647, 3, 4]) would take 96.0 GiB (103,079,215,056 bytes), over the budget "
              "of 2 GiB for one tensor of a run (hint: raise it with --max-tensor-bytes)")


def test_expand_reproducer_is_refused_before_running(tmp_path: Path,
                                                     sessions: list[str]) -> None:
    """validate and run of a 200-byte model whose Expand asks for 96 GiB: one line naming the
    operand, the amount, the budget and the flag, within seconds under a 2 GiB address-space
    cap (onnxruntime used to try the allocation: 'Failed to allocate memory')."""
    model = _expand_model(tmp_path / "expand.onnx", 2**31 - 1)
    assert model.stat().st_size < 300
    with cpu_seconds(children=True) as spent:
        line = _one_error_line(_capped_cli("validate", model))
    assert spent.seconds < 20  # CPU seconds of the CLI's process
    assert line == f"error: running {model}: {HUGE_WORDS}"
    # in this process: no onnxruntime session was started for it
    assert one_error(invoke("validate", model)) == line and sessions == []
    folder = tmp_path / "graph"
    assert invoke("convert", model, "-o", folder).exit_code == 0
    np.savez(tmp_path / "x.npz", x=np.ones((3, 1), np.float32))
    for backend in ("reference", "onnxruntime"):
        out = tmp_path / "o.npz"
        line = _one_error_line(_capped_cli("run", folder, "--inputs", tmp_path / "x.npz",
                                           "-o", out, "--backend", backend))
        assert line == f"error: running {folder}: {HUGE_WORDS}" and not out.exists()
        one_error(invoke("run", folder, "--inputs", tmp_path / "x.npz", "-o", out,
                         "--backend", backend))
    assert sessions == []
    assert list(tmp_path.glob("*.npz")) == [tmp_path / "x.npz"]


def test_run_budget_flags_raise_the_limits(tmp_path: Path) -> None:
    """A 47 KiB Expand output: refused under --max-tensor-bytes 16KiB, and the peak under
    --max-run-bytes 16KiB; validated (onnxruntime vs the reference backend) and run (numpy's
    broadcast as the oracle) once the flags raise them."""
    model = _expand_model(tmp_path / "small.onnx", 1000)
    line = one_error(invoke("validate", model, "--max-tensor-bytes", "16KiB"))
    assert "float32 [1000, 3, 4]) would take 46.9 KiB (48,000 bytes), over the budget of " \
        "16 KiB for one tensor of a run (hint: raise it with --max-tensor-bytes)" in line
    line = one_error(invoke("validate", model, "--max-tensor-bytes", "64KiB",
                            "--max-run-bytes", "16KiB"))
    assert "over the budget of 16 KiB for one run (hint: raise it with --max-run-bytes)" \
        in line
    r = invoke("validate", model, "--max-tensor-bytes", "64KiB", "--max-run-bytes", "64KiB")
    assert r.exit_code == 0, r.output
    folder = tmp_path / "graph"
    assert invoke("convert", model, "-o", folder).exit_code == 0
    x = np.arange(3, dtype=np.float32).reshape(3, 1)
    np.savez(tmp_path / "x.npz", x=x)
    out = tmp_path / "o.npz"
    line = one_error(invoke("run", folder, "--inputs", tmp_path / "x.npz", "-o", out,
                            "--max-tensor-bytes", "16KiB"))
    assert "(hint: raise it with --max-tensor-bytes)" in line and not out.exists()
    r = invoke("run", folder, "--inputs", tmp_path / "x.npz", "-o", out,
               "--max-tensor-bytes", "64KiB")
    assert r.exit_code == 0, r.output
    with np.load(out) as saved:
        np.testing.assert_array_equal(saved["y"], np.broadcast_to(x, (1000, 3, 4)))


# -- native crashes of the reference frameworks ------------------------------------------------


def _depthwise_without_bias(path: Path) -> Path:
    """Fuzz seed 23's finding, minimised: an int8 DEPTHWISE_CONV_2D 'y' whose bias input was
    dropped (`tflite.op-io(inputs:drop)`); LiteRT accepts two inputs and SIGSEGVs in
    `invoke()`."""
    from tests.op_mappings.tflite.tflite_builder import ModelBuilder, Quant, S

    rng = np.random.default_rng(5)
    mb = ModelBuilder()
    x = mb.input("x", [1, 4, 4, 2], "int8", quant=Quant([0.05], [0]))
    w = mb.const("w", rng.integers(-100, 100, (1, 3, 3, 2)).astype(np.int8),
                 quant=Quant([0.01, 0.02], [0, 0], 3))
    y = mb.output(mb.tensor("y", [1, 4, 4, 2], "int8", quant=Quant([0.1], [0])))
    opts = S.DepthwiseConv2DOptionsT()
    opts.padding, opts.strideH, opts.strideW, opts.depthMultiplier = S.Padding.SAME, 1, 1, 1
    opts.dilationHFactor = opts.dilationWFactor = 1
    mb.op("DEPTHWISE_CONV_2D", [x, w], [y], opts, version=3)
    path.write_bytes(mb.build())
    return path


def test_a_dropped_depthwise_bias_is_refused(tmp_path: Path) -> None:
    model = _depthwise_without_bias(tmp_path / "dw.tflite")
    line = one_error(invoke("validate", model))
    assert "[invalid_model] DEPTHWISE_CONV_2D 'y' (version 3): the operator lists 2 " \
           "input(s), DEPTHWISE_CONV_2D needs at least 3" in line


_UNCHECKED = """
import sys
import op_mappings.tflite._checks as checks
checks.io_problem = lambda node: None  # the importer accepts the model as it did before
from cli.main import main
sys.argv = ["webnn-convert", *sys.argv[1:]]
main()
"""


def test_a_litert_crash_is_one_line(tmp_path: Path) -> None:
    """With the importer's input-count check off, LiteRT runs the model and dies (SIGSEGV)
    in the forked child: one error line, exit 2, no traceback, no faulthandler dump."""
    pytest.importorskip("ai_edge_litert.interpreter")
    model = _depthwise_without_bias(tmp_path / "dw.tflite")
    proc = subprocess.run([sys.executable, "-c", _UNCHECKED, "validate", str(model)],
                          env=_cli_env(), capture_output=True, text=True, timeout=HANG_GUARD_S)
    assert _one_error_line(proc) == (f"error: LiteRT crashed running {model} (SIGSEGV): the "
                                     "model is malformed or hits a LiteRT bug")


def test_an_onnxruntime_crash_is_one_line(tiny: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import onnxruntime as ort

    real = ort.InferenceSession

    def session(model: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(model, str):  # the original model, by path: dies as a native crash
            os.abort()
        return real(model, *args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", session)
    line = one_error(invoke("validate", tiny, "--dim", "batch=1"))
    assert line == (f"error: onnxruntime crashed running {tiny} (SIGABRT): the model is "
                    "malformed or hits an onnxruntime bug")


_SLOW_REFERENCE = """
import os, sys, time
from pathlib import Path
import converter.frontends.onnx.reference as m
flag = Path(sys.argv[1])
def slow(*args, **kwargs):
    flag.write_text(str(os.getpid()))  # in the forked child
    time.sleep(60)
m._run_onnx = slow
from cli.main import main
main(sys.argv[2:])
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_interrupting_the_reference_child(tiny: Path, tmp_path: Path,
                                          sig: signal.Signals) -> None:
    """The signal reaches only the CLI's process (as `kill PID` sends it): it exits 130 / 143
    with its one line, and the forked reference child it was waiting for is gone too."""
    flag = tmp_path / "child"
    script = tmp_path / "slow_reference.py"
    script.write_text(_SLOW_REFERENCE)
    proc = subprocess.Popen([sys.executable, str(script), str(flag), "validate", str(tiny),
                             "--dim", "batch=1"], env=_cli_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    wait_for(lambda: (flag.exists() and flag.read_text()) or proc.poll() is not None)
    assert flag.exists(), proc.communicate()[1]
    child = int(flag.read_text())
    assert child != proc.pid
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode == 128 + sig, err
    word = "interrupted" if sig == signal.SIGINT else "terminated"
    assert err.decode() == f"error: {word}\n"
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
