"""The `generated:` source scheme of the zoo manifests (converter.zoo.generated): generator
scripts run once per (script content, args), cached, atomically written, as modules
registered in sys.modules; missing dependencies skip the entry, broken generators are
manifest errors (or, read lazily, the entry's error when it runs)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from converter.core.errors import InvalidModel
from converter.zoo import read_manifest, read_manifests, run_entry, run_zoo
from converter.zoo.generated import generate
from converter.zoo.manifest import materialize

GENERATOR = '''
from pathlib import Path
CALLS = []

def make(path: Path, size: int = 3, tag: str = "a") -> None:
    path.write_bytes(bytes([size]) * size + tag.encode())
'''


@pytest.fixture(autouse=True)
def _cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("WEBNN_CONVERTER_CACHE", str(cache))
    return cache / "zoo"


def _manifest(folder: Path, body: str) -> Path:
    path = folder / "zoo.toml"
    path.write_text(body)
    return path


def test_generated_entry_is_written_once_per_content_and_args(tmp_path: Path,
                                                               _cache: Path) -> None:
    script = tmp_path / "make_x.py"
    script.write_text(GENERATOR)
    path = _manifest(tmp_path, '''
[[model]]
name = "x"
source = "generated:make_x.py"
args = { size = 4, tag = "b" }
licence = "Apache-2.0"

[[model]]
name = "y"
format = "tflite"
source = "generated:make_x.py"
licence = "Apache-2.0"
''')
    entries = {e.name: e for e in read_manifest(path)}
    x, y = entries["x"], entries["y"]
    assert x.path is not None and Path(x.path).parent == _cache
    assert x.path.endswith(".onnx") and Path(x.path).read_bytes() == b"\x04" * 4 + b"b"
    assert y.path is not None and y.path.endswith(".tflite")
    assert Path(y.path).read_bytes() == b"\x03" * 3 + b"a"
    assert x.source == "generated:make_x.py (size=4, tag=b)" and "args" not in x.extra
    # cached: the same file, not rewritten
    stamp = Path(x.path).stat().st_mtime_ns
    assert read_manifest(path)[0].path == x.path
    assert Path(x.path).stat().st_mtime_ns == stamp
    # an edited generator gets a new file
    script.write_text(GENERATOR.replace('tag.encode()', 'tag.encode() + b"!"'))
    again = read_manifest(path)[0]
    assert again.path != x.path and Path(again.path or "").read_bytes().endswith(b"b!")
    assert not [p for p in _cache.iterdir() if p.name.startswith(".")]  # no temp files


def test_generate_without_manifest(tmp_path: Path) -> None:
    script = tmp_path / "make_x.py"
    script.write_text(GENERATOR)
    out = generate(script, {"size": 2}, ".bin", folder=tmp_path)
    assert out.parent == tmp_path and out.read_bytes() == b"\x02\x02a"


def test_generated_entry_errors(tmp_path: Path) -> None:
    (tmp_path / "make_dep.py").write_text("import no_such_module_xyz\n"
                                          "def make(path, **args): pass\n")
    (tmp_path / "make_nomake.py").write_text("X = 1\n")
    (tmp_path / "make_fails.py").write_text("def make(path):\n    raise RuntimeError('boom')\n")
    path = _manifest(tmp_path, '''
[[model]]
name = "dep"
source = "generated:make_dep.py"

[[model]]
name = "absent"
source = "generated:make_absent.py"
''')
    entries = {e.name: e for e in read_manifest(path)}
    assert entries["dep"].path is None
    assert "module 'no_such_module_xyz' not found" in entries["dep"].missing
    assert entries["absent"].path is None and "not found" in entries["absent"].missing
    for script, match in (("make_nomake.py", "defines no make"), ("make_fails.py", "boom")):
        bad = _manifest(tmp_path, f'[[model]]\nname = "b"\nsource = "generated:{script}"\n')
        with pytest.raises(InvalidModel, match=match):
            read_manifest(bad)
    bad = _manifest(tmp_path, '[[model]]\nname = "b"\nsource = "generated:make_dep.py"\n'
                              'args = 3\n')
    with pytest.raises(InvalidModel, match="args must be a table"):
        read_manifest(bad)


def test_generator_is_a_registered_module(tmp_path: Path) -> None:
    """The script runs as a module registered in sys.modules (under a name unique to its
    content and arguments), so `@dataclass` works in it."""
    script = tmp_path / "make_dc.py"
    script.write_text('''
from __future__ import annotations  # @dataclass then looks the module up in sys.modules

import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Config:
    size: int = 2


def make(path: Path, size: int = 2) -> None:
    assert sys.modules[__name__].Config is Config
    path.write_bytes(bytes([Config(size).size]) + __name__.encode())
''')
    out = generate(script, {"size": 5}, ".bin", folder=tmp_path)
    data = out.read_bytes()
    assert data[:1] == b"\x05" and data[1:].decode().startswith("_webnn_zoo_make_dc_")
    other = generate(script, {"size": 6}, ".bin", folder=tmp_path)
    assert other.read_bytes()[1:] != data[1:]  # another name per (content, args)
    (tmp_path / "make_bad.py").write_text("raise RuntimeError('broken at import')\n")
    with pytest.raises(RuntimeError, match="broken at import"):
        generate(tmp_path / "make_bad.py", {}, ".bin", folder=tmp_path)
    assert not [m for m in sys.modules if m.startswith("_webnn_zoo_make_bad_")]


ONNX_GENERATOR = '''
from pathlib import Path
import onnx
from onnx import TensorProto, helper

def make(path: Path, op: str = "Relu") -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], "g", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
'''


def test_lazy_generation_runs_only_the_entries_that_run(tmp_path: Path, _cache: Path) -> None:
    """`read_manifest(..., generate=False)` leaves generated entries pending; run_zoo /
    run_entry generate the ones they run (skipped and filtered-out entries never run their
    generator), and a failing generator is that entry's error."""
    (tmp_path / "make_ok.py").write_text(ONNX_GENERATOR)
    marker = tmp_path / "imported"
    (tmp_path / "make_broken.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('x')\n"
        "def make(path, **args):\n    raise RuntimeError('generator failed')\n")
    path = _manifest(tmp_path, '''
[[model]]
name = "relu"
source = "generated:make_ok.py"

[[model]]
name = "sigmoid"
source = "generated:make_ok.py"
args = { op = "Sigmoid" }

[[model]]
name = "broken"
source = "generated:make_broken.py"

[[model]]
name = "absent"
source = "generated:make_absent.py"
''')
    entries = {e.name: e for e in read_manifests([path], generate=False)}
    assert not marker.exists() and not (_cache.exists() and list(_cache.iterdir()))
    assert all(e.path is None for e in entries.values())
    assert entries["relu"].pending and not entries["relu"].missing
    assert not entries["absent"].pending and "not found" in entries["absent"].missing
    report = run_zoo(list(entries.values()), skip={"broken": "not run", "sigmoid": "not run"})
    status = {r.name: (r.status, r.reason_code) for r in report.results}
    assert status == {"relu": ("pass", ""), "sigmoid": ("skipped", "not_run"),
                      "broken": ("skipped", "not_run"), "absent": ("skipped", "not_available")}
    assert not marker.exists() and len(list(_cache.iterdir())) == 1  # relu's model only
    result = run_entry(entries["broken"])
    assert (result.status, result.reason_code) == ("error", "generator_failed")
    assert "generator failed" in result.message and marker.exists()
    done = materialize(entries["sigmoid"])
    assert done.path is not None and not done.pending and done.path.endswith(".onnx")
    assert materialize(done) is done
    with pytest.raises(InvalidModel, match="generator failed"):
        read_manifest(path, names=["broken"])  # eager reading: a manifest error


def test_zoo_command_filter_generates_only_the_matching_entries(tmp_path: Path,
                                                                _cache: Path) -> None:
    """`webnn-convert zoo --filter X` generates only the entries whose names match."""
    from click.testing import CliRunner

    from cli.main import cli

    (tmp_path / "make_ok.py").write_text(ONNX_GENERATOR)
    (tmp_path / "make_broken.py").write_text("raise RuntimeError('must not run')\n")
    path = _manifest(tmp_path, '[[model]]\nname = "relu"\nsource = "generated:make_ok.py"\n\n'
                               '[[model]]\nname = "broken"\nsource = "generated:make_broken.py"\n')
    r = CliRunner().invoke(cli, ["zoo", str(path), "--filter", "relu"])
    assert r.exit_code == 0, r.output
    assert "1 models: 1 pass" in r.stdout and len(list(_cache.iterdir())) == 1
    r = CliRunner().invoke(cli, ["zoo", str(path), "--jobs", "2"])
    assert r.exit_code == 1, r.output  # the broken generator is that entry's error
    assert "2 models: 1 pass, 0 fail, 1 error" in r.stdout and "must not run" in r.stdout
