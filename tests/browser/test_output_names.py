"""Graph input and output names holding Unicode line separators (U+2028, U+2029, U+0085)
round-trip through the real-browser harness (issue 27.9): the harness answers in one ASCII
line and the caller splits its output at '\\n' only, so such a name no longer breaks the
answer ("the browser harness gave no JSON"). Checked through the module page and the
generated HTML page against onnxruntime, and through `webnn-convert validate --browser`."""

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

IN = "in\u2028put\u0085x"
OUT = "out\u2028put\u0085y\u2029"


def _model(path: Path) -> Path:
    """OUT = Relu(IN), float32 [2, 3]."""
    graph = helper.make_graph(
        [helper.make_node("Relu", [IN], [OUT])], "separators",
        [helper.make_tensor_value_info(IN, TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info(OUT, TensorProto.FLOAT, [2, 3])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    return path


def test_line_separators_in_names_round_trip(browser: Any, tmp_path: Path) -> None:
    model = _model(tmp_path / "separators.onnx")
    x = np.array([[1.5, -2, 3], [-4, 5, -0.25]], dtype=np.float32)
    (want,) = ort.InferenceSession(str(model)).run(None, {IN: x})
    graph = convert(str(model)).graph
    assert list(graph.inputs) == [IN] and list(graph.outputs) == [OUT]
    run = run_graph(graph, {IN: x})
    assert not run.error and not run.page_error, (run.error, run.page_error)
    assert run.outputs is not None and run.page_outputs is not None
    assert list(run.outputs) == [OUT] and list(run.page_outputs) == [OUT]
    np.testing.assert_array_equal(run.outputs[OUT], want)
    np.testing.assert_array_equal(run.page_outputs[OUT], want)


def test_validate_browser_with_line_separators_in_names(browser: Any, tmp_path: Path
                                                        ) -> None:
    model = _model(tmp_path / "separators.onnx")
    res = CliRunner().invoke(cli, ["validate", "--browser", str(model)])
    assert res.exit_code == 0, res.output
    assert "no JSON" not in res.output and "verdict: PASS" in res.output
