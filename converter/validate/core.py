"""`validate()`: convert a model, run the original (onnxruntime / LiteRT) and the converted
graph (any backend) on the same seeded inputs, compare every output and, when one fails,
find the first source node whose output diverges.

The divergence search converts the model a second time with every intermediate value exposed
(`taps.convert_tapped`), runs the original with every intermediate value kept
(`source.run_source(..., intermediates=True)`), and compares values of the same source name in
the source graph's topological order with the same tolerance rule as the outputs (scaled by
each value's own peak). The first node with a failing output is reported. Values that exist
on one side only (scoped values of inlined functions, tensors a delegate hid) are skipped;
values whose shapes differ but whose sizes agree are compared flattened.

With `browser=True` the converted graph also runs in a real Chromium with WebNN
(`converter.validate.browser`: its JavaScript export, host steps included, through the
module and the generated page) on the same inputs, and `ValidationReport.browser` compares
its outputs with the original framework's under the same tolerance.

Tolerance: max|ours − reference| ≤ atol + rtol·max|reference| per output. Unless given,
rtol and atol follow the converted graph's compute type (`default_tolerance`, `TOLERANCES`:
1e-3 for float32, 1e-2 for float16, 2e-2 for 8- and 4-bit quantized paths), and the report
prints the values used and their basis.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from converter.conversion.pipeline import convert
from converter.core.budgets import Budgets, using
from converter.core.confine import allowed_roots
from converter.core.errors import BudgetExceeded
from converter.core.feeds import graph_feeds, source_outputs
from converter.core.webnn.run_memory import check_run_memory
from converter.frontends import get
from converter.frontends.detect import detect_format, model_label
from converter.passes.precision import precision_notes, to_precision
from converter.passes.targets import DEFAULT_TARGET, load_target
from converter.passes.targets.check import Violation, check_graph, summary
from converter.results.compiled import compile_executable
from converter.validate.browser import BrowserCheck, classify, run_graph
from converter.validate.compare import Comparison, compare, json_number
from converter.validate.inputs import make_inputs
from converter.validate.source import run_source
from converter.validate.taps import convert_tapped

DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-3
QUANT_STEPS = 2
TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (DEFAULT_RTOL, DEFAULT_ATOL), "float16": (1e-2, 1e-2),
    "int8": (2e-2, 2e-2), "int4": (2e-2, 2e-2)}
"""`validate`'s default (rtol, atol) by the converted graph's compute type (`compute_type`):
float16 rounds every operation to 11 significant bits; 8- and 4-bit quantized paths can
differ from the reference framework's kernels by quantization steps (an activation rounded
the other way at a tie, onnxruntime's MatMulNBits quantizing its input at accuracy level 4).
The zoo manifests use the same values for their float16 and quantized rows."""


def compute_type(graph: Any) -> str:
    """The loosest compute type of a converted graph: "int4" when it (de)quantizes 4-bit
    values, "int8" when it (de)quantizes other integer values, "float16" when an operation
    produces float16 values, else "float32" (the keys of `TOLERANCES`)."""
    kinds = set()
    for op in graph.operations:
        if op.op in ("quantizeLinear", "dequantizeLinear"):
            q = op.outputs[0] if op.op == "quantizeLinear" else op.args[0]
            kinds.add("int4" if q.data_type in ("int4", "uint4") else "int8")
        elif any(o.data_type == "float16" for o in op.outputs):
            kinds.add("float16")
    return next((k for k in ("int4", "int8", "float16") if k in kinds), "float32")


def default_tolerance(graph: Any, rtol: float | None = None, atol: float | None = None
                      ) -> tuple[float, float, str]:
    """(rtol, atol, basis): the given tolerances, and `TOLERANCES` of the graph's compute
    type for those not given; `basis` says which ("given", or "default for float16
    compute", with the given one named when only one was given)."""
    if rtol is not None and atol is not None:
        return rtol, atol, "given"
    kind = compute_type(graph)
    d_rtol, d_atol = TOLERANCES[kind]
    basis = f"default for {kind} compute"
    if rtol is not None or atol is not None:
        basis += f", {'rtol' if rtol is not None else 'atol'} given"
    return (d_rtol if rtol is None else rtol, d_atol if atol is None else atol, basis)


@dataclass(frozen=True)
class Divergence:
    """The first source node whose output differs beyond tolerance."""

    node_name: str
    op_type: str
    domain: str
    output: str
    comparison: Comparison
    index: int
    """Position of the node in the source graph's topological order."""
    checked: int
    """How many intermediate values were compared up to and including this one."""

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node_name, "op_type": self.op_type, "domain": self.domain,
                "output": self.output, "index": self.index, "checked": self.checked,
                **{k: v for k, v in self.comparison.to_dict().items()
                   if k in ("max_abs", "max_rel", "cosine", "tolerance", "note", "shape")}}

    def to_text(self) -> str:
        c = self.comparison
        op = f"{self.domain}::{self.op_type}" if self.domain else self.op_type
        extra = f"; {c.note}" if c.note else ""
        return (f"first diverging node: {op} {self.node_name!r} (node #{self.index}), output "
                f"{self.output!r}: max abs error {_fmt(c.max_abs)} > tolerance "
                f"{_fmt(c.bound)}, cosine {_fmt(c.cosine)}{extra}")


@dataclass(frozen=True)
class ValidationReport:
    """Everything `validate()` found. `passed` is True when every output passed."""

    model: str
    format: str
    backend: str
    device: str
    rtol: float
    atol: float
    seed: int
    outputs: tuple[Comparison, ...]
    divergence: Divergence | None = None
    timings: Mapping[str, float] = field(default_factory=dict)
    conversion: Mapping[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    browser: BrowserCheck | None = None
    """The real-browser check (`validate(browser=True)`), else None."""
    tolerance_basis: str = "given"
    """Where rtol and atol came from: "given", or "default for <type> compute"
    (`default_tolerance`)."""
    target: str = ""
    """The target validated for (`validate(target=...)`; without one, the default target
    convert used)."""
    target_violations: tuple[Violation, ...] = ()
    """What the converted graph uses outside the target's limits
    (`converter.passes.targets.check.check_graph`); any fails validation."""
    precision: str = "float32"
    """The precision converted for (`validate(precision=...)`)."""

    @property
    def passed(self) -> bool:
        return (all(c.passed for c in self.outputs) and not self.target_violations
                and (self.browser is None or self.browser.passed))

    @property
    def max_abs(self) -> float:
        return max((c.max_abs for c in self.outputs), default=0.0)

    @property
    def max_rel(self) -> float:
        return max((c.max_rel for c in self.outputs), default=0.0)

    def to_dict(self) -> dict[str, Any]:
        """Stable JSON form."""
        return {"model": self.model, "format": self.format, "backend": self.backend,
                "device": self.device, "rtol": self.rtol, "atol": self.atol,
                "tolerance_basis": self.tolerance_basis, "precision": self.precision,
                "seed": self.seed, "verdict": "pass" if self.passed else "fail",
                "max_abs": json_number(self.max_abs), "max_rel": json_number(self.max_rel),
                "outputs": [c.to_dict() for c in self.outputs],
                "divergence": self.divergence.to_dict() if self.divergence else None,
                "timings": {k: round(v, 6) for k, v in self.timings.items()},
                "conversion": dict(self.conversion), "notes": list(self.notes),
                **({"target": {"name": self.target, "lacks": summary(self.target_violations),
                               "violations": [v.line() for v in self.target_violations]}}
                   if self.target else {}),
                **({"browser": self.browser.to_dict()} if self.browser is not None else {})}

    def to_text(self) -> str:
        ref = get(self.format).reference
        lines = [f"{self.model}: converted graph on {self.backend} ({self.device}) vs {ref}, "
                 f"tolerance atol {self.atol:g} + rtol {self.rtol:g} * max|ref| "
                 f"({self.tolerance_basis}), seed {self.seed}"]
        width = max((len(c.name) for c in self.outputs), default=4)
        for c in self.outputs:
            verdict = "ok" if c.passed else "FAIL"
            note = f"  ({c.note})" if c.note else ""
            lines.append(f"  {c.name:<{width}}  {c.dtype:<8} {str(list(c.shape)):<16} max abs "
                         f"{_fmt(c.max_abs)}  max rel {_fmt(c.max_rel)}  cosine "
                         f"{_fmt(c.cosine, 6)}  {verdict}{note}")
        if self.divergence is not None:
            lines.append(self.divergence.to_text())
        lines += [f"note: {n}" for n in self.notes]
        if self.target_violations:
            lines.append(f"target {self.target}: {len(self.target_violations)} operand(s) "
                         f"outside its limits: {'; '.join(summary(self.target_violations))}")
            lines.append(f"  {self.target_violations[0].line()}")
        if self.browser is not None:
            lines.append(self.browser.to_text())
        lines.append(f"verdict: {'PASS' if self.passed else 'FAIL'}")
        return "\n".join(lines)


def _fmt(x: float, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "nan"
    return f"{x:.{digits}g}"


# -- running the converted graph ----------------------------------------------------------


def compile_graph(graph: Any, backend: str = "reference", device: str = "cpu",
                  threads: int = 0) -> Any:
    """Compile `graph` for a backend by name (`converter.results.compiled.compile_executable`).
    Raises ValueError for an unknown or unavailable backend/device, `BudgetExceeded` for a
    graph over the active run budgets (`converter.core.webnn.run_memory`)."""
    check_run_memory(graph)
    return compile_executable(graph, backend, device, threads)


def run_converted(result: Any, inputs: Mapping[str, np.ndarray], backend: str = "reference",
                  device: str = "cpu", threads: int = 0) -> tuple[dict[str, np.ndarray], float]:
    """Run a ConversionResult's graph (and its host steps: the whole pipeline, whose outputs
    with data-dependent shapes may differ in shape from the reference's, a failed comparison);
    returns ({output name: array in the source dtype}, seconds of the run itself,
    compilation excluded)."""
    if getattr(result, "host", None) is not None:
        session = result.compile(backend, device, threads)
        start = time.perf_counter()
        outputs = session.run(inputs)
        return outputs, time.perf_counter() - start
    exe = compile_graph(result.graph, backend, device, threads)
    feeds = {**result.state_feeds(), **graph_feeds(result.graph, result.inputs, inputs)}
    start = time.perf_counter()
    values = exe.run(feeds)
    seconds = time.perf_counter() - start
    return source_outputs(result.outputs, values), seconds


# -- divergence ---------------------------------------------------------------------------


def _quant(source: Any, name: str) -> Any:
    tensors = getattr(source, "tensors", None) or {}
    info = tensors.get(name)
    if info is None or not getattr(info, "quantized", False):
        return None
    return info.quant


def _align(source: Any, name: str, ours: np.ndarray, ref: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray, int]:
    """Bring a converted value and a source value to comparable forms; returns (ours, ref,
    allowed quantization steps)."""
    steps = 0
    q = _quant(source, name)
    if q is not None and ref.dtype.kind in "iu":
        if ours.dtype.kind == "f":
            scale = np.asarray(q.scale, dtype=np.float64)
            zp = np.asarray(q.zero_point, dtype=np.float64)
            if scale.size == 1:
                ref = (ref.astype(np.float64) - zp.reshape(())) * scale.reshape(())
        else:
            steps = QUANT_STEPS
    if ours.shape != ref.shape and ours.size == ref.size:
        ours = ours.reshape(ref.shape)
    return ours, ref, steps


def locate_divergence(fmt: str, model: Any, result: Any, inputs: Mapping[str, np.ndarray], *,
                      backend: str = "reference", device: str = "cpu",
                      rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL,
                      threads: int = 0, precision: str = "float32"
                      ) -> tuple[Divergence | None, list[str]]:
    """The first source node whose output diverges (None when none does) and notes; the
    tapped graph is converted to `precision` as the validated one was. Of a model with host
    steps, only the nodes of the WebNN graph are searched."""
    notes: list[str] = []
    source = result.source
    if getattr(result, "host", None) is not None:
        host = {n.name for n in result.host.nodes}
        source = replace(source, nodes=tuple(n for n in source.nodes if n.name not in host),
                         outputs=tuple(vi for vi in source.outputs
                                       if vi.name in result.graph.outputs))
    ref_run = run_source(fmt, model, result.source, inputs, intermediates=True,
                         threads=threads)
    notes += ref_run.notes
    tapped = convert_tapped(source)
    if precision != "float32":
        tapped = replace(tapped, graph=to_precision(tapped.graph, precision).graph)
    exe = compile_graph(tapped.graph, backend, device, threads)
    values = exe.run({**result.state_feeds(),
                      **graph_feeds(tapped.graph, result.inputs, inputs)})
    checked = 0
    for index, node in enumerate(source.nodes):
        for name in node.outputs:
            if not name or name not in ref_run.intermediates:
                continue
            if name in tapped.outputs:
                ours = np.asarray(values[tapped.outputs[name]])
            elif name in tapped.constants:
                ours = tapped.constants[name]
            else:
                continue
            ref = np.asarray(ref_run.intermediates[name])
            ours, ref, steps = _align(source, name, ours, ref)
            if ref.dtype == np.bool_:
                ours = ours.astype(bool)
            checked += 1
            c = compare(name, ours, ref, rtol=rtol, atol=atol, steps=steps)
            if not c.passed:
                return Divergence(node.name, node.op_type, node.domain, name, c, index,
                                  checked), notes
    notes.append(f"no intermediate value diverges ({checked} compared); the difference "
                 "appears only at the outputs")
    return None, notes


# -- validate -------------------------------------------------------------------------------


def validate(model: str | os.PathLike[str] | bytes, *,
             free_dims: Mapping[str, int] | None = None,
             input_shapes: Mapping[str, Sequence[int]] | None = None,
             pin_inputs: Mapping[str, Any] | None = None, signature: str | None = None,
             input_dims: Mapping[str, Mapping[int, int]] | None = None,
             inputs: Mapping[str, np.ndarray] | None = None, seed: int = 0,
             browser: bool = False,
             backend: str = "reference", device: str = "cpu",
             rtol: float | None = None, atol: float | None = None, locate: bool = True,
             threads: int = 0, result: Any = None,
             progress: Callable[[str], None] | None = None,
             expected: Mapping[str, np.ndarray] | None = None,
             allow_roots: Iterable[str | os.PathLike[str]] | None = None,
             budgets: Budgets | None = None,
             target: Any = None, precision: str = "float32") -> ValidationReport:
    """Validate a model end to end (see the module docstring).

    `rtol` / `atol` default to the converted graph's compute type (`default_tolerance`:
    looser for float16 and quantized graphs); the report says which were used and why.
    `inputs` override generated inputs by name (see `inputs.make_inputs`); `result` reuses a
    conversion already made with the same options; `expected` gives stored reference values
    by output name (e.g. a model zoo's reference output), each also compared with our output
    (same tolerance) as an extra comparison named "<output> (stored)"; `browser` also runs
    the graph in a real browser (`check_in_browser`; raises `browser.BrowserUnavailable`
    when there is none). Raises what conversion
    raises
    (`InvalidModel`, `ConversionFailed`, ...) and ValueError for an unknown backend/device.
    `allow_roots` are folders besides the model's own that files the model refers to may lie
    in (see `converter.core.confine`). `budgets` bound the conversions (`converter.core.budgets`) and
    the runs: a graph over `max_tensor_bytes` / `max_run_bytes` raises `BudgetExceeded`
    before anything runs it (`converter.core.webnn.run_memory`; the divergence search, which keeps
    every intermediate value, is skipped with a note when that is over `max_run_bytes`).
    `target` converts for a WebNN implementation (`convert(target=...)`: the graph rewritten
    around its deviations; None: the default target, "portable"), so the backend and the browser check the rewritten graph; the
    rewritten graph is then checked against the target's limits
    (`converter.passes.targets.check.check_graph`): an operator, operand data type or rank it lacks
    fails validation (`ValidationReport.target_violations`).
    `precision="float16"` converts to float16 weights and compute (`convert(precision=...)`,
    float32 interface kept): the graph is compared with the original's float32 outputs under
    float16 tolerances (`default_tolerance`), the divergence search runs the float16 graph
    too, and an output that is inf/NaN where the original's is finite gets an overflow note.
    """
    say = progress or (lambda _msg: None)
    label = model_label(model)
    fmt = detect_format(model)
    timings: dict[str, float] = {}
    if result is None:
        say(f"converting {label}")
        start = time.perf_counter()
        result = convert(model, free_dims=free_dims, input_shapes=input_shapes,
                         pin_inputs=pin_inputs, signature=signature, input_dims=input_dims,
                         fmt=fmt, allow_roots=allow_roots, budgets=budgets, target=target,
                         precision=precision)
        timings["convert"] = time.perf_counter() - start
    rtol, atol, basis = default_tolerance(result.graph, rtol, atol)
    # before anything runs the model (onnxruntime / LiteRT, our backend, the browser)
    check_run_memory(result.graph, budgets, what=f"running {label}")
    with using(budgets):  # generated inputs are checked against max_constant_bytes
        feeds = make_inputs(result.source, seed=seed, overrides=inputs)
    say(f"running the original model in {get(fmt).reference}")
    with allowed_roots(allow_roots):
        ref_run = run_source(fmt, model, result.source, feeds, threads=threads)
    timings["source_run"] = ref_run.seconds
    say(f"running the converted graph on {backend} ({device})")
    start = time.perf_counter()
    with using(budgets):  # compile_graph checks the run budgets
        ours, run_s = run_converted(result, feeds, backend, device, threads)
    timings["compile"] = time.perf_counter() - start - run_s
    timings["webnn_run"] = run_s
    comparisons = _compare_outputs(result, ours, ref_run.outputs, rtol, atol)
    for name, stored in (expected or {}).items():
        comparisons.append(compare(f"{name} (stored)", np.asarray(ours[name]),
                                   np.asarray(stored), rtol=rtol, atol=atol))
    divergence = None
    notes: list[str] = list(ref_run.notes)
    chosen = load_target(target if target is not None
                         else getattr(result.report, "target", "") or DEFAULT_TARGET)
    prefix = f"{chosen.name}: "  # the rewrites convert(target=...) named in the report
    notes += [w for w in result.report.warnings if w.startswith(prefix)]
    if getattr(result.report, "host_steps", ""):  # compared as part of the whole pipeline
        notes.append(result.report.host_steps)
    if locate and not all(c.passed for c in comparisons) and _search_fits(result, budgets,
                                                                         notes):
        say("looking for the first diverging node")
        start = time.perf_counter()
        with allowed_roots(allow_roots), using(budgets):
            divergence, more = locate_divergence(fmt, model, result, feeds, backend=backend,
                                                 device=device, rtol=rtol, atol=atol,
                                                 threads=threads, precision=precision)
        timings["locate"] = time.perf_counter() - start
        notes += more
    if precision != "float32":
        notes += precision_notes(result, comparisons, ours, ref_run.outputs, precision,
                                 divergence, rtol, atol)
    checked = None
    if browser:
        say("running the converted graph in a real browser (Chromium, WebNN)")
        start = time.perf_counter()
        with using(budgets):
            checked = check_in_browser(result, feeds, ref_run.outputs, rtol=rtol, atol=atol)
        timings["browser"] = time.perf_counter() - start
    counts = result.report.counts() if hasattr(result.report, "counts") else {}
    violations = tuple(check_graph(result.graph, chosen))
    return ValidationReport(label, fmt, backend, device, rtol, atol, seed, tuple(comparisons),
                            divergence, timings, counts, tuple(notes), checked, basis,
                            chosen.name, violations, precision)


def _search_fits(result: Any, budgets: Budgets | None, notes: list[str]) -> bool:
    """Whether the divergence search, which keeps every intermediate value of both runs,
    fits the run budgets; else a note says why it is skipped."""
    try:
        check_run_memory(result.graph, budgets, keep_all=True,
                         what="keeping every intermediate value")
    except BudgetExceeded as exc:
        notes.append(f"the first diverging node was not searched for: {exc.message} "
                     f"({exc.flag})")
        return False
    return True


def _compare_outputs(result: Any, ours: Mapping[str, Any], reference: Mapping[str, Any],
                     rtol: float, atol: float) -> list[Comparison]:
    """Each source output of `ours` (source-side values) compared with the reference's."""
    comparisons = []
    for vi in result.outputs:
        ref = reference[vi.name]
        mine, ref_, steps = _align(result.source, vi.name, np.asarray(ours[vi.name]),
                                   np.asarray(ref))
        if ref_.dtype == np.bool_:
            mine = mine.astype(bool)
        comparisons.append(compare(vi.name, mine, ref_, rtol=rtol, atol=atol, steps=steps))
    return comparisons


def check_in_browser(result: Any, inputs: Mapping[str, np.ndarray],
                     reference: Mapping[str, Any], *, rtol: float = DEFAULT_RTOL,
                     atol: float = DEFAULT_ATOL, page: bool = True) -> BrowserCheck:
    """Run a ConversionResult's graph in a real browser (`browser.run_graph`) on the
    source-side `inputs` and compare its outputs with `reference` (the original framework's
    outputs by source name) as `validate` does (a model's host steps run in the browser
    too, in its JavaScript module). Raises `browser.BrowserUnavailable` when
    there is no browser; a graph the browser cannot build is a BrowserCheck with status
    "unsupported" (outside its opSupportLimits()) or "error"; `BudgetExceeded` for a graph
    over the active run budgets (`converter.core.webnn.run_memory`), before the browser starts."""
    check_run_memory(result.graph, what="running the graph in a browser")
    run = run_graph(result, {**inputs, **result.state_feeds(),  # + host-only model inputs
                             **graph_feeds(result.graph, result.inputs, inputs)}, page=page)

    def against(values: Mapping[str, Any] | None) -> list[Comparison]:
        if values is None:
            return []
        return _compare_outputs(result, source_outputs(result.outputs, values), reference,
                                rtol, atol)

    return classify(run, against(run.outputs), against(run.page_outputs))
