"""What the importer loop uses of the op handlers (`op_mappings.registry.Handler`, a layer
above): `OpHandler` and the `Lookup` that finds them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from converter.core.webnn import MLOperand

Output = MLOperand | np.ndarray | None
"""One output value of a handler: an operand, a folded constant (numpy), or None for an
output the node omits."""

Outputs = Sequence[Output]
"""What a handler returns: its node's output values in order."""


class OpHandler(Protocol):
    """What the loop uses of an op's handler (`op_mappings.registry.Handler`): `fn(ctx,
    node)` -> the output values, `const_inputs` (inputs that must be constants), `fold` (a
    numpy fold function, False: never folded, None: folded by replaying `fn`)."""

    @property
    def fn(self) -> Callable[..., Sequence[Any]]: ...

    @property
    def const_inputs(self) -> tuple[int, ...]: ...

    @property
    def fold(self) -> Callable[..., Sequence[Any] | None] | bool | None: ...


Lookup = Callable[[str, str, int], OpHandler | None]
"""`lookup(op_type, domain, version)`: the handler of an op, or None."""
