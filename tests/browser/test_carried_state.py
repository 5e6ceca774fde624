"""Carried state in a real Chromium (issue 24, point 3): the micro-wakeword-style streaming
TFLite model (tests/converter/frontends/tflite/streaming.py: a resource-variable ring buffer)
exported as JavaScript; a page creates the model once, calls `compute()` on 12 frames in
turn (the state input left out, so the module carries it), then `resetState()` and the first
frame again; every result against LiteRT's persistent interpreter on the original model."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter import convert
from tests.browser.compute_page import run_compute_page
from tests.converter.frontends.tflite.streaming import (
    frames,
    int8_frames,
    litert_sequence,
    quantized_streaming_model,
    streaming_model,
)

pytestmark = pytest.mark.browser

CALLS = 12


@pytest.mark.parametrize("kind", ["float32", "int8"])
def test_compute_carries_state_like_litert(browser: Any, tmp_path: Path, kind: str) -> None:
    """float32: within 1e-4 of LiteRT; int8 (micro-wakeword's form): equal."""
    pytest.importorskip("ai_edge_litert.interpreter")
    model = streaming_model() if kind == "float32" else quantized_streaming_model()
    inputs = frames(CALLS) if kind == "float32" else int8_frames(CALLS)
    output = "prob" if kind == "float32" else "score"
    ref = litert_sequence(model, inputs)
    answer = run_compute_page(
        convert(model), tmp_path / "site", browser, inputs, input_name="features",
        array="Float32Array" if kind == "float32" else "Int8Array", output=output,
        after="    model.resetState();\n"
              "    const again = (await model.compute(feedOf(feeds[0])))[output].buffer;",
        returns="again")
    [page] = answer["results"]
    assert page["ok"], page
    dtype = np.float32 if kind == "float32" else np.int8
    got = [np.frombuffer(base64.b64decode(r["$base64"]), dtype).reshape(1, 2)
           for r in page["results"]]
    diff = max(float(np.max(np.abs(a.astype(np.float64) - b))) for a, b in
               zip(got, ref, strict=True))
    assert diff <= (1e-4 if kind == "float32" else 0), diff
    again = np.frombuffer(base64.b64decode(page["again"]["$base64"]), dtype)
    np.testing.assert_allclose(again.reshape(1, 2), ref[0], atol=1e-4)
