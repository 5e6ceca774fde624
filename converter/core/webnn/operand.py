"""MLOperandDescriptor, MLOperand and the Operation record the builder produces."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from converter.core.webnn.dtypes import byte_length, unpack_4bit

_set = object.__setattr__


@dataclass(frozen=True, slots=True)
class MLOperandDescriptor:
    """Data type and static shape of an operand (`shape == ()` is a scalar)."""

    data_type: str
    shape: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def byte_length(self) -> int:
        """Bytes of the packed data (4-bit types: two values per byte)."""
        return byte_length(self.data_type, self.size)

    def to_spec(self) -> dict[str, Any]:
        return {"dataType": self.data_type, "shape": list(self.shape)}


@dataclass(frozen=True, eq=False, init=False, slots=True, weakref_slot=True)
class MLOperand:
    """An operand of a graph under construction.

    `kind` is "input", "constant" or "output" (an operator result). Inputs carry `name`,
    constants carry a read-only `value`, operator results carry `operator` and `index` (the
    position among the operator's outputs). Operands compare and hash by identity;
    `builder` is the MLGraphBuilder that created the operand (only compared by identity).

    A 4-bit (int4 / uint4) constant may be given `packed` instead of `value`: its bytes as
    WebNN lays them out (two values per byte, the first in the low nibble, row-major;
    read-only uint8). Then `packed` keeps those bytes as they are (exports write them
    unchanged) and `value`, the storage array (one int8 / uint8 value per element, see
    `converter.core.webnn.dtypes`), is unpacked from them the first time it is read.
    """

    builder: object = field(repr=False)
    descriptor: MLOperandDescriptor
    kind: str
    name: str | None = None
    operator: Operation | None = field(default=None, repr=False)
    index: int = 0
    _value: np.ndarray | None = field(default=None, repr=False)
    _packed: np.ndarray | None = field(default=None, repr=False)

    def __init__(self, builder: object, descriptor: MLOperandDescriptor, kind: str,
                 name: str | None = None, value: np.ndarray | None = None,
                 operator: Operation | None = None, index: int = 0, *,
                 packed: np.ndarray | None = None) -> None:
        # frozen: each field is written once (the generated __init__ would take `_value`
        # and `_packed` under their field names)
        s = _set
        s(self, "builder", builder)
        s(self, "descriptor", descriptor)
        s(self, "kind", kind)
        s(self, "name", name)
        s(self, "operator", operator)
        s(self, "index", index)
        s(self, "_value", value)
        s(self, "_packed", packed)

    @property
    def value(self) -> np.ndarray | None:
        """A constant's read-only value (None for inputs and operator results)."""
        if self._value is None and self._packed is not None:
            data = unpack_4bit(self._packed, self.data_type, self.shape)
            data.setflags(write=False)
            _set(self, "_value", data)
        return self._value

    @property
    def packed(self) -> np.ndarray | None:
        """The packed bytes of a 4-bit constant given packed (see the class docstring),
        else None."""
        return self._packed

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
    _inputs: tuple[MLOperand, ...] | None = field(default=None, init=False, repr=False)
    """`operand_tuple()`, found on first use."""

    def operand_inputs(self) -> Iterator[MLOperand]:
        """Every operand this operation reads, in argument then option order."""
        return iter(self.operand_tuple())

    def operand_tuple(self) -> tuple[MLOperand, ...]:
        """`operand_inputs()` as a tuple (found once: args and options are never changed)."""
        inputs = self._inputs
        if inputs is None:
            inputs = _operands_in((*self.args, *self.options.values()))
            _set(self, "_inputs", inputs)
        return inputs


_PLAIN = frozenset({int, float, str, bool, type(None)})
"""Types of option values that are neither operands nor sequences of them."""


def _operands_in(values: Sequence[Any]) -> tuple[MLOperand, ...]:
    out: list[MLOperand] = []
    for value in values:
        kind = type(value)
        if kind in _PLAIN:
            continue
        if kind is MLOperand or isinstance(value, MLOperand):
            out.append(value)
        elif kind in (list, tuple) or (
                isinstance(value, Sequence) and not isinstance(value, str)):
            out.extend(v for v in value if isinstance(v, MLOperand))
    return tuple(out)
