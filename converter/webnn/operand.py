"""MLOperandDescriptor, MLOperand and the Operation record the builder produces."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .dtypes import byte_length

if TYPE_CHECKING:
    from .base import BuilderBase


@dataclass(frozen=True)
class MLOperandDescriptor:
    """Data type and static shape of an operand (`shape == ()` is a scalar)."""

    data_type: str
    shape: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def byte_length(self) -> int:
        """Bytes of the packed data (4-bit types: two values per byte)."""
        return byte_length(self.data_type, self.size)

    def to_spec(self) -> dict[str, Any]:
        return {"dataType": self.data_type, "shape": list(self.shape)}


@dataclass(frozen=True, eq=False)
class MLOperand:
    """An operand of a graph under construction.

    `kind` is "input", "constant" or "output" (an operator result). Inputs carry `name`,
    constants carry a read-only `value`, operator results carry `operator` and `index` (the
    position among the operator's outputs). Operands compare and hash by identity.
    """

    builder: BuilderBase = field(repr=False)
    descriptor: MLOperandDescriptor
    kind: str
    name: str | None = None
    value: np.ndarray | None = field(default=None, repr=False)
    operator: Operation | None = field(default=None, repr=False)
    index: int = 0

    @property
    def data_type(self) -> str:
        return self.descriptor.data_type

    @property
    def shape(self) -> tuple[int, ...]:
        return self.descriptor.shape

    @property
    def rank(self) -> int:
        return len(self.descriptor.shape)


@dataclass(frozen=True, eq=False)
class Operation:
    """One operator call, with spec names.

    `op` is the spec method name (`averagePool2d`), `args` the positional arguments in spec
    order after the operands they name (operands, lists of operands for `concat`, or
    literals), `options` the spec options dictionary with every default filled in and
    operand-valued members as operands (absent optional operands are omitted). `outputs` is
    filled in once by the builder right after the operands are created.
    """

    op: str
    args: tuple[Any, ...]
    options: Mapping[str, Any]
    outputs: list[MLOperand] = field(default_factory=list)

    def operand_inputs(self) -> Iterator[MLOperand]:
        """Every operand this operation reads, in argument then option order."""
        for value in (*self.args, *self.options.values()):
            if isinstance(value, MLOperand):
                yield value
            elif isinstance(value, Sequence) and not isinstance(value, str):
                yield from (v for v in value if isinstance(v, MLOperand))
