"""Graph passes: a `Pass` is a named step `MLGraph -> PassResult(graph, notes)`; `run_passes`
applies an explicit, ordered tuple of them and collects their notes; `apply_passes` does that
to a `ConversionResult` (`ConversionResult.with_graph`, the notes in the report's warnings).

```python
from converter.passes.framework import Pass, PassResult, apply_passes, run_passes
ran = run_passes(graph, (first, second))     # ran.graph, ran.notes (first's, then second's)
result = apply_passes(result, (first, second))
```

The pass lists `convert()` runs, precision first, then target
(`converter.conversion.pipeline.conversion_passes`):

- per precision: `converter.passes.precision.PRECISION_PASSES` ("float32": none, "float16":
  the float16 conversion, `converter.passes.precision.to_precision`);
- per target: `converter.passes.targets.passes.target_passes(target)`: the target's rewrite
  rules in one replay of the graph (`lower`; the rules are tried in the order
  `converter.passes.targets.passes.ORDER` declares), then the check against the target's
  limits (notes only, the graph unchanged).

Restrictions: a pass must not change the graph it is given (graphs share constants with the
results they came from) and returns that same graph object when it changes nothing; notes are
one line each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from converter.core.webnn import MLGraph
from converter.results.result import ConversionResult


@dataclass(frozen=True)
class PassResult:
    """What a pass gives: the graph (the one it was given when it changed nothing) and its
    notes, in the order they arose."""

    graph: MLGraph
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Pass:
    """A named graph pass: `run(graph)` gives a `PassResult`; calling the pass runs it."""

    name: str
    run: Callable[[MLGraph], PassResult] = field(repr=False)

    def __call__(self, graph: MLGraph) -> PassResult:
        return self.run(graph)


def run_passes(graph: MLGraph, passes: Sequence[Pass]) -> PassResult:
    """`graph` through `passes`, in the order given, each reading the previous one's graph;
    the notes of all, in that order. `graph` itself when no pass changes it."""
    notes: list[str] = []
    for step in passes:
        got = step(graph)
        graph = got.graph
        notes.extend(got.notes)
    return PassResult(graph, tuple(notes))


def apply_passes(result: ConversionResult, passes: Sequence[Pass]) -> ConversionResult:
    """`result` with its graph through `passes` (`run_passes`) and their notes added to its
    report's warnings (`ConversionResult.with_graph`); `result` itself when no pass changes
    the graph or notes anything."""
    ran = run_passes(result.graph, passes)
    if ran.graph is result.graph and not ran.notes:
        return result
    return result.with_graph(ran.graph, notes=ran.notes)


__all__ = ["Pass", "PassResult", "apply_passes", "run_passes"]
