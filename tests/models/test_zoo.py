"""Every model of models/zoo.toml converts and matches onnxruntime (and the stored output,
when the manifest names one) within the manifest's tolerance."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import onnx
import onnxruntime as ort
import pytest

import converter

ROOT = Path(__file__).resolve().parents[2]


def _zoo() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("zoo", ROOT / "models" / "zoo.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ZOO = _zoo()
ENTRIES = ZOO.load_manifest()


def _param(entry: dict) -> object:
    marks = [pytest.mark.slow] if entry.get("slow") else []
    return pytest.param(entry, id=entry["name"], marks=marks)


def test_manifest_entries_are_complete() -> None:
    for entry in ENTRIES:
        assert entry["source"].split(":")[0] in ("onnx-package", "pypi"), entry["name"]
        assert set(entry["tolerance"]) == {"atol", "rtol_max"}, entry["name"]


@pytest.mark.parametrize("entry", [_param(e) for e in ENTRIES])
def test_model_matches_onnxruntime(entry: dict) -> None:
    try:
        model = ZOO.load_model(entry)
    except ZOO.ModelUnavailable as exc:
        pytest.skip(str(exc))
    result = converter.convert(model, **ZOO.convert_kwargs(entry))
    assert result.report.counts()["unsupported"] == 0
    shapes = {vi.name: tuple(vi.shape) for vi in result.inputs}
    dtypes = {vi.name: vi.dtype for vi in result.inputs}
    feeds = ZOO.make_inputs(entry, shapes, dtypes)
    ours = result.run(feeds)
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    ref = dict(zip([o.name for o in sess.get_outputs()],
                   sess.run(None, {**feeds, **ZOO.pins(entry)}), strict=True))
    for name, expected in ref.items():
        assert ours[name].shape == expected.shape, name
        ok, err, allowed = ZOO.within(ours[name], expected, entry["tolerance"])
        assert ok, f"{entry['name']} output {name}: max error {err:.3g} > {allowed:.3g}"
    if entry.get("reference_output"):
        stored = onnx.numpy_helper.to_array(onnx.load_tensor(
            str(ZOO.model_path(entry).with_name(entry["reference_output"]))))
        first = next(iter(ref))
        ok, err, allowed = ZOO.within(ours[first], stored, entry["tolerance"])
        assert ok, f"{entry['name']} vs stored output: max error {err:.3g} > {allowed:.3g}"
