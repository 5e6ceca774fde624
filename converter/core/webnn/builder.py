"""MLGraphBuilder: the core (input/constant/build) plus every operator family mixin."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from converter.core.webnn.operand import MLOperand
from converter.core.webnn.operators import OperatorMethods, operator


class MLGraphBuilder(OperatorMethods):
    """Builds one WebNN graph. Methods are the spec's operators in snake_case, options are
    keyword arguments in snake_case with the spec's defaults; inside the graph, operator and
    option names are the spec's own (camelCase)."""

    def apply(self, op: str, args: Sequence[Any], options: Mapping[str, Any]) -> list[MLOperand]:
        """Record spec operator `op` with spec-ordered `args` and spec-named (camelCase)
        `options`, as an `Operation` holds them; its outputs as a list. An unknown operator
        or option is a ValueError (the caller names the source)."""
        sig = operator(op)
        kwargs = {}
        for key, value in options.items():
            param = sig.options.get(key)
            if param is None:
                raise ValueError(f"{op}: unknown option {key!r}")
            kwargs[param.py_name] = value
        result = getattr(self, sig.method)(*args, **kwargs)
        return list(result) if isinstance(result, (list, tuple)) else [result]
