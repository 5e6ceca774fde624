"""Registry of TFLite op handlers (see docs/architecture.md section 3).

Every module in this package registers its handlers with `@tflite_op`; modules are discovered
with pkgutil on first lookup. A handler is `fn(ctx, node) -> list[MLOperand | np.ndarray |
None]` (one entry per operator output), where `node` is a
`converter.core.ir.Node` whose `attrs` are the decoded builtin options with schema defaults
(the reader fills the defaults of the op's options table when the operator carries none), and
`input_infos`/`output_infos` (`converter.core.ir.TensorInfo`) carry dtypes and quantization
parameters.

Builtin ops are registered by their schema name ("CONV_2D"); custom ops with
`custom=True` by their custom code ("Convolution2DTransposeBias", domain "custom").

Lookup rule: the handler with the highest `since` <= the operator-code version.

The registry itself (lookup, discovery, support table) is `op_mappings.registry.Registry`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from op_mappings.registry import FoldFn, Handler, HandlerFn, Registry

__all__ = ["FoldFn", "Handler", "HandlerFn", "builtins", "handlers", "load_all", "lookup",
           "support_table", "tflite_op"]

_registry = Registry("TFLite", __name__, __path__)
_REGISTRY = _registry.table
load_all = _registry.load_all
lookup = _registry.lookup
handlers = _registry.handlers
builtins = _registry.builtins
support_table = _registry.support_table


def tflite_op(op_type: str | Sequence[str], since: int = 1, *, custom: bool = False,
              const_inputs: Sequence[int] = (), fold: FoldFn | bool | None = None
              ) -> Callable[[HandlerFn], HandlerFn]:
    """Register the decorated function for `op_type` (or several) from operator-code
    version `since` on. `fold=False` keeps the op in the graph even when every input is a
    constant (e.g. float16 DEQUANTIZE kept as a cast)."""
    return _registry.register(op_type, since, "custom" if custom else "", const_inputs, fold)
