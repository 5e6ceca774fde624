"""The transformer zoo (models/zoo_transformers.toml): tiny random-weight Hugging Face models
exported by torch.onnx (TorchScript and dynamo), the onnxruntime transformer optimizer,
float16 conversion, dynamic int8 / uint8 quantization, MatMulNBits int4 and the
onnxruntime-genai builder (models/make_transformers.py). Each row converts and passes
`converter.zoo.run_entry` on the reference backend against onnxruntime, exactly what
`webnn-convert zoo models/zoo_transformers.toml` checks.

The rows run in the slow job (`pytest -m slow tests/models/test_transformer_zoo.py`) and are
skipped when the `transformers` extra is not installed (`pip install -e ".[transformers]"`);
a row whose own export dependency is missing (onnxscript, onnxruntime-genai) is skipped with
the manifest's reason. Rows that do not pass yet are listed in `KNOWN_FAILURES` with a
fragment of their error: they are strict xfails that only accept that error, so a row that
starts passing (or fails differently) fails the suite until the table is updated.

Collection parses the manifest's TOML only: a row's model is generated (and cached,
converter.zoo.generated) when its test runs, through `read_manifest(..., names=[row])`.
"""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path
from typing import Any

import pytest

from converter.zoo import ZooEntry, run_entry
from converter.zoo.manifest import read_manifest

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "models" / "zoo_transformers.toml"
SCRIPT = ROOT / "models" / "make_transformers.py"
ROWS: list[dict[str, Any]] = tomllib.loads(MANIFEST.read_text(encoding="utf-8"))["model"]
HAVE_TRANSFORMERS = (importlib.util.find_spec("transformers") is not None
                     and importlib.util.find_spec("torch") is not None)

KNOWN_FAILURES: dict[str, str] = {
    # row name: a fragment of its current error message (the reason it fails)
}
"""Rows that do not pass yet: strict xfails (see the module docstring)."""


class KnownFailure(AssertionError):
    """A row of KNOWN_FAILURES failed with its listed error."""


def _make_module() -> Any:
    spec = importlib.util.spec_from_file_location("make_transformers", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _param(row: dict[str, Any]) -> Any:
    name = str(row["name"])
    marks: list[Any] = [pytest.mark.slow]
    if name in KNOWN_FAILURES:
        marks.append(pytest.mark.xfail(strict=True, raises=KnownFailure,
                                       reason=KNOWN_FAILURES[name]))
    return pytest.param(name, id=name, marks=marks)


def test_manifest_rows_are_consistent() -> None:
    """Every row names a model and variant make_transformers.py knows, fixes every input's
    shape with batch 1 (token sequences <= 16) and feeds every input; KNOWN_FAILURES only names
    rows of the manifest. Reads the TOML only (nothing is generated)."""
    make_transformers = _make_module()
    names = [str(r["name"]) for r in ROWS]
    assert len(names) == len(set(names))
    assert set(KNOWN_FAILURES) <= set(names)
    assert len(ROWS) >= 50
    pairs = set()
    for row in ROWS:
        name, args = row["name"], row["args"]
        assert row["source"] == "generated:make_transformers.py", name
        assert args["variant"] in make_transformers.VARIANTS[args["model"]], name
        assert name.startswith(f"transformers_{args['model']}_"), name
        assert row["licence"] and row["description"] and row["tolerance"], name
        assert set(row["input_shapes"]) == set(row["inputs"]), name
        for input_name, shape in row["input_shapes"].items():
            assert shape[0] == 1, name
            if input_name.endswith(("input_ids", "attention_mask")):
                assert shape[1] <= 16, name
        pairs.add((args["model"], args["variant"]))
    assert {m for m, _ in pairs} == set(make_transformers.MODELS)


def test_read_manifest_names_reads_only_those_rows(tmp_path: Path) -> None:
    """`read_manifest(..., names=...)` skips the other rows before their generators run."""
    (tmp_path / "zoo.toml").write_text(
        '[[model]]\nname = "a"\nsource = "generated:make_nothing.py"\n\n'
        '[[model]]\nname = "b"\nsource = "generated:broken.py"\n', encoding="utf-8")
    (tmp_path / "broken.py").write_text("raise RuntimeError('must not run')\n",
                                        encoding="utf-8")
    entries = read_manifest(tmp_path / "zoo.toml", names=["a"])
    assert [e.name for e in entries] == ["a"] and "not found" in entries[0].missing


@pytest.mark.skipif(not HAVE_TRANSFORMERS, reason="the transformers extra is not installed "
                    "(pip install -e '.[transformers]'): torch / transformers missing")
@pytest.mark.parametrize("name", [_param(r) for r in ROWS])
def test_transformer_matches_onnxruntime(name: str) -> None:
    [entry] = read_manifest(MANIFEST, names=[name])
    _check(entry)


def _check(entry: ZooEntry) -> None:
    if entry.path is None:
        pytest.skip(entry.missing)
    result = run_entry(entry)
    unsupported = result.conversion.get("unsupported", 0)
    if result.status == "pass" and not unsupported:
        return
    detail = f"{entry.name}: {result.status}: {result.message} {result.outputs}"
    known = KNOWN_FAILURES.get(entry.name)
    if known is not None and known in result.message:
        raise KnownFailure(detail)
    raise AssertionError(detail)
