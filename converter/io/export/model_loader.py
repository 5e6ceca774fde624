"""`load_model(path)`: an export loaded back as a whole pipeline (`LoadedModel`: the graph,
the carried state of its manifest, the host steps of its `<stem>.host.json`).

`converter.load(path)` gives the bare `MLGraph`; `load_model` adds what runs around it, so
`LoadedModel.run(inputs)` returns the model's own outputs (`converter.results.loaded`).

Restrictions: the graph file is found as `load` finds it (a folder holds one stem); the
manifest (`<stem>.manifest.json`) and the host steps file lie beside it, inside its folder
(or a folder of `allow_roots`); a host steps file that names values the graph does not have
is refused (`WebnnFormatError` naming the file, one line).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from converter.core.confine import allowed_roots, confined
from converter.core.ir import ValueInfo
from converter.core.webnn import MLContext, MLGraph
from converter.io.export.exporter import _graph_file_in, load
from converter.io.serialize.errors import WebnnFormatError
from converter.io.serialize.host_table import HostFile, host_path, load_host
from converter.io.serialize.loader import graph_stem
from converter.io.serialize.state_table import load_state
from converter.results.loaded import LoadedModel


def load_model(path: str | os.PathLike[str], *, context: MLContext | None = None,
               allow_roots: Iterable[str | os.PathLike[str]] | None = None) -> LoadedModel:
    """The `LoadedModel` of an export: `path` is its graph file or folder (as for `load`).
    Inputs and outputs keep the caller-side types (a target's narrowed int64 is int64; the
    host file's model data types where it has one)."""
    roots = tuple(allow_roots or ())
    with allowed_roots(roots):
        graph = load(path, context=context, allow_roots=roots)  # its errors, as `load`'s
        p = _graph_file_in(Path(path)) if Path(path).is_dir() else Path(path)
        stem = graph_stem(p)
        manifest = p.parent / f"{stem}.manifest.json"
        state = load_state(confined(manifest, p.parent, "the manifest")) \
            if manifest.is_file() else ()
        host = load_host(p, stem)
    inputs = tuple(ValueInfo(n, graph.narrowed_inputs.get(n, op.data_type), tuple(op.shape))
                   for n, op in graph.inputs.items())
    outputs = tuple(ValueInfo(n, graph.narrowed_outputs.get(n, op.data_type), tuple(op.shape))
                    for n, op in graph.outputs.items())
    if host is None:
        return LoadedModel(graph, inputs, outputs, state)
    inputs, outputs = _with_host(graph, host, inputs, str(host_path(p, stem)))
    return LoadedModel(graph, inputs, outputs, state, host.steps)


def _with_host(graph: MLGraph, host: HostFile, inputs: tuple[ValueInfo, ...], where: str
               ) -> tuple[tuple[ValueInfo, ...], tuple[ValueInfo, ...]]:
    """The model's inputs and outputs of a graph with host steps; `WebnnFormatError` when
    the host file does not fit the graph."""
    steps = host.steps
    declared = {vi.name: vi.dtype for vi in host.inputs}
    for value in steps.inputs:
        known = graph.outputs if value.source == "graph" else declared
        if value.name not in known:
            raise WebnnFormatError(f"host input {value.name[:200]!r} ({value.source}) is not "
                                   f"a graph output" if value.source == "graph" else
                                   f"host input {value.name[:200]!r} is not a model input",
                                   where)
    by_name = {vi.name: vi for vi in inputs}  # the graph's (a host-only input has no shape)
    inputs = (*(ValueInfo(vi.name, by_name[vi.name].dtype if vi.dtype == "unknown"
                          and vi.name in by_name else vi.dtype,
                          by_name[vi.name].shape if vi.name in by_name else None)
                for vi in host.inputs),
              *(vi for vi in by_name.values() if vi.name not in declared))
    outputs = []
    for vi in host.outputs:
        operand = graph.outputs.get(vi.name)
        if operand is not None:
            dtype = vi.dtype if vi.dtype != "unknown" else \
                graph.narrowed_outputs.get(vi.name, operand.data_type)
            outputs.append(ValueInfo(vi.name, dtype, tuple(operand.shape)))
        elif vi.name in steps.outputs:
            outputs.append(ValueInfo(vi.name, vi.dtype, None))
        else:
            raise WebnnFormatError(f"model output {vi.name[:200]!r} is neither a graph output "
                                   "nor a host-step output", where)
    return inputs, tuple(outputs)


__all__ = ["load_model"]
