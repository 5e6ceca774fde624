"""Running converted graphs in a real browser: a headless Chromium whose WebNN runs on the CPU
(LiteRT/XNNPACK), driven by `harness/run_page.mjs` (package data; Node.js + puppeteer-core).

Set-up and the harness process live in `browser_setup` (`ensure_browser`: Node.js, `npm ci`
of the harness' pinned packages into the cache folder `browser_home()`, announced on
stderr; `run_jobs`), `browser_process` (the harness and its browser never outlive a call) and
`page_server` (the local server the browser loads pages from); they are re-exported here.
The browser starts with `--no-sandbox --headless=new --disable-gpu-sandbox
--enable-features=WebMachineLearningNeuralNetwork`.

A run (`run_graph`) exports the graph as JavaScript (`<stem>.js`, `.html`, `.weights`) into
a temporary folder, serves it on 127.0.0.1 (a free port) and, in one browser session:

1. opens `harness/module_page.html`, which imports the generated module as an
   application would (`loadWeights`, `createModel(context, weights)`, then `compute(feeds)`
   twice on the model's MLTensors, which must give the same bytes both times) with the given
   inputs (exact bytes), and reports the first outputs and `opSupportLimits()`. A
   ConversionResult with host steps (docs/host-steps.md) is exported whole (`export(result)`:
   graph, host steps in the module, `<stem>.host.json`), and the page calls
   `computeTensors(feeds)`, so the model's outputs come back with the data types and the
   data-dependent shapes the module's host steps gave them;
2. opens the generated `<stem>.html` page as a user would: waits until it is ready, types the
   inputs (JSON) into its text area, sets one timed run, clicks Run and reads the outputs the
   page exposes (`globalThis.__webnnResult`).

`limit_problems(graph, limits)` names every operator operand, graph input/output and
constant whose data type, rank or size lies outside the browser's `opSupportLimits()`, so a
graph the browser cannot build is reported as "unsupported by the browser's WebNN: gelu
input float16 ...", not as a crash.
"""

from __future__ import annotations

import base64
import json
import tempfile
import urllib.parse
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from converter.core.webnn.operators import OPERATORS
from converter.io.export.exporter import export
from converter.validate.browser_setup import (
    JOB_TIMEOUT_S,
    BrowserSetup,
    BrowserUnavailable,
    browser_home,
    ensure_browser,
    failure,
    run_jobs,
)
from converter.validate.compare import Comparison
from converter.validate.page_server import HARNESS, PageServer

# -- limits -----------------------------------------------------------------------------------


def _within(lim: Mapping[str, Any] | None, data_type: str, rank: int) -> str:
    """'' when (data_type, rank) lies inside a limits entry, else what is wrong."""
    if not isinstance(lim, Mapping):
        return ""
    types = lim.get("dataTypes")
    if isinstance(types, list) and data_type not in types:
        return f"data type {data_type} (supported: {', '.join(map(str, types)) or 'none'})"
    ranks = lim.get("rankRange")
    if isinstance(ranks, Mapping):
        lo, hi = int(ranks.get("min", 0)), int(ranks.get("max", 1 << 30))
        if not lo <= rank <= hi:
            return f"rank {rank} (supported: {lo} to {hi})"
    return ""


def _operation_roles(operation: Any, lim: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(limits member name, operand) of every operand an operation reads and writes."""
    sig = OPERATORS.get(operation.op)
    if sig is not None:
        for param, value in zip(sig.positional, operation.args, strict=False):
            for v in value if isinstance(value, (list, tuple)) else [value]:
                if hasattr(v, "descriptor"):
                    yield param.spec_name, v
    for key, value in operation.options.items():
        for v in value if isinstance(value, (list, tuple)) else [value]:
            if hasattr(v, "descriptor"):
                yield key, v
    outputs = list(operation.outputs)
    for i, out in enumerate(outputs):
        if "output" in lim:
            yield "output", out
        elif "outputs" in lim:
            yield "outputs", out
        else:
            yield f"output{i}", out


def limit_problems(graph: Any, limits: Mapping[str, Any]) -> list[str]:
    """What in `graph` lies outside a browser's `opSupportLimits()` (one line per operator,
    role and data type; empty when everything is inside)."""
    problems: dict[str, int] = {}

    def note(text: str) -> None:
        problems[text] = problems.get(text, 0) + 1

    max_bytes = limits.get("maxTensorByteLength")
    seen: set[int] = set()

    def size_check(what: str, operand: Any) -> None:
        if id(operand) in seen:
            return
        seen.add(id(operand))
        if isinstance(max_bytes, (int, float)) and operand.descriptor.byte_length > max_bytes:
            note(f"{what}: {operand.descriptor.byte_length} bytes > maxTensorByteLength "
                 f"{int(max_bytes)}")

    for name, operand in graph.inputs.items():
        bad = _within(limits.get("input"), operand.data_type, operand.rank)
        if bad:
            note(f"graph input {name!r}: {bad}")
        size_check(f"graph input {name!r}", operand)
    for name, operand in graph.outputs.items():
        bad = _within(limits.get("output"), operand.data_type, operand.rank)
        if bad:
            note(f"graph output {name!r}: {bad}")
    for operation in graph.operations:
        lim = limits.get(operation.op)
        if not isinstance(lim, Mapping):
            note(f"{operation.op}: not in the browser's opSupportLimits()")
            continue
        for role, operand in _operation_roles(operation, lim):
            if operand.kind == "constant":
                bad = _within(limits.get("constant"), operand.data_type, operand.rank)
                if bad:
                    note(f"constant of {operation.op}: {bad}")
            bad = _within(lim.get(role), operand.data_type, operand.rank)
            if bad:
                note(f"{operation.op}: {role} {bad}")
            size_check(f"{operation.op} {role}", operand)
    return [f"{text} ({count} times)" if count > 1 else text
            for text, count in problems.items()]


# -- running a graph ----------------------------------------------------------------------------


def _wire(array: np.ndarray) -> dict[str, Any]:
    arr = np.ascontiguousarray(array)
    data = arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes()
    return {"dataType": arr.dtype.name, "shape": list(arr.shape),
            "base64": base64.b64encode(data).decode("ascii")}


def _json_values(array: np.ndarray) -> list[Any]:
    """Flat values as the generated page's text area takes them (exact for float32/float16;
    int64 and non-finite numbers as strings)."""
    arr = np.asarray(array).ravel()
    if arr.dtype.kind == "f":
        return [v if np.isfinite(v) else ("NaN" if np.isnan(v) else
                                          ("Infinity" if v > 0 else "-Infinity"))
                for v in arr.astype(np.float64).tolist()]
    if arr.dtype.itemsize == 8:
        return [str(v) for v in arr.tolist()]
    return [int(v) for v in arr.tolist()]


def _decode(outputs: Any) -> dict[str, np.ndarray]:
    values: dict[str, np.ndarray] = {}
    for name, item in (outputs or {}).items():
        data = base64.b64decode(item["buffer"]["$base64"])
        dtype = np.dtype(item["dataType"]).newbyteorder("<")
        values[name] = np.frombuffer(data, dtype=dtype).astype(item["dataType"]).reshape(
            item["shape"])
    return values


@dataclass(frozen=True)
class BrowserRun:
    """What the browser did with a graph. `outputs` come from the module check page,
    `page_outputs` from the generated HTML page (None when that part was not run or
    failed); `error` / `page_error` say what failed ('' when nothing did), `problems` what
    lies outside the browser's limits."""

    browser: str
    limits: dict[str, Any] | None
    outputs: dict[str, np.ndarray] | None
    page_outputs: dict[str, np.ndarray] | None = None
    error: str = ""
    page_error: str = ""
    problems: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)


def run_graph(graph: Any, feeds: Mapping[str, np.ndarray], *, page: bool = True,
              name: str | None = None, timeout: float = JOB_TIMEOUT_S,
              setup: BrowserSetup | None = None) -> BrowserRun:
    """Run an MLGraph in the browser on `feeds` (by graph input name, in the graph's data
    types; an input a target narrowed, `graph.narrowed_inputs`, goes in as int64, which the
    module's `compute()` narrows, and such outputs come back widened, as int64) through
    its JavaScript export (see the module docstring). `graph` may also be a
    ConversionResult: one with host steps runs whole (graph, then the module's host steps;
    `feeds` also give the model inputs only the host steps read, in their source types, and
    the outputs are the model's, `exported_item`), any other as its graph. Raises
    BrowserUnavailable when there is no browser; a graph the browser cannot build or run
    gives a BrowserRun with `error` set."""
    return run_graphs([(graph, feeds)], page=page, name=name, timeout=timeout,
                      setup=setup)[0]


def run_graphs(items: Sequence[tuple[Any, Mapping[str, np.ndarray]]], *, page: bool = True,
               name: str | None = None, timeout: float = JOB_TIMEOUT_S,
               setup: BrowserSetup | None = None) -> list[BrowserRun]:
    """`run_graph` for several (graph, feeds) pairs in one browser session (one start)."""
    setup = setup or ensure_browser()
    ms = int(timeout * 1000)
    with tempfile.TemporaryDirectory(prefix="webnn-browser-") as root:
        extra: dict[str, bytes] = {}
        jobs: list[dict[str, Any]] = []
        failed: dict[int, str] = {}
        for i, (item, given) in enumerate(items):
            exported, graph = exported_item(item)
            feeds = input_values(exported, given)
            try:  # what `webnn-convert convert --format js` writes
                with warnings.catch_warnings():  # the .webnn text is not needed here
                    warnings.filterwarnings("ignore", r"export: model\.webnn left out")
                    export(exported, Path(root) / f"g{i}", format="js", stem="model",
                           name=name)
            except Exception as exc:  # noqa: BLE001 - reported as this graph's error
                failed[i] = f"export: {type(exc).__name__}: {exc}"
                continue
            extra[f"inputs{i}.json"] = json.dumps({k: _wire(v) for k, v in feeds.items()}
                                                  ).encode()
            query = urllib.parse.urlencode({"module": f"/g{i}/model.js",
                                            "inputs": f"{HARNESS}inputs{i}.json"})
            jobs.append({"url": f"{HARNESS}module_page.html?{query}", "timeoutMs": ms})
            if page:
                typed = json.dumps({k: _json_values(v) for k, v in feeds.items()})
                jobs.append({"url": f"/g{i}/model.html", "ready": "__webnnReady",
                             "fill": {"#inputs": typed, "#runs": "1"}, "click": "#run",
                             "timeoutMs": ms})
        answer: dict[str, Any] = {}
        if jobs:
            with PageServer(root, extra) as server:
                for job in jobs:
                    job["url"] = server.url(job["url"])
                answer = run_jobs(jobs, setup)
    results: list[dict[str, Any]] = answer.get("results") or []
    browser = str(answer.get("browser") or setup.browser)
    per = 2 if page else 1
    runs, done = [], 0
    for i, (item, _) in enumerate(items):
        if i in failed:
            runs.append(BrowserRun(browser, None, None, error=failed[i]))
        else:
            runs.append(_run_of(exported_item(item)[1], browser, results[done * per:(done + 1) * per], page))
            done += 1
    return runs


def exported_item(item: Any) -> tuple[Any, Any]:
    """(what a run exports, its MLGraph) for an item of `run_graphs`: a ConversionResult with
    host steps is exported whole (graph + host steps: the module's outputs are the model's);
    of anything else with a `.graph` (a result without host steps) only the graph, as an
    MLGraph is (its carried state, if any, stays the caller's inputs and outputs)."""
    graph = getattr(item, "graph", item)
    return (item if getattr(item, "host", None) is not None else graph), graph


def input_values(exported: Any, given: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The values of `given` the exported module takes, in the types the module page sends:
    a graph input in its graph type, or int64 for one a target narrowed (`compute()`
    converts it); of a result with host steps also the model inputs only the steps read, in
    their source types (the module's `INPUTS` rows `hostOnly: true`)."""
    graph = getattr(exported, "graph", exported)
    # a narrowed input in its caller-side type (int64): the JavaScript converts it
    feeds = {k: np.asarray(v, dtype=graph.narrowed_inputs.get(k, graph.inputs[k].data_type))
             for k, v in given.items() if k in graph.inputs}
    host = getattr(exported, "host", None) if exported is not graph else None
    if host is not None:
        dtypes = {vi.name: vi.dtype for vi in exported.inputs}
        feeds.update({k: np.asarray(given[k], dtype=dtypes[k]) for k in host.model_inputs
                      if k not in graph.inputs})
    return feeds


def _run_of(graph: Any, browser: str, results: list[dict[str, Any]], page: bool
            ) -> BrowserRun:
    module: dict[str, Any] = results[0] if results else {"ok": False, "error": "no result"}
    limits = module["limits"] if isinstance(module.get("limits"), dict) else None
    problems = tuple(limit_problems(graph, limits)) if limits else ()
    outputs = _decode(module.get("outputs")) if module.get("ok") else None
    error = "" if module.get("ok") else failure(module)
    page_outputs, page_error = None, ""
    if page and len(results) > 1:
        shown = results[1]
        if shown.get("ok"):
            page_outputs = _decode(shown.get("outputs"))
        else:
            page_error = failure(shown)
    timings = {f"browser_{k}": float(v) / 1000 for k, v in (module.get("timings") or {}).items()
               if isinstance(v, (int, float))}
    return BrowserRun(browser, limits, outputs, page_outputs, error, page_error, problems,
                      timings)


def browser_limits(setup: BrowserSetup | None = None) -> dict[str, Any]:
    """The browser's `opSupportLimits()` (a default context); raises BrowserUnavailable."""
    return dict((setup or ensure_browser()).limits)


# -- checks --------------------------------------------------------------------------------


@dataclass(frozen=True)
class BrowserCheck:
    """The browser's outputs compared with the reference framework's.

    `status`: "pass"; "fail" (an output outside tolerance, or the generated page disagrees);
    "unsupported" (the graph lies outside the browser's opSupportLimits(): `problems`);
    "error" (the browser could not build or run it for another reason: `message`).
    `outputs` compares the module check page's outputs, `page_outputs` the generated HTML
    page's, with the reference."""

    browser: str
    status: str
    outputs: tuple[Comparison, ...] = ()
    page_outputs: tuple[Comparison, ...] = ()
    message: str = ""
    problems: tuple[str, ...] = ()
    timings: Mapping[str, float] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    @property
    def max_abs(self) -> float | None:
        return max((c.max_abs for c in self.outputs), default=None)

    def to_dict(self) -> dict[str, Any]:
        from converter.validate.compare import json_number

        return {"browser": self.browser, "status": self.status, "message": self.message,
                "problems": list(self.problems),
                "max_abs": json_number(self.max_abs) if self.max_abs is not None else None,
                "outputs": [c.to_dict() for c in self.outputs],
                "page_outputs": [c.to_dict() for c in self.page_outputs],
                "timings": {k: round(v, 6) for k, v in self.timings.items()}}

    def summary(self) -> str:
        """One line: status, worst error or the reason."""
        if self.status in ("pass", "fail") and self.outputs:
            worst = max(self.outputs, key=lambda c: c.max_abs)
            text = f"{self.status} (max abs {worst.max_abs:.3g})"
            return text + (f": {self.message}" if self.message else "")
        if self.status == "unsupported":
            return "unsupported: " + "; ".join(self.problems[:3]) + (
                f"; ... ({len(self.problems)} in all)" if len(self.problems) > 3 else "")
        return f"{self.status}: {self.message}"

    def to_text(self) -> str:
        lines = [f"real browser ({self.browser}): {self.summary()}"]
        for kind, items in (("module", self.outputs), ("page", self.page_outputs)):
            for c in items:
                lines.append(f"  {kind} {c.name}: max abs {c.max_abs:.3g} tolerance "
                             f"{c.bound:.3g} {'ok' if c.passed else 'FAIL'}"
                             + (f" ({c.note})" if c.note else ""))
        if self.status == "unsupported":
            lines += [f"  outside the browser's limits: {p}" for p in self.problems]
        return "\n".join(lines)


def classify(run: BrowserRun, outputs: Sequence[Comparison],
             page_outputs: Sequence[Comparison]) -> BrowserCheck:
    """The BrowserCheck of a run whose outputs were compared (see BrowserCheck.status)."""
    timings = dict(run.timings)
    if run.outputs is None:
        if run.problems:
            return BrowserCheck(run.browser, "unsupported", message=run.error,
                                problems=run.problems, timings=timings)
        return BrowserCheck(run.browser, "error", message=run.error, timings=timings)
    notes = []
    if run.page_error:
        notes.append(f"the generated page failed: {run.page_error}")
    bad = [c.name for c in outputs if not c.passed]
    bad += [f"{c.name} (page)" for c in page_outputs if not c.passed]
    if bad:
        notes.append(f"outside tolerance: {', '.join(bad)}")
    status = "fail" if notes else "pass"
    return BrowserCheck(run.browser, status, tuple(outputs), tuple(page_outputs),
                        "; ".join(notes), run.problems, timings)


__all__ = ["HARNESS", "BrowserCheck", "BrowserRun",
           "BrowserSetup", "BrowserUnavailable", "PageServer", "browser_home",
           "browser_limits", "classify", "ensure_browser", "exported_item", "input_values",
           "limit_problems", "run_graph", "run_graphs", "run_jobs"]
