"""`webnn-convert convert` / `run` output handling, through the real CLI: default folder and
file stems, whole-folder replacement without stale files, refusal of folders we did not write
(`--force`), file modes under the umask, no temporary folder left by SIGINT/SIGTERM, the
progress bar (only in a terminal, never with --json), error messages that never name a
temporary file, and onnx.checker quiet on valid models. Oracles: onnxruntime for the
computed values, the file system (names, modes), onnx.checker itself, the HTML parser."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper, numpy_helper

from cli.main import cli
from converter.io.export.exporter import MARKER
from tests.cli.models import ROOT
from tests.terminal import run_in_terminal
from tests.timing import HANG_GUARD_S, wait_for

TINY_FILES = ["tiny.manifest.json", "tiny.webnn", "tiny.weights"]
ALL_SUFFIXES = [".html", ".js", ".manifest.json", ".onnx", ".webnn", ".weights"]


def invoke(*args: object) -> object:
    return CliRunner().invoke(cli, [str(a) for a in args])


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def leftovers(folder: Path) -> list[str]:
    """Temporary export folders / files anywhere below `folder`."""
    return sorted(str(p) for p in folder.rglob("*") if ".export-" in p.name
                  or re.search(r"\.npz\.\w+\.npz$|^tmp\w+\.npz$", p.name))


def _cli_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def _reference(model: Path, image: np.ndarray) -> np.ndarray:
    sess = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    return sess.run(None, {"image": image})[0]


# -- default folder and stems -----------------------------------------------------------------


def test_default_folder_and_stem_follow_the_model(tiny: Path, tmp_path: Path) -> None:
    r = invoke("convert", tiny, "--dim", "batch=2", "--json")
    assert r.exit_code == 0, r.output
    out = tiny.parent / "tiny_webnn"
    data = json.loads(r.stdout)
    assert data["outdir"] == str(out) and data["stem"] == "tiny"
    assert sorted(Path(p).name for p in data["files"]) == TINY_FILES
    assert names(out) == [MARKER, *TINY_FILES]
    marker = json.loads((out / MARKER).read_text())
    assert marker["generator"] == "webnn-converter" and marker["files"] == TINY_FILES
    # `run` finds the graph in the folder and computes what onnxruntime computes.
    image = np.random.default_rng(0).uniform(0, 1, (2, 3, 16, 16)).astype(np.float32)
    np.savez(tmp_path / "in.npz", image=image)
    r = invoke("run", out, "--inputs", tmp_path / "in.npz", "-o", tmp_path / "o.npz")
    assert r.exit_code == 0, r.output
    with np.load(tmp_path / "o.npz") as got:
        np.testing.assert_allclose(got["probs"], _reference(tiny, image), rtol=1e-5,
                                   atol=1e-6)
    assert leftovers(tmp_path) == []


def test_all_formats_refer_to_the_stem(tiny: Path) -> None:
    r = invoke("convert", tiny, "--dim", "batch=1", "--format", "all")
    assert r.exit_code == 0, r.output
    out = tiny.parent / "tiny_webnn"
    assert names(out) == sorted([MARKER, *(f"tiny{s}" for s in ALL_SUFFIXES)])
    js = (out / "tiny.js").read_text()
    page = (out / "tiny.html").read_text()
    assert 'export const WEIGHTS_FILE = "tiny.weights";' in js
    assert 'const MODULE_URL = "./tiny.js";' in page
    assert 'const WEIGHTS_URL = "./tiny.weights";' in page
    assert (out / "tiny.webnn").read_text().startswith('webnn_graph "tiny" v1 {')
    onnx.checker.check_model(str(out / "tiny.onnx"))
    assert "python3 -m http.server" in r.stdout and "http://localhost:8000/tiny.html" in r.stdout


class _Tables(HTMLParser):
    """Rows (lists of cell texts, character references decoded) of every table after an
    <h2> heading, by heading."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.heading = ""
        self._in: str | None = None
        self._text = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h2", "td", "th"):
            self._in, self._text = tag, ""
        elif tag == "tr":
            self.tables.setdefault(self.heading, []).append([])

    def handle_endtag(self, tag: str) -> None:
        if tag == self._in == "h2":
            self.heading = self._text
        elif tag == self._in:
            self.tables[self.heading][-1].append(self._text)
        if tag == self._in:
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self._text += data


def test_page_lists_inputs_and_outputs_and_says_how_to_serve(tiny: Path) -> None:
    r = invoke("convert", tiny, "--dim", "batch=3", "--format", "js")
    assert r.exit_code == 0, r.output
    page = (tiny.parent / "tiny_webnn" / "tiny.html").read_text()
    parser = _Tables()
    parser.feed(page)
    sess = ort.InferenceSession(str(tiny), providers=["CPUExecutionProvider"])

    def rows(infos: list[ort.NodeArg]) -> list[list[str]]:
        dtypes = {"tensor(float)": "float32"}
        return [[i.name, dtypes[i.type], str([3 if d == "batch" else d for d in i.shape])]
                for i in infos]

    assert parser.tables["Inputs"] == [["Name", "Data type", "Shape"],
                                       *rows(sess.get_inputs())]
    assert parser.tables["Outputs"] == [["Name", "Data type", "Shape"],
                                        *rows(sess.get_outputs())]
    text = " ".join(page.split())
    assert "python3 -m http.server" in text
    assert 'href="http://localhost:8000/tiny.html"' in text
    assert "file://" in text and "block module scripts" in text
    assert [row[0] for row in parser.tables["Timings"]] == [
        "Weights load", "Context creation", "Graph build", "First compute (dispatch + read)",
        "Average compute"]


def test_stem_option_and_unsafe_model_names(tiny: Path) -> None:
    odd = tiny.parent / "My Net (v2).onnx"
    odd.write_bytes(tiny.read_bytes())
    r = invoke("convert", odd, "--dim", "batch=1")
    assert r.exit_code == 0, r.output
    out = tiny.parent / "My_Net__v2__webnn"
    assert names(out) == [MARKER, "My_Net__v2_.manifest.json", "My_Net__v2_.webnn",
                          "My_Net__v2_.weights"]
    r = invoke("convert", tiny, "--dim", "batch=1", "--stem", "net", "-o", tiny.parent / "o")
    assert r.exit_code == 0, r.output
    assert names(tiny.parent / "o") == [MARKER, "net.manifest.json", "net.webnn",
                                        "net.weights"]


def test_help_documents_the_defaults() -> None:
    r = invoke("convert", "--help")
    assert r.exit_code == 0
    text = " ".join(r.stdout.split())
    assert "models/foo.onnx -> models/foo_webnn" in text
    assert "--force" in text and "foo.webnn" in text


# -- replacing and refusing folders -------------------------------------------------------------


def test_reconverting_replaces_the_folder_without_stale_files(tiny: Path, tmp_path: Path
                                                              ) -> None:
    out = tmp_path / "out"
    assert invoke("convert", tiny, "--dim", "batch=1", "-o", out, "--format", "all"
                  ).exit_code == 0
    assert len(names(out)) == 1 + len(ALL_SUFFIXES)
    r = invoke("convert", tiny, "--dim", "batch=1", "-o", out)
    assert r.exit_code == 0, r.output
    assert names(out) == [MARKER, *TINY_FILES]  # no old .js/.html/.onnx
    r = invoke("convert", tiny, "--dim", "batch=1", "-o", out, "--stem", "b",
               "--format", "onnx")
    assert r.exit_code == 0, r.output
    assert names(out) == [MARKER, "b.onnx"]  # the old stem is gone too
    assert json.loads((out / MARKER).read_text())["files"] == ["b.onnx"]
    assert leftovers(tmp_path) == []


def test_a_folder_we_did_not_write_needs_force(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    (out / "tiny.webnn").write_text("not ours")
    r = invoke("convert", tiny, "--dim", "batch=1", "-o", out)
    assert r.exit_code == 2
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.output
    assert str(out) in r.stderr and "--force" in r.stderr and MARKER in r.stderr
    assert names(out) == ["notes.txt", "tiny.webnn"]
    # The check comes before the conversion: a model that cannot convert still gets it.
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    r = invoke("convert", bad, "-o", out)
    assert r.exit_code == 2 and "--force" in r.stderr
    r = invoke("convert", tiny, "--dim", "batch=1", "-o", out, "--force")
    assert r.exit_code == 0, r.output
    assert names(out) == [MARKER, "notes.txt", *TINY_FILES]
    assert (out / "notes.txt").read_text() == "keep me"
    assert (out / "tiny.webnn").read_text().startswith('webnn_graph "tiny"')
    # Still not ours (notes.txt), so the next plain convert is refused again.
    r = invoke("convert", tiny, "--dim", "batch=1", "-o", out)
    assert r.exit_code == 2 and "'notes.txt'" in r.stderr
    # An empty folder is fine without --force.
    (tmp_path / "empty").mkdir()
    assert invoke("convert", tiny, "--dim", "batch=1", "-o", tmp_path / "empty").exit_code == 0
    assert names(tmp_path / "empty") == [MARKER, *TINY_FILES]
    assert leftovers(tmp_path) == []


def test_the_output_folder_may_not_hold_the_model(tiny: Path) -> None:
    r = invoke("convert", tiny, "--dim", "batch=1", "-o", tiny.parent, "--force",
               "--format", "onnx", "--stem", "tiny")
    assert r.exit_code == 2 and "contains the model" in r.stderr
    assert names(tiny.parent) == ["tiny.onnx"]
    onnx.checker.check_model(str(tiny))  # untouched


def test_an_existing_file_is_not_a_folder(tiny: Path, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    r = invoke("convert", tiny, "--dim", "batch=1", "-o", tmp_path / "file")
    assert r.exit_code == 2 and "Traceback" not in r.output


# -- file modes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002])
def test_modes_follow_the_umask(tiny: Path, tmp_path: Path, umask: int) -> None:
    out = tmp_path / "out"
    image = np.zeros((1, 3, 16, 16), np.float32)
    np.savez(tmp_path / "in.npz", image=image)
    code = ("import os, sys; os.umask(int(sys.argv[1], 8)); from cli.main import main; "
            "main(sys.argv[2:])")
    for args in (["convert", str(tiny), "--dim", "batch=1", "-o", str(out), "--format", "all"],
                 ["run", str(out), "--inputs", str(tmp_path / "in.npz"), "-o",
                  str(tmp_path / "o.npz")]):
        p = subprocess.run([sys.executable, "-c", code, oct(umask), *args], env=_cli_env(),
                           capture_output=True, text=True, timeout=HANG_GUARD_S)
        assert p.returncode == 0, p.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o777 & ~umask
    for f in [*out.iterdir(), tmp_path / "o.npz"]:
        assert stat.S_IMODE(f.stat().st_mode) == 0o666 & ~umask, f


# -- signals ------------------------------------------------------------------------------------

SLOW_EXPORT = """
import sys, time
from pathlib import Path
import converter.io.export.exporter as api
real = api._write_all
def slow(graph, folder, *args, **kwargs):
    written = real(graph, folder, *args, **kwargs)
    Path(sys.argv[1]).write_text(str(folder))
    time.sleep(60)
    return written
api._write_all = slow
from cli.main import main
main(sys.argv[2:])
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("existing", [False, True])
def test_a_signal_during_export_leaves_nothing_behind(tiny: Path, tmp_path: Path,
                                                      sig: signal.Signals,
                                                      existing: bool) -> None:
    out = tmp_path / "out"
    if existing:
        assert invoke("convert", tiny, "--dim", "batch=1", "-o", out).exit_code == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()} if existing else None
    flag = tmp_path / "writing"
    script = tmp_path / "slow.py"
    script.write_text(SLOW_EXPORT)
    proc = subprocess.Popen([sys.executable, str(script), str(flag), "convert", str(tiny),
                             "--dim", "batch=1", "-o", str(out), "--format", "all"],
                            env=_cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(lambda: flag.exists() or proc.poll() is not None)
    assert flag.exists(), proc.communicate()[1]
    assert Path(flag.read_text()).is_dir()  # the temporary folder exists now
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=HANG_GUARD_S)
    assert proc.returncode != 0
    assert b"Traceback" not in err
    if sig == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM
    assert not Path(flag.read_text()).exists()
    assert sorted(p.name for p in tmp_path.iterdir() if ".export-" in p.name) == []
    if existing:
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    else:
        assert not out.exists()


# -- progress -----------------------------------------------------------------------------------


def _run_in_terminal(args: list[str]) -> tuple[int, str, str]:
    """Run the CLI with stderr on a pseudo-terminal; (exit code, stdout, terminal text)."""
    return run_in_terminal([sys.executable, "-c", "from cli.main import main; main()", *args],
                           _cli_env())


def test_progress_bar_in_a_terminal_only(tiny: Path, tmp_path: Path) -> None:
    nodes = len(onnx.load(str(tiny)).graph.node)
    code, _, term = _run_in_terminal(["convert", str(tiny), "--dim", "batch=1", "-o",
                                      str(tmp_path / "a")])
    assert code == 0, term
    assert "[webnn-convert] converting" in term
    steps = [int(m) for m in re.findall(rf"converting\s+\[[#-]+\]\s+(\d+)/{nodes}", term)]
    assert steps and steps[-1] == nodes and steps == sorted(steps)
    code, stdout, term = _run_in_terminal(["convert", str(tiny), "--dim", "batch=1", "-o",
                                           str(tmp_path / "b"), "--json"])
    assert code == 0 and json.loads(stdout)["stem"] == "tiny"
    assert "converting" not in term and "[webnn-convert]" not in term
    code, stdout, term = _run_in_terminal(["validate", str(tiny), "--dim", "batch=1",
                                           "--json"])
    assert code == 0 and json.loads(stdout)["verdict"] == "pass"
    assert "[webnn-convert]" not in term
    # Not a terminal (CliRunner): quiet by default, messages only when asked for.
    r = invoke("convert", tiny, "--dim", "batch=1", "-o", tmp_path / "c")
    assert r.exit_code == 0 and r.stderr == ""
    r = invoke("convert", tiny, "--dim", "batch=1", "-o", tmp_path / "d", "--progress")
    assert "[webnn-convert] converting" in r.stderr


# -- run: errors name the output, not a temporary file --------------------------------------------


def test_run_errors_never_name_a_temporary_file(tiny: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "g"
    assert invoke("convert", tiny, "--dim", "batch=1", "-o", out).exit_code == 0
    np.savez(tmp_path / "in.npz", image=np.zeros((1, 3, 16, 16), np.float32))
    r = invoke("run", out, "--inputs", tmp_path / "in.npz", "-o", tmp_path / "no" / "o.npz")
    assert r.exit_code == 2
    assert r.stderr == (f"error: {tmp_path / 'no' / 'o.npz'}: cannot write the outputs: the "
                        f"folder {tmp_path / 'no'} does not exist\n")

    def full(file: object, *args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device", str(tmp_path / "tmpab12cd.npz"))

    monkeypatch.setattr(np.lib.format, "write_array", full)  # (run writes the .npz with it)
    r = invoke("run", out, "--inputs", tmp_path / "in.npz", "-o", tmp_path / "o.npz")
    assert r.exit_code == 2
    assert r.stderr == (f"error: {tmp_path / 'o.npz'}: cannot write the outputs (No space "
                        "left on device)\n")
    assert not (tmp_path / "o.npz").exists() and leftovers(tmp_path) == []
    assert names(tmp_path) == ["g", "in.npz", "models"]


# -- onnx.checker quiet on valid models -------------------------------------------------------


def test_no_checker_warning_for_external_data_from_another_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    w = numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8) / 64, "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])],
                              [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    (tmp_path / "m").mkdir()
    path = tmp_path / "m" / "ext.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True, location="ext.data",
                    size_threshold=0)
    onnx.checker.check_model(str(path))  # the oracle: valid
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    r = invoke("convert", path, "-o", tmp_path / "o")
    assert r.exit_code == 0, r.output
    assert "onnx.checker" not in r.output and "warning:" not in r.output


def test_no_checker_warning_for_random_weights_of_ir3_models(tmp_path: Path) -> None:
    """The zoo's `weights = "random"` on an IR-3 model (the onnx "light" models' form)."""
    from converter.zoo.sources import randomize_constant_of_shape

    shape = numpy_helper.from_array(np.array([4, 4], np.int64), "w_shape")
    nodes = [helper.make_node("ConstantOfShape", ["w_shape"], ["w"], name="make_w",
                              value=numpy_helper.from_array(np.array([0.02], np.float32))),
             helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")]
    graph = helper.make_graph(
        nodes, "ir3", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4]),
                       helper.make_tensor_value_info("w_shape", TensorProto.INT64, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], [shape])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)],
                              ir_version=3)
    onnx.checker.check_model(model)
    randomize_constant_of_shape(model, seed=0)
    onnx.checker.check_model(model)  # the oracle: still valid
    path = tmp_path / "random.onnx"
    onnx.save_model(model, str(path))
    r = invoke("convert", path, "-o", tmp_path / "o")
    assert r.exit_code == 0, r.output
    assert "onnx.checker" not in r.output
    r = invoke("validate", path)
    assert r.exit_code == 0 and "onnx.checker" not in r.output, r.output


# -- docs/cli.md ----------------------------------------------------------------------------------


def test_docs_explain_statuses_and_the_output_options() -> None:
    from converter.results.report import STATUSES

    readme = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = readme.split("## The conversion report", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \| (.+) \|$", section, re.M)
    assert [name for name, _ in rows] == list(STATUSES)
    row = next(line for line in readme.splitlines() if line.startswith("| `webnn-convert convert"))
    assert "[-o OUTDIR]" in row and "--force" in row and "models/foo_webnn/" in row
    assert "python3 -m http.server" in readme
