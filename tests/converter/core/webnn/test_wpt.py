"""Every WebNN WPT conformance case, replayed through MLGraphBuilder and the reference backend.

Only the cases marked `lossy_nonfinite` (their NaN/Infinity inputs were lost upstream) are
skipped.
"""

from __future__ import annotations

import pytest

from tests.wpt import WptCase, check_case, load_cases

CASES = load_cases()


@pytest.mark.parametrize("wpt", CASES, ids=[c.id for c in CASES])
def test_wpt_case(wpt: WptCase) -> None:
    if wpt.case.get("lossy_nonfinite"):
        pytest.skip("NaN/Infinity inputs were lost upstream (lossy_nonfinite)")
    check_case(wpt.case)
