"""Rule recurrent-speed in the real browser: two stacked LSTMs and a bidirectional GRU
(linear_before_reset = 1, as torch exports it) from converter/zoo/models/make_recurrent.py,
converted for chromium-tflite (every LSTM / GRU composed from gemm and elementwise
operators), run in the headless Chromium through the generated module and the generated
page, match onnxruntime on the original ONNX models. No timing here: the speed is
benchmarks/browser_recurrent.py's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter import convert
from converter.passes.targets.rules_compose import RECURRENT
from converter.validate.browser import run_graphs
from converter.zoo.models.make_recurrent import make

pytestmark = pytest.mark.browser

MODELS = {"lstm_stack": {"hidden": 32, "size": 16, "layers": 2},
          "gru_bidi": {"hidden": 24, "size": 16}}


def test_composed_lstm_and_gru_match_onnxruntime(browser: Any, tmp_path: Path) -> None:
    import onnx

    from tests.op_mappings.onnx.harness import run_ort

    rng = np.random.default_rng(5)
    items, wants = [], []
    for kind, sizes in MODELS.items():
        path = tmp_path / f"{kind}.onnx"
        make(path, kind=kind, seed=0, **sizes)
        result = convert(str(path), free_dims={"seq": 9, "batch": 2}, target="chromium-tflite")
        ops = {o.op for o in result.graph.operations}
        assert not ops & set(RECURRENT) and "gemm" in ops, kind
        assert any("rule recurrent-speed" in w for w in result.report.warnings), kind
        feeds = {n: rng.normal(size=x.shape).astype(np.float32)
                 for n, x in result.graph.inputs.items()}
        items.append((result.graph, feeds))
        wants.append(run_ort(onnx.load(path), feeds))
    runs = run_graphs(items, setup=browser)
    for (kind, want), run in zip(zip(MODELS, wants, strict=True), runs, strict=True):
        assert run.outputs is not None, f"{kind}: {run.error}"
        assert run.page_outputs is not None, f"{kind}: {run.page_error}"
        for got in (run.outputs, run.page_outputs):
            assert got.keys() == want.keys(), kind
            for name, value in want.items():
                np.testing.assert_allclose(got[name], value, rtol=1e-4, atol=1e-5,
                                           err_msg=f"{kind}: {name}")
