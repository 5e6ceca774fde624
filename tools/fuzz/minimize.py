"""Shrinking a finding while its class (and site) stays the same, within a time and run
budget: companion files dropped, then for ONNX nodes / attributes / initializers deleted
one at a time, for text (`.webnn`, JSON) chunks of lines deleted (halving the chunk size),
and for other bytes the file truncated by halves and chunks deleted (halving)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from tools.fuzz.case import Case
from tools.fuzz.classify import Verdict

Check = Callable[[Case], "Verdict | None"]


@dataclass
class Budget:
    seconds: float
    runs: int

    def __post_init__(self) -> None:
        self.deadline = time.monotonic() + self.seconds

    def spend(self) -> bool:
        if self.runs <= 0 or time.monotonic() > self.deadline:
            return False
        self.runs -= 1
        return True


def same(want: Verdict, got: Verdict | None) -> bool:
    if got is None or got.cls != want.cls:
        return False
    if want.site and got.site != want.site:
        return False
    return not (want.cls == "crash" and want.detail.split(" ")[:3] != got.detail.split(" ")[:3])


def _drop_companions(case: Case, want: Verdict, check: Check, budget: Budget) -> Case:
    for name in sorted(case.files):
        if name == case.target or not budget.spend():
            continue
        trial = case.replace_target(case.files[case.target])
        del trial.files[name]
        if same(want, check(trial)):
            case = trial
    for name in sorted(case.links):
        if not budget.spend():
            break
        trial = case.replace_target(case.files[case.target])
        del trial.links[name]
        if same(want, check(trial)):
            case = trial
    return case


def _onnx_candidates(data: bytes) -> Iterator[bytes]:
    """Models with one thing fewer (main graph): a node, a node input or output, a graph
    output, an attribute, an initializer, the metadata."""
    import onnx

    model = onnx.ModelProto()
    model.ParseFromString(data)

    def pop(items: Callable[[onnx.ModelProto], Any], index: int) -> bytes:
        m = onnx.ModelProto()
        m.CopyFrom(model)
        items(m).pop(index)
        return bytes(m.SerializeToString())

    g = model.graph
    for i in reversed(range(len(g.node))):
        yield pop(lambda m: m.graph.node, i)
    for i, node in enumerate(g.node):
        for field, first in (("input", 0), ("output", 1), ("attribute", 0)):
            for j in reversed(range(first, len(getattr(node, field)))):
                yield pop(_node_field(i, field), j)
    for i in reversed(range(1, len(g.output))):
        yield pop(lambda m: m.graph.output, i)
    for i in reversed(range(len(g.input))):
        yield pop(lambda m: m.graph.input, i)
    for i in reversed(range(len(g.initializer))):
        yield pop(lambda m: m.graph.initializer, i)

    def strip(m: onnx.ModelProto) -> None:
        for f in ("doc_string", "producer_name", "producer_version", "metadata_props"):
            m.ClearField(f)
        m.graph.ClearField("doc_string")
        m.graph.ClearField("value_info")

    m = onnx.ModelProto()
    m.CopyFrom(model)
    strip(m)
    yield bytes(m.SerializeToString())


def _node_field(i: int, field: str) -> Callable[[Any], Any]:
    return lambda m: getattr(m.graph.node[i], field)


def _greedy(case: Case, want: Verdict, check: Check, budget: Budget,
            candidates: Callable[[bytes], Iterator[bytes]]) -> Case:
    """Restart the candidate list from the new best after every success."""
    improved = True
    while improved:
        improved = False
        for data in candidates(case.files[case.target]):
            if not budget.spend():
                return case
            trial = case.replace_target(data)
            if same(want, check(trial)):
                case, improved = trial, True
                break
    return case


def _chunks(case: Case, want: Verdict, check: Check, budget: Budget, lines: bool) -> Case:
    data = case.files[case.target]
    units: list[bytes] = data.splitlines(keepends=True) if lines else \
        [data[i:i + 1] for i in range(len(data))]
    if not lines:  # first halve the length
        while len(units) > 1 and budget.spend():
            trial = case.replace_target(b"".join(units[:len(units) // 2]))
            if not same(want, check(trial)):
                break
            units = units[:len(units) // 2]
            case = trial
    size = max(1, len(units) // 2)
    min_size = 1 if lines else max(1, len(units) // 64)
    while size >= min_size:
        i = 0
        while i < len(units):
            if not budget.spend():
                return case
            rest = units[:i] + units[i + size:]
            trial = case.replace_target(b"".join(rest))
            if rest and same(want, check(trial)):
                units, case = rest, trial
            else:
                i += size
        size //= 2
    return case


def minimize(case: Case, want: Verdict, check: Check, seconds: float = 60.0,
             runs: int = 80) -> Case:
    """A smaller case with the same verdict (`check` runs a case and classifies it)."""
    budget = Budget(seconds, runs)
    case = _drop_companions(case, want, check, budget)
    if case.kind == "onnx":
        try:
            case = _greedy(case, want, check, budget, _onnx_candidates)
        except Exception:  # noqa: BLE001 - not parseable: shrink the bytes
            pass
        else:
            return case
    text = case.kind in ("webnn", "webnn-json", "manifest") and \
        case.files[case.target].count(b"\n") >= 4
    return _chunks(case, want, check, budget, lines=text)
