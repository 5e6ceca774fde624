"""A position_ids input for an ONNX decoder that derives its positions from the past length
(`with_position_input`), so that its steps can run over a fixed-size, left-padded KV window
(`converter.validate.decoder_graphs`, the "sliding" cache of the JavaScript generator).

A decoder whose present KV is Concat(past, new) and that has no position_ids input (GPT-2 as
TorchScript or Optimum export it) computes the positions of the new tokens as
past_length + arange(S) from the past's shape. Over a KV window of fixed length L whose valid
rows are its last p ones (the rest masked), the causal mask it builds from the same numbers
is right (query i sees the window and new tokens up to i) but the positions are not (L + i
instead of p + i). The rewrite gives the position-embedding lookup its indices from a new
graph input instead.

Restrictions: the lookup is found by its shape alone: the one Gather whose data is a 2-D
initializer and whose indices depend on the graph inputs only through Shape nodes (no data
flow: token ids reach the token-embedding Gather by value, so that one never qualifies);
none or several such Gathers: no rewrite (None). The new input is `position_ids`, int64,
shaped like the token ids.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["POSITION_INPUT", "with_position_input"]

POSITION_INPUT = "position_ids"


def _shape_only(tensor: str, producers: dict[str, Any], inputs: set[str]) -> bool:
    """Whether `tensor` depends on the graph inputs only through Shape nodes."""
    todo, seen = [tensor], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in inputs:
            return False
        node = producers.get(name)
        if node is None or node.op_type == "Shape":
            continue
        if any(a.type in (a.GRAPH, a.GRAPHS) for a in node.attribute):
            return False  # a subgraph may read anything
        todo.extend(i for i in node.input if i)
    return True


def with_position_input(model: str | os.PathLike[str]) -> Any | None:
    """The ONNX model (a ModelProto) at `model` with its position-embedding lookup fed by a
    new `position_ids` input, or None when the model has that input already or no single
    lookup qualifies (module docstring)."""
    import onnx

    proto = onnx.load(os.fspath(model))
    graph = proto.graph
    inputs = {i.name for i in graph.input}
    if POSITION_INPUT in inputs or "input_ids" not in inputs:
        return None
    initializers = {t.name: t for t in graph.initializer}
    producers = {out: node for node in graph.node for out in node.output}
    candidates = [node for node in graph.node
                  if node.op_type == "Gather" and len(node.input) == 2
                  and node.input[0] in initializers
                  and len(initializers[node.input[0]].dims) == 2
                  and _shape_only(node.input[1], producers, inputs)]
    if len(candidates) != 1:
        return None
    ids = next(i for i in graph.input if i.name == "input_ids")
    position = onnx.ValueInfoProto()
    position.CopyFrom(ids)
    position.name = POSITION_INPUT
    position.type.tensor_type.elem_type = onnx.TensorProto.INT64
    graph.input.append(position)
    candidates[0].input[1] = POSITION_INPUT
    return proto
