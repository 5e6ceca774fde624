"""Converting and validating one model of a manifest (`run_entry`).

`run_entry` handles one model in the current process and never raises: the outcome is a
`ZooResult` with status "pass", "fail" (an output outside tolerance, against the original
framework or the entry's stored reference output), "error" (conversion or run failed;
`reason_code` from the ConversionError when there is one, "model_changed" for a sha256
mismatch) or "skipped" (the model file is not available: `reason_code` "not_available";
or the caller chose not to run it, e.g. a slow entry: "not_run"; `message` says why in both
cases; a pending entry (`read_manifest(..., generate=False)`) is generated first, its
generator's failure is an "error" with reason_code "generator_failed", a `fetch = true`
URL that cannot be read "fetch_failed").
The model, its inputs and stored outputs come from `converter.zoo.sources` (random weights,
input recipes).

`converter.zoo.engines.run_zoo` runs every entry of a manifest this way, on an engine.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from typing import Any

from converter.zoo.manifest import ZooEntry, materialize
from converter.zoo.records import STATUSES, Budget, ZooReport, ZooResult, profile_verdict
from converter.zoo.sources import (
    ModelChanged,
    check_digest,
    convert_options,
    entry_inputs,
    load_model,
    stored_outputs,
)

__all__ = ["STATUSES", "Budget", "ZooReport", "ZooResult", "profile_verdict", "run_entry"]


def run_entry(entry: ZooEntry, backend: str = "reference", device: str = "cpu",
              threads: int = 0, debug: bool = False, precision: str = "float32",
              target: str | None = None, profiles: Sequence[str] = ()) -> ZooResult:
    """Convert and validate one entry; never raises (see the module docstring). With
    `precision="float16"` (`convert(precision=...)`) the entry's tolerances, sized for
    float32, are widened to at least the float16 defaults (`validate.default_tolerance`).
    `target` converts and validates for that target (`validate(target=...)`: what the graph
    uses outside its limits is `ZooResult.unsupported` and fails the row); each of
    `profiles` runs the entry once more with that target, its verdict in
    `ZooResult.profiles`."""
    row = _run_entry(entry, backend, device, threads, debug, precision, target)
    if not profiles or row.status == "skipped":
        return row
    import dataclasses

    verdicts = {p: profile_verdict(_run_entry(entry, backend, device, threads, debug,
                                              precision, p)) for p in profiles}
    return dataclasses.replace(row, profiles=verdicts)


def _run_entry(entry: ZooEntry, backend: str, device: str, threads: int, debug: bool,
               precision: str, target: str | None) -> ZooResult:
    from converter.conversion.pipeline import convert
    from converter.core.errors import ConversionError
    from converter.frontends.detect import detect_format
    from converter.validate import validate

    start = time.perf_counter()
    if entry.pending:
        try:
            entry = materialize(entry)
        except ConversionError as exc:
            return ZooResult(entry.name, "error", path=None, source=entry.source,
                             licence=entry.licence, message=str(exc),
                             reason_code="fetch_failed" if "url" in entry.pending
                             and "source" not in entry.pending else "generator_failed",
                             rtol=entry.rtol, atol=entry.atol,
                             timings={"total": time.perf_counter() - start})
    base: dict[str, Any] = {"name": entry.name, "path": entry.path, "source": entry.source,
                            "licence": entry.licence, "rtol": entry.rtol, "atol": entry.atol}
    if entry.path is None:
        return ZooResult(status="skipped", message=entry.missing, reason_code="not_available",
                         **base)
    timings: dict[str, float] = {}
    fmt = ""
    try:
        check_digest(entry)
        model = load_model(entry)
        fmt = detect_format(model)
        result = convert(model, fmt=fmt, precision=precision, target=target,
                         **convert_options(entry))
        timings["convert"] = time.perf_counter() - start
        rtol, atol = entry.rtol, entry.atol
        if precision != "float32":
            from converter.validate.core import default_tolerance

            wide_rtol, wide_atol, _ = default_tolerance(result.graph)
            rtol, atol = max(rtol, wide_rtol), max(atol, wide_atol)
            base.update(rtol=rtol, atol=atol)
        overrides = entry_inputs(entry, result)
        report = validate(model, inputs=overrides or None, seed=entry.seed, backend=backend,
                          device=device, rtol=rtol, atol=atol, threads=threads,
                          result=result, expected=stored_outputs(entry, result) or None,
                          precision=precision, target=target)
    except ModelChanged as exc:
        timings["total"] = time.perf_counter() - start
        return ZooResult(status="error", format=fmt, message=str(exc),
                         reason_code="model_changed", timings=timings, **base)
    except ConversionError as exc:
        timings["total"] = time.perf_counter() - start
        message = str(exc)
        if debug:
            message += "\n" + traceback.format_exc()
        return ZooResult(status="error", format=fmt, message=message,
                         reason_code=exc.reason_code, timings=timings, **base)
    except Exception as exc:  # noqa: BLE001 - one model's failure must not stop the zoo
        timings["total"] = time.perf_counter() - start
        message = f"{type(exc).__name__}: {exc}"
        if debug:
            message += "\n" + traceback.format_exc()
        return ZooResult(status="error", format=fmt, message=message,
                         reason_code="run_error", timings=timings, **base)
    timings.update({k: v for k, v in report.timings.items() if k != "convert"})
    timings["total"] = time.perf_counter() - start
    failed = [c.name for c in report.outputs if not c.passed]
    message = f"outputs outside tolerance: {', '.join(failed)}" if failed else ""
    overflow = next((n for n in report.notes if n.startswith("float16 overflow first")), None)
    if failed and overflow:  # precision="float16": say why in the row's message
        message += f" ({overflow}: numerically unsuited to float16)"
    from converter.passes.targets.check import summary

    unsupported = tuple(summary(report.target_violations))
    if unsupported:
        message = "; ".join(filter(None, [message, f"{report.target} lacks "
                                          f"{', '.join(unsupported)}"]))
    return ZooResult(
        status="pass" if report.passed else "fail", format=fmt, message=message,
        max_abs=float(report.max_abs), max_rel=float(report.max_rel),
        outputs=tuple(c.to_dict() for c in report.outputs),
        divergence=report.divergence.to_dict() if report.divergence else None,
        timings=timings, conversion=dict(report.conversion),
        operations=len(result.graph.operations), notes=tuple(report.notes),
        unsupported=unsupported, **base)
