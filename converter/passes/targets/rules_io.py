"""Rule widen-io (limits-driven, see `converter.passes.targets.passes`): graph inputs and outputs of
a data type the target's top-level `input` / `output` limits lack, carried in a wider type
they list that holds every value (int8 / uint8 -> int32, ...; `rewrite.WIDER`, nearest
first).

Core ML, for one, takes only float16, float32 and int32 graph inputs and outputs (Chromium's
`GraphBuilderCoreml::GetContextProperties`: kFloatsAndInt32), while a fully quantized TFLite
model reads and writes int8 tensors. Such an input is declared with the wider type and cast
back to its own type before anything reads it; such an output is cast to the wider type.
The graph records the type callers use (`MLGraph.narrowed_inputs` / `narrowed_outputs`):
`converter.core.feeds` converts the values given and taken, the generated JavaScript does the same
(`narrowInput` / `widenOutput`), so callers keep giving and getting the model's own type.

Exact: the wider type holds every value of the narrower one, and the values an output carries
come from the narrower type. Restrictions: applies only where the target's `cast` takes both
types (input and output roles), and to integer types only: a float type with no wider one in
the limits (float32 where only float16 is listed) is left as it is, and `check_graph`
reports it.
"""

from __future__ import annotations

from converter.core.webnn import MLGraph
from converter.core.webnn.operand import Operation
from converter.passes.targets.rewrite import WIDER, Rewrite, boundary, rule
from converter.passes.targets.roles import allows

NAME = "widen-io"
INTEGER_CARRIERS = frozenset({"int32", "uint32", "int64", "uint64"})
"""Types an integer input/output may be carried in (`converter.core.feeds` and the generated
JavaScript convert integers only)."""


def _carrier(rw: Rewrite, key: str, data_type: str, rank: int, wide_first: bool
             ) -> str | None:
    """The nearest type wider than `data_type` that `key` lists and that `cast` converts
    between (wide -> own for inputs, own -> wide for outputs)."""
    for wide in WIDER.get(data_type, ()):
        if wide not in INTEGER_CARRIERS or not allows(rw.limits.get(key), wide, rank):
            continue
        src, dst = (wide, data_type) if wide_first else (data_type, wide)
        if rw.supports("cast", "input", src, rank) and rw.supports("cast", "output", dst, rank):
            return wide
    return None


@rule(NAME, limits=True, why="the target's opSupportLimits() lacks that graph input/output "
                             "data type")
def _no_operation(rw: Rewrite, operation: Operation) -> None:
    """widen-io rewrites no operation: its work is at the graph boundary (`widen_io`)."""
    return None


@boundary(NAME)
def widen_io(rw: Rewrite, graph: MLGraph) -> tuple[dict[str, str], dict[str, str]]:
    """({input: wider type}, {output: wider type}) for the graph inputs and outputs whose
    data type (after any `retyping`, e.g. narrow-int64) the target's limits lack."""
    if not rw.limits:
        return {}, {}
    found: list[dict[str, str]] = [{}, {}]
    for slot, (key, items) in enumerate((("input", graph.inputs), ("output", graph.outputs))):
        for name, operand in items.items():
            own = rw.retype.get(operand.data_type, operand.data_type)
            if allows(rw.limits.get(key), own, operand.rank):
                continue
            wide = _carrier(rw, key, own, operand.rank, wide_first=key == "input")
            if wide is not None:
                found[slot][name] = wide
    inputs, outputs = found
    for name, wide in inputs.items():
        rw.where = f"input {name!r}"
        own = rw.retype.get(graph.inputs[name].data_type, graph.inputs[name].data_type)
        rw.note(NAME, f"{own} graph input given as {wide} (callers still give {own}; the "
                      "feeds and the JavaScript convert it)")
    for name, wide in outputs.items():
        rw.where = f"output {name!r}"
        own = rw.retype.get(graph.outputs[name].data_type, graph.outputs[name].data_type)
        rw.note(NAME, f"{own} graph output returned as {wide} (converted back to {own} for "
                      "callers)")
    return inputs, outputs


__all__ = ["NAME", "widen_io"]
