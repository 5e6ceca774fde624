"""Every WebNN WPT conformance case, replayed through MLGraphBuilder and the torch backend on
the CPU, with the cases' own expected values and tolerances.

Only the cases marked `lossy_nonfinite` (their NaN/Infinity inputs were lost upstream) are
skipped, as for the reference backend.
"""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import converter.runtime.torch  # noqa: E402, F401  (registers the "torch" backend)
from tests.wpt import WptCase, check_case, load_cases  # noqa: E402

CASES = load_cases()

# WPT cases that cannot pass on the torch backend, with the reason. Keep empty when possible.
XFAIL: dict[str, str] = {}


@pytest.mark.parametrize("wpt", CASES, ids=[c.id for c in CASES])
def test_wpt_case(wpt: WptCase) -> None:
    if wpt.case.get("lossy_nonfinite"):
        pytest.skip("NaN/Infinity inputs were lost upstream (lossy_nonfinite)")
    if wpt.id in XFAIL:
        pytest.xfail(XFAIL[wpt.id])
    check_case(wpt.case, backend="torch")
