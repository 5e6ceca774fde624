"""Every WebNN WPT conformance case, replayed through MLGraphBuilder and the torch backend on
the CPU, with the cases' own expected values and tolerances.

Only the cases marked `lossy_nonfinite` (their NaN/Infinity inputs were lost upstream) are
skipped, as for the reference backend. The float16 cases run a second time with float16
computed natively (the CUDA policy) on the CPU, so that path is checked without a GPU.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("torch")

import converter.runtimes.torch as torch_backend  # noqa: E402
from tests.wpt import WptCase, check_case, expected_failure, load_cases  # noqa: E402

CASES = load_cases()
FLOAT16_CASES = [c for c in CASES if "float16" in repr(c.case)]

# WPT cases that cannot pass on the torch backend, with the reason. Keep empty when possible.
XFAIL: dict[str, str] = {}


@pytest.mark.parametrize("wpt", CASES, ids=[c.id for c in CASES])
def test_wpt_case(wpt: WptCase) -> None:
    if wpt.case.get("lossy_nonfinite"):
        pytest.skip("NaN/Infinity inputs were lost upstream (lossy_nonfinite)")
    if reason := expected_failure(wpt, "torch"):
        pytest.xfail(reason)
    if wpt.id in XFAIL:
        pytest.xfail(XFAIL[wpt.id])
    check_case(wpt.case, backend="torch")


@pytest.mark.parametrize("wpt", FLOAT16_CASES, ids=[c.id for c in FLOAT16_CASES])
def test_wpt_case_native_float16(wpt: WptCase, monkeypatch: pytest.MonkeyPatch) -> None:
    if wpt.case.get("lossy_nonfinite"):
        pytest.skip("NaN/Infinity inputs were lost upstream (lossy_nonfinite)")
    if reason := expected_failure(wpt, "torch"):
        pytest.xfail(reason)
    real_ctx = torch_backend.Ctx

    def native_ctx(device: Any, native_half: bool) -> Any:
        return real_ctx(device, native_half=True)

    monkeypatch.setattr(torch_backend, "Ctx", native_ctx)
    check_case(wpt.case, backend="torch")
