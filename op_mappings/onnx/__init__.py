"""Registry of ONNX op handlers (see ../shared/docs/architecture.md section 3).

Every module in this package registers its handlers with `@onnx_op`; modules are discovered
with pkgutil on first lookup, so adding an op never means editing a central list.

A handler is `fn(ctx, node) -> list[MLOperand | None]`: one entry per node output (None for
an optional output nobody reads). `ctx` is the importer's `ImportContext`, `node` a
`converter.formats.onnx.Node` whose attributes already have the schema defaults, so handlers
never hard-code defaults.

Lookup rule: the handler with the highest `since` that is <= the node's opset version.

`const_inputs` lists input positions that must be known at conversion time; the importer
reports `requires_constant_input` for them before calling the handler. `fold`, when given, is
a numpy function `fold(ctx, node, values) -> list[np.ndarray]` used instead of the reference
backend when every input is a constant (exact data-movement ops: Reshape, Gather, Concat...).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

HandlerFn = Callable[..., Sequence[Any]]
FoldFn = Callable[..., Sequence[Any]]


@dataclass(frozen=True)
class Handler:
    """One registered handler."""

    op_type: str
    domain: str
    since: int
    fn: HandlerFn
    const_inputs: tuple[int, ...] = ()
    fold: FoldFn | None = None
    module: str = ""

    @property
    def doc(self) -> str:
        """The restriction text: the handler's docstring, else its module's."""
        import sys

        text = self.fn.__doc__ or getattr(sys.modules.get(self.module), "__doc__", "") or ""
        return " ".join(text.split())


_REGISTRY: dict[tuple[str, str], list[Handler]] = {}
_loaded = False


def _norm_domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


def onnx_op(op_type: str | Sequence[str], since: int = 1, domain: str = "",
            const_inputs: Sequence[int] = (), fold: FoldFn | None = None
            ) -> Callable[[HandlerFn], HandlerFn]:
    """Register the decorated function for `op_type` (or several op types) from opset
    `since` on."""
    types = [op_type] if isinstance(op_type, str) else list(op_type)

    def register(fn: HandlerFn) -> HandlerFn:
        for t in types:
            key = (_norm_domain(domain), t)
            entries = _REGISTRY.setdefault(key, [])
            if any(h.since == since for h in entries):
                raise ValueError(f"ONNX handler for {t} since {since} registered twice")
            entries.append(Handler(t, key[0], since, fn, tuple(const_inputs), fold,
                                   fn.__module__))
            entries.sort(key=lambda h: h.since)
        return fn

    return register


def load_all() -> None:
    """Import every mapping module of this package (idempotent)."""
    global _loaded
    if _loaded:
        return
    _loaded = True
    for mod in pkgutil.iter_modules(__path__):
        if not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")


def lookup(op_type: str, domain: str, version: int) -> Handler | None:
    """The handler with the highest `since` <= version, or None."""
    load_all()
    best = None
    for h in _REGISTRY.get((_norm_domain(domain), op_type), ()):
        if h.since <= version:
            best = h
    return best


def handlers() -> list[Handler]:
    """Every registered handler, sorted by (domain, op_type, since)."""
    load_all()
    return sorted((h for hs in _REGISTRY.values() for h in hs),
                  key=lambda h: (h.domain, h.op_type, h.since))


def support_table() -> list[dict[str, Any]]:
    """One row per (domain, op type): the opset versions handled and the restrictions."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for h in handlers():
        row = rows.setdefault((h.domain, h.op_type), {
            "op_type": h.op_type, "domain": h.domain, "since": [], "const_inputs": [],
            "notes": h.doc})
        row["since"].append(h.since)
        row["const_inputs"] = sorted(set(row["const_inputs"]) | set(h.const_inputs))
    return list(rows.values())
