"""Special files where the CLI expects a regular one: a FIFO (which blocks a reader until a
writer comes), `/dev/zero` (endless), a folder, a symlink to a device. As the model, its
external data, the graph (or the graph found in a folder), its weights blob, manifest or
safetensors archive, the target limits file and the .npz inputs: each is one `error:` line
saying what it is ("... is a FIFO, not a regular file"), exit 2, and nothing hangs or reads
forever (each command runs in a subprocess with a generous timeout, a hang guard only)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tests.cli.models import tiny_cnn

ROOT = Path(__file__).resolve().parents[2]
HANG_GUARD_S = 300
KINDS = {"fifo": "a FIFO", "zero": "a character device", "folder": "a folder",
         "link": "a character device"}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli.entry", *map(str, args)], env=_env(),
                          capture_output=True, text=True, timeout=HANG_GUARD_S)


def make_special(path: Path, kind: str) -> Path:
    """Put a special file of `kind` at `path` (replacing what is there)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "zero":
        path.symlink_to("/dev/zero")  # `run /dev/zero` itself: see test_run_dev_zero
    elif kind == "link":
        path.symlink_to("/dev/null")
    else:
        path.mkdir()
    return path


def assert_refused(r: subprocess.CompletedProcess[str], path: Path, kind: str,
                   said: str | None = None) -> None:
    """One line, exit 2, naming `path` and saying what it is (`said`: other words)."""
    assert r.returncode == 2, (r.returncode, r.stderr)
    err = r.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    assert "Traceback" not in r.stderr
    assert path.name in err, err
    assert (said or f"{KINDS[kind]}, not a ") in err, err  # ... not a regular / model file


DEV = ("--allow-root", "/dev")
"""A symlink to a device leaves the model's folder: allowed here, so that the check of
what the file is (not the folder confinement, which refuses it first otherwise) answers."""


SPECIALS = sorted(KINDS)


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(the tiny model, its exported graph folder with a blob, one with safetensors)."""
    base = tmp_path_factory.mktemp("special")
    model = tiny_cnn(base / "tiny.onnx")
    np.savez(base / "image.npz", image=np.zeros((1, 3, 16, 16), np.float32))
    for name, extra in (("blob", []), ("st", ["--weights", "safetensors"])):
        r = cli("convert", model, "--dim", "batch=1", "-o", base / name, *extra)
        assert r.returncode == 0, r.stderr
    return model, base / "blob", base / "st"


def _copy(folder: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(folder, tmp_path / folder.name))


@pytest.mark.parametrize("kind", SPECIALS)
def test_model(tmp_path: Path, kind: str) -> None:
    for suffix in (".onnx", ".tflite"):
        model = make_special(tmp_path / f"m{suffix}", kind)
        for command in (("convert", model, "-o", tmp_path / "out"), ("inspect", model),
                        ("validate", model)):
            assert_refused(cli(*command), model, kind)
        assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", SPECIALS)
def test_external_data(tmp_path: Path, kind: str) -> None:
    w = numpy_helper.from_array(np.ones((64, 64), np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])],
                              [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    path = tmp_path / "m.onnx"
    onnx.save_model(model, path, save_as_external_data=True, location="m.data",
                    size_threshold=0)
    data = make_special(tmp_path / "m.data", kind)
    for command in (("convert", path, "-o", tmp_path / "out"), ("validate", path)):
        assert_refused(cli(*command, *DEV), data, kind)
    assert not (tmp_path / "out").exists()


GRAPH_PARTS: dict[str, Callable[[Path], Path]] = {
    "graph": lambda folder: folder / "tiny.webnn",
    "weights": lambda folder: folder / "tiny.weights",
    "manifest": lambda folder: folder / "tiny.manifest.json",
}


@pytest.mark.parametrize("kind", SPECIALS)
@pytest.mark.parametrize("part", sorted(GRAPH_PARTS))
def test_graph_files(exported: tuple[Path, Path, Path], tmp_path: Path, part: str,
                     kind: str) -> None:
    """The graph, its weights blob or its manifest, in a folder given to run / inspect."""
    _, blob, _ = exported
    folder = _copy(blob, tmp_path)
    special = make_special(GRAPH_PARTS[part](folder), kind)
    inputs = blob.parent / "image.npz"
    for target in (folder, folder / "tiny.webnn"):
        if part == "graph" and kind == "folder" and target != folder:
            continue  # a folder given as the graph is a folder of graphs (none in it here)
        r = cli("run", target, "--inputs", inputs, "-o", tmp_path / "out.npz", *DEV)
        assert_refused(r, special, kind)
        assert not (tmp_path / "out.npz").exists()


@pytest.mark.parametrize("kind", SPECIALS)
def test_safetensors(exported: tuple[Path, Path, Path], tmp_path: Path, kind: str) -> None:
    _, _, st = exported
    folder = _copy(st, tmp_path)
    special = make_special(folder / "tiny.safetensors", kind)
    r = cli("run", folder, "--inputs", st.parent / "image.npz", "-o", tmp_path / "out.npz",
            *DEV)
    assert_refused(r, special, kind)


def test_run_dev_zero(exported: tuple[Path, Path, Path], tmp_path: Path) -> None:
    _, blob, _ = exported
    r = cli("run", "/dev/zero", "--inputs", blob.parent / "image.npz", "-o",
            tmp_path / "out.npz")
    assert r.returncode == 2 and "/dev/zero" in r.stderr, r.stderr
    assert "a character device, not a regular file" in r.stderr
    assert r.stderr.count("\n") == 1


@pytest.mark.parametrize("kind", SPECIALS)
def test_inputs_and_limits(exported: tuple[Path, Path, Path], tmp_path: Path,
                           kind: str) -> None:
    model, blob, _ = exported
    inputs = make_special(tmp_path / "inputs.npz", kind)
    assert_refused(cli("run", blob, "--inputs", inputs, "-o", tmp_path / "out.npz"), inputs,
                   kind, "is a directory" if kind == "folder" else None)  # (click's words)
    limits = make_special(tmp_path / "limits.json", kind)
    assert_refused(cli("convert", model, "--dim", "batch=1", "--target", limits, "-o",
                       tmp_path / "out"), limits, kind)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", SPECIALS)
def test_zoo_manifest_and_checked_file(tmp_path: Path, kind: str) -> None:
    manifest = make_special(tmp_path / "zoo.toml", kind)
    assert_refused(cli("zoo", manifest), manifest, kind,
                   "is a directory" if kind == "folder" else None)  # (click's words)
    checked = make_special(tmp_path / "README.md", kind)
    assert_refused(cli("ops", "--check", checked), checked, kind,
                   "is a directory" if kind == "folder" else None)
