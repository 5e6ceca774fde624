"""Rewrite rules that make a WebNN graph right on one target and keep it right everywhere else.

`lower(graph, target)` replays a built `MLGraph` through a fresh `MLGraphBuilder` (same
context; constants shared, not copied), operation by operation (`Rewrite.emit`): the operation
is recorded on the new builder, then the rules the target names (`Target.rules`), in registry
order, may replace it with other WebNN operations; the first that does wins (the recorded
operation is then unreachable and left out of the built graph). Operations a rule emits go
through the rules again, so rules compose (a grouped, dilated, padded convTranspose2d is split
by one rule, its filters dilated by another, its padding cropped by a third). The result has
the same inputs, outputs and results (every rule is an exact rewrite, or exact up to
floating-point rounding, on any implementation that follows the spec) plus one note per rule
and kind of rewrite (`Lowered.notes`), which the conversion report carries as warnings. When
no rule applies the original graph comes back unchanged.

A rule is a function `(rw: Rewrite, operation) -> list[MLOperand] | None` registered with
`@rule(name, ops..., why=...)`: `operation` is the new builder's record (`Operation`: spec op
name, args, options with every default filled in, outputs), and the function returns the
replacement outputs (one per output, same descriptors) or None to keep the operation. `rw.b`
is the new builder, `rw.emit(op, args, options)` emits another operation through the rules,
`rw.supports(op, role, data_type)` reads the target's `opSupportLimits()`, `rw.note(...)`
records what was done.

Rules whose `limits` flag is set follow from the limits alone and apply to any target with
limits (a limits file given as the target): they widen data types the target's
`opSupportLimits()` lacks where that is exact.

The rules (see `RULES`; the README's "Chromium's deviations" table lists what each works
around): pool-padding, pool-dilations, convtranspose-groups, convtranspose-dilations,
convtranspose-padding, scatterelements-indices, slice-strides (behaviour of Chromium's LiteRT
backend); widen-types, reduce-l1-unsigned, clamp-minmax, abs-minmax (limits).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..serialize.tables import op_signature
from ..webnn import MLGraph, MLGraphBuilder, MLOperand
from ..webnn.dtypes import type_range
from ..webnn.operand import Operation

if TYPE_CHECKING:
    from . import Target

RuleFn = Callable[["Rewrite", Operation], "list[MLOperand] | None"]
MAX_DEPTH = 16


@dataclass(frozen=True)
class Rule:
    """A registered rewrite: `name`, the operators it looks at, what it works around (`why`,
    said in the report) and whether it follows from the limits alone (`limits`)."""

    name: str
    ops: frozenset[str]
    fn: RuleFn = field(repr=False)
    why: str
    limits: bool = False


RULES: dict[str, Rule] = {}
"""Every rule by name, in the order `lower` tries them."""


def rule(name: str, *ops: str, why: str, limits: bool = False) -> Callable[[RuleFn], RuleFn]:
    """Register a rewrite rule for `ops` (see the module docstring)."""

    def register(fn: RuleFn) -> RuleFn:
        if name in RULES:
            raise ValueError(f"rule {name!r} is registered twice")
        RULES[name] = Rule(name, frozenset(ops), fn, why, limits)
        return fn

    return register


@dataclass
class Lowered:
    """What `lower` gives: the graph (the original when nothing was rewritten), one note per
    rule and kind of rewrite, and how many operations each rule rewrote."""

    graph: MLGraph
    notes: list[str]
    applied: dict[str, int]

    @property
    def changed(self) -> bool:
        return bool(self.applied)


def _describe(operation: Operation, index: int) -> str:
    label = operation.options.get("label")
    if label:
        return f"{operation.op} {label!r}"
    out = operation.outputs[0] if operation.outputs else None
    if out is None:
        return f"{operation.op} #{index}"
    return f"{operation.op} #{index} ({out.data_type} [{'x'.join(map(str, out.shape))}])"


class Rewrite:
    """The state of one `lower` run: the new builder `b`, the target, the active rules and
    the notes."""

    def __init__(self, graph: MLGraph, target: Target, rules: Sequence[Rule]) -> None:
        self.graph = graph
        self.target = target
        self.b = MLGraphBuilder(graph.context)
        self.limits: Mapping[str, Any] = target.limits
        self.by_op: dict[str, list[Rule]] = {}
        for r in rules:
            for op in r.ops:
                self.by_op.setdefault(op, []).append(r)
        self._notes: dict[tuple[str, str], list[str]] = {}
        self.applied: dict[str, int] = {}
        self.where = ""
        self._depth = 0
        self._current: list[str] = []

    # -- limits --------------------------------------------------------------------------
    def supports(self, op: str, role: str, data_type: str, rank: int | None = None) -> bool:
        """Whether the target's opSupportLimits() lets `op`'s `role` be `data_type` (and
        `rank`); True for a target without limits or a role its limits do not list."""
        if not self.limits:
            return True
        lim = self.limits.get(op)
        if not isinstance(lim, Mapping):
            return False
        entry = lim.get(role)
        if not isinstance(entry, Mapping):
            return True
        types = entry.get("dataTypes")
        if isinstance(types, Sequence) and not isinstance(types, str) and data_type not in types:
            return False
        ranks = entry.get("rankRange")
        if rank is not None and isinstance(ranks, Mapping):
            return int(ranks.get("min", 0)) <= rank <= int(ranks.get("max", 1 << 30))
        return True

    # -- emitting ------------------------------------------------------------------------
    def call(self, op: str, args: Sequence[Any], options: Mapping[str, Any]) -> list[MLOperand]:
        """Record spec operator `op` on the new builder (spec-ordered `args`, spec-named
        `options`, as `Operation` holds them), without the rules; its outputs as a list."""
        sig = op_signature(op)
        if sig is None:
            raise ValueError(f"unknown WebNN operator {op!r}")
        kwargs = {}
        for key, value in options.items():
            param = sig.options.get(key)
            if param is None:
                raise ValueError(f"{op}: unknown option {key!r}")
            kwargs[param.py_name] = value
        result = getattr(self.b, sig.method)(*args, **kwargs)
        return list(result) if isinstance(result, (list, tuple)) else [result]

    def emit(self, op: str, args: Sequence[Any], options: Mapping[str, Any] | None = None
             ) -> list[MLOperand]:
        """Record `op` on the new builder, then let the rules replace it; its outputs."""
        outputs = self.call(op, args, options or {})
        operation = outputs[0].operator
        assert operation is not None
        if self._depth >= MAX_DEPTH:
            raise RecursionError(f"{self.target.name}: rules nest deeper than {MAX_DEPTH} "
                                 f"levels at {self.where}")
        for r in self.by_op.get(op, ()):
            if r.name in self._current:
                continue  # a rule does not rewrite what it emits itself
            self._depth += 1
            self._current.append(r.name)
            try:
                got = r.fn(self, operation)
            finally:
                self._depth -= 1
                self._current.pop()
            if got is None:
                continue
            if len(got) != len(outputs) or any(
                    g.descriptor != o.descriptor for g, o in zip(got, outputs, strict=False)):
                raise AssertionError(f"rule {r.name}: {op} rewritten to "
                                     f"{[g.descriptor for g in got]}, not "
                                     f"{[o.descriptor for o in outputs]}")
            self.applied[r.name] = self.applied.get(r.name, 0) + 1
            return got
        return outputs

    def emit1(self, op: str, *args: Any, **options: Any) -> MLOperand:
        """`emit` of a one-output op with spec-named keyword options."""
        return self.emit(op, args, options)[0]

    def const(self, value: Any, data_type: str) -> MLOperand:
        """A constant of `data_type` (numbers cast with the spec's rules)."""
        arr = np.asarray(value)
        return self.b.constant(arr if arr.dtype.kind in "iub" else arr.astype(np.float64),
                               data_type)

    def cast(self, x: MLOperand, data_type: str) -> MLOperand:
        """`x` as `data_type`: a cast operation, or for a constant widened to a type that
        holds its values (`WIDER`), the widened constant."""
        if x.data_type == data_type:
            return x
        if x.kind == "constant" and x.value is not None and \
                data_type in WIDER.get(x.data_type, ()):
            return self.b.constant(x.value.astype(data_type), data_type)
        return self.emit1("cast", x, data_type)

    def note(self, rule_name: str, text: str) -> None:
        """Record one rewrite of the current source operation by `rule_name`; `text` says
        what was done (operations sharing a text are listed in one note)."""
        where = self._notes.setdefault((rule_name, text), [])
        if self.where not in where:
            where.append(self.where)

    def notes(self) -> list[str]:
        out = []
        for (name, text), where in self._notes.items():
            shown = ", ".join(where[:3]) + (f" and {len(where) - 3} more" if len(where) > 3
                                            else "")
            out.append(f"{self.target.name}: {shown}: {text} ({RULES[name].why}; rule "
                       f"{name})")
        return out


def _map(value: Any, new: Mapping[int, MLOperand]) -> Any:
    if isinstance(value, MLOperand):
        return new[id(value)]
    if isinstance(value, (list, tuple)) and any(isinstance(v, MLOperand) for v in value):
        return [new[id(v)] if isinstance(v, MLOperand) else v for v in value]
    return value


def rules_for(target: Target) -> list[Rule]:
    """The target's rules in registry order."""
    return [r for name, r in RULES.items() if name in target.rules]


def lower(graph: MLGraph, target: Target, *, only: Iterable[str] | None = None) -> Lowered:
    """`graph` rewritten for `target` (`converter.targets.load_target`); `only` limits the
    rules to those named. See the module docstring."""
    wanted = set(only) if only is not None else None
    active = [r for r in rules_for(target) if wanted is None or r.name in wanted]
    ops = {op for r in active for op in r.ops}
    if not any(o.op in ops for o in graph.operations):
        return Lowered(graph, [], {})
    rw = Rewrite(graph, target, active)
    b = rw.b
    new: dict[int, MLOperand] = {}
    for name, operand in graph.inputs.items():
        new[id(operand)] = b.input(name, shape=list(operand.shape),
                                   data_type=operand.data_type)
    for c in graph.constants:  # read-only data: shared with the original graph
        new[id(c)] = MLOperand(b, c.descriptor, "constant", value=c.value)
    for index, operation in enumerate(graph.operations):
        args = [_map(a, new) for a in operation.args]
        options = {k: _map(v, new) for k, v in operation.options.items()}
        rw.where = _describe(operation, index)
        outputs = rw.emit(operation.op, args, options)
        for old, got in zip(operation.outputs, outputs, strict=True):
            new[id(old)] = got
    if not rw.applied:
        return Lowered(graph, [], {})
    results: dict[str, MLOperand] = {}
    for name, operand in graph.outputs.items():
        got = new[id(operand)]
        results[name] = got if got.kind == "output" else b.identity(got)
    built = b.build(results)
    order = {name: built.inputs[name] for name in graph.inputs if name in built.inputs}
    if list(order) != list(built.inputs):  # the original's input order
        built = dataclasses.replace(built, inputs=order)
    return Lowered(built, rw.notes(), dict(rw.applied))


# ============================================================================================
# Chromium (LiteRT) behaviour
# ============================================================================================


def _spatial(layout: str) -> tuple[int, int]:
    return (2, 3) if layout == "nchw" else (1, 2)


def _geometry(operation: Operation) -> dict[str, list[int]]:
    """Pool geometry per spatial axis (height, width): input sizes `n`, window `k`, strides
    `s`, dilations `d`, paddings `p0`/`p1`, output sizes `o`."""
    x, out, opt = operation.args[0], operation.outputs[0], operation.options
    h, w = _spatial(opt["layout"])
    pad = list(opt["padding"])
    return {"n": [x.shape[h], x.shape[w]], "k": list(opt["windowDimensions"]),
            "s": list(opt["strides"]), "d": list(opt["dilations"]),
            "p0": [pad[0], pad[2]], "p1": [pad[1], pad[3]], "o": [out.shape[h], out.shape[w]]}


def _valid_counts(g: Mapping[str, list[int]]) -> np.ndarray:
    """Per output position (height x width), how many window cells lie on real cells."""
    per_axis = []
    for n, k, s, d, p, o in zip(g["n"], g["k"], g["s"], g["d"], g["p0"], g["o"], strict=True):
        pos = np.arange(o)[:, None] * s + np.arange(k)[None, :] * d - p
        per_axis.append(((pos >= 0) & (pos < n)).sum(axis=1))
    return np.outer(per_axis[0], per_axis[1]).astype(np.float64)


def _map_shape(layout: str, sizes: Sequence[int]) -> list[int]:
    return [1, 1, *sizes] if layout == "nchw" else [1, *sizes, 1]


def _spatial_pad(rw: Rewrite, x: MLOperand, layout: str, begin: Sequence[int],
                 end: Sequence[int], value: float = 0.0) -> MLOperand:
    """`x` padded with `value` (height, width: `begin` / `end`)."""
    h, w = _spatial(layout)
    b0, e0 = [0] * 4, [0] * 4
    b0[h], b0[w] = begin
    e0[h], e0[w] = end
    return rw.emit1("pad", x, b0, e0, value=value) if any(b0) or any(e0) else x


def _needed_end(g: Mapping[str, list[int]]) -> list[int]:
    """End padding that makes the padded input as long as the output windows reach (ceil
    rounding may let the last window hang over the input and its padding)."""
    return [(o - 1) * s + (k - 1) * d + 1 - p - n
            for o, s, k, d, p, n in zip(g["o"], g["s"], g["k"], g["d"], g["p0"], g["n"],
                                        strict=True)]


@rule("pool-padding", "averagePool2d", "l2Pool2d",
      why="Chromium counts padded cells in averagePool2d windows and rescales l2Pool2d by "
          "them under symmetric padding; the spec leaves them out (WebNN issue #876)")
def pool_padding(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """averagePool2d / l2Pool2d whose windows reach padding (explicit padding, or ceil
    rounding letting the last window hang over the input): pad explicitly with zeros, pool
    without padding, and for averagePool2d multiply by (window cells / real cells) per output
    position. (Zeros add nothing to l2Pool2d's sum of squares.)"""
    g = _geometry(operation)
    end = [max(p, e) for p, e in zip(g["p1"], _needed_end(g), strict=True)]
    if not any(g["p0"]) and not any(end):
        return None
    opt = operation.options
    layout = opt["layout"]
    padded = _spatial_pad(rw, operation.args[0], layout, g["p0"], end)
    options = {k: v for k, v in opt.items() if k not in ("outputSizes",)}
    options.update(padding=[0, 0, 0, 0], outputShapeRounding="floor")
    pooled = rw.emit(operation.op, [padded], options)[0]
    if operation.op == "l2Pool2d":
        rw.note("pool-padding", "padded explicitly with zeros")
        return [pooled]
    factor = float(g["k"][0] * g["k"][1]) / _valid_counts(g)
    rw.note("pool-padding", "padded explicitly with zeros, the mean rescaled to the real cells")
    if np.all(factor == 1.0):
        return [pooled]
    scale = rw.const(factor.reshape(_map_shape(layout, g["o"])), pooled.data_type)
    return [rw.emit1("mul", pooled, scale)]


def _strided(rw: Rewrite, x: MLOperand, axis: int, start: int, count: int, stride: int
             ) -> MLOperand:
    """`count` elements of `x` along `axis` from `start` every `stride`-th."""
    starts = [0] * x.rank
    sizes = list(x.shape)
    starts[axis] = start
    sizes[axis] = (count - 1) * stride + 1
    strides = [1] * x.rank
    strides[axis] = stride if count > 1 else 1
    if sizes == list(x.shape) and start == 0 and strides[axis] == 1:
        return x
    return rw.emit1("slice", x, starts, sizes, strides=strides)


@rule("pool-dilations", "averagePool2d", "l2Pool2d", "maxPool2d",
      why="Chromium (LiteRT) cannot build pools with dilations")
def pool_dilations(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """A pool with dilations as strided slices of the (explicitly padded) input combined
    along the width, then along the height (max; sum, then divided by the real cells per
    window for averagePool2d; sum of squares, then the square root, for l2Pool2d)."""
    g = _geometry(operation)
    if g["d"] == [1, 1]:
        return None
    op, opt = operation.op, operation.options
    layout = opt["layout"]
    x = operation.args[0]
    fill = 0.0
    if op == "maxPool2d":
        fill = float("-inf") if x.data_type in ("float32", "float16") \
            else float(type_range(x.data_type)[0])
    end = [max(p, e) for p, e in zip(g["p1"], _needed_end(g), strict=True)]
    y = _spatial_pad(rw, x, layout, g["p0"], end, value=fill)
    if op == "l2Pool2d":
        y = rw.emit1("mul", y, y)
    combine = "max" if op == "maxPool2d" else "add"
    for i in (1, 0):  # width, then height
        axis = _spatial(layout)[i]
        acc = None
        for j in range(g["k"][i]):
            part = _strided(rw, y, axis, j * g["d"][i], g["o"][i], g["s"][i])
            acc = part if acc is None else rw.emit1(combine, acc, part)
        assert acc is not None
        y = acc
    if op == "averagePool2d":
        counts = _valid_counts(g).reshape(_map_shape(layout, g["o"]))
        y = rw.emit1("div", y, rw.const(counts, y.data_type))
    elif op == "l2Pool2d":
        y = rw.emit1("sqrt", y)
    rw.note("pool-dilations", f"dilations {g['d']} as strided slices")
    return [y]


_CT_FILTER_AXES = {"iohw": (0, 1, (2, 3)), "hwoi": (3, 2, (0, 1)), "ohwi": (3, 0, (1, 2))}
"""convTranspose2d filter layout -> (input channel axis, output channel axis, spatial axes)."""


@rule("convtranspose-groups", "convTranspose2d",
      why="Chromium (LiteRT) cannot build convTranspose2d with groups")
def convtranspose_groups(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """convTranspose2d with groups > 1: one convTranspose2d per group (input channels,
    filter input channels and bias split), outputs concatenated along the channels."""
    opt = operation.options
    groups = int(opt["groups"])
    if groups == 1:
        return None
    x, w = operation.args
    c_axis = 1 if opt["inputLayout"] == "nchw" else 3
    xs = rw.emit("split", [x, groups], {"axis": c_axis})
    ws = rw.emit("split", [w, groups], {"axis": _CT_FILTER_AXES[opt["filterLayout"]][0]})
    bias = opt.get("bias")
    bs = rw.emit("split", [bias, groups], {"axis": 0}) if bias is not None else [None] * groups
    outs = []
    for xi, wi, bi in zip(xs, ws, bs, strict=True):
        options = {k: v for k, v in opt.items() if k != "bias"}
        options["groups"] = 1
        if bi is not None:
            options["bias"] = bi
        outs.append(rw.emit("convTranspose2d", [xi, wi], options)[0])
    rw.note("convtranspose-groups", f"{groups} groups as one convTranspose2d per group")
    return [rw.emit1("concat", outs, c_axis)]


def _dilate_axis(rw: Rewrite, w: MLOperand, axis: int, d: int) -> MLOperand:
    """`w` with d - 1 zeros between neighbours along `axis` (reshape, pad, reshape, slice)."""
    shape = list(w.shape)
    k = shape[axis]
    grown = shape[:axis + 1] + [1] + shape[axis + 1:]
    y = rw.emit1("reshape", w, grown)
    ends = [0] * len(grown)
    ends[axis + 1] = d - 1
    y = rw.emit1("pad", y, [0] * len(grown), ends)
    flat = shape[:axis] + [k * d] + shape[axis + 1:]
    y = rw.emit1("reshape", y, flat)
    sizes = list(flat)
    sizes[axis] = (k - 1) * d + 1
    return rw.emit1("slice", y, [0] * len(flat), sizes)


@rule("convtranspose-dilations", "convTranspose2d",
      why="Chromium (LiteRT) cannot build convTranspose2d with dilations")
def convtranspose_dilations(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """convTranspose2d with dilations: the filter dilated (zeros between its taps; computed
    here for a constant filter, with reshape/pad/slice otherwise) and dilations 1."""
    opt = operation.options
    dil = list(opt["dilations"])
    if dil == [1, 1]:
        return None
    x, w = operation.args
    spatial = _CT_FILTER_AXES[opt["filterLayout"]][2]
    if w.kind == "constant" and w.value is not None:
        shape = list(w.shape)
        for axis, d in zip(spatial, dil, strict=True):
            shape[axis] = (shape[axis] - 1) * d + 1
        arr = np.zeros(shape, dtype=w.value.dtype)
        index: list[Any] = [slice(None)] * 4
        for axis, d in zip(spatial, dil, strict=True):
            index[axis] = slice(None, None, d)
        arr[tuple(index)] = w.value
        dilated = rw.b.constant(arr, w.data_type)
    else:
        dilated = w
        for axis, d in zip(spatial, dil, strict=True):
            if d > 1:
                dilated = _dilate_axis(rw, dilated, axis, d)
    options = dict(opt)
    options["dilations"] = [1, 1]
    rw.note("convtranspose-dilations", f"dilations {dil} as a dilated filter")
    return rw.emit("convTranspose2d", [x, dilated], options)


@rule("convtranspose-padding", "convTranspose2d",
      why="Chromium (LiteRT) cannot build convTranspose2d with most explicit padding")
def convtranspose_padding(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """convTranspose2d with padding: without padding (outputPadding covering what the padded
    output reaches past the full one), then the padded-away border sliced off."""
    opt = operation.options
    pad = list(opt["padding"])
    if not any(pad):
        return None
    x, w = operation.args
    out = operation.outputs[0]
    h, wa = _spatial(opt["inputLayout"])
    k = _CT_FILTER_AXES[opt["filterLayout"]][2]
    starts, sizes, extra = [0] * 4, list(out.shape), []
    for i, axis in enumerate((h, wa)):
        full = ((x.shape[axis] - 1) * opt["strides"][i]
                + (w.shape[k[i]] - 1) * opt["dilations"][i] + 1)
        begin = pad[2 * i]
        extra.append(max(0, begin + out.shape[axis] - full))
        starts[axis] = begin
    options = {key: v for key, v in opt.items() if key != "outputSizes"}
    options.update(padding=[0, 0, 0, 0], outputPadding=extra)
    y = rw.emit("convTranspose2d", [x, w], options)[0]
    rw.note("convtranspose-padding", "padding as a crop of the unpadded result")
    return [rw.emit1("slice", y, starts, sizes)]


@rule("scatterelements-indices", "scatterElements",
      why="Chromium (LiteRT) builds scatterElements only with constant indices")
def scatterelements_indices(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """scatterElements with indices computed at run time: scatterND with full coordinates
    (every axis' position, the indices along `axis`)."""
    x, idx, upd = operation.args
    if idx.kind == "constant":
        return None
    axis = int(operation.options["axis"])
    shape = list(idx.shape)
    grid = np.indices(shape, dtype=np.int32)
    parts = []
    for j in range(len(shape)):
        if j == axis:
            parts.append(rw.emit1("reshape", rw.cast(idx, "int32"), [*shape, 1]))
        else:
            parts.append(rw.const(grid[j].reshape(*shape, 1), "int32"))
    coords = parts[0] if len(parts) == 1 else rw.emit1("concat", parts, len(shape))
    rw.note("scatterelements-indices", "run-time indices: scatterND instead")
    return [rw.emit1("scatterND", x, coords, upd)]


@rule("slice-strides", "slice",
      why="Chromium (LiteRT) rejects a slice stride longer than the sliced size")
def slice_strides(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """slice whose stride exceeds the size it slices (one element taken): stride 1."""
    x, starts, sizes = operation.args
    strides = list(operation.options["strides"])
    fixed = [1 if k > n else k for k, n in zip(strides, sizes, strict=True)]
    if fixed == strides:
        return None
    rw.note("slice-strides", "strides longer than the sliced size set to 1")
    return [rw.emit1("slice", x, starts, sizes, strides=fixed)]


# ============================================================================================
# data types outside the target's opSupportLimits()
# ============================================================================================

MOVEMENT = frozenset({"concat", "expand", "gather", "gatherElements", "gatherND", "identity",
                      "pad", "reshape", "reverse", "scatterElements", "scatterND", "slice",
                      "split", "tile", "transpose", "triangular", "where"})
"""Operators that only move values: exact in any type that holds the values."""
ORDER = frozenset({"argMax", "argMin", "clamp", "equal", "greater", "greaterOrEqual",
                   "lesser", "lesserOrEqual", "max", "maxPool2d", "min", "notEqual",
                   "reduceMax", "reduceMin", "relu", "sign"})
"""Operators that compare or pick values: exact in any type that holds the values in order."""
MODULAR = frozenset({"abs", "add", "cumulativeSum", "div", "mul", "neg", "reduceProduct",
                     "reduceSum", "sub"})
"""Integer arithmetic: exact in a wider integer type, the result cast back (int -> int casts
keep the low bits, so wrap-around is the same)."""
WIDER = {"int8": ("int32", "int64", "float32", "float16"),
         "uint8": ("int32", "int64", "float32", "float16"),
         "int32": ("int64",), "uint32": ("int64",), "float16": ("float32",)}
"""Types that hold every value of a type, nearest first."""
NOT_VALUES = frozenset({"indices", "condition"})
"""Roles whose operands are not values of the operation's type."""


def _roles(operation: Operation) -> list[tuple[str, MLOperand, int, int]]:
    """(role, operand, position, index in a list or -1) of every operand an operation reads;
    position counts args then options (by order)."""
    sig = op_signature(operation.op)
    names = [p.spec_name for p in sig.positional] if sig else []
    out = []
    items = list(zip(names, operation.args, strict=False)) + list(operation.options.items())
    for pos, (role, value) in enumerate(items):
        if isinstance(value, MLOperand):
            out.append((role, value, pos, -1))
        elif isinstance(value, (list, tuple)):
            out += [(role, v, pos, i) for i, v in enumerate(value) if isinstance(v, MLOperand)]
    return out


def _output_role(rw: Rewrite, op: str, i: int) -> str:
    lim = rw.limits.get(op)
    if isinstance(lim, Mapping):
        if "output" in lim:
            return "output"
        if "outputs" in lim:
            return "outputs"
    return f"output{i}"


def _unsupported(rw: Rewrite, operation: Operation) -> set[str]:
    """Data types of value operands (inputs and outputs) the target's limits lack."""
    bad = set()
    for role, operand, _, _ in _roles(operation):
        if role not in NOT_VALUES and not rw.supports(operation.op, role, operand.data_type):
            bad.add(operand.data_type)
    for i, out in enumerate(operation.outputs):
        if not rw.supports(operation.op, _output_role(rw, operation.op, i), out.data_type):
            bad.add(out.data_type)
    return bad


def _wide_type(rw: Rewrite, operation: Operation, narrow: str) -> str | None:
    """The nearest type that holds `narrow`'s values exactly for this operation, is inside
    the limits for every role `narrow` takes and can be cast to and from."""
    op = operation.op
    integer_only = op in MODULAR
    roles = {role for role, operand, _, _ in _roles(operation)
             if operand.data_type == narrow and role not in NOT_VALUES}
    outs = [_output_role(rw, op, i) for i, o in enumerate(operation.outputs)
            if o.data_type == narrow]
    for wide in WIDER.get(narrow, ()):
        if integer_only and wide.startswith("float"):
            continue
        if all(rw.supports(op, r, wide) for r in [*roles, *outs]) and \
                rw.supports("cast", "input", narrow) and rw.supports("cast", "output", wide) \
                and (not outs or (rw.supports("cast", "input", wide)
                                  and rw.supports("cast", "output", narrow))):
            return wide
    return None


@rule("widen-types", *sorted(MOVEMENT | ORDER | MODULAR), limits=True,
      why="outside the target's opSupportLimits()")
def widen_types(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """An operation on a data type the target lacks, run on a wider type that holds its
    values (int8/uint8 -> int32/int64/float32, int32/uint32 -> int64, float16 -> float32;
    integer arithmetic only on wider integers): inputs cast up, outputs cast back."""
    if not rw.limits or operation.op not in (MOVEMENT | ORDER | MODULAR):
        return None
    bad = _unsupported(rw, operation)
    if not bad:
        return None
    plan = {}
    for narrow in bad:
        wide = _wide_type(rw, operation, narrow)
        if wide is None:
            return None
        plan[narrow] = wide
    args: list[Any] = list(operation.args)
    options = dict(operation.options)
    keys = list(options)
    for role, operand, pos, i in _roles(operation):
        if role in NOT_VALUES or operand.data_type not in plan:
            continue
        cast = rw.cast(operand, plan[operand.data_type])
        if pos < len(args):
            if i < 0:
                args[pos] = cast
            else:
                args[pos] = list(args[pos])
                args[pos][i] = cast
        else:
            key = keys[pos - len(args)]
            if i < 0:
                options[key] = cast
            else:
                options[key] = list(options[key])
                options[key][i] = cast
    outs = rw.emit(operation.op, args, options)
    result = [rw.cast(o, old.data_type) for o, old in zip(outs, operation.outputs, strict=True)]
    shown = ", ".join(f"{n} as {w}" for n, w in sorted(plan.items()))
    rw.note("widen-types", f"{operation.op} on {shown}")
    return result


def _reachable(rw: Rewrite, op: str, roles: Sequence[str], data_type: str) -> bool:
    """Whether `op` on `data_type` is inside the limits, directly or through widen-types."""
    if all(rw.supports(op, r, data_type) for r in roles):
        return True
    if "widen-types" not in rw.target.rules:
        return False
    return any(all(rw.supports(op, r, wide) for r in roles) and
               not (op in MODULAR and wide.startswith("float"))
               for wide in WIDER.get(data_type, ()))


@rule("reduce-l1-unsigned", "reduceL1", limits=True,
      why="outside the target's opSupportLimits()")
def reduce_l1_unsigned(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """reduceL1 of an unsigned type the target lacks: reduceSum (|x| = x)."""
    x = operation.args[0]
    if not rw.limits or x.data_type not in ("uint8", "uint32", "uint64") or \
            rw.supports("reduceL1", "input", x.data_type) or \
            not _reachable(rw, "reduceSum", ("input", "output"), x.data_type):
        return None
    rw.note("reduce-l1-unsigned", f"reduceL1 of {x.data_type} as reduceSum")
    return [rw.emit1("reduceSum", x, **operation.options)]


@rule("clamp-minmax", "clamp", limits=True,
      why="outside the target's opSupportLimits()")
def clamp_minmax(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """clamp on a type the target's clamp lacks: max with minValue, then min with maxValue."""
    x = operation.args[0]
    opt = operation.options
    if not rw.limits or rw.supports("clamp", "input", x.data_type) or not all(
            _reachable(rw, op, ("a", "b", "output"), x.data_type) for op in ("max", "min")):
        return None
    y = x
    if opt.get("minValue") is not None:
        y = rw.emit1("max", y, rw.const(np.array(opt["minValue"]).reshape(()), x.data_type))
    if opt.get("maxValue") is not None:
        y = rw.emit1("min", y, rw.const(np.array(opt["maxValue"]).reshape(()), x.data_type))
    if y is x:
        y = rw.emit1("identity", x)
    rw.note("clamp-minmax", f"clamp of {x.data_type} as max/min")
    return [y]


@rule("abs-minmax", "abs", limits=True,
      why="outside the target's opSupportLimits()")
def abs_minmax(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """abs on a signed integer type the target's abs lacks: max(x, neg(x))."""
    x = operation.args[0]
    if not rw.limits or x.data_type not in ("int8", "int32", "int64") or \
            rw.supports("abs", "input", x.data_type) or \
            not _reachable(rw, "neg", ("input", "output"), x.data_type) or \
            not _reachable(rw, "max", ("a", "b", "output"), x.data_type):
        return None
    rw.note("abs-minmax", f"abs of {x.data_type} as max(x, neg(x))")
    return [rw.emit1("max", x, rw.emit1("neg", x))]


LIMITS_RULES: tuple[str, ...] = tuple(name for name, r in RULES.items() if r.limits)
"""Names of the rules that follow from a target's limits alone."""

__all__ = ["LIMITS_RULES", "MODULAR", "MOVEMENT", "ORDER", "RULES", "Lowered", "Rewrite",
           "Rule", "lower", "rule", "rules_for"]
