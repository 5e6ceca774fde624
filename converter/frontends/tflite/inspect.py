"""`inspect` for TFLite: inputs/outputs as declared (`shape_signature`), free dimensions (the
-1 ones with the stored size they are converted at unless set, and those that must be set),
op histogram with support status.

The op histogram counts the nodes of the converted subgraph and of every subgraph its
control-flow ops reach (IF branches, WHILE condition and body, CALL_ONCE initialisers,
STABLEHLO_COMPOSITE decompositions; each subgraph once), so that an unsupported op inside a
branch is listed too.

Restrictions: inputs that only steer shapes or control flow are not looked for (TFLite
inputs cannot be pinned).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from numbers import Integral
from pathlib import Path
from typing import Any

from converter.core.fixes import Fix
from converter.frontends.base import ModelInfo, TensorSummary, ops_histogram
from converter.frontends.free_dims import fixes_for


def inspect_tflite(model: str | os.PathLike[str] | bytes, signature: str | None
                   ) -> ModelInfo:
    from converter.core.errors import InvalidModel
    from converter.frontends.tflite.inputs import stored_sizes
    from converter.frontends.tflite.reader import read_model
    from op_mappings.tflite import handlers, lookup

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

    def shown(i: int) -> str:
        t = sub.tensors[i]
        return aliases.get(i, t.tensor_name or t.name)

    def summary(i: int) -> TensorSummary:
        t = sub.tensors[i]
        if not t.has_rank and not t.shape:
            shape = None
        else:
            dims = t.shape_signature if t.shape_signature is not None else t.shape
            shape = tuple(None if d < 0 else int(d) for d in dims)
        return TensorSummary(shown(i), t.dtype, shape)

    inputs = tuple(summary(i) for i in sub.inputs)
    outputs = tuple(summary(i) for i in sub.outputs)
    free = [f"{t.name}[{k}]" for t in inputs for k, d in enumerate(t.shape or ()) if d is None]
    free += [f"{t.name} (unknown rank)" for t in inputs if t.shape is None]
    defaults: list[Fix] = []
    missing: set[tuple[str, int | None]] = set()
    for i, t in zip(sub.inputs, inputs, strict=True):
        stored = stored_sizes(sub.tensors[i])
        if t.shape is None:
            missing.add((t.name, None))
        for k, d in enumerate(t.shape or ()):
            if d is None and k in stored:
                defaults.append(Fix("input_dims", t.name, axis=k, value=stored[k]))
            elif d is None:
                missing.add((t.name, k))
    fixes = fixes_for([(t.name, t.shape) for t in inputs], missing) if missing else ()
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

    nodes = [(n.op_type, n.domain, int(n.version)) for n in _reachable_nodes(tfm.subgraphs,
                                                                              index)]
    return ModelInfo(tfm.label, "tflite", tfm.description, {"": tfm.version}, inputs, outputs,
                     tuple(free), ops_histogram(nodes, status),
                     tuple(s.key for s in tfm.signatures), fixes=fixes,
                     defaults=tuple(defaults))


def _reachable_nodes(subgraphs: Sequence[Any], index: int) -> list[Any]:
    """The nodes of subgraph `index` and of every subgraph reachable from it through the
    `*_subgraph_index` attributes of its nodes (each subgraph once)."""
    seen = {index}
    todo = [index]
    nodes: list[Any] = []
    while todo:
        current = subgraphs[todo.pop()]
        for node in current.nodes:
            nodes.append(node)
            for key, value in node.attrs.items():
                if not key.endswith("_subgraph_index") or not isinstance(value, Integral):
                    continue
                sub = int(value)
                if 0 <= sub < len(subgraphs) and sub not in seen:
                    seen.add(sub)
                    todo.append(sub)
    return nodes

