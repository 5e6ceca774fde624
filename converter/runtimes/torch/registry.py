"""Op registry and shared helpers of the torch backend.

An op implementation is registered with `@impl("opName", ...)` as a *builder*:
`builder(node) -> fn`, called once per operation when a graph is compiled. `fn(*tensors)`
is then called on every run with the operation's operand tensors in `Operation.
operand_inputs()` order (positions available as `node.arg(i)` / `node.opt(name)`) and
returns one tensor per output. The executor converts each result to its output's storage
dtype (`to_storage`), so implementations may return float32 for float16 outputs and int64
for integer outputs; ops registered with `moves=True` only move data and return tensors
that already have the storage dtype.

Storage dtypes (how WebNN data types live in torch): float32, float16, int8, uint8, int32
and int64 natively; uint32 as int64 holding the value (0 .. 2**32 - 1); uint64 as int64
holding the same 64 bits (values >= 2**63 appear negative). Ops whose result depends on
unsigned order or division (comparisons, max/min, division, casts to float) handle uint64
explicitly (`order_key`, `uint64_to_float64`).

Float16 on the CPU is computed in float32 and rounded to float16 once per op (torch's CPU
float16 kernels are slow or missing); on CUDA float16 runs natively (`Ctx.native_half`),
except reductions, normalizations, average/L2 pools, cumulativeSum, softmax, linear
resample2d and the recurrent ops, which compute in float32 everywhere (`Node.acc`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from converter.core.webnn.operand import MLOperand, Operation
from converter.core.webnn.operators import operator

Fn = Callable[..., Sequence[torch.Tensor]]
Builder = Callable[["Node"], Fn]


@dataclass(frozen=True)
class Registered:
    builder: Builder
    moves: bool


IMPLS: dict[str, Registered] = {}

STORAGE: dict[str, torch.dtype] = {
    "float32": torch.float32, "float16": torch.float16, "int8": torch.int8,
    "uint8": torch.uint8, "int32": torch.int32, "int64": torch.int64,
    "uint32": torch.int64, "uint64": torch.int64,
    "int4": torch.int8, "uint4": torch.uint8,  # unpacked: one value per byte, as in numpy
}
INT64_MIN = -(2**63)
UINT32_MASK = 0xFFFFFFFF


def impl(*ops: str, moves: bool = False) -> Callable[[Builder], Builder]:
    """Register the decorated builder for each op in `ops` (spec names of
    `converter.core.webnn.operators`; an unknown name is a ValueError)."""
    for op in ops:
        operator(op)

    def register(fn: Builder) -> Builder:
        for op in ops:
            if op in IMPLS:
                raise ValueError(f"torch implementation of {op} registered twice")
            IMPLS[op] = Registered(fn, moves)
        return fn

    return register


@dataclass
class Ctx:
    """Compile-time context shared by the builders of one graph."""

    device: torch.device
    native_half: bool
    constants: dict[int, torch.Tensor] = field(default_factory=dict)

    def tensor(self, array: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
        """A (compile-time) constant tensor on the device."""
        t = torch.as_tensor(np.asarray(array))
        return t.to(device=self.device, dtype=dtype or t.dtype)


class Node:
    """One operation being compiled: operand positions, data types and the context."""

    def __init__(self, op: Operation, ctx: Ctx) -> None:
        self.op = op
        self.ctx = ctx
        self.options = op.options
        self._args: dict[int, int | list[int]] = {}
        self._opts: dict[str, int] = {}
        self.operands: list[MLOperand] = []
        for k, value in enumerate(op.args):
            if isinstance(value, MLOperand):
                self._args[k] = self._add(value)
            elif isinstance(value, (list, tuple)) and any(isinstance(v, MLOperand)
                                                         for v in value):
                self._args[k] = [self._add(v) for v in value if isinstance(v, MLOperand)]
        for name, value in op.options.items():
            if isinstance(value, MLOperand):
                self._opts[name] = self._add(value)
            elif isinstance(value, (list, tuple)) and any(isinstance(v, MLOperand)
                                                         for v in value):
                raise ValueError(f"{op.op}: option {name} holds a list of operands")

    def _add(self, operand: MLOperand) -> int:
        self.operands.append(operand)
        return len(self.operands) - 1

    def arg(self, k: int) -> int:
        """Position (among the fn's tensors) of positional argument `k` (an operand)."""
        pos = self._args[k]
        assert isinstance(pos, int)
        return pos

    def args_list(self, k: int) -> list[int]:
        pos = self._args[k]
        assert isinstance(pos, list)
        return pos

    def opt(self, name: str) -> int | None:
        """Position of operand-valued option `name`, or None when absent."""
        return self._opts.get(name)

    def operand(self, pos: int) -> MLOperand:
        return self.operands[pos]

    def constant(self, pos: int) -> torch.Tensor | None:
        """The device tensor of the operand at `pos` when it is a graph constant."""
        operand = self.operands[pos]
        return self.ctx.constants.get(id(operand)) if operand.kind == "constant" else None

    @property
    def in_type(self) -> str:
        """Data type of the first operand."""
        return self.operands[0].data_type

    @property
    def out_type(self) -> str:
        return self.op.outputs[0].data_type

    @property
    def out_shape(self) -> tuple[int, ...]:
        return self.op.outputs[0].shape

    # -- compute dtypes --------------------------------------------------------------------
    def fl(self, t: torch.Tensor) -> torch.Tensor:
        """Float tensor `t` in the compute dtype (float16 -> float32 unless native)."""
        if t.dtype == torch.float16 and not self.ctx.native_half:
            return t.float()
        return t

    @staticmethod
    def acc(t: torch.Tensor) -> torch.Tensor:
        """Float tensor `t` in float32 also on CUDA: for reductions, normalizations and
        recurrences, whose float16 intermediates (sums of squares, running states) would
        overflow or drift."""
        return t.float() if t.dtype == torch.float16 else t


def order_key(t: torch.Tensor, data_type: str) -> torch.Tensor:
    """A tensor that orders like the values of `t` (uint64 bits flipped to signed order);
    apply again to map back."""
    if data_type == "uint64":
        return t ^ INT64_MIN
    return t


def uint64_to_float64(t: torch.Tensor) -> torch.Tensor:
    """The unsigned value of uint64 bits as float64 (values >= 2**53 rounded once)."""
    f = t.double()
    return torch.where(t < 0, f + 18446744073709551616.0, f)


def to_float(t: torch.Tensor, data_type: str, dtype: torch.dtype) -> torch.Tensor:
    """Values of `t` (storage of `data_type`) as floats of `dtype`."""
    if data_type == "uint64":
        return uint64_to_float64(t).to(dtype)
    return t.to(dtype)


def to_storage(t: torch.Tensor, data_type: str) -> torch.Tensor:
    """Convert a computed result to the storage of `data_type`: floats round to nearest,
    integers keep their low bits (two's complement wrap-around)."""
    if data_type == "uint32":
        if t.dtype != torch.int64:
            t = t.to(torch.int64)
        return t & UINT32_MASK
    target = STORAGE[data_type]
    return t if t.dtype == target else t.to(target)


def int64(t: torch.Tensor) -> torch.Tensor:
    return t if t.dtype == torch.int64 else t.to(torch.int64)


def along(values: torch.Tensor, rank: int, axis: int) -> torch.Tensor:
    """A 1-D tensor reshaped to broadcast along `axis` of a rank-`rank` tensor."""
    shape = [1] * rank
    shape[axis] = values.shape[0]
    return values.reshape(shape)
