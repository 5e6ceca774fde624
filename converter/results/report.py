"""The conversion report: what happened to every source node (native, decomposed, folded,
unsupported, skipped) and the conversion's warnings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

STATUSES = ("native", "decomposed", "folded", "unsupported", "skipped")


@dataclass(frozen=True)
class NodeRecord:
    """What happened to one source node. `status` is one of STATUSES; `webnn_ops` the spec
    names of the operations it produced (empty when folded, aliased or failed)."""

    op_type: str
    domain: str
    name: str
    status: str
    webnn_ops: tuple[str, ...] = ()


@dataclass
class ConversionReport:
    """Per source op type: which nodes were mapped natively (one WebNN op, or none for pure
    aliases like Identity), decomposed (several ops), folded to constants, unsupported
    (failed) or skipped (depending on a failed node); plus conversion warnings.

    `target` names the target the graph was converted for ('' before the target passes ran;
    `convert` sets it); `outside_target` holds one line per thing the converted graph still
    uses outside that target's limits (`converter.passes.targets.check.limit_notes`): the
    command line's `convert` refuses to write such a graph.

    `host_steps` is the line saying which source nodes run on the host after the WebNN graph
    (`converter.results.host_steps.HostSteps.summary`; '' when none do): those nodes are not
    among `nodes`, which describe the WebNN graph."""

    source_format: str = "onnx"
    nodes: list[NodeRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    target: str = ""
    outside_target: list[str] = field(default_factory=list)
    host_steps: str = ""

    def by_op(self) -> dict[str, dict[str, list[str]]]:
        out: dict[str, dict[str, list[str]]] = {}
        for r in self.nodes:
            key = f"{r.domain}::{r.op_type}" if r.domain else r.op_type
            out.setdefault(key, {s: [] for s in STATUSES})[r.status].append(r.name)
        return dict(sorted(out.items()))

    def counts(self) -> dict[str, int]:
        return {s: sum(r.status == s for r in self.nodes) for s in STATUSES}

    def to_dict(self) -> dict[str, Any]:
        """Stable JSON form: {"format", "summary", "ops": {op: {status: [names], "webnn_ops":
        [...]}}, "warnings"}, plus "target" and "outside_target" once a target is set and
        "host_steps" when nodes run on the host; keys sorted, node names in graph order."""
        webnn: dict[str, set[str]] = {}
        for r in self.nodes:
            key = f"{r.domain}::{r.op_type}" if r.domain else r.op_type
            webnn.setdefault(key, set()).update(r.webnn_ops)
        ops = {op: {**statuses, "webnn_ops": sorted(webnn[op])}
               for op, statuses in self.by_op().items()}
        return {"format": self.source_format, "summary": self.counts(), "ops": ops,
                "warnings": list(self.warnings),
                **({"target": self.target, "outside_target": list(self.outside_target)}
                   if self.target else {}),
                **({"host_steps": self.host_steps} if self.host_steps else {})}

    def to_text(self) -> str:
        lines = [f"target: {self.target}"] if self.target else []
        for op, st in self.by_op().items():
            parts = [f"{s} {len(st[s])}" for s in STATUSES if st[s]]
            lines.append(f"{op}: {', '.join(parts)}")
        if self.host_steps:
            lines.append(self.host_steps)
        lines += [f"warning: {w}" for w in self.warnings]
        return "\n".join(lines)
