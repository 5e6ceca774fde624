"""`inspect` for ONNX: inputs/outputs as declared, free dimensions, op histogram with support
status ("supported", "inlined" through a function body, "unsupported").

Restrictions: only the main graph is counted (If/Loop/Scan bodies are not); external data is
not loaded.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..base import ModelInfo, TensorSummary, ops_histogram


def inspect_onnx(model: str | os.PathLike[str] | bytes) -> ModelInfo:
    import onnx

    from op_mappings.onnx import handlers, lookup

    from .reader import _value_info, load_proto, model_functions

    proto, _, label = load_proto(model if not isinstance(model, Path) else str(model))
    graph = proto.graph
    opsets: dict[str, int] = {}
    for entry in proto.opset_import:
        opsets["" if entry.domain in ("", "ai.onnx") else entry.domain] = int(entry.version)
    init = {t.name for t in graph.initializer}
    inputs = []
    for vi in graph.input:
        if vi.name in init:
            continue
        info = _value_info(vi)
        inputs.append(TensorSummary(info.name, info.dtype, info.shape))
    outputs = tuple(TensorSummary(i.name, i.dtype, i.shape)
                    for i in (_value_info(vi) for vi in graph.output))
    free: list[str] = []
    for t in inputs:
        for i, d in enumerate(t.shape or ()):
            if isinstance(d, str):
                if d not in free:
                    free.append(d)
            elif d is None:
                free.append(f"{t.name}[{i}]")
    functions = model_functions(proto)
    sinces: dict[tuple[str, str], list[int]] = {}
    for h in handlers():
        sinces.setdefault((h.domain, h.op_type), []).append(h.since)

    def status(op: str, domain: str, version: int) -> tuple[str, str]:
        if lookup(op, domain, version) is not None:
            return "supported", ""
        if (domain, op) in functions:
            return "inlined", "model-local function"
        try:
            schema = onnx.defs.get_schema(op, version, domain)
            if schema.has_function or schema.has_context_dependent_function:
                return "inlined", "schema function body"
        except Exception:  # noqa: BLE001 - unknown op or domain
            pass
        known = sinces.get((domain, op))
        if known:
            return "unsupported", f"handlers exist from opset {min(known)}"
        return "unsupported", "no handler"

    nodes = []
    for n in graph.node:
        domain = "" if n.domain in ("", "ai.onnx") else n.domain
        nodes.append((n.op_type, domain, opsets.get(domain, 0)))
    producer = f"{proto.producer_name} {proto.producer_version}".strip()
    return ModelInfo(label, "onnx", producer, opsets, tuple(inputs), outputs, tuple(free),
                     ops_histogram(nodes, status))


