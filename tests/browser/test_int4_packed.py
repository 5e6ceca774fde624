"""int4 stays int4 in the real browser: a MatMulNBits model (4 bits, block 32, packed zero
points; built with onnx.helper) converted for chromium-tflite (int4 constants) and for a
target whose limits have no 4-bit type (`dequantize-nibbles`: the packed bytes as a uint8
constant, nibbles split in the graph), float32 and `--precision float16`, all run in one
headless Chromium session: outputs match onnxruntime on the original model, the two
conversions agree, and the exported weights hold the 4-bit bytes as they were."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest

from converter import convert
from converter.io.export.exporter import export
from converter.passes.targets import load_target
from converter.validate.browser import run_graphs
from tests.converter.passes.targets.test_rules_int4 import (
    BLOCK,
    K,
    N,
    limits_file,
    matmul_nbits_model,
    weights_bytes,
)

pytestmark = pytest.mark.browser


def test_matmul_nbits_in_the_browser(browser: Any, tmp_path: Path) -> None:
    model, four_bit = matmul_nbits_model(tmp_path / "mmnb.onnx", zero_points=True)
    a = np.random.default_rng(4).standard_normal((2, 3, K)).astype(np.float32)
    (want,) = ort.InferenceSession(str(model)).run(None, {"A": a})
    no_4bit = load_target(limits_file(tmp_path))
    results = {(target.name if not isinstance(target, str) else target, precision):
               convert(str(model), target=target, precision=precision)
               for target in ("chromium-tflite", no_4bit)
               for precision in ("float32", "float16")}
    for (target, _), result in results.items():
        rule = "dequantize-uint4" if target == "chromium-tflite" else "dequantize-nibbles"
        assert any(f"rule {rule}" in w for w in result.report.warnings), target
    runs = run_graphs([(r.graph, {"A": a}) for r in results.values()], setup=browser)
    got = {}
    for key, run in zip(results, runs, strict=True):
        assert not run.error and not run.page_error, (key, run.error, run.page_error)
        assert run.outputs is not None and run.page_outputs is not None
        np.testing.assert_array_equal(run.page_outputs["Y"], run.outputs["Y"])
        tol = 1e-4 if key[1] == "float32" else 2e-2
        np.testing.assert_allclose(run.outputs["Y"], want, rtol=tol, atol=tol, err_msg=str(key))
        got[key] = run.outputs["Y"]
    # the split nibbles give the int4 graph's weights: the same products in the same matmul
    np.testing.assert_array_equal(got[("no_4bit", "float32")],
                                  got[("chromium-tflite", "float32")])
    for (target, precision), result in results.items():
        folder = tmp_path / f"{target}_{precision}"
        export(result, folder, format="js")
        sizes = weights_bytes(folder)
        assert sizes["int4" if target == "chromium-tflite" else "uint8"] == four_bit
        float_bytes = N * K // BLOCK * (4 if precision == "float32" else 2)
        assert sum(sizes.values()) <= four_bit + float_bytes + 64, (target, precision, sizes)
