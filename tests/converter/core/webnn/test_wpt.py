"""Every WebNN WPT conformance case, replayed through MLGraphBuilder and the reference backend.

Only the cases marked `lossy_nonfinite` (their NaN/Infinity inputs were lost upstream) are
skipped, and the cases of `SPEC_OBSOLETE` (tests/wpt.py: written against an older spec text)
and `converter.validate.conformance.DISPUTED` (expected values that differ from the spec's
definition) are xfail. The reference context lists int4/uint4 graph outputs, so quantizeLinear's 4-bit
cases run here (compared as their int8/uint8 storage values, as WPT unpacks them).
"""

from __future__ import annotations

import pytest

from tests.wpt import WptCase, check_case, expected_failure, load_cases

CASES = load_cases()


@pytest.mark.parametrize("wpt", CASES, ids=[c.id for c in CASES])
def test_wpt_case(wpt: WptCase) -> None:
    if wpt.case.get("lossy_nonfinite"):
        pytest.skip("NaN/Infinity inputs were lost upstream (lossy_nonfinite)")
    if reason := expected_failure(wpt, "reference"):
        pytest.xfail(reason)
    check_case(wpt.case)
