"""`--precision float16`: a built float32 graph rewritten to store its weights and compute in
float16, with its float32 interface kept.

```python
from converter.passes.precision import to_precision
halved = to_precision(graph, "float16")   # halved.graph, halved.notes, halved.saved_bytes
result = convert("model.onnx", precision="float16")   # the same pass, notes in the report
```

`PRECISION_PASSES` lists the passes (`converter.passes.framework.Pass`) each precision runs
(`convert` runs them: `converter.conversion.pipeline.conversion_passes`).

What the pass does (`to_precision(graph, "float16")`; "float32" gives the graph unchanged):

- float32 constants become float16 constants (each value rounded to nearest even): the
  weights take half the bytes. Nonzero values below float16's smallest subnormal (about
  6e-8) become 0; the notes count them.
- every operation that reads or produces float32 values is recorded again with those operands
  in float16: it computes in float16 (the reference backend rounds each operation's result to
  float16, as the spec's float16 operands do); `cast(x, "float32")` becomes
  `cast(x, "float16")`. Integer and quantized parts are untouched (int8/int4 values,
  indices, shapes; `dequantizeLinear` gets its scale in float16, so its output is float16).
- the boundary keeps float32: each float32 graph input stays a float32 input followed by a
  `cast` to float16, each float32 output is a `cast` of the float16 value back to float32.
  Users feed and read float32 arrays (the JavaScript export passes Float32Arrays, as before);
  what a web page ships is the float16 weights.

Exceptions (operations left in float32), each named in the notes:

- a float32 constant holding a finite value beyond float16's range (|x| > 65504, e.g. an
  attention mask of -3.4e38) is NOT saturated: it stays a float32 constant, and each
  operation reading it computes in float32 (its float16 operands cast up, its float32
  results cast down to float16). A result beyond the range then rounds to +-inf in float16:
  validation fails and names the output and the first diverging node (`validate`), never a
  silent pass.
- integer arithmetic carried in float32 stays in float32, where it is exact (float16 holds
  whole numbers up to 2048 only): values cast from an integer type and `dequantizeLinear`
  with a scale of ones (how ConvInteger, MatMulInteger and DynamicQuantizeLinear convert),
  and what `INTEGER_OPS` compute from them and whole-number constants (reading the original
  float32 constants). The first operation that takes them back to real values (a scale
  multiplication, a division) computes in float32 and its result goes to float16.
- an operation the builder refuses in float16 (none of the spec's float operators should;
  kept as a safety net) computes in float32 the same way.

Otherwise all float operations, reductions and softmax included, run in float16 as the spec
allows; graphs whose intermediate values exceed 65504 are numerically unsuited to float16
and fail validation with an overflow note.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from converter.core.errors import InvalidModel
from converter.core.webnn import MLGraph, MLGraphBuilder, MLOperand
from converter.core.webnn.operand import Operation
from converter.passes.framework import Pass, PassResult
from converter.results.result import ConversionResult

PRECISIONS = ("float32", "float16")
"""The values of `precision` (`convert(precision=...)`, `--precision`)."""
FLOAT16_MAX = float(np.finfo(np.float16).max)
FLOAT16_TINY = float(np.finfo(np.float16).smallest_subnormal)
INTEGER_OPS = frozenset({
    "identity", "reshape", "transpose", "slice", "pad", "concat", "split", "expand", "tile",
    "reverse", "gather", "gatherElements", "gatherND", "triangular", "where", "add", "sub",
    "mul", "neg", "abs", "relu", "max", "min", "clamp", "roundEven", "floor", "ceil",
    "reduceSum", "reduceMax", "reduceMin", "maxPool2d", "cumulativeSum", "conv2d",
    "convTranspose2d", "matmul"})
"""Operations whose result is whole numbers when every float32 operand is (clamp's bounds
and pad's value are taken as they are)."""
WIDE, NARROW = "float32", "float16"


@dataclass(frozen=True)
class Halved:
    """What `to_precision` gives: the graph (the original for "float32" or when it holds no
    float32 value), report notes, the float32 constant bytes before and after, and the
    operations kept in float32 (their descriptions)."""

    graph: MLGraph
    notes: tuple[str, ...]
    constant_bytes_before: int = 0
    constant_bytes_after: int = 0
    kept_float32: tuple[str, ...] = ()

    @property
    def saved_bytes(self) -> int:
        return self.constant_bytes_before - self.constant_bytes_after

    @property
    def changed(self) -> bool:
        return bool(self.notes)


def check_precision(precision: str) -> str:
    """`precision` when it is one of `PRECISIONS`, else InvalidModel naming them."""
    if precision not in PRECISIONS:
        raise InvalidModel(f"unknown precision {precision!r}: give one of "
                           f"{', '.join(PRECISIONS)}")
    return precision


def _describe(operation: Operation, index: int) -> str:
    label = operation.options.get("label")
    return f"{operation.op} {label!r}" if label else f"{operation.op} #{index}"


def _kib(n: int) -> str:
    return f"{n / 1024:,.1f} KiB" if n < 1 << 20 else f"{n / (1 << 20):,.2f} MiB"


class _Halving:
    """One `to_precision` run: the new builder and the old -> new operand maps."""

    def __init__(self, graph: MLGraph) -> None:
        self.b = MLGraphBuilder(graph.context)
        self.same: dict[int, MLOperand] = {}    # operands whose type does not change
        self.half: dict[int, MLOperand] = {}    # old float32 operand -> its float16 form
        self.full: dict[int, MLOperand] = {}    # old float32 operand -> its float32 form
        self.kept: list[str] = []
        self.integral: set[int] = set()  # old float32 operands holding integer arithmetic
        self.scaled: list[str] = []      # operations taking integer arithmetic back to floats
        self._whole: dict[int, bool] = {}
        self.big: list[str] = []
        self.flushed = 0

    def cast(self, x: MLOperand, data_type: str) -> MLOperand:
        return self.b.cast(x, data_type)

    def narrow(self, old: MLOperand) -> MLOperand | None:
        """The float16 form of a float32 operand; None for a constant kept in float32."""
        key = id(old)
        if key not in self.half:
            if key not in self.full:
                return None
            if self.full[key].kind == "constant":
                return None  # out of float16's range: kept, never cast in the graph
            self.half[key] = self.cast(self.full[key], NARROW)
        return self.half[key]

    def widen(self, old: MLOperand) -> MLOperand:
        """The float32 form of a float32 operand (a constant: its original values)."""
        key = id(old)
        if key not in self.full:
            self.full[key] = (
                MLOperand(self.b, old.descriptor, "constant", value=old.value)
                if old.kind == "constant" and old.value is not None
                else self.cast(self.half[key], WIDE))
        return self.full[key]

    def constant(self, old: MLOperand, where: str) -> None:
        value = old.value
        assert value is not None
        finite = value[np.isfinite(value)]
        peak = float(np.max(np.abs(finite))) if finite.size else 0.0
        if peak > FLOAT16_MAX:
            self.full[id(old)] = MLOperand(self.b, old.descriptor, "constant", value=value)
            self.big.append(f"{where} (max |value| {peak:.3g})")
            return
        tiny = (finite != 0) & (np.abs(finite) < FLOAT16_TINY / 2)
        self.flushed += int(np.count_nonzero(tiny))
        self.half[id(old)] = self.b.constant(value.astype(np.float16), NARROW)

    def map(self, value: Any, mode: str) -> Any:
        if isinstance(value, MLOperand):
            return self.operand(value, mode)
        if isinstance(value, (list, tuple)) and any(isinstance(v, MLOperand) for v in value):
            return [self.operand(v, mode) if isinstance(v, MLOperand) else v for v in value]
        return value

    def operand(self, old: MLOperand, mode: str) -> MLOperand:
        if old.data_type != WIDE:
            return self.same[id(old)]
        if mode == NARROW:
            got = self.narrow(old)
            if got is None:
                raise _KeepWide
            return got
        return self.widen(old)

    def call(self, operation: Operation, mode: str) -> list[MLOperand]:
        args = [self.map(a, mode) for a in operation.args]
        if operation.op == "cast" and mode == NARROW and args[1] == WIDE:
            args[1] = NARROW
        if operation.op == "cast" and args[0].data_type == args[1]:
            return [args[0]]  # a cast to the type it has (the pass run twice): the value
        return self.b.apply(operation.op, args,
                            {k: self.map(v, mode) for k, v in operation.options.items()})

    def integer_valued(self, old: MLOperand) -> bool:
        """Whether a float32 operand holds integers exactly: integer arithmetic carried in
        float32 (`integral`), or a constant of whole numbers within 2**24."""
        if id(old) in self.integral:
            return True
        if old.kind != "constant" or old.value is None:
            return False
        key = id(old)
        if key not in self._whole:
            v = old.value
            self._whole[key] = bool(np.all(np.isfinite(v)) and np.all(v == np.round(v))
                                    and np.all(np.abs(v) <= 1 << 24))
        return self._whole[key]

    def starts_integers(self, operation: Operation) -> bool:
        """An operation whose float32 result is whole numbers from integer values: a cast
        from an integer type, dequantizeLinear with a scale of ones (ConvInteger,
        MatMulInteger, DynamicQuantizeLinear's integer path as converted)."""
        if operation.op == "cast":
            return operation.args[1] == WIDE and operation.args[0].data_type not in (
                WIDE, NARROW)
        if operation.op == "dequantizeLinear":
            scale = operation.args[1]
            return scale.kind == "constant" and scale.value is not None and bool(
                np.all(scale.value == 1))
        return False

    def replay(self, operation: Operation, where: str) -> None:
        wide_in = [o for o in operation.operand_inputs() if o.data_type == WIDE]
        floats = bool(wide_in) or any(o.data_type == WIDE for o in operation.outputs) or (
            operation.op == "cast" and operation.args[1] == WIDE)
        integers = self.starts_integers(operation) or any(
            id(o) in self.integral for o in wide_in)
        if integers:  # integer arithmetic: exact in float32, not in float16
            whole = self.starts_integers(operation) or (
                operation.op in INTEGER_OPS and all(self.integer_valued(o) for o in wide_in))
            for old, new in zip(operation.outputs, self.call(operation, WIDE), strict=True):
                if old.data_type == WIDE:
                    self.full[id(old)] = new
                    if whole:
                        self.integral.add(id(old))
                else:
                    self.same[id(old)] = new
            if not whole and any(o.data_type == WIDE for o in operation.outputs):
                self.scaled.append(where)
            return
        outputs: list[MLOperand] | None
        if floats:
            try:
                outputs = self.call(operation, NARROW)
            except _KeepWide:
                outputs = None
                self.kept.append(f"{where} (reads a constant beyond float16's range)")
            except Exception as exc:  # noqa: BLE001 - the builder refuses float16: keep float32
                outputs = None
                self.kept.append(f"{where} ({type(exc).__name__}: {exc})")
            if outputs is not None:
                for old, new in zip(operation.outputs, outputs, strict=True):
                    (self.half if old.data_type == WIDE else self.same)[id(old)] = new
                return
        outputs = self.call(operation, WIDE)
        for old, new in zip(operation.outputs, outputs, strict=True):
            if old.data_type == WIDE:
                self.full[id(old)] = new  # its float16 form: cast when read (`narrow`)
            else:
                self.same[id(old)] = new


class _KeepWide(Exception):
    """An operation reads a float32 constant kept in float32."""


def to_precision(graph: MLGraph, precision: str) -> Halved:
    """`graph` with its float32 weights and compute in `precision` (see the module
    docstring); "float32" (the default everywhere) gives the graph unchanged. Raises
    InvalidModel for another precision."""
    check_precision(precision)
    touched = any(o.data_type == WIDE for o in (*graph.inputs.values(), *graph.constants,
                                                *graph.outputs.values())) or any(
        o.data_type == WIDE for op in graph.operations for o in op.outputs)
    if precision == WIDE or not touched:
        return Halved(graph, ())
    p = _Halving(graph)
    b = p.b
    for name, operand in graph.inputs.items():
        new = b.input(name, shape=list(operand.shape), data_type=operand.data_type)
        (p.full if operand.data_type == WIDE else p.same)[id(operand)] = new
    before = 0
    for index, c in enumerate(graph.constants):
        if c.data_type == WIDE:
            before += c.descriptor.byte_length
            p.constant(c, f"constant #{index} {list(c.shape)}")
        else:  # read-only data: shared with the original graph
            p.same[id(c)] = MLOperand(b, c.descriptor, "constant", value=c.value)
    for index, operation in enumerate(graph.operations):
        p.replay(operation, _describe(operation, index))
    results: dict[str, MLOperand] = {}
    for name, operand in graph.outputs.items():
        if operand.data_type == WIDE and id(operand) not in p.integral:
            half = p.narrow(operand)
            results[name] = p.cast(half, WIDE) if half is not None else p.widen(operand)
            continue
        # integer arithmetic keeps its exact float32 value; other types are unchanged
        got = p.widen(operand) if operand.data_type == WIDE else p.same[id(operand)]
        results[name] = got if got.kind == "output" else b.identity(got)
    built = b.build(results)
    shared = {id(c.value) for c in graph.constants if c.data_type != WIDE}
    after = sum(c.descriptor.byte_length for c in built.constants
                if c.data_type in (WIDE, NARROW) and id(c.value) not in shared)
    order = {name: built.inputs[name] for name in graph.inputs if name in built.inputs}
    if list(order) != list(built.inputs):  # the original's input order
        built = dataclasses.replace(built, inputs=order)
    if graph.narrowed_inputs or graph.narrowed_outputs:  # integer IO is untouched: kept
        built = dataclasses.replace(
            built, narrowed_inputs={n: t for n, t in graph.narrowed_inputs.items()
                                    if n in built.inputs},
            narrowed_outputs=dict(graph.narrowed_outputs))
    return Halved(built, tuple(_notes(graph, p, before, after)), before, after,
                  tuple(p.kept))


def _notes(graph: MLGraph, p: _Halving, before: int, after: int) -> list[str]:
    wide_in = [n for n, o in graph.inputs.items() if o.data_type == WIDE]
    wide_out = [n for n, o in graph.outputs.items() if o.data_type == WIDE]
    notes = [f"float16: float32 weights stored as float16: {_kib(before)} -> {_kib(after)} "
             f"({_kib(before - after)} saved); float32 operations computed in float16"]
    if wide_in or wide_out:
        notes.append("float16: the float32 interface is kept: "
                     + "; ".join(part for part in (
                         f"inputs {_names(wide_in)} cast to float16" if wide_in else "",
                         f"outputs {_names(wide_out)} cast back to float32" if wide_out
                         else "") if part))
    if p.flushed:
        notes.append(f"float16: {p.flushed} nonzero weight values below float16's smallest "
                     f"subnormal ({FLOAT16_TINY:.3g}) became 0")
    if p.big:
        notes.append(f"float16: kept in float32 (values beyond float16's range +-65504, not "
                     f"saturated): {_listed(p.big)}")
    if p.scaled:
        notes.append(f"float16: integer arithmetic carried in float32 (values cast from integer "
                     f"types, dequantizeLinear with a scale of 1) kept in float32, exact there; "
                     f"the operations scaling it back to real values compute in float32, their "
                     f"results rounded to float16: {_listed(p.scaled)}")
    if p.kept:
        notes.append(f"float16: operations computed in float32 (results rounded to float16): "
                     f"{_listed(p.kept)}")
    return notes


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names[:5]) + (f" and {len(names) - 5} more"
                                                    if len(names) > 5 else "")


def _listed(items: Sequence[str]) -> str:
    return ", ".join(items[:3]) + (f" and {len(items) - 3} more" if len(items) > 3 else "")


def _float16(graph: MLGraph) -> PassResult:
    halved = to_precision(graph, NARROW)
    return PassResult(halved.graph, halved.notes)


PRECISION_PASSES: Mapping[str, tuple[Pass, ...]] = MappingProxyType({
    "float32": (),
    "float16": (Pass("float16", _float16),),
})
"""The passes each precision (`PRECISIONS`) runs on a converted graph, in order."""


def overflow_note(name: str, ours: npt.ArrayLike, reference: npt.ArrayLike) -> str | None:
    """A note when `ours` (a float16-computed output) is inf/NaN where `reference` (the
    original's float32 output) is finite: a value overflowed float16; else None."""
    mine, ref = np.asarray(ours), np.asarray(reference)
    if mine.dtype.kind != "f" or ref.dtype.kind != "f" or mine.size != ref.size:
        return None
    bad = ~np.isfinite(mine.reshape(-1)) & np.isfinite(ref.reshape(-1))
    count = int(np.count_nonzero(bad))
    if not count:
        return None
    peak = float(np.max(np.abs(ref[np.isfinite(ref)]), initial=0.0))
    return (f"float16 overflow: output {name!r} has {count} of {mine.size} values inf/NaN "
            f"where the original's are finite (its max |value| {peak:.3g}; float16 holds "
            f"+-{FLOAT16_MAX:g}): the model is numerically unsuited to float16 here (see the "
            "first diverging node)")


class Compared(Protocol):
    """An output comparison as `precision_notes` reads it (`validate`'s `Comparison`)."""

    @property
    def name(self) -> str: ...
    @property
    def passed(self) -> bool: ...
    @property
    def max_abs(self) -> float: ...
    @property
    def bound(self) -> float: ...


class Diverged(Protocol):
    """The first diverging node as `precision_notes` reads it (`validate`'s `Divergence`)."""

    @property
    def comparison(self) -> Compared: ...
    @property
    def op_type(self) -> str: ...
    @property
    def node_name(self) -> str: ...


def precision_notes(result: ConversionResult, comparisons: Sequence[Compared],
                    ours: Mapping[str, npt.ArrayLike], reference: Mapping[str, npt.ArrayLike],
                    precision: str, divergence: Diverged | None = None,
                    rtol: float = 0.0, atol: float = 0.0) -> list[str]:
    """`validate`'s notes for a `precision` conversion: the pass's report notes, an
    `overflow_note` per failed output comparison, and where the first diverging node is
    inf/NaN, how far the original's value there peaks (from its tolerance bound `atol + rtol
    * peak`)."""
    prefix = f"{precision}: "
    notes = [w for w in result.report.warnings if w.startswith(prefix)]
    for c in comparisons:
        if not c.passed and c.name in ours and c.name in reference:
            note = overflow_note(c.name, ours[c.name], reference[c.name])
            if note:
                notes.append(note)
    if divergence is not None and not np.isfinite(divergence.comparison.max_abs) and rtol > 0:
        peak = (divergence.comparison.bound - atol) / rtol
        notes.append(f"float16 overflow first at {divergence.op_type} "
                     f"{divergence.node_name!r}: the original's value there peaks at about "
                     f"{peak:.3g}" + (f" (> {FLOAT16_MAX:g})" if peak > FLOAT16_MAX else ""))
    return notes


__all__ = ["FLOAT16_MAX", "PRECISIONS", "PRECISION_PASSES", "Compared", "Diverged", "Halved",
           "check_precision", "overflow_note", "precision_notes",
           "to_precision"]
