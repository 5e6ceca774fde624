"""`webnn-convert run -o OUT.npz`: every output lands in the .npz file under its own name
(`numpy.load` gives it back), names numpy.savez would take as its own parameters
(`allow_pickle`, `file`) included; a name that is not a safe zip entry (`../../evil`, a
path separator, a control character) is refused with one line, and no file is written."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from cli.main import cli
from converter import export
from converter.core.webnn import ML, MLGraphBuilder


def _graph(tmp_path: Path, names: list[str]) -> tuple[Path, Path, np.ndarray]:
    """A graph x -> relu(x) + k for each output name k (k = its position), exported, and its
    .npz of inputs."""
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [2, 3], "float32")
    r = b.relu(x)
    outputs = {name: b.add(r, b.constant(np.full([2, 3], i, np.float32)))
               for i, name in enumerate(names)}
    folder = tmp_path / "graph"
    export(b.build(outputs), folder)
    value = np.arange(-3, 3, dtype=np.float32).reshape(2, 3)
    inputs = tmp_path / "inputs.npz"
    np.savez(inputs, x=value)
    return folder, inputs, value


def _run(folder: Path, inputs: Path, out: Path) -> Result:
    return CliRunner().invoke(cli, ["run", str(folder), "--inputs", str(inputs), "-o",
                                    str(out)])


def test_every_name_is_kept(tmp_path: Path) -> None:
    names = ["allow_pickle", "file", "args", "kwds", "Größe ✓ 出力", "x.npy", "a..b"]
    folder, inputs, value = _graph(tmp_path, names)
    out = tmp_path / "out.npz"
    r = _run(folder, inputs, out)
    assert r.exit_code == 0, r.output
    with np.load(out, allow_pickle=False) as data:
        assert sorted(data.files) == sorted(names)
        for i, name in enumerate(names):
            np.testing.assert_array_equal(data[name], np.maximum(value, 0) + i)
    with zipfile.ZipFile(out) as zf:
        assert sorted(zf.namelist()) == sorted(f"{n}.npy" for n in names)


@pytest.mark.parametrize("name", ["../../evil", "a/b", "a\\b", "..", "bell\x07"])
def test_an_unsafe_name_is_refused(tmp_path: Path, name: str) -> None:
    folder, inputs, _ = _graph(tmp_path, ["fine", name])
    out = tmp_path / "out.npz"
    r = _run(folder, inputs, out)
    assert r.exit_code == 2, r.output
    err = r.stderr.strip()
    assert err.startswith(f"error: {out}: cannot write output ") and "\n" not in err, err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["graph", "inputs.npz"]
