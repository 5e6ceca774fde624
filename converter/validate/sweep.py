"""The sweep: every WebNN conformance case run in a real browser, to find where its WebNN
deviates from the spec (`webnn-convert targets --sweep FOLDER`).

Cases (`converter.validate.conformance`): the web-platform-tests WebNN conformance cases
shipped with the package (`converter/validate/wpt/*.json`; the 7 clamp cases whose non-finite
inputs were lost upstream are left out) plus a few cases whose expected values come from
float64 numpy formulas (`extra_cases`). Each case becomes one graph (its constant inputs
constants); all graphs run in one browser session (`converter.validate.browser.run_graphs`,
the generated module only).

Per case the sweep records the operator(s), data types, an option summary and the status:

- `pass`: every output within the case's tolerance (ULP or ATOL, as the case gives);
- `wrong`: an output outside it (`max_error` in the case's metric, `metric`, `tolerance`);
- `rejected`: the browser refused to build the graph although it lies inside the browser's
  `opSupportLimits()` (`message`);
- `unsupported`: it failed and lies outside `opSupportLimits()` (`problems`);
- `error`: it failed while running (`message`); `not-run`: it could not be exported.

With a target (`converter.passes.targets`), each graph its rules rewrite also runs rewritten,
and the case gets `lowered`: the rules applied, the status in the browser and the status on the
reference runtime (a rule must keep the graph right everywhere). `check_sweep` compares a sweep
with the target's table of known failures: a case failing without a rule that fixes it or a
known-failure entry is a new deviation.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.validate.conformance import (
    ConformanceCase,
    case_graph,
    compare_case,
    extra_cases,
    wpt_cases,
)

FORMAT = "webnn-converter-sweep"
VERSION = 1
CASE_TIMEOUT_S = 60.0
FAILING = ("wrong", "rejected", "unsupported", "error", "not-run")
CONFORMANCE = "conformance"
"""The `sweep` kind of the conformance cases (a document or known-failure entry without one
is of this kind)."""


# -- cases -------------------------------------------------------------------------------------


def all_cases() -> list[ConformanceCase]:
    """The WPT cases and the extra cases."""
    return [*wpt_cases(), *extra_cases()]


# -- summaries ---------------------------------------------------------------------------------


def _short(value: Any) -> str:
    if isinstance(value, list) and len(value) > 8:
        return f"[{len(value)} items]"
    if isinstance(value, str) and len(value) > 24:
        return value[:21] + "..."
    return json.dumps(value, separators=(",", ":"))


def summary(case: Mapping[str, Any]) -> tuple[str, str, str]:
    """(operators joined by '+', data types 'in -> out', option summary) of a case."""
    desc = case["graph"]
    ops = "+".join(dict.fromkeys(str(o["name"]) for o in desc["operators"]))
    ins = sorted({str(s["descriptor"]["dataType"]) for s in desc["inputs"].values()})
    outs = sorted({str(s["descriptor"]["dataType"])
                   for s in desc["expectedOutputs"].values()})
    parts = []
    for o in desc["operators"]:
        for key, value in [kv for arg in o["arguments"] for kv in arg.items()]:  # several keys
            if key == "options":
                for k, v in value.items():
                    if isinstance(v, str) and v in desc["inputs"]:
                        const = desc["inputs"][v].get("constant")
                        parts.append(f"{k}={'constant' if const else 'input'}")
                    else:
                        parts.append(f"{k}={_short(v)}")
            elif not (isinstance(value, str) and (value in desc["inputs"] or any(
                    value == p["outputs"] for p in desc["operators"]))) and not (
                    isinstance(value, list) and value and all(isinstance(v, str)
                                                              for v in value)):
                parts.append(f"{key}={_short(value)}")
            elif isinstance(value, str) and value in desc["inputs"] and \
                    key not in ("input", "a", "b"):
                const = desc["inputs"][value].get("constant")
                parts.append(f"{key}={'constant' if const else 'input'}")
    return ops, f"{','.join(ins)} -> {','.join(outs)}", "; ".join(dict.fromkeys(parts))


# -- the sweep ---------------------------------------------------------------------------------


def _status(case: Mapping[str, Any], run: Any) -> dict[str, Any]:
    """A browser run of a case as the sweep records it."""
    if run.outputs is None:
        stage = run.error.split(":", 1)[0] if run.error else ""
        if run.error.startswith("export:"):
            return {"status": "not-run", "message": run.error}
        if run.problems:
            return {"status": "unsupported", "problems": list(run.problems),
                    "message": run.error}
        return {"status": "rejected" if stage == "build" else "error", "message": run.error}
    ok, worst, metric = compare_case(case, run.outputs)
    tol = case.get("tolerance") or {}
    out: dict[str, Any] = {"status": "pass" if ok else "wrong",
                           "max_error": worst if math.isfinite(worst) else "inf",
                           "metric": metric, "tolerance": tol.get("value", 0)}
    if run.problems:  # ran although outside opSupportLimits()
        out["problems"] = list(run.problems)
    return out


def _reference_status(case: Mapping[str, Any], graph: MLGraph,
                      feeds: Mapping[str, np.ndarray]) -> str:
    """The rewritten graph on the reference runtime, fed and read as a caller would: inputs
    and outputs a target re-typed (`MLGraph.narrowed_inputs` / `narrowed_outputs`: int64
    carried as int32, uint8 as int32) converted at the boundary (`converter.core.feeds`)."""
    from converter.core.feeds import loaded_feeds, loaded_outputs

    try:
        outputs = loaded_outputs(graph, graph.context.compute(graph, loaded_feeds(graph,
                                                                                   feeds)))
    except Exception as exc:  # noqa: BLE001 - recorded
        return f"error: {type(exc).__name__}: {exc}"
    ok, worst, _ = compare_case(case, outputs)
    return "pass" if ok else f"wrong (max error {worst:g})"


def sweep(cases: Sequence[ConformanceCase] | None = None, *, target: Any = None,
          setup: Any = None, progress: Callable[[str], None] | None = None,
          timeout: float = CASE_TIMEOUT_S, kind: str = CONFORMANCE) -> dict[str, Any]:
    """Run `cases` (default `all_cases()`) in the browser, each as converted and, where the
    target's rules rewrite it, rewritten, all in one browser session; the sweep document (see
    the module docstring). `kind` names the set of cases (`sweep` in the document; the
    quantized patterns of `converter.validate.sweep_quantized` are "quantized")."""
    from converter.passes.targets import load_target
    from converter.passes.targets.passes import lower
    from converter.validate.browser import ensure_browser, run_graphs

    say = progress or (lambda _m: None)
    cases = list(all_cases() if cases is None else cases)
    setup = setup or ensure_browser()
    tgt = load_target(target) if target is not None else None
    ctx = ML().create_context()
    records: list[dict[str, Any]] = []
    runnable: list[tuple[int, MLGraph, dict[str, np.ndarray]]] = []
    lowered: list[tuple[int, MLGraph, dict[str, np.ndarray], dict[str, int]]] = []
    for i, c in enumerate(cases):
        ops, types, options = summary(c.case)
        rec: dict[str, Any] = {"id": c.id, "name": c.name, "op": ops, "dtypes": types,
                               "options": options}
        records.append(rec)
        try:
            graph, feeds = case_graph(c.case, MLGraphBuilder(ctx))
        except Exception as exc:  # noqa: BLE001 - a case our builder refuses
            rec.update(status="not-run", message=f"build here: {type(exc).__name__}: {exc}")
            continue
        runnable.append((i, graph, feeds))
        if tgt is not None:
            try:
                done = lower(graph, tgt)
            except Exception as exc:  # noqa: BLE001 - a rule that cannot rewrite it
                rec["lowered"] = {"rules": [], "status": "not-run",
                                  "message": f"rewrite: {type(exc).__name__}: {exc}"}
                continue
            if done.changed:
                lowered.append((i, done.graph, feeds, done.applied))
    say(f"running {len(runnable)} graphs and {len(lowered)} rewritten ones in "
        f"{setup.browser}")
    runs = run_graphs([(g, f) for _, g, f in runnable] + [(g, f) for _, g, f, _ in lowered],
                      page=False, timeout=timeout, setup=setup)
    for (i, _, _), run in zip(runnable, runs[:len(runnable)], strict=True):
        records[i].update(_status(cases[i].case, run))
    for (i, graph, feeds, applied), run in zip(lowered, runs[len(runnable):], strict=True):
        got = _status(cases[i].case, run)
        records[i]["lowered"] = {"rules": sorted(applied), **got,
                                 "reference": _reference_status(cases[i].case, graph, feeds)}
    return {"format": FORMAT, "version": VERSION, "sweep": kind, "browser": setup.browser,
            "flags": list(setup.flags), "target": tgt.name if tgt else None,
            "rules": list(tgt.rules) if tgt else [],
            "counts": counts(records), "cases": records}


def effective(record: Mapping[str, Any]) -> str:
    """The status of a case once the target's rules apply (the lowered run's when there is
    one)."""
    low = record.get("lowered")
    return str(low["status"]) if isinstance(low, Mapping) else str(record.get("status"))


def counts(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Cases per status, without and with the target's rules."""
    records = list(records)
    raw = Counter(str(r.get("status")) for r in records)
    final = Counter(effective(r) for r in records)
    return {"cases": len(records), "raw": dict(sorted(raw.items())),
            "with_rules": dict(sorted(final.items())),
            "rewritten": sum(1 for r in records if isinstance(r.get("lowered"), Mapping))}


# -- known failures ------------------------------------------------------------------------


def _matches(entry: Mapping[str, Any], record: Mapping[str, Any]) -> bool:
    op = entry.get("op")
    if op is not None and op != record.get("op"):
        return False
    for key in ("name", "dtypes", "options", "id"):
        pattern = entry.get(key)
        if pattern is not None and not re.search(str(pattern), str(record.get(key, ""))):
            return False
    status = entry.get("status")
    return status is None or status == effective(record)


def check_sweep(doc: Mapping[str, Any], known: Sequence[Mapping[str, Any]]
                ) -> tuple[list[str], list[str]]:
    """(new deviations, stale known-failure entries) of a sweep document.

    A new deviation is a case whose status with the rules applied is not `pass` and that no
    `known` entry matches (entries match on `op` exactly and on `name`, `dtypes`, `options`
    and `id` as regular expressions, and on `status` when given), or a case a rule rewrote
    whose rewritten graph computes wrong values on the reference runtime (one it refuses, e.g.
    a feed out of the range a narrowed input takes, is explained by an entry like any other
    failure). A stale entry matches no failing
    case. Only the entries of the document's kind count (`sweep`, default "conformance")."""
    kind = doc.get("sweep", CONFORMANCE)
    known = [e for e in known if e.get("sweep", CONFORMANCE) == kind]
    new, used = [], [0] * len(known)
    for rec in doc.get("cases", []):
        low = rec.get("lowered")
        if isinstance(low, Mapping) and str(low.get("reference", "pass")).startswith("wrong"):
            new.append(f"{rec['id']} ({rec['name']}): rules {low.get('rules')} break it on "
                       f"the reference runtime: {low.get('reference')}")
        status = effective(rec)
        if status == "pass":
            continue
        hits = [i for i, e in enumerate(known) if _matches(e, rec)]
        for i in hits:
            used[i] += 1
        if not hits:
            detail = rec.get("message") or "; ".join(rec.get("problems") or []) or (
                f"max error {rec.get('max_error')} {rec.get('metric')} > "
                f"{rec.get('tolerance')}")
            if isinstance(low, Mapping):
                detail = low.get("message") or detail
            new.append(f"{rec['id']} ({rec['name']}; {rec['op']} {rec['dtypes']}"
                       f"{'; ' + rec['options'] if rec.get('options') else ''}): {status}: "
                       f"{detail}")
    stale = [f"{json.dumps(dict(e), sort_keys=True)}: matches no failing case"
             for e, n in zip(known, used, strict=True) if n == 0]
    return new, stale


def write_sweep(doc: Mapping[str, Any], limits: Mapping[str, Any] | None, folder: Path, *,
                name: str = "sweep.json") -> list[Path]:
    """Write `name` (default `sweep.json`; one case per line) and, when given, `limits.json`
    into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    head = {k: v for k, v in doc.items() if k != "cases"}
    lines = ["{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}"
                             for k, v in head.items()) + ',\n "cases": [']
    cases = [json.dumps(c, sort_keys=True) for c in doc.get("cases", [])]
    text = lines[0] + "\n" + ",\n".join(f"  {c}" for c in cases) + "\n]}\n"
    written = []
    files = [(name, text)]
    if limits is not None:
        files.append(("limits.json", json.dumps(limits, indent=2, sort_keys=True) + "\n"))
    for file, content in files:
        path = folder / file
        tmp = path.with_name(f".{file}.tmp")
        tmp.write_text(content, encoding="utf-8")
        tmp.replace(path)
        written.append(path)
    return written


__all__ = ["CONFORMANCE", "FAILING", "all_cases", "check_sweep", "counts", "effective", "summary", "sweep",
           "write_sweep"]
