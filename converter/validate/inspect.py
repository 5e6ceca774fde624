"""`inspect_model()`: what a model file holds, without converting it: inputs and outputs as
declared (free dimensions by name, "?" for unnamed/dynamic ones), the free dimensions to fix,
and the histogram of op types with their support status from the op_mappings registries.

Status of an op type: "supported" (a handler exists for the node's opset / operator
version), "inlined" (ONNX: no handler, but a model-local function or the op's schema has a
function body, which the importer inlines), "unsupported" (neither; `detail` says why).
A supported op can still fail on particular attribute values; convert to be sure.

Restrictions: only the main graph is counted (ONNX If/Loop/Scan bodies and TFLite subgraphs
other than the converted one are not); ONNX external data is not loaded.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..formats.detect import detect_format, model_label

Dim = int | str | None


@dataclass(frozen=True)
class TensorSummary:
    """A graph input or output as the model declares it."""

    name: str
    dtype: str
    shape: tuple[Dim, ...] | None

    def shape_text(self) -> str:
        if self.shape is None:
            return "[unknown rank]"
        return "[" + ", ".join("?" if d is None else str(d) for d in self.shape) + "]"

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dtype": self.dtype,
                "shape": None if self.shape is None else list(self.shape)}


@dataclass(frozen=True)
class OpUsage:
    """One op type of the model: how many nodes use it and whether it converts."""

    op_type: str
    domain: str
    version: int
    count: int
    status: str
    detail: str = ""

    @property
    def key(self) -> str:
        return f"{self.domain}::{self.op_type}" if self.domain else self.op_type

    def to_dict(self) -> dict[str, Any]:
        return {"op_type": self.op_type, "domain": self.domain, "version": self.version,
                "count": self.count, "status": self.status, "detail": self.detail}


@dataclass(frozen=True)
class ModelInfo:
    """The result of `inspect_model`."""

    model: str
    format: str
    producer: str
    versions: dict[str, int]
    inputs: tuple[TensorSummary, ...]
    outputs: tuple[TensorSummary, ...]
    free_dims: tuple[str, ...]
    ops: tuple[OpUsage, ...]
    signatures: tuple[str, ...] = ()

    @property
    def node_count(self) -> int:
        return sum(o.count for o in self.ops)

    @property
    def unsupported(self) -> tuple[OpUsage, ...]:
        return tuple(o for o in self.ops if o.status == "unsupported")

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "format": self.format, "producer": self.producer,
                "versions": dict(self.versions),
                "inputs": [t.to_dict() for t in self.inputs],
                "outputs": [t.to_dict() for t in self.outputs],
                "free_dims": list(self.free_dims), "signatures": list(self.signatures),
                "nodes": self.node_count, "ops": [o.to_dict() for o in self.ops],
                "unsupported": [o.key for o in self.unsupported]}

    def to_text(self) -> str:
        versions = ", ".join(f"{k or 'ai.onnx'} {v}" if self.format == "onnx" else f"v{v}"
                             for k, v in self.versions.items())
        lines = [f"model: {self.model} ({self.format.upper()}, {versions})"]
        if self.producer:
            lines.append(f"producer: {self.producer}")
        if self.signatures:
            lines.append(f"signatures: {', '.join(self.signatures)}")
        for title, items in (("inputs", self.inputs), ("outputs", self.outputs)):
            lines.append(f"{title}:")
            width = max((len(t.name) for t in items), default=0)
            lines += [f"  {t.name:<{width}}  {t.dtype:<8} {t.shape_text()}" for t in items]
        if self.free_dims:
            how = ("--dim NAME=VALUE" if self.format == "onnx"
                   else "--shape INPUT=D1,D2,...")
            lines.append(f"free dimensions: {', '.join(self.free_dims)} (fix with {how})")
        else:
            lines.append("free dimensions: none")
        lines.append(f"ops: {self.node_count} nodes, {len(self.ops)} types, "
                     f"{len(self.unsupported)} unsupported")
        width = max((len(o.key) for o in self.ops), default=0)
        for o in self.ops:
            detail = f" ({o.detail})" if o.detail else ""
            lines.append(f"  {o.key:<{width}}  {o.count:>5}  {o.status}{detail}")
        return "\n".join(lines)


def inspect_model(model: str | os.PathLike[str] | bytes, signature: str | None = None
                  ) -> ModelInfo:
    """Inspect an ONNX or TFLite model (see the module docstring). Raises `InvalidModel`
    for missing, truncated or malformed files and unknown signatures."""
    fmt = detect_format(model)
    if fmt == "tflite":
        return _inspect_tflite(model, signature)
    if signature:
        from ..errors import InvalidModel

        raise InvalidModel(f"{model_label(model)}: --signature applies to TFLite models only")
    return _inspect_onnx(model)


def _ops_histogram(nodes: list[tuple[str, str, int]], status: Any) -> tuple[OpUsage, ...]:
    counts = Counter(nodes)
    out = []
    for (op, domain, version), n in sorted(counts.items(),
                                           key=lambda kv: (-kv[1], kv[0][1], kv[0][0])):
        st, detail = status(op, domain, version)
        out.append(OpUsage(op, domain, version, n, st, detail))
    return tuple(out)


def _inspect_onnx(model: str | os.PathLike[str] | bytes) -> ModelInfo:
    import onnx

    from op_mappings.onnx import handlers, lookup

    from ..formats.onnx import _value_info, load_proto, model_functions

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
                     _ops_histogram(nodes, status))


def _inspect_tflite(model: str | os.PathLike[str] | bytes, signature: str | None
                    ) -> ModelInfo:
    from op_mappings.tflite import handlers, lookup

    from ..errors import InvalidModel
    from ..formats.tflite import read_model

    tfm = read_model(model if not isinstance(model, Path) else str(model))
    index = 0
    aliases: dict[int, str] = {}
    if signature is not None:
        sig = next((s for s in tfm.signatures if s.key == signature), None)
        if sig is None:
            known = ", ".join(s.key for s in tfm.signatures) or "none"
            raise InvalidModel(f"{tfm.label}: no signature {signature!r} (signatures: "
                               f"{known})")
        index = sig.subgraph_index
        aliases = {t: n for n, t in sig.inputs + sig.outputs}
    sub = tfm.subgraphs[index]

    def summary(i: int) -> TensorSummary:
        t = sub.tensors[i]
        if not t.has_rank and not t.shape:
            shape = None
        else:
            dims = t.shape_signature if t.shape_signature is not None else t.shape
            shape = tuple(None if d < 0 else int(d) for d in dims)
        return TensorSummary(aliases.get(i, t.tensor_name or t.name), t.dtype, shape)

    inputs = tuple(summary(i) for i in sub.inputs)
    outputs = tuple(summary(i) for i in sub.outputs)
    free = [f"{t.name}[{k}]" for t in inputs for k, d in enumerate(t.shape or ()) if d is None]
    free += [f"{t.name} (unknown rank)" for t in inputs if t.shape is None]
    sinces: dict[tuple[str, str], list[int]] = {}
    for h in handlers():
        sinces.setdefault((h.domain, h.op_type), []).append(h.since)

    def status(op: str, domain: str, version: int) -> tuple[str, str]:
        if lookup(op, domain, version) is not None:
            return "supported", ""
        known = sinces.get((domain, op))
        if known:
            return "unsupported", f"handlers exist from version {min(known)}"
        return "unsupported", "no handler for this custom op" if domain else "no handler"

    nodes = [(n.op_type, n.domain, int(n.version)) for n in sub.nodes]
    return ModelInfo(tfm.label, "tflite", tfm.description, {"": tfm.version}, inputs, outputs,
                     tuple(free), _ops_histogram(nodes, status),
                     tuple(s.key for s in tfm.signatures))
