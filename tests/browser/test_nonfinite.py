"""Non-finite option values in the real browser: a pad value of NaN or +-Infinity reaches
Chromium's WebNN through the JavaScript export (the `.webnn` text, which has no NaN, is left
out) and fills the padding as numpy's np.pad does, in the module and on the generated page.
Every graph runs in one browser session."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder

pytestmark = pytest.mark.browser

VALUES = [float("nan"), float("-inf"), float("inf")]
X = np.arange(1, 7, dtype=np.float32).reshape(2, 3)


@pytest.fixture(scope="module")
def runs(browser: Any) -> list[Any]:
    from converter.validate.browser import run_graphs

    items = []
    for value in VALUES:
        b = MLGraphBuilder(ML().create_context())
        graph = b.build({"y": b.pad(b.input("x", [2, 3], "float32"), [1, 0], [0, 2],
                                    value=value)})
        items.append((graph, {"x": X}))
    return run_graphs(items, setup=browser)


@pytest.mark.parametrize("index", range(len(VALUES)), ids=[str(v) for v in VALUES])
def test_pad_value_non_finite_in_the_browser(runs: list[Any], index: int) -> None:
    run = runs[index]
    want = np.pad(X, ((1, 0), (0, 2)), constant_values=VALUES[index])
    assert run.outputs is not None, run.error
    np.testing.assert_array_equal(run.outputs["y"].reshape(want.shape), want)
    assert run.page_outputs is not None, run.page_error
    np.testing.assert_array_equal(run.page_outputs["y"].reshape(want.shape), want)
