"""The everyday command line without rough edges, each through the real CLI in a subprocess
(`python -m cli`, or `cli.main.main` from a `-c` script where the test must block a
module or stand in for the browser):

1. a stdout the reader closed (`convert ... | head -1`) ends quietly with the command's own
   status, every file written;
2. `run` on an ONNX / TFLite model says to convert it first;
3. `inspect` on a folder webnn-convert wrote says what the folder is, and does not take the
   converter's own `.onnx` export in it for the model;
4. `inspect`'s op status comes from the checks `convert` runs (a 3-D Conv is unsupported),
   and `convert` lists every unsupported node, also one downstream of a failed node;
5. install hints name what works from where the user stands (a checkout: `pip install -e
   '.[X]'`; an installed package: `pip install 'webnn-converter[X]'`);
6. `run` without -o prints the outputs;
7. `zoo` without a manifest outside a checkout says to pass one and where they are;
8. `targets --from-browser` writes its file with the umask's mode; `--debug` and `ops`
   help say what they do;
9. `--help` lists the everyday options first and the budget options under their own
   heading;
10. -q/--quiet and -v/--verbose.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.cli.models import ROOT, tiny_cnn, tiny_tflite, unsupported_onnx

HANG_GUARD = 300
"""Seconds after which a CLI subprocess counts as hung (never a speed criterion)."""


def _env(pythonpath: Path = ROOT) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(pythonpath)
    return env


def cli(*args: object, cwd: Path = ROOT, pythonpath: Path = ROOT, code: str | None = None,
        stdout: int | None = subprocess.PIPE) -> subprocess.CompletedProcess[str]:
    """`python -m cli ARGS` (or `python -c CODE ARGS`) in `cwd`, importing the package
    from `pythonpath`."""
    head = ["-c", code] if code is not None else ["-m", "cli"]
    return subprocess.run([sys.executable, *head, *map(str, args)], cwd=cwd,
                          env=_env(pythonpath), stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=HANG_GUARD, check=False)


def error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The one stderr line of a failed command (exit 2, no traceback)."""
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("newcomer")
    tiny_tflite(d / "tiny.tflite")
    np.savez(d / "image.npz", image=np.random.default_rng(3).random((1, 3, 16, 16),
                                                                    dtype=np.float32))
    return {"onnx": tiny_cnn(d / "tiny.onnx"), "tflite": d / "tiny.tflite",
            "unsupported": unsupported_onnx(d / "unsupported.onnx"),
            "conv3d": _conv3d_model(d / "conv3d.onnx"), "image": d / "image.npz"}


@pytest.fixture(scope="module")
def exported(models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny CNN converted with --format all (graph, page, and the ONNX re-export)."""
    out = tmp_path_factory.mktemp("export") / "tiny_webnn"
    r = cli("convert", models["onnx"], "--dim", "batch=1", "-o", out, "--format", "all")
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the packages outside any source tree, as an installed (non-editable)
    package lies in site-packages: no pyproject.toml beside it, no models/ folder."""
    site = tmp_path_factory.mktemp("site-packages")
    for name in ("cli", "converter", "op_mappings"):
        shutil.copytree(ROOT / name, site / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _conv3d_model(path: Path) -> Path:
    """volume [1, 1, 3, 3, 3, 3] -> Conv 'conv3d' (4 spatial dimensions, which nobody
    converts) -> Relu -> com.example::Frobnicate 'frob' -> y; image [1, 1, 5, 5] -> Conv
    'conv2d' (2-D) -> z."""
    w3 = numpy_helper.from_array(np.ones((2, 1, 2, 2, 2, 2), np.float32), "w3")
    w2 = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w2")
    nodes = [helper.make_node("Conv", ["volume", "w3"], ["c3"], name="conv3d"),
             helper.make_node("Relu", ["c3"], ["r"], name="relu"),
             helper.make_node("Frobnicate", ["r"], ["y"], name="frob", domain="com.example"),
             helper.make_node("Conv", ["image", "w2"], ["z"], name="conv2d")]
    graph = helper.make_graph(
        nodes, "conv3d",
        [helper.make_tensor_value_info("volume", TensorProto.FLOAT, [1, 1, 3, 3, 3, 3]),
         helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 1, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 2, 3, 3])], [w3, w2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("com.example", 1)],
                              ir_version=8)
    onnx.save_model(model, path)
    return path


# -- 1. a closed stdout ---------------------------------------------------------------------


def _closed_stdout(*args: object) -> subprocess.CompletedProcess[str]:
    """Run the CLI with stdout a pipe whose reading end is already closed (what `| head
    -1` leaves once head has exited): every write meets EPIPE, deterministically."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return cli(*args, stdout=write_end)
    finally:
        os.close(write_end)


def test_a_closed_stdout_ends_quietly_with_the_commands_status(models: dict[str, Path],
                                                               tmp_path: Path) -> None:
    out = tmp_path / "out"
    r = _closed_stdout("convert", models["onnx"], "--dim", "batch=1", "-o", out,
                       "--format", "all")
    assert r.returncode == 0 and r.stderr == "", (r.returncode, r.stderr)
    marker = json.loads((out / ".webnn-converter.json").read_text())
    assert sorted(p.name for p in out.iterdir() if p.name != ".webnn-converter.json") == \
        sorted(marker["files"])
    assert {"tiny.webnn", "tiny.weights", "tiny.js", "tiny.html"} <= set(marker["files"])
    r = _closed_stdout("inspect", models["unsupported"])  # its own status: 2, its own error
    assert "unsupported op type(s): com.example::Frobnicate x1" in error_line(r)
    assert "Broken pipe" not in r.stderr


# -- 2. run on a source model ---------------------------------------------------------------


@pytest.mark.parametrize("key, label", [("onnx", "an ONNX model"), ("tflite", "a TFLite model")])
def test_run_on_a_source_model_says_to_convert_it_first(models: dict[str, Path], key: str,
                                                        label: str) -> None:
    line = error_line(cli("run", models[key], "--inputs", models["image"]))
    assert f"{models[key]} is {label}, not a converted WebNN graph" in line
    assert f"`webnn-convert convert {models[key]}`" in line
    assert "UTF-8" not in line


# -- 3. inspect on an export folder ---------------------------------------------------------


def test_inspect_names_a_folder_webnn_convert_wrote(exported: Path) -> None:
    assert (exported / "tiny.onnx").is_file()  # the converter's own ONNX export
    for command in ("inspect", "convert"):
        line = error_line(cli(command, exported))
        assert f"{exported} is a folder webnn-convert wrote" in line, line
        assert "the export of tiny" in line and "webnn-convert run" in line
        assert "pass the source model instead" in line
        assert "pass the model file in it" not in line


# -- 4. inspect's status is convert's -------------------------------------------------------


def test_inspect_status_comes_from_the_checks_convert_runs(models: dict[str, Path],
                                                           tmp_path: Path) -> None:
    r = cli("inspect", models["conv3d"])
    assert r.returncode == 2, r.stderr
    rows = {(ln.split()[0], ln.split()[2]): ln for ln in r.stdout.splitlines()
            if ln.startswith("  ") and len(ln.split()) >= 3 and ln.split()[1].isdigit()}
    assert rows[("Conv", "supported")].split()[1] == "1"  # the 2-D one
    bad = rows[("Conv", "unsupported")]
    assert bad.split()[1] == "1" and "node 'conv3d'" in bad and "4 spatial dimensions" in bad
    assert ("com.example::Frobnicate", "unsupported") in rows
    assert "Conv x1, com.example::Frobnicate x1" in r.stderr
    data = json.loads(cli("inspect", models["conv3d"], "--json").stdout)
    assert sorted(data["unsupported"]) == ["Conv", "com.example::Frobnicate"]
    # convert refuses the same nodes, the one downstream of the failed Conv included
    line = error_line(cli("convert", models["conv3d"], "-o", tmp_path / "out"))
    assert "2 node(s) could not be converted (Conv x1, com.example::Frobnicate x1" in line
    assert "Conv 'conv3d'" in line and "com.example::Frobnicate 'frob'" in line
    # a model convert takes is all supported
    r = cli("inspect", models["onnx"])
    assert r.returncode == 0 and " unsupported" not in r.stdout.replace("0 unsupported", "")


# -- 5. install hints -----------------------------------------------------------------------

BLOCKED = ("import sys; sys.modules['ai_edge_litert'] = None; sys.modules['torch'] = None\n"
           "from cli.main import main\n"
           "main(sys.argv[1:])")
"""The CLI as if neither LiteRT nor PyTorch were installed."""


def _hints(result: subprocess.CompletedProcess[str]) -> str:
    line = error_line(result)
    return line[line.index("pip install"):]


def test_install_hints_name_what_works_from_where_the_user_stands(
        models: dict[str, Path], exported: Path, installed: Path, tmp_path: Path) -> None:
    litert = ("validate", models["tflite"])
    torch = ("run", exported, "--inputs", models["image"], "--backend", "torch")
    # a checkout, from its root
    assert _hints(cli(*litert, code=BLOCKED)) == "pip install -e '.[tflite]'"
    assert _hints(cli(*torch, code=BLOCKED)) == "pip install -e '.[torch]'"
    # a checkout, from another folder: its root spelled out
    assert _hints(cli(*litert, code=BLOCKED, cwd=tmp_path)) == \
        f"pip install -e '{ROOT}[tflite]'"
    # an installed package
    for args, extra in ((litert, "tflite"), (torch, "torch")):
        got = _hints(cli(*args, code=BLOCKED, cwd=tmp_path, pythonpath=installed))
        assert got == f"pip install 'webnn-converter[{extra}]'"


# -- 6. run without -o ----------------------------------------------------------------------


def test_run_without_output_prints_the_outputs(models: dict[str, Path], exported: Path,
                                               tmp_path: Path) -> None:
    r = cli("run", exported, "--inputs", models["image"], "-o", tmp_path / "o.npz")
    assert r.returncode == 0, r.stderr
    probs = np.load(tmp_path / "o.npz")["probs"]
    r = cli("run", exported, "--inputs", models["image"])
    assert r.returncode == 0, r.stderr
    row = next(ln for ln in r.stdout.splitlines() if ln.split()[:1] == ["probs"])
    assert row.split()[1:4] == ["float32", "[1,", "10]"]
    shown = [float(v) for v in re.findall(r"-?\d+\.\d+(?:e-?\d+)?", row.split("10]", 1)[1])]
    assert len(shown) == 8 and row.rstrip().endswith("...]")
    np.testing.assert_allclose(shown, probs.reshape(-1)[:8], rtol=1e-5)
    data = json.loads(cli("run", exported, "--inputs", models["image"], "--json").stdout)
    assert data["output"] is None
    np.testing.assert_array_equal(np.asarray(data["outputs"]["probs"]["values"],
                                             np.float32), probs)
    o_help = cli("run", "--help").stdout.split("-o, --output", 1)[1].split("\n  -", 1)[0]
    assert "[required]" not in o_help and "the outputs are printed" in " ".join(o_help.split())


# -- 7. zoo without a manifest --------------------------------------------------------------


def test_zoo_without_a_manifest_outside_a_checkout(installed: Path, tmp_path: Path) -> None:
    """An installed package runs its shipped manifests (package data), whatever the current
    folder."""
    done = cli("zoo", "--filter", "generated_tiny_cnn", "--report", tmp_path / "report",
               "--json", cwd=tmp_path, pythonpath=installed)
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "report" / "report.json").read_text())["models"]
    assert [(r["name"], r["status"]) for r in rows] == [("generated_tiny_cnn", "pass")]
    text = " ".join(cli("zoo", "--help", cwd=tmp_path, pythonpath=installed).stdout.split())
    assert "Without MANIFESTS: the shipped manifests, zoo.toml and zoo_tflite.toml of " \
           "converter/zoo/models" in text


# -- 8. targets --from-browser, --debug and ops help ------------------------------------------

STUB_BROWSER = """
import os, sys
os.umask(int(sys.argv[1], 8))
import converter.validate.browser as browser
class Setup:
    browser = "Chromium (stand-in)"
    flags = ()
browser.ensure_browser = lambda *a, **k: Setup()
browser.browser_limits = lambda setup: {"preferredInputLayout": "nchw",
                                        "relu": {"input": {"dataTypes": ["float32"]}}}
from cli.main import main
main(sys.argv[2:])
"""
"""`webnn-convert` with a stand-in for the real browser (no Node.js or Chromium here)."""


@pytest.mark.parametrize("umask", [0o022, 0o027], ids=["022", "027"])
def test_targets_from_browser_writes_with_the_umasks_mode(tmp_path: Path, umask: int) -> None:
    out = tmp_path / "limits.json"
    r = cli(oct(umask), "targets", "--from-browser", out, code=STUB_BROWSER)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["preferredInputLayout"] == "nchw"
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~umask


def _help(*command: str) -> str:
    r = cli(*command, "--help")
    assert r.returncode == 0, r.stderr
    return " ".join(r.stdout.split())


def test_debug_and_ops_help_say_what_they_do() -> None:
    for command in ("convert", "inspect", "validate", "run", "zoo", "targets", "ops"):
        text = _help(command)
        assert "--debug Show the traceback of an error, and every Python warning" in text, \
            command
    ops = _help("ops")
    assert "all: every format's table" in ops and "--check FILE" in ops
    assert "With --check FILE, compare" in ops


# -- 9. help sections -----------------------------------------------------------------------


@pytest.mark.parametrize("command, first", [
    ("convert", ["-o", "--format", "--dim", "--shape", "--target", "--precision"]),
    ("validate", ["--inputs", "--backend", "--device", "--rtol", "--atol", "--dim"]),
    ("run", ["--inputs", "-o", "--backend"]),
    ("inspect", ["--signature"]),
])
def test_help_lists_everyday_options_first_and_budgets_apart(command: str,
                                                            first: list[str]) -> None:
    r = cli(command, "--help")
    assert r.returncode == 0, r.stderr
    text = r.stdout
    options = text.index("\nOptions:\n")
    budgets = text.index("\nBudget options")
    assert options < budgets
    flags = [ln.split()[0].rstrip(",") for ln in text[options:budgets].splitlines()
             if ln.startswith("  -")]
    assert flags[:len(first)] == first, flags
    assert not any(f.startswith("--max-") for f in flags)
    budget_flags = [ln.split()[0] for ln in text[budgets:].splitlines()
                    if ln.startswith("  --")]
    assert budget_flags and all(f.startswith("--max-") for f in budget_flags)
    assert "--max-constant-bytes" in budget_flags
    assert ("--max-export-bytes" in budget_flags) == (command == "convert")


# -- 10. -q / -v ----------------------------------------------------------------------------


def _warning_graph(models: Mapping[str, Path], folder: Path) -> Path:
    """An export whose manifest's offsets count from the data area: it loads, with a
    UserWarning (one `warning:` line on success)."""
    r = cli("convert", models["onnx"], "--dim", "batch=1", "-o", folder)
    assert r.returncode == 0, r.stderr
    manifest = folder / "tiny.manifest.json"
    data = json.loads(manifest.read_text())
    for entry in data["tensors"].values():
        entry["byteOffset"] -= 8
    manifest.write_text(json.dumps(data))
    return folder


def test_quiet_and_verbose(models: dict[str, Path], tmp_path: Path) -> None:
    graph = _warning_graph(models, tmp_path / "graph")
    run = ("run", graph, "--inputs", models["image"])
    plain = cli(*run)
    assert plain.returncode == 0 and plain.stderr.startswith("warning: "), plain.stderr
    for flag in ("-q", "--quiet"):
        quiet = cli(*run, flag)
        assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
        assert quiet.stdout.splitlines()[1:] == plain.stdout.splitlines()[1:]  # the outputs
    # errors still print
    assert "missing.npz: no such file" in error_line(
        cli("run", graph, "--inputs", tmp_path / "missing.npz", "-q"))
    # verbose: progress (stderr is not a terminal) with timings, and the total
    r = cli("convert", models["onnx"], "--dim", "batch=1", "-o", tmp_path / "v", "-v")
    assert r.returncode == 0, r.stderr
    steps = [ln for ln in r.stderr.splitlines() if ln.startswith("[webnn-convert ")]
    assert any("converting" in s for s in steps) and any("writing" in s for s in steps)
    assert all(re.match(r"\[webnn-convert \d+\.\d\ds\] ", s) for s in steps), steps
    assert steps[-1].endswith("] done")
    assert "source nodes" in r.stderr
    quiet = cli("convert", models["onnx"], "--dim", "batch=1", "-o", tmp_path / "q", "-q",
                "--progress")
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
    # --json keeps stdout machine-readable, with -v too
    r = cli("convert", models["onnx"], "--dim", "batch=1", "-o", tmp_path / "j", "--json",
            "-v")
    assert json.loads(r.stdout)["outdir"] == str(tmp_path / "j")
    assert "[webnn-convert " in r.stderr
    both = error_line(cli("convert", models["onnx"], "-q", "-v"))
    assert "-q/--quiet and -v/--verbose exclude each other" in both
