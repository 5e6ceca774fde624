"""`webnn-convert convert -o` folders through the real CLI: `kill -9` at several moments
leaves the old output intact (or, inside the few renames, every file whole and listed) and
the next convert sweeps the temporary folder; a marker that lists a user's file or a file
that changed does not let a plain convert delete it; one-line errors naming the user's path
for a dangling symlink, a read-only folder, a full disk, an over-long manifest integer and
a NUL in an external-data location; a mount point as `-o`. Oracles: the file system, a
reference export of the same model, the marker's SHA-256 records."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper

import converter.io.export.exporter as api
from cli.main import cli
from converter.io.export.exporter import MARKER
from tests.cli.models import ROOT

DIMS = ("--dim", "batch=1")


def invoke(*args: object) -> Any:
    return CliRunner().invoke(cli, [str(a) for a in args])


def files(folder: Path) -> dict[str, bytes]:
    """The output files of `folder` (the marker and temporary folders left out)."""
    return {p.name: p.read_bytes() for p in folder.iterdir()
            if p.name != MARKER and ".export-" not in p.name}


def temporaries(folder: Path) -> list[str]:
    return sorted(str(p) for p in folder.rglob("*") if ".export-" in p.name)


def one_line_error(r: Any) -> str:
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: "), r.stderr
    assert "Traceback" not in r.output and ".export-" not in r.stderr
    return str(r.stderr)


@pytest.fixture(scope="module")
def reference(model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The files of a plain export of the tiny CNN per format (the oracle)."""
    out: dict[str, Any] = {}
    for fmt in ("webnn", "all"):
        folder = tmp_path_factory.mktemp(f"ref_{fmt}")
        r = invoke("convert", model_dir / "tiny.onnx", *DIMS, "-o", folder / "o",
                   "--format", fmt)
        assert r.exit_code == 0, r.output
        out[fmt] = files(folder / "o")
    return out


# -- kill -9 -------------------------------------------------------------------------------------

KILL_HOOK = """
import os, sys, time
from pathlib import Path
import converter.io.export.exporter as api
flag, moment = Path(sys.argv[1]), sys.argv[2]

def pause():
    flag.write_text(str(os.getpid()))
    time.sleep(600)

if moment == "mid-write":  # the .webnn files are written, the JavaScript not yet
    real_js = api.write_javascript
    def js(*args, **kwargs):
        pause()
        return real_js(*args, **kwargs)
    api.write_javascript = js
elif moment == "written":  # every file is in the temporary folder
    real_all = api._write_all
    def written(*args, **kwargs):
        result = real_all(*args, **kwargs)
        pause()
        return result
    api._write_all = written
elif moment == "replacing":  # the marker and two files moved in
    real_replace, calls = os.replace, []
    def replace(src, dst, **kwargs):
        real_replace(src, dst, **kwargs)
        calls.append(dst)
        if len(calls) == 3:
            pause()
    os.replace = replace
from cli.main import main
main(sys.argv[3:])
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def kill_during(tmp_path: Path, moment: str, args: list[str]) -> None:
    """Run the CLI with `args`, SIGKILL it at `moment` (see KILL_HOOK)."""
    flag = tmp_path / f"paused-{moment}"
    script = tmp_path / "hook.py"
    script.write_text(KILL_HOOK)
    proc = subprocess.Popen([sys.executable, str(script), str(flag), moment, *args],
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300  # a hang guard only
    while not flag.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert flag.exists(), proc.communicate()[1]
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL


def _listed_and_whole(out: Path) -> None:
    """Every file of `out` is listed in its marker with the content it has."""
    data = json.loads((out / MARKER).read_text())
    records: dict[str, list[dict[str, object]]] = {}
    for part in ("checksums", "incoming"):
        for name, rec in data.get(part, {}).items():
            records.setdefault(name, []).append(rec)
    for name, blob in files(out).items():
        assert name in data["files"]
        assert {"size": len(blob), "sha256": hashlib.sha256(blob).hexdigest()} in records[name]


@pytest.mark.parametrize("moment", ["mid-write", "written", "replacing"])
def test_kill_9_then_reconvert(tiny: Path, tmp_path: Path, reference: dict[str, Any],
                               moment: str) -> None:
    out = tmp_path / "out"
    assert invoke("convert", tiny, *DIMS, "-o", out).exit_code == 0
    before = files(out)
    assert before == reference["webnn"]
    kill_during(tmp_path, moment, ["convert", str(tiny), *DIMS, "-o", str(out),
                                   "--format", "all"])
    assert temporaries(tmp_path)  # what a killed export leaves
    if moment == "replacing":
        _listed_and_whole(out)  # old and new side by side, each whole, all listed
    else:
        assert files(out) == before  # the old output is intact
    r = invoke("convert", tiny, *DIMS, "-o", out)  # no --force needed
    assert r.exit_code == 0, r.output
    assert files(out) == reference["webnn"]
    assert temporaries(tmp_path) == []


def test_kill_9_of_a_first_export_then_reconvert(tiny: Path, tmp_path: Path,
                                                 reference: dict[str, Any]) -> None:
    out = tmp_path / "out"
    kill_during(tmp_path, "written", ["convert", str(tiny), *DIMS, "-o", str(out),
                                      "--format", "all"])
    assert temporaries(tmp_path)
    r = invoke("convert", tiny, *DIMS, "-o", out, "--format", "all")
    assert r.exit_code == 0, r.output
    assert files(out) == reference["all"]
    assert temporaries(tmp_path) == []


# -- the marker ----------------------------------------------------------------------------------


def test_a_marker_listing_a_user_file_does_not_delete_it(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert invoke("convert", tiny, *DIMS, "-o", out).exit_code == 0
    (out / "notes.txt").write_text("keep me")
    marker = json.loads((out / MARKER).read_text())
    marker["files"].append("notes.txt")  # a marker copied from elsewhere, or edited
    (out / MARKER).write_text(json.dumps(marker))
    line = one_line_error(invoke("convert", tiny, *DIMS, "-o", out, "--stem", "other"))
    assert str(out) in line and "'notes.txt'" in line and "--force" in line
    assert (out / "notes.txt").read_text() == "keep me"
    r = invoke("convert", tiny, *DIMS, "-o", out, "--stem", "other", "--force")
    assert r.exit_code == 0, r.output
    assert (out / "notes.txt").read_text() == "keep me"


def test_an_edited_output_file_is_not_replaced(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert invoke("convert", tiny, *DIMS, "-o", out, "--format", "js").exit_code == 0
    page = (out / "tiny.html").read_text().replace("<body>", "<body><p>my notes</p>")
    (out / "tiny.html").write_text(page)
    line = one_line_error(invoke("convert", tiny, *DIMS, "-o", out))
    assert "'tiny.html'" in line and "changed" in line
    assert (out / "tiny.html").read_text() == page


# -- messages ------------------------------------------------------------------------------------


def test_a_dangling_symlink_as_output_folder(tiny: Path, tmp_path: Path) -> None:
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "gone")
    line = one_line_error(invoke("convert", tiny, *DIMS, "-o", link))
    assert str(link) in line and "symbolic link" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["models", "out"]


def test_a_read_only_output_folder(tiny: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    out.mkdir()
    real = tempfile.mkdtemp

    def read_only(suffix: Any = None, prefix: Any = None, dir: Any = None) -> str:
        if dir is not None and Path(dir).resolve() in (out, out.parent):
            raise OSError(errno.EROFS, "Read-only file system",
                          os.path.join(dir, f"{prefix}abcd"))  # as mkdtemp would name it
        return real(suffix, prefix, dir)

    monkeypatch.setattr(tempfile, "mkdtemp", read_only)  # tests run as root: chmod won't do
    line = one_line_error(invoke("convert", tiny, *DIMS, "-o", out))
    assert str(out) in line and "Read-only file system" in line
    assert list(out.iterdir()) == []


def test_a_full_disk_names_the_output_folder(tiny: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    assert invoke("convert", tiny, *DIMS, "-o", out).exit_code == 0
    before = files(out)
    real = api._write_all

    def full(graph: Any, where: Path, *args: Any) -> list[Path]:
        real(graph, where, *args)
        raise OSError(errno.ENOSPC, "No space left on device")  # write() names no file

    monkeypatch.setattr(api, "_write_all", full)
    line = one_line_error(invoke("convert", tiny, *DIMS, "-o", out, "--format", "all"))
    assert str(out) in line and "No space left on device" in line
    assert files(out) == before and temporaries(tmp_path) == []


def test_a_huge_integer_in_a_manifest(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert invoke("convert", tiny, *DIMS, "-o", out).exit_code == 0
    manifest = out / "tiny.manifest.json"
    data = json.loads(manifest.read_text())
    first = next(iter(data["tensors"]))
    text = manifest.read_text().replace(f'"byteOffset": {data["tensors"][first]["byteOffset"]}',
                                        '"byteOffset": ' + "7" * 100_000, 1)
    assert text != manifest.read_text()
    manifest.write_text(text)
    np.savez(tmp_path / "in.npz", image=np.zeros((1, 3, 16, 16), np.float32))
    line = one_line_error(invoke("run", out, "--inputs", tmp_path / "in.npz",
                                 "-o", tmp_path / "o.npz"))
    assert "tiny.manifest.json" in line and "100000 digits" in line and "at most 20" in line
    assert "set_int_max_str_digits" not in line


def test_a_nul_in_an_external_data_location(tmp_path: Path) -> None:
    w = helper.make_tensor("weights", TensorProto.FLOAT, [2], [1.0, 2.0])
    w.data_location = TensorProto.EXTERNAL
    del w.float_data[:]
    for key, value in (("location", "w\0.bin"), ("offset", "0"), ("length", "8")):
        entry = w.external_data.add()
        entry.key, entry.value = key, value
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "weights"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [w])
    model = tmp_path / "m.onnx"
    model.write_bytes(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    line = one_line_error(invoke("convert", model, "-o", tmp_path / "out"))
    assert "'weights'" in line and "NUL" in line and "embedded null byte" not in line
    assert not (tmp_path / "out").exists()


# -- a mount point as -o -------------------------------------------------------------------------


@pytest.fixture()
def volume(tmp_path: Path) -> Iterator[Path]:
    """An empty tmpfs mounted at tmp_path/vol (a container's `-o /out`); skipped where the
    test may not mount."""
    point = tmp_path / "vol"
    point.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("mounting needs root and mount(8)")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(point)],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    yield point
    subprocess.run(["umount", "-l", str(point)], capture_output=True, timeout=60)


def test_a_mount_point_as_output_folder(tiny: Path, tmp_path: Path, volume: Path,
                                        reference: dict[str, Any]) -> None:
    assert volume.stat().st_dev != tiny.stat().st_dev
    r = invoke("convert", tiny, *DIMS, "-o", volume, "--format", "all")
    assert r.exit_code == 0, r.output
    assert files(volume) == reference["all"]
    r = invoke("convert", tiny, *DIMS, "-o", volume)
    assert r.exit_code == 0, r.output
    assert files(volume) == reference["webnn"] and temporaries(volume) == []
    onnx.checker.check_model(str(tiny))
