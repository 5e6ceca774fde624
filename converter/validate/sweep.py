"""The sweep: every WebNN conformance case run in a real browser, to find where its WebNN
deviates from the spec (`webnn-convert targets --sweep FOLDER`).

Cases: the web-platform-tests WebNN conformance cases of the source checkout
(`tests/data/wpt/*.json`; the 7 clamp cases whose non-finite inputs were lost upstream are
left out) plus a few cases written here whose expected values come from float64 numpy
formulas (`extra_cases`: l2Pool2d, which the WPT copy lacks, and pools whose windows reach
padding). Each case becomes one graph (its constant inputs constants); all graphs run in one
browser session (`converter.validate.browser.run_graphs`, the generated module only).

Per case the sweep records the operator(s), data types, an option summary and the status:

- `pass`: every output within the case's tolerance (ULP or ATOL, as the case gives);
- `wrong`: an output outside it (`max_error` in the case's metric, `metric`, `tolerance`);
- `rejected`: the browser refused to build the graph although it lies inside the browser's
  `opSupportLimits()` (`message`);
- `unsupported`: it failed and lies outside `opSupportLimits()` (`problems`);
- `error`: it failed while running (`message`); `not-run`: it could not be exported.

With a target (`converter.passes.targets`), each graph its rules rewrite also runs rewritten, and the
case gets `lowered`: the rules applied, the status in the browser and the status on the
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from converter.core.webnn import ML, MLGraph, MLGraphBuilder, MLOperand

WPT_DIR = Path(__file__).resolve().parents[2] / "tests" / "data" / "wpt"
"""The WebNN conformance cases of the source checkout."""
FORMAT = "webnn-converter-sweep"
VERSION = 1
CASE_TIMEOUT_S = 60.0
LEGACY_OPTIONS = {"roundingType": "outputShapeRounding"}
FAILING = ("wrong", "rejected", "unsupported", "error", "not-run")


@dataclass(frozen=True)
class SweepCase:
    """One conformance case: `id` (`<file>:<index>`), `name`, the case dictionary (WPT JSON
    form, see tests/data/wpt/README.md)."""

    id: str
    name: str
    case: Mapping[str, Any]


# -- cases -------------------------------------------------------------------------------------


def wpt_cases(folder: Path = WPT_DIR) -> list[SweepCase]:
    """The conformance cases of `folder` (every `<op>.json` but INDEX.json)."""
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: the WebNN conformance cases ship with the source "
                                "checkout (tests/data/wpt)")
    out = []
    for path in sorted(folder.glob("*.json")):
        if path.name == "INDEX.json":
            continue
        for i, case in enumerate(json.loads(path.read_text(encoding="utf-8"))["cases"]):
            if case.get("lossy_nonfinite"):
                continue
            out.append(SweepCase(f"{path.stem}:{i}", str(case["name"]), case))
    return out


def _pool_case(name: str, op: str, x: np.ndarray, expected: np.ndarray,
               options: dict[str, Any]) -> SweepCase:
    return SweepCase(f"extra:{name}", f"{op} float32 4D tensor {name} (float64 formula)", {
        "name": name,
        "graph": {
            "inputs": {"x": {"data": x.ravel().tolist(),
                             "descriptor": {"shape": list(x.shape), "dataType": "float32"}}},
            "operators": [{"name": op, "arguments": [{"input": "x"}, {"options": options}],
                           "outputs": "y"}],
            "expectedOutputs": {"y": {"data": expected.astype(np.float32).ravel().tolist(),
                                      "descriptor": {"shape": list(expected.shape),
                                                     "dataType": "float32"}}}},
        "tolerance": {"metricType": "ULP", "value": 2 * int(np.prod(
            options.get("windowDimensions", x.shape[2:]))) + 2}})


def pool_reference(x: np.ndarray, kind: str, window: Sequence[int], *,
                   padding: Sequence[int] = (0, 0, 0, 0), strides: Sequence[int] = (1, 1),
                   dilations: Sequence[int] = (1, 1), ceil: bool = False) -> np.ndarray:
    """Spec pooling of an NCHW array in float64: `kind` "average" (mean of the real cells of
    each window), "l2" (sqrt of their sum of squares) or "max"; padded cells never count."""
    n, c, hh, ww = x.shape
    sizes = []
    for size, k, p0, p1, s, d in ((hh, window[0], padding[0], padding[1], strides[0],
                                   dilations[0]),
                                  (ww, window[1], padding[2], padding[3], strides[1],
                                   dilations[1])):
        num = size - ((k - 1) * d + 1) + p0 + p1
        sizes.append((-(-num // s) if ceil else num // s) + 1)
    out = np.zeros((n, c, *sizes))
    xs = x.astype(np.float64)
    for i in range(sizes[0]):
        for j in range(sizes[1]):
            rows = [i * strides[0] + a * dilations[0] - padding[0] for a in range(window[0])]
            cols = [j * strides[1] + b * dilations[1] - padding[2] for b in range(window[1])]
            rows = [r for r in rows if 0 <= r < hh]
            cols = [q for q in cols if 0 <= q < ww]
            cells = xs[:, :, rows][:, :, :, cols].reshape(n, c, -1)
            if kind == "average":
                out[:, :, i, j] = cells.mean(axis=2)
            elif kind == "l2":
                out[:, :, i, j] = np.sqrt((cells ** 2).sum(axis=2))
            else:
                out[:, :, i, j] = cells.max(axis=2)
    return out


def extra_cases() -> list[SweepCase]:
    """Cases with float64-formula expected values for what the WPT copy lacks (l2Pool2d) or
    covers thinly (pools whose windows reach padding, ceil rounding, dilations)."""
    rng = np.random.default_rng(876)
    x = rng.uniform(0.5, 4, (1, 2, 5, 6)).astype(np.float32)  # no cancellation
    out = []
    for kind, op in (("average", "averagePool2d"), ("l2", "l2Pool2d"), ("max", "maxPool2d")):
        specs: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
            ("window 3x3", {"windowDimensions": [3, 3]}, {"window": [3, 3]}),
            ("window 3x3 padding [1,1,1,1]", {"windowDimensions": [3, 3],
                                              "padding": [1, 1, 1, 1]},
             {"window": [3, 3], "padding": [1, 1, 1, 1]}),
            ("window 3x2 padding [0,2,1,0] strides [2,1]",
             {"windowDimensions": [3, 2], "padding": [0, 2, 1, 0], "strides": [2, 1]},
             {"window": [3, 2], "padding": [0, 2, 1, 0], "strides": [2, 1]}),
            ("window 2x2 strides 2 ceil", {"windowDimensions": [2, 2], "strides": [2, 2],
                                           "outputShapeRounding": "ceil"},
             {"window": [2, 2], "strides": [2, 2], "ceil": True}),
            ("window 2x2 dilations [2,2]", {"windowDimensions": [2, 2], "dilations": [2, 2]},
             {"window": [2, 2], "dilations": [2, 2]}),
        ]
        for name, options, ref in specs:
            window = ref.pop("window")
            expected = pool_reference(x, kind, window, **ref)
            out.append(_pool_case(f"{op} {name}", op, x, expected, options))
    return out


def all_cases() -> list[SweepCase]:
    """The WPT cases and the extra cases."""
    return [*wpt_cases(), *extra_cases()]


def wpt_number(x: Any) -> Any:
    """A WPT data value: "NaN"/"Infinity"/"-Infinity" and integer strings (BigInt) decoded."""
    if isinstance(x, str):
        if x in ("NaN", "Infinity", "-Infinity"):
            return float(x.replace("Infinity", "inf"))
        return int(x)
    return x


def case_array(data: Any, desc: Mapping[str, Any]) -> np.ndarray:
    """A case's tensor (`data`, `descriptor`) as a numpy array."""
    shape = tuple(desc["shape"])
    dtype = np.dtype(desc["dataType"])
    if isinstance(data, list):
        values = [wpt_number(x) for x in data]
    else:
        values = [wpt_number(data)] * int(np.prod(shape, dtype=np.int64))
    if dtype.kind == "f":
        arr = np.array(values, dtype=np.float64).astype(dtype)
    else:
        arr = np.array(values, dtype=object).astype(dtype)
    return arr.reshape(shape)


def case_graph(case: Mapping[str, Any], builder: MLGraphBuilder, nonfinite: bool = True
               ) -> tuple[MLGraph, dict[str, np.ndarray]]:
    """The graph of a case (constant inputs as constants) and the feeds of its inputs.
    Strings naming operands resolve to them; integer strings (BigInt literals) become
    numbers, and so do "NaN" / "Infinity" / "-Infinity" when `nonfinite` (otherwise they
    stay strings, which the builder rejects). An unknown operator or option is a
    ValueError."""
    desc = case["graph"]
    operands: dict[str, MLOperand] = {}
    feeds: dict[str, np.ndarray] = {}
    for name, spec in desc["inputs"].items():
        arr = case_array(spec["data"], spec["descriptor"])
        if spec.get("constant"):
            operands[name] = builder.constant(arr)
        else:
            operands[name] = builder.input(name, shape=list(arr.shape),
                                           data_type=arr.dtype.name)
            feeds[name] = arr

    numbers = r"-?\d+|NaN|-?Infinity" if nonfinite else r"-?\d+"

    def resolve(value: Any) -> Any:
        if isinstance(value, str) and value in operands:
            return operands[value]
        if isinstance(value, str) and re.fullmatch(numbers, value):
            return wpt_number(value)  # a BigInt literal or a non-finite number
        if isinstance(value, list) and value and all(isinstance(v, str) and v in operands
                                                     for v in value):
            return [operands[v] for v in value]
        return value

    for op in desc["operators"]:
        args, options = [], {}
        for arg in op["arguments"]:
            (key, value), = arg.items()
            if key == "options":
                for opt, val in value.items():
                    options[LEGACY_OPTIONS.get(opt, opt)] = resolve(val)
            else:
                args.append(resolve(value))
        results = builder.apply(op["name"], args, options)
        names = op["outputs"]
        if isinstance(names, str):
            operands[names] = results[0]
        else:
            for n, r in zip(names, results, strict=True):
                operands[n] = r
    graph = builder.build({name: operands[name] for name in desc["expectedOutputs"]})
    return graph, feeds


# -- comparing -------------------------------------------------------------------------------


def _ordered_bits(x: np.ndarray) -> np.ndarray:
    bits = x.view({2: np.int16, 4: np.int32, 8: np.int64}[x.dtype.itemsize]).astype(np.int64)
    sign_mask = {2: 0x7FFF, 4: 0x7FFFFFFF, 8: 0x7FFFFFFFFFFFFFFF}[x.dtype.itemsize]
    return np.where(bits < 0, -(bits & sign_mask), bits)


def distance(actual: np.ndarray, expected: np.ndarray, metric: str) -> np.ndarray:
    """Per element distance in the case's metric (ULP: IEEE bit distance, ±0 equal; ATOL:
    absolute difference; integers: absolute difference); NaN vs NaN is 0, NaN vs a number
    is infinite."""
    a, e = actual.ravel(), expected.ravel()
    if a.dtype.kind == "f":
        nan_a, nan_e = np.isnan(a), np.isnan(e)
        with np.errstate(invalid="ignore", over="ignore"):
            if metric == "ATOL":
                dist = np.abs(a.astype(np.float64) - e.astype(np.float64))
            else:
                dist = np.abs(_ordered_bits(a) - _ordered_bits(e)).astype(np.float64)
            dist = np.where(a == e, 0.0, dist)
        return np.where(nan_a | nan_e, np.where(nan_a == nan_e, 0.0, np.inf), dist)
    diff: np.ndarray = np.abs(a.astype(object) - e.astype(object)).astype(np.float64)
    return diff


def compare_case(case: Mapping[str, Any], outputs: Mapping[str, np.ndarray]
                 ) -> tuple[bool, float, str]:
    """(within tolerance, worst distance, metric) of a case's outputs."""
    tol = case.get("tolerance") or {}
    metric = str(tol.get("metricType", "ULP"))
    budget = float(tol.get("value", 0) or 0)
    worst, ok = 0.0, True
    for name, spec in case["graph"]["expectedOutputs"].items():
        expected = case_array(spec["data"], spec["descriptor"])
        got = outputs.get(name)
        if got is None or got.size != expected.size or got.dtype != expected.dtype:
            return False, math.inf, metric
        d = distance(np.asarray(got).reshape(expected.shape), expected, metric)
        if d.size:
            worst = max(worst, float(d.max()))
            ok = ok and bool((d <= budget).all())
    return ok, worst, metric


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
        for arg in o["arguments"]:
            (key, value), = arg.items()
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
    try:
        outputs = graph.context.compute(graph, dict(feeds))
    except Exception as exc:  # noqa: BLE001 - recorded
        return f"error: {type(exc).__name__}: {exc}"
    ok, worst, _ = compare_case(case, outputs)
    return "pass" if ok else f"wrong (max error {worst:g})"


def sweep(cases: Sequence[SweepCase] | None = None, *, target: Any = None,
          setup: Any = None, progress: Callable[[str], None] | None = None,
          timeout: float = CASE_TIMEOUT_S) -> dict[str, Any]:
    """Run `cases` (default `all_cases()`) in the browser, each as converted and, where the
    target's rules rewrite it, rewritten, all in one browser session; the sweep document (see
    the module docstring)."""
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
    return {"format": FORMAT, "version": VERSION, "browser": setup.browser,
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
    whose rewritten graph is wrong on the reference runtime. A stale entry matches no failing
    case."""
    new, used = [], [0] * len(known)
    for rec in doc.get("cases", []):
        low = rec.get("lowered")
        if isinstance(low, Mapping) and low.get("reference", "pass") != "pass":
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


def write_sweep(doc: Mapping[str, Any], limits: Mapping[str, Any], folder: Path) -> list[Path]:
    """Write `sweep.json` (one case per line) and `limits.json` into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    head = {k: v for k, v in doc.items() if k != "cases"}
    lines = ["{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v, sort_keys=True)}"
                             for k, v in head.items()) + ',\n "cases": [']
    cases = [json.dumps(c, sort_keys=True) for c in doc.get("cases", [])]
    text = lines[0] + "\n" + ",\n".join(f"  {c}" for c in cases) + "\n]}\n"
    written = []
    for name, content in (("sweep.json", text),
                          ("limits.json", json.dumps(limits, indent=2, sort_keys=True) + "\n")):
        path = folder / name
        tmp = path.with_name(f".{name}.tmp")
        tmp.write_text(content, encoding="utf-8")
        tmp.replace(path)
        written.append(path)
    return written


__all__ = ["FAILING", "SweepCase", "WPT_DIR", "all_cases", "case_array", "case_graph",
           "check_sweep", "compare_case", "counts", "distance", "effective", "extra_cases",
           "pool_reference", "summary", "sweep", "wpt_cases", "write_sweep"]
