"""A limits file written by `webnn-convert targets --from-browser` in the real browser (equal
to chromium-tflite's limits.json) gets that browser's deviation rules: an ONNX GatherElements
whose indices are computed at run time (RoBERTa's position ids), which Chromium refuses to
build ("gatherElements only supports constant indices"), converted for that file, builds and
matches onnxruntime in the browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from click.testing import CliRunner
from onnx import TensorProto, helper

from cli.main import cli
from converter import convert
from converter.validate.browser import run_graph

pytestmark = pytest.mark.browser


def _model(path: Path) -> Path:
    """y = GatherElements(data, idx + 1, axis=1): idx int32 [2, 3] a graph input."""
    graph = helper.make_graph(
        [helper.make_node("Add", ["idx", "one"], ["pos"]),
         helper.make_node("GatherElements", ["data", "pos"], ["y"], axis=1)],
        "ge", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [2, 5]),
               helper.make_tensor_value_info("idx", TensorProto.INT32, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor("one", TensorProto.INT32, [], [1])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    return path


def test_from_browser_limits_file_lowers_the_browser_deviations(browser: Any, tmp_path: Path
                                                                ) -> None:
    limits = tmp_path / "chromium_limits.json"
    res = CliRunner().invoke(cli, ["targets", "--from-browser", str(limits)])
    assert res.exit_code == 0, res.output
    model = _model(tmp_path / "ge.onnx")
    data = np.arange(10, dtype=np.float32).reshape(2, 5) / 7
    idx = np.array([[0, 3, 1], [2, -2, 0]], dtype=np.int32)  # -2 + 1: counted from the end
    (want,) = ort.InferenceSession(str(model)).run(None, {"data": data, "idx": idx})
    plain = run_graph(convert(str(model), target="spec").graph, {"data": data, "idx": idx},
                      page=False)
    assert "gatherElements only supports constant indices" in plain.error, plain.error
    result = convert(str(model), target=str(limits))
    assert any("rule gatherelements-indices" in w for w in result.report.warnings)
    run = run_graph(result.graph, {"data": data, "idx": idx})
    assert not run.error and not run.page_error, (run.error, run.page_error)
    assert run.outputs is not None and run.page_outputs is not None
    np.testing.assert_array_equal(run.outputs["y"], want)
    np.testing.assert_array_equal(run.page_outputs["y"], want)
