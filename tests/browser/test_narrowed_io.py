"""A graph whose int64 input and output a target narrowed to int32 (an embedding gather and
`ids + 1`, converted for a limits file without 64-bit integers) in the real browser: the
generated module takes the int64 ids through `narrowInput` and gives the int64 output back
through `widenOutput`, the generated page does the same from typed-in values; both match
onnxruntime on the original model exactly, and a value out of int32 range is refused by the
module in one line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter import convert
from converter.validate import validate
from converter.validate.browser import run_graph
from tests.converter.io.serialize.test_source_types import IDS, _model, _onnxruntime
from tests.converter.passes.targets.test_rules_narrow import limits_file

pytestmark = pytest.mark.browser


def test_narrowed_int64_io_in_the_browser(browser: Any, tmp_path: Path) -> None:
    model = _model(tmp_path)
    result = convert(str(model), target=str(limits_file(tmp_path)))
    assert result.graph.narrowed_inputs == {"ids": "int64"}
    assert result.graph.narrowed_outputs == {"next": "int64"}
    want = _onnxruntime(model, IDS)
    run = run_graph(result.graph, {"ids": IDS})
    assert not run.error and not run.page_error, (run.error, run.page_error)
    assert run.outputs is not None and run.page_outputs is not None
    assert run.outputs["next"].dtype == np.int64  # widenOutput: BigInt64Array
    np.testing.assert_array_equal(run.outputs["next"], want["next"])
    np.testing.assert_array_equal(run.outputs["emb"], want["emb"])
    np.testing.assert_array_equal(run.page_outputs["next"], want["next"])
    np.testing.assert_array_equal(run.page_outputs["emb"], want["emb"])
    big = run_graph(result.graph, {"ids": np.full((2, 3), 2**40, dtype=np.int64)}, page=False)
    assert "value 1099511627776 does not fit int32" in big.error, big.error


def test_validate_browser_for_a_limits_file_without_int64(browser: Any, tmp_path: Path
                                                          ) -> None:
    model = _model(tmp_path)
    report = validate(str(model), target=str(limits_file(tmp_path)), backend="onnxruntime",
                      browser=True)
    assert report.passed, report.to_text()
    assert report.browser is not None and report.browser.status == "pass", report.to_text()
    assert "rule narrow-int64" in report.to_text()
