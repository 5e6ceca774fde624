"""Registry of TFLite op handlers (see ../shared/docs/architecture.md section 3).

Every module in this package registers its handlers with `@tflite_op`; modules are discovered
with pkgutil on first lookup. A handler is `fn(ctx, node) -> list[MLOperand | np.ndarray |
None]` (one entry per operator output), where `node` is a
`converter.formats.tflite.TFLiteNode` whose `attrs` are the decoded builtin options with
schema defaults, and `input_infos`/`output_infos` carry dtypes and quantization parameters.

Builtin ops are registered by their schema name ("CONV_2D"); custom ops with
`custom=True` by their custom code ("Convolution2DTransposeBias", domain "custom").

Lookup rule: the handler with the highest `since` <= the operator-code version.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from typing import Any

from op_mappings.onnx import FoldFn, Handler, HandlerFn

_REGISTRY: dict[tuple[str, str], list[Handler]] = {}
_loaded = False


def tflite_op(op_type: str | Sequence[str], since: int = 1, *, custom: bool = False,
              const_inputs: Sequence[int] = (), fold: FoldFn | bool | None = None
              ) -> Callable[[HandlerFn], HandlerFn]:
    """Register the decorated function for `op_type` (or several) from operator-code
    version `since` on. `fold=False` keeps the op in the graph even when every input is a
    constant (e.g. float16 DEQUANTIZE kept as a cast)."""
    types = [op_type] if isinstance(op_type, str) else list(op_type)
    domain = "custom" if custom else ""

    def register(fn: HandlerFn) -> HandlerFn:
        for t in types:
            entries = _REGISTRY.setdefault((domain, t), [])
            if any(h.since == since for h in entries):
                raise ValueError(f"TFLite handler for {t} since {since} registered twice")
            entries.append(Handler(t, domain, since, fn, tuple(const_inputs), fold,  # type: ignore[arg-type]
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
    for h in _REGISTRY.get((domain, op_type), ()):
        if h.since <= version:
            best = h
    return best


def handlers() -> list[Handler]:
    """Every registered handler, sorted by (domain, op_type, since)."""
    load_all()
    return sorted((h for hs in _REGISTRY.values() for h in hs),
                  key=lambda h: (h.domain, h.op_type, h.since))


def builtins() -> list[str]:
    """Names of the builtin ops that have a handler."""
    return sorted({h.op_type for h in handlers() if h.domain == ""})


def support_table() -> list[dict[str, Any]]:
    """One row per (domain, op type): the versions handled and the restrictions."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for h in handlers():
        row = rows.setdefault((h.domain, h.op_type), {
            "op_type": h.op_type, "domain": h.domain, "since": [], "const_inputs": [],
            "notes": h.doc})
        row["since"].append(h.since)
        row["const_inputs"] = sorted(set(row["const_inputs"]) | set(h.const_inputs))
    return list(rows.values())
