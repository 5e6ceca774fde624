"""The order ONNX nodes are converted in: `topological_order` keeps the file's order when
it is one (each node after the producers of its inputs, subgraphs' outer reads included)
and otherwise sorts stably; it names the node of an undefined input, a value defined twice
or a cycle (`InvalidModel`). The reader orders the main graph with it, the importer the
expanded function bodies and subgraphs."""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import onnx
from onnx import AttributeProto

from converter.core.errors import InvalidModel


def topological_order(nodes: Sequence[onnx.NodeProto], defined: set[str]) -> list[int]:
    """The positions of `nodes` in an order where each node comes after the nodes that
    produce its inputs (explicit ones, and the outer values its subgraphs read): the file's
    order when it is one, else a stable topological sort (of the nodes whose inputs are
    ready, the one first in the file). `defined` holds the names available before any node
    (graph inputs, initializers, ""). InvalidModel naming the node for an input that nothing
    defines, a value defined twice (ONNX graphs are in SSA form), or a cycle."""
    if _in_file_order(nodes, defined):
        return list(range(len(nodes)))
    producer: dict[str, int] = {}
    for index, np_node in enumerate(nodes):
        for out in np_node.output:
            if not out:
                continue
            if out in defined or out in producer:
                other = ("a graph input or initializer" if out in defined else
                         f"node {_node_label(nodes[producer[out]], producer[out])}")
                raise InvalidModel(f"node {_node_label(np_node, index)} writes {out!r}, which "
                                   f"{other} also defines (each value has one definition)")
            producer[out] = index
    deps: list[set[int]] = []
    for index, np_node in enumerate(nodes):
        missing = [i for i in np_node.input if i not in defined and i not in producer]
        if missing:
            raise InvalidModel(f"node {_node_label(np_node, index)} reads {missing}, which no "
                               "node, graph input or initializer defines")
        names = set(np_node.input) | _outer_names(np_node)
        deps.append({producer[i] for i in names if i in producer})
    if all(d < index for index, before in enumerate(deps) for d in before):
        return list(range(len(nodes)))  # already in order
    waiting = [len(before) for before in deps]
    readers: list[list[int]] = [[] for _ in nodes]
    for index, before in enumerate(deps):
        for d in before:
            readers[d].append(index)
    ready = [i for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        index = heapq.heappop(ready)
        order.append(index)
        for reader in readers[index]:
            waiting[reader] -= 1
            if waiting[reader] == 0:
                heapq.heappush(ready, reader)
    if len(order) < len(nodes):  # follow unfinished inputs from a waiting node to a cycle
        done = set(order)
        index = next(i for i, count in enumerate(waiting) if count)
        path: list[int] = []
        while index not in path:
            path.append(index)
            index = min(d for d in deps[index] if d not in done)
        cycle = path[path.index(index):]
        raise InvalidModel(f"node {_node_label(nodes[index], index)} is on a cycle: its "
                           f"inputs depend on its own outputs (through {len(cycle)} node(s))")
    return order


def _in_file_order(nodes: Sequence[onnx.NodeProto], defined: set[str]) -> bool:
    """True when every node reads only values defined before it (`defined`, or outputs of
    earlier nodes) and defines only new ones, and no node has a subgraph: the file's order
    then is `topological_order`'s (one pass, no graph built). False says nothing: the full
    sort then orders the nodes or names what is wrong."""
    seen = set(defined)
    for np_node in nodes:
        if len(np_node.attribute) and any(
                a.type == AttributeProto.GRAPH or a.type == AttributeProto.GRAPHS
                for a in np_node.attribute):
            return False
        if not seen.issuperset(np_node.input):
            return False
        for out in np_node.output:
            if out:
                if out in seen:
                    return False
                seen.add(out)
    return True


def _node_label(np_node: onnx.NodeProto, index: int) -> str:
    return f"{(np_node.name or f'{np_node.op_type}_{index}')!r} ({np_node.op_type})"


def _outer_names(np_node: onnx.NodeProto) -> set[str]:
    """The names the subgraphs of `np_node` (If / Loop / Scan bodies, nested) read from
    enclosing scopes."""
    names: set[str] = set()
    for attr in np_node.attribute:
        kind = attr.type
        if kind != AttributeProto.GRAPH and kind != AttributeProto.GRAPHS:
            continue
        graphs = [attr.g] if kind == AttributeProto.GRAPH else list(attr.graphs)
        for g in graphs:
            local = ({vi.name for vi in g.input} | {t.name for t in g.initializer}
                     | {t.values.name for t in g.sparse_initializer} | {""})
            for inner in g.node:
                local.update(inner.output)
            for inner in g.node:
                names.update(i for i in inner.input if i not in local)
                names.update(n for n in _outer_names(inner) if n not in local)
    return names
