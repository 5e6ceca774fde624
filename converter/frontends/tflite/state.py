"""Resource variables that carry state from one invocation to the next, made explicit.

A streaming TFLite model (micro-wakeword's ring buffers, streaming convolutions) keeps state
in resource variables: an init subgraph (CALL_ONCE) assigns their initial values, each
invocation reads them (READ_VARIABLE) and assigns the new state (ASSIGN_VARIABLE); LiteRT's
interpreter keeps the variables between `invoke()` calls. WebNN graphs are stateless, so a
variable that the main subgraph reads before it assigns it, and assigns, becomes one extra
graph input (its value at the start of the invocation) and one extra graph output (the last
value the invocation assigns), recorded as a `converter.results.state.StatePair` whose
initial value is what the init subgraph assigns (a constant), else zeros.

`carried_variables` finds them; the READ_VARIABLE handler reads the state input until the
invocation assigns the variable (`CARRIED_SETTING` in the handler settings maps variable keys
to state input names). The state inputs and outputs are graph-only: `ConversionResult.inputs`
/ `outputs` stay the model's own, as LiteRT lists them.

Restrictions: only variables read and assigned by the main subgraph's own nodes (not inside
WHILE / IF bodies) are carried, and only with a static shape; an initial value computed by
the init subgraph (not a constant) is taken as zeros, with a note.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from converter.core.ir import Node, TensorInfo, ValueInfo
from converter.frontends.tflite.records import TFLiteSourceGraph
from converter.results.state import StatePair

CARRIED_SETTING = "carried_variables"
"""The handler setting {variable key: state input name} (see the module docstring)."""


@dataclass(frozen=True)
class CarriedState:
    """What `carried_variables` found: the extra graph inputs and outputs, the handler
    setting, the state pairs and the notes for the report."""

    inputs: tuple[ValueInfo, ...]
    outputs: tuple[ValueInfo, ...]
    setting: Mapping[str, str]
    pairs: tuple[StatePair, ...]
    notes: tuple[str, ...]


def variable_key(node: Node) -> str:
    """`container/shared_name` of a VAR_HANDLE node, as LiteRT matches resources."""
    return f"{node.attrs.get('container') or ''}/{node.attrs.get('shared_name') or ''}"


def _handles(nodes: Sequence[Node]) -> dict[str, str]:
    return {n.outputs[0]: variable_key(n) for n in nodes
            if n.op_type == "VAR_HANDLE" and n.outputs}


def _initial_values(source: TFLiteSourceGraph) -> dict[str, np.ndarray]:
    """Constants the init subgraphs (CALL_ONCE) of the main subgraph assign, by key."""
    tfm = source.model
    out: dict[str, np.ndarray] = {}
    if tfm is None:
        return out
    for node in source.nodes:
        if node.op_type != "CALL_ONCE":
            continue
        index = int(node.attrs.get("init_subgraph_index", -1))
        if not 0 <= index < len(tfm.subgraphs):
            continue
        nodes = tfm.subgraphs[index].nodes
        handles = _handles(nodes)
        for n in nodes:
            if n.op_type == "ASSIGN_VARIABLE" and len(n.inputs) == 2 \
                    and n.inputs[0] in handles and n.inputs[1] in tfm.constants[index]:
                out[handles[n.inputs[0]]] = np.asarray(tfm.constants[index][n.inputs[1]])
    return out


def _unique(name: str, taken: set[str]) -> str:
    while name in taken:
        name = f"{name}_state"
    taken.add(name)
    return name


def carried_variables(source: TFLiteSourceGraph) -> CarriedState:
    """The resource variables of `source`'s main subgraph that carry state (see the module
    docstring)."""
    handles = _handles(source.nodes)
    assigned: set[str] = set()
    read_first: dict[str, None] = {}
    last: dict[str, tuple[str, TensorInfo | None]] = {}
    for n in source.nodes:
        key = handles.get(n.inputs[0]) if n.inputs else None
        if key is None:
            continue
        if n.op_type == "READ_VARIABLE" and key not in assigned:
            read_first.setdefault(key)
        elif n.op_type == "ASSIGN_VARIABLE" and len(n.inputs) == 2:
            assigned.add(key)
            last[key] = (n.inputs[1], n.input_infos[1] if len(n.input_infos) > 1 else None)
    initial = _initial_values(source)
    taken = set(source.tensors) | {vi.name for vi in source.inputs + source.outputs}
    outputs_taken = {vi.name for vi in source.outputs}
    inputs: list[ValueInfo] = []
    outputs: list[ValueInfo] = []
    setting: dict[str, str] = {}
    pairs: list[StatePair] = []
    notes: list[str] = []
    for key in read_first:
        if key not in last:
            continue
        value, info = last[key]
        if info is None or any(d < 0 for d in info.shape) or (
                info.shape_signature is not None and any(d < 0 for d in info.shape_signature)):
            notes.append(f"variable {key!r} has no static shape: its updates are not carried "
                         "to the next run")
            continue
        shape = tuple(int(d) for d in info.shape)
        start = initial.get(key)
        if start is None or start.shape != shape:
            if start is not None or any(n.op_type == "CALL_ONCE" for n in source.nodes):
                notes.append(f"variable {key!r}: no constant initial value of shape "
                             f"{list(shape)} found; its carried state starts at zeros")
            start = np.zeros(shape, info.dtype)
        name = _unique(key.lstrip("/") or "state", taken)
        setting[key] = name
        inputs.append(ValueInfo(name, info.dtype, shape, shape))
        if value not in outputs_taken:
            outputs_taken.add(value)
            outputs.append(ValueInfo(value, info.dtype, shape, shape))
        pairs.append(StatePair(name, value, start.astype(info.dtype),
                               f"resource variable {key!r}"))
    return CarriedState(tuple(inputs), tuple(outputs), setting, tuple(pairs), tuple(notes))
