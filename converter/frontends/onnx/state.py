"""Streaming ONNX models whose state is a graph input/output pair (silero-vad's `state` ->
`stateN`, an RNN's `h0` -> `hn`): `state_pairs` finds them by name and type so that runs carry
the state (`converter.results.state`, docs/state.md).

An input `X` pairs with an output named `XN`, `Xn`, `X_out`, `X_new`, `X_next`, `new_X`,
`next_X`, `out_X`, with `_in` / `in_` replaced by `_out` / `out_`, or with a trailing `0`
replaced by `n` (`h0` -> `hn`), when both have the same graph data type and shape. The
initial value is zeros. A pair changes nothing for a caller who gives the input: carrying
only fills a state input the caller leaves out.

Restrictions: pairs are found by name only (an input/output pair named otherwise is not
carried; give the input on each call instead); a state whose shape grows from call to call
(a KV cache) is never a pair.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from converter.core.ir import ValueInfo
from converter.core.webnn import MLGraph
from converter.results.state import StatePair


def _partners(name: str) -> list[str]:
    out = [f"{name}N", f"{name}n", f"{name}_out", f"{name}_new", f"{name}_next", f"new_{name}",
           f"next_{name}", f"out_{name}"]
    if name.endswith("_in"):
        out.append(name[:-3] + "_out")
    if name.startswith("in_"):
        out.append("out_" + name[3:])
    if name.endswith("0") and len(name) > 1:
        out.append(name[:-1] + "n")
    return out


def state_pairs(graph: MLGraph, inputs: Iterable[ValueInfo], outputs: Iterable[ValueInfo]
                ) -> tuple[StatePair, ...]:
    """The input/output pairs of a converted graph that carry state (module docstring)."""
    names = {vi.name for vi in outputs}
    pairs: list[StatePair] = []
    used: set[str] = set()
    for vi in inputs:
        operand = graph.inputs.get(vi.name)
        if operand is None:
            continue
        for partner in _partners(vi.name):
            out = graph.outputs.get(partner)
            if partner in names and partner not in used and out is not None \
                    and out.data_type == operand.data_type \
                    and list(out.shape) == list(operand.shape):
                try:
                    zeros = np.zeros(tuple(operand.shape), operand.data_type)
                except TypeError:  # a data type numpy does not name (int4): not carried
                    break
                used.add(partner)
                pairs.append(StatePair(vi.name, partner, zeros, "input/output pair"))
                break
    return tuple(pairs)
