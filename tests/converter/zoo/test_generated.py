"""The `generated:` source scheme of the zoo manifests (converter.zoo.generated): generator
scripts run once per (script content, args), cached, atomically written; missing
dependencies skip the entry, broken generators are manifest errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from converter.errors import InvalidModel
from converter.zoo import read_manifest
from converter.zoo.generated import generate

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
