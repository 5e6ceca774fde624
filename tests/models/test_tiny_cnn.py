"""End to end: the generated tiny CNN, converted and run on the reference backend, matches
onnxruntime."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import numpy as np
import onnx
import pytest

import converter
from tests.op_mappings.onnx.harness import assert_close, run_ort

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("make_tiny_cnn", ROOT / "converter" / "zoo" /
                                                  "models" / "make_tiny_cnn.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("batch", [1, 3])
def test_tiny_cnn_matches_onnxruntime(tmp_path: Path, batch: int) -> None:
    path = tmp_path / "tiny_cnn.onnx"
    _generator().main([str(path), "--seed", "1"])
    result = converter.convert(path, free_dims={"batch": batch})
    report = result.report.to_dict()
    assert report["summary"]["unsupported"] == 0
    assert report["ops"]["Conv"]["webnn_ops"] == ["conv2d"]
    image = np.random.default_rng(0).normal(size=(batch, 3, 16, 16)).astype(np.float32)
    expected = run_ort(onnx.load(path), {"image": image})
    got = result.run({"image": image})
    assert got["probs"].shape == (batch, 10)
    assert_close(got["probs"], expected["probs"], rtol=1e-5, atol=1e-6)
