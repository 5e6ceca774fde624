"""The generated module's `createModel(context).compute(feeds)` in a real Chromium: the tiny
CNN (converter/zoo/models/make_tiny_cnn.py, batch 2) exported as JavaScript, a page that
creates the model once and calls `compute()` twice with different images on the same
MLTensors, and both results against onnxruntime on the original ONNX model."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest

from converter import convert
from converter.zoo.models.make_tiny_cnn import make
from tests.browser.compute_page import run_compute_page

pytestmark = pytest.mark.browser


def test_create_model_computes_twice_on_the_same_tensors(browser: Any, tmp_path: Path
                                                         ) -> None:
    model = tmp_path / "tiny_cnn.onnx"
    make(model, seed=0)
    result = convert(str(model), free_dims={"batch": 2})
    rng = np.random.default_rng(7)
    images = [rng.normal(0, 1, (2, 3, 16, 16)).astype(np.float32) for _ in range(2)]
    answer = run_compute_page(
        result, tmp_path / "site", browser, images, input_name="image", array="Float32Array",
        output="probs", returns="inputs: model.inputs.map((d) => d.name),\n"
        "            outputs: model.outputs.map((d) => d.name), io: [INPUTS, OUTPUTS]")
    assert str(answer["browser"]).startswith(("HeadlessChrome/", "Chrome/")), answer
    [page] = answer["results"]
    assert page["ok"], page
    assert page["inputs"] == ["image"] and page["outputs"] == ["probs"]
    session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
    got = [np.frombuffer(base64.b64decode(r["$base64"]), np.float32).reshape(2, 10)
           for r in page["results"]]
    for image, probs in zip(images, got, strict=True):
        [want] = session.run(None, {"image": image})
        np.testing.assert_allclose(probs, want, rtol=1e-4, atol=1e-5)
    assert not np.allclose(got[0], got[1])  # the second call computed its own input
