"""Replay WebNN web-platform-tests conformance cases (the package data folder
converter/validate/wpt, `converter.validate.conformance.WPT`) through the builder and a
backend, comparing with the cases' own expected values and tolerances."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np

from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.core.webnn.dtypes import numpy_dtype
from converter.validate.conformance import DISPUTED, case_array, case_graph, wpt_files


@dataclass(frozen=True)
class WptCase:
    file: str
    index: int
    case: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.file}:{self.index}:{self.case['name']}"


def load_cases() -> list[WptCase]:
    return [WptCase(stem, i, case) for stem, data in wpt_files()
            for i, case in enumerate(data["cases"])]


# Cases written against an older spec text, with the spec rule they break.
SPEC_OBSOLETE: dict[str, str] = {
    "quantize_linear_subgraph:0:quantizeLinear + relu":
        "scale/zeroPoint of rank 2 for an input of rank 4: the spec now requires the input's "
        "rank (block-wise broadcast); WPT dropped this file since (absent at gecko 22caf165)",
}


def expected_failure(wpt: WptCase, backend: str) -> str | None:
    """Why a case cannot pass on `backend` (`SPEC_OBSOLETE`, the expected values
    `converter.validate.conformance.DISPUTED`, `unsupported_io`); None if it should."""
    return (SPEC_OBSOLETE.get(wpt.id) or DISPUTED.get(f"{wpt.file}:{wpt.index}")
            or unsupported_io(wpt.case, backend))


@functools.cache
def _limits(backend: str) -> dict[str, Any]:
    return ML().create_context(backend=backend).op_support_limits()


def unsupported_io(case: dict[str, Any], backend: str = "reference") -> str | None:
    """Why the backend's context cannot take a case's graph inputs, constants or outputs (their
    data types against its `op_support_limits()` `input` / `constant` / `output`); None when
    it can. WPT's harness casts an output of an unsupported type to a wider supported one
    (`findCompatibleType`), which needs `cast` to take that type: our contexts' `cast` does not
    take int4/uint4, so quantizeLinear's int4/uint4 outputs are replayed only where the
    context lists them as outputs (the reference backend's `output_data_types`)."""
    limits = _limits(backend)
    graph = case["graph"]
    roles = [("constant" if spec.get("constant") else "input", name, spec)
             for name, spec in graph["inputs"].items()]
    roles += [("output", name, spec) for name, spec in graph["expectedOutputs"].items()]
    for role, name, spec in roles:
        data_type = spec["descriptor"]["dataType"]
        castable = role == "output" and data_type in limits["cast"]["input"]["dataTypes"]
        if data_type not in limits[role]["dataTypes"] and not castable:
            return (f"{role} {name!r} is {data_type}, not in the {backend} context's "
                    f"op_support_limits()[{role!r}]" + (", nor a cast input" if role == "output"
                                                        else ""))
    return None


def build_graph(case: dict[str, Any], ctx: Any, nonfinite: bool = True
                ) -> tuple[MLGraph, dict[str, np.ndarray]]:
    """The graph of a WPT case built with `ctx` and the feeds of its other inputs
    (`converter.validate.conformance.case_graph`, which the browser sweep builds with too)."""
    return case_graph(case, MLGraphBuilder(ctx), nonfinite=nonfinite)


def build_and_run(case: dict[str, Any], backend: str = "reference") -> dict[str, np.ndarray]:
    ctx = ML().create_context(backend=backend)
    graph, feeds = build_graph(case, ctx)
    return ctx.compute(graph, feeds)


def _ordered_bits(x: np.ndarray) -> np.ndarray:
    bits = x.view({2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]).astype(np.int64)
    sign_mask = {2: 0x7FFF, 4: 0x7FFFFFFF, 8: 0x7FFFFFFFFFFFFFFF}[x.dtype.itemsize]
    return np.where(bits < 0, -(bits & sign_mask), bits)


def mismatches(actual: np.ndarray, expected: np.ndarray, tolerance: dict[str, Any] | None
               ) -> list[str]:
    """Element-wise comparison with a WPT tolerance; returns readable failures (at most 5)."""
    metric = (tolerance or {}).get("metricType", "ULP")
    budget = (tolerance or {}).get("value", 0) or 0
    a = actual.ravel()
    e = expected.ravel()
    if a.dtype.kind == "f":
        nan_a, nan_e = np.isnan(a), np.isnan(e)
        if metric == "ATOL":
            with np.errstate(invalid="ignore"):
                dist = np.abs(a.astype(np.float64) - e.astype(np.float64))
            dist = np.where(a == e, 0, dist)
        else:
            dist = np.abs(_ordered_bits(a) - _ordered_bits(e)).astype(np.float64)
        bad = np.where(nan_a | nan_e, nan_a != nan_e, dist > budget)
    else:
        dist = np.abs(a.astype(object) - e.astype(object)).astype(np.float64)
        bad = dist > budget
    out = []
    for i in np.flatnonzero(bad)[:5]:
        out.append(f"[{i}] got {a[i]!r}, expected {e[i]!r} (distance {dist[i]:g} > {budget})")
    return out


def check_case(case: dict[str, Any], backend: str = "reference") -> None:
    check_outputs(case, build_and_run(case, backend))


def check_outputs(case: dict[str, Any], outputs: dict[str, np.ndarray]) -> None:
    """Assert that `outputs` (a run of `case`'s graph) are the case's expected outputs."""
    for name, spec in case["graph"]["expectedOutputs"].items():
        desc = spec["descriptor"]
        got = outputs[name]
        assert got.dtype == numpy_dtype(desc["dataType"]), f"{name}: dtype {got.dtype}"
        assert list(got.shape) == list(desc["shape"]), f"{name}: shape {list(got.shape)}"
        expected = case_array(spec["data"], desc)
        bad = mismatches(got[tuple()] if got.ndim == 0 else got, expected, case.get("tolerance"))
        assert not bad, f"{name}: " + "; ".join(bad)
