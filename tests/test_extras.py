"""The optional extras stay optional: a core install (no `[tflite]`, no `[torch]`) converts
TFLite models, and `validate` on one says in one line which extra runs it.

- Fast: a subprocess with `ai_edge_litert` blocked (`sys.modules["ai_edge_litert"] = None`)
  converts TFLite models to the same files as with LiteRT installed, and `validate` exits 2
  naming `pip install -e '.[tflite]'` (run from the checkout's root).
- Fast: the core options decoder (`converter.frontends.tflite.options`, on the `tflite`
  package) gives exactly the dicts LiteRT's object API gives, for every options table of the
  schema, with defaults and with set fields.
- Slow: a real virtual environment with only the core dependencies of pyproject.toml
  (`python -m venv`, pip from this machine's indexes, the package installed editable from a
  copy of the source), then the same two checks through its `webnn-convert`. About 25 s here
  (venv 5 s, dependencies 10 s, the commands 10 s); skipped when pip cannot install.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.cli.models import tiny_tflite

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "op_mappings" / "tflite" / "data"
HINT = "pip install -e '.[tflite]'"
"""The hint from the root of a checkout (`converter.core.install.install_hint`)."""
BLOCKED_MAIN = ("import sys; sys.modules['ai_edge_litert'] = None\n"
                "from cli.main import main\n"
                "main(sys.argv[1:])")
"""`webnn-convert` as if ai_edge_litert were not installed (any import of it fails)."""


def _run(argv: Sequence[object], cwd: Path, timeout: float = 600
         ) -> subprocess.CompletedProcess[str]:
    """Run a command without PYTHONPATH (the environment under test must stand alone)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


def _check_missing_litert(result: subprocess.CompletedProcess[str], hint: str = HINT) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert lines[0].endswith(hint) and "LiteRT interpreter" in lines[0]
    assert "Traceback" not in result.stderr


def _models(tmp_path: Path) -> list[Path]:
    tiny = tmp_path / "tiny.tflite"
    tiny_tflite(tiny)
    return [tiny, DATA / "keras_lstm.tflite"]


def test_without_litert_convert_works_and_validate_names_the_extra(tmp_path: Path) -> None:
    for model in _models(tmp_path):
        out = tmp_path / f"out_{model.stem}"
        r = _run([sys.executable, "-c", BLOCKED_MAIN, "convert", model, "-o", out], ROOT)
        assert r.returncode == 0, r.stderr
        same = tmp_path / f"same_{model.stem}"
        r = _run([sys.executable, "-m", "cli", "convert", model, "-o", same], ROOT)
        assert r.returncode == 0, r.stderr
        written = sorted(p.name for p in out.iterdir() if p.suffix != ".json"
                         or p.name.endswith(".manifest.json"))
        assert any(n.endswith(".webnn") for n in written), written
        for name in written:
            assert (out / name).read_bytes() == (same / name).read_bytes(), name
    r = _run([sys.executable, "-c", BLOCKED_MAIN, "validate", tmp_path / "tiny.tflite"], ROOT)
    _check_missing_litert(r)


# -- the options decoder against LiteRT's object API --------------------------------------


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _object_api(schema: Any, table: str, buf: bytes, pos: int) -> dict[str, Any]:
    """What the reader decoded with LiteRT's object API before the core decoder existed."""
    accessor = getattr(schema, table)()
    accessor.Init(buf, pos)
    out: dict[str, Any] = {}
    for key, value in vars(getattr(schema, table + "T").InitFromObj(accessor)).items():
        if isinstance(value, np.ndarray):
            value = tuple(value.tolist())
        elif isinstance(value, list):
            value = tuple(value)
        elif isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        out[_snake(key)] = value
    return out


def _filled(schema: Any, table: str, variant: int) -> Any:
    """An options object of `table` with every field set (variant 1: zero/False/empty
    vectors and strings, 2: non-default scalars, vectors and strings)."""
    import inspect

    obj = getattr(schema, table + "T")()
    pack = inspect.getsource(type(obj).Pack)
    for key, value in list(vars(obj).items()):
        if isinstance(value, bool):
            setattr(obj, key, variant == 2)
        elif isinstance(value, int):
            setattr(obj, key, value + variant)
        elif isinstance(value, float):
            setattr(obj, key, value + 0.5 * variant)
        elif f"builder.CreateString(self.{key})" in pack:
            setattr(obj, key, "ab" * (variant - 1))
        elif f"PrependBool(self.{key}" in pack:
            setattr(obj, key, [True, False][: 2 * (variant - 1)])
        else:
            setattr(obj, key, [1, 2, 3][: 3 * (variant - 1)])
    return obj


def test_core_options_decoder_matches_litert_object_api() -> None:
    schema = pytest.importorskip("ai_edge_litert.schema_py_generated")
    import flatbuffers
    from flatbuffers.table import Table

    from converter.frontends.tflite import options

    def enum(cls: Any) -> list[str]:
        return [k for k, v in vars(cls).items() if not k.startswith("_") and isinstance(v, int)]

    tables = [t for t in enum(schema.BuiltinOptions) + enum(schema.BuiltinOptions2)
              if t != "NONE"]
    assert len(tables) > 140
    assert set(options.OPTIONS_NAMES.values()) | set(options.OPTIONS2_NAMES.values()) >= \
        set(tables) | {"NONE"}
    assert set(enum(schema.BuiltinOperator)) <= set(options.BUILTIN_NAMES.values())
    for table in tables:
        for variant in (1, 2):
            builder = flatbuffers.Builder(64)
            builder.Finish(_filled(schema, table, variant).Pack(builder))
            buf = builder.Output()
            pos = flatbuffers.encode.Get(flatbuffers.number_types.UOffsetTFlags.packer_type,
                                         buf, 0)
            want = _object_api(schema, table, buf, pos)
            got = options.decode(table, Table(buf, pos))
            assert got == want and list(got) == list(want), (table, variant)
            assert all(type(got[k]) is type(want[k]) for k in want), (table, variant)
        defaults = options.defaults(table)
        assert defaults is not None
        assert defaults == {k: v for k, v in _object_api(
            schema, table, *_empty(flatbuffers)).items()}, table


def _empty(flatbuffers: Any) -> tuple[bytes, int]:
    builder = flatbuffers.Builder(16)
    builder.StartObject(0)
    builder.Finish(builder.EndObject())
    buf = builder.Output()
    return buf, flatbuffers.encode.Get(flatbuffers.number_types.UOffsetTFlags.packer_type,
                                       buf, 0)


# -- a real core-only environment ----------------------------------------------------------


SOURCES = ("converter", "op_mappings", "cli", "pyproject.toml", "README.md")


@pytest.mark.slow
def test_core_install_converts_tflite(tmp_path: Path) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = list(project["dependencies"])
    assert not any(d.startswith(("ai-edge-litert", "torch")) for d in core)
    copy = tmp_path / "src"
    copy.mkdir()
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, copy / name)
    venv = tmp_path / "venv"
    r = _run([sys.executable, "-m", "venv", venv], tmp_path)
    assert r.returncode == 0, r.stderr
    bindir = venv / ("Scripts" if os.name == "nt" else "bin")
    pip = [bindir / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    for step in ([*pip, "setuptools>=68", "wheel", *core],
                 [*pip, "--no-build-isolation", "--no-deps", "-e", copy]):
        try:
            r = _run(step, tmp_path, timeout=1200)
        except subprocess.TimeoutExpired:
            pytest.skip("pip cannot install the core dependencies here: no answer in 20 min")
        if r.returncode != 0:
            pytest.skip("pip cannot install the core dependencies here: "
                        + (r.stderr.strip().splitlines() or ["(no output)"])[-1])
    r = _run([bindir / "python", "-c", "import ai_edge_litert"], tmp_path)
    assert r.returncode != 0, "the core environment has ai_edge_litert"
    exe = bindir / "webnn-convert"
    for model in _models(tmp_path):
        out = tmp_path / f"out_{model.stem}"
        r = _run([exe, "convert", model, "-o", out], tmp_path)
        assert r.returncode == 0, r.stderr
        assert any(p.suffix == ".webnn" for p in out.iterdir())
    _check_missing_litert(_run([exe, "validate", tmp_path / "tiny.tflite"], tmp_path),
                          f"pip install -e '{copy}[tflite]'")  # an editable install elsewhere
