"""Registry of ONNX op handlers (see docs/architecture.md section 3).

Every module in this package registers its handlers with `@onnx_op`; modules are discovered
with pkgutil on first lookup, so adding an op never means editing a central list.

A handler is `fn(ctx, node) -> list[MLOperand | None]`: one entry per node output (None for
an optional output nobody reads). `ctx` is the importer's `ImportContext`, `node` a
`converter.core.ir.Node` whose attributes already have the schema defaults (the ONNX reader
fills them), so handlers never hard-code defaults.

Lookup rule: the handler with the highest `since` that is <= the node's opset version.

`const_inputs` lists input positions that must be known at conversion time; the importer
reports `requires_constant_input` for them before calling the handler. `fold`, when given, is
a numpy function `fold(ctx, node, values) -> list[np.ndarray]` used instead of the reference
backend when every input is a constant (exact data-movement ops: Reshape, Gather, Concat...).

The registry itself (lookup, discovery, support table) is `op_mappings.registry.Registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from op_mappings.registry import FoldFn, Handler, HandlerFn, HandlerT, Registry

__all__ = ["FoldFn", "Handler", "HandlerFn", "builtins", "handlers", "load_all", "lookup",
           "onnx_op", "support_table"]


def _norm_domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


_registry = Registry("ONNX", __name__, __path__, _norm_domain)
_REGISTRY = _registry.table
load_all = _registry.load_all
lookup = _registry.lookup
handlers = _registry.handlers
builtins = _registry.builtins
support_table = _registry.support_table


def onnx_op(op_type: str | Sequence[str], since: int = 1, domain: str = "",
            const_inputs: Sequence[int] = (), fold: FoldFn | bool | None = None
            ) -> Callable[[HandlerT], HandlerT]:
    """Register the decorated function for `op_type` (or several op types) from opset
    `since` on (`fold=False` keeps the node in the graph even when every input is a
    constant)."""
    return _registry.register(op_type, since, domain, const_inputs, fold)
