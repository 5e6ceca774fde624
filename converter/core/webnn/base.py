"""The core of MLGraphBuilder: input(), constant(), build() and the helpers operators use.

Operator methods live in `converter/core/webnn/ops/` as mixins of `BuilderBase`; `builder.py`
assembles them into `MLGraphBuilder`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from converter.core.webnn import limits
from converter.core.webnn import validation as v
from converter.core.webnn.context import MLContext, MLGraph, MLTensor
from converter.core.webnn.dtypes import (
    ALL_DATA_TYPES,
    DATA_TYPES,
    FOUR_BIT_TYPES,
    MAX_DIMENSION,
    cast_array,
    cast_number,
    data_type_of,
    numpy_dtype,
    to_storage,
)
from converter.core.webnn.errors import MLInvalidStateError, MLTypeError
from converter.core.webnn.operand import MLOperand, MLOperandDescriptor, Operation
from converter.core.webnn.validation import descriptor


class BuilderBase:
    """State and core methods shared by every operator mixin."""

    def __init__(self, context: MLContext) -> None:
        if not isinstance(context, MLContext):
            raise MLTypeError("MLGraphBuilder: context must be an MLContext")
        if context.lost:
            raise MLInvalidStateError("MLGraphBuilder: the context has been destroyed")
        self.context = context
        self._built = False
        self._input_names: set[str] = set()

    # -- state ---------------------------------------------------------------------------
    def _check_state(self, op: str) -> None:
        if self._built:
            raise MLInvalidStateError(f"{op}: the builder has already built a graph")
        if self.context.lost:
            raise MLInvalidStateError(f"{op}: the context has been destroyed")

    def _operand(self, op: str, role: str, x: Any, *, check_limits: bool = True) -> MLOperand:
        """Check that x is an operand of this builder and (optionally) inside op's limits."""
        if self._built or self.context.lost:
            self._check_state(op)
        if not isinstance(x, MLOperand):
            raise v.fail(op, f"{role} must be an MLOperand, got {type(x).__name__}")
        if x.builder is not self:
            raise v.fail(op, f"{role} was created by another MLGraphBuilder")
        if check_limits:
            desc = x.descriptor
            limits.check(op, role, desc.data_type, len(desc.shape))
        return x

    def _optional(self, op: str, role: str, x: Any) -> MLOperand | None:
        return None if x is None else self._operand(op, role, x)

    def _emit(self, op: str, args: Sequence[Any], options: Mapping[str, Any],
              outputs: Sequence[tuple[str, Sequence[int]]],
              roles: Sequence[str] | None = None) -> list[MLOperand]:
        """Record an operation and create its output operands.

        `outputs` are (data type, shape) pairs. Each output is checked against the limits
        table under the role given in `roles` (default "output", or "output<i>" for ops whose
        table names them so) and must have valid dimensions.
        """
        if self._built or self.context.lost:
            self._check_state(op)
        opts = {k: val for k, val in options.items() if val is not None}
        operation = Operation(op, tuple(args), opts)
        table = limits.OP_LIMITS[op]
        result = []
        for i, (dtype, shape) in enumerate(outputs):
            shape = tuple(map(int, shape))
            for d in shape:
                if not 0 < d <= MAX_DIMENSION:
                    v.dimension(op, "output dimension", d)
            role = roles[i] if roles else ("output" if "output" in table else
                                           "outputs" if "outputs" in table else f"output{i}")
            limits.check(op, role, dtype, len(shape))
            result.append(MLOperand(self, MLOperandDescriptor(dtype, shape), "output",
                                    operator=operation, index=i))
        operation.outputs.extend(result)
        return result

    def _emit1(self, op: str, args: Sequence[Any], options: Mapping[str, Any], data_type: str,
               shape: Sequence[int]) -> MLOperand:
        return self._emit(op, args, options, [(data_type, shape)])[0]

    # -- graph inputs and constants ------------------------------------------------------
    def input(self, name: str, shape: Sequence[int], data_type: str) -> MLOperand:
        """A named graph input. Names must be non-empty and unique within the builder."""
        self._check_state("input")
        if not isinstance(name, str) or not name:
            raise MLTypeError("input: name must be a non-empty string")
        if name in self._input_names:
            raise MLTypeError(f"input: duplicate input name {name!r}")
        desc = descriptor("input", data_type, shape)
        self._input_names.add(name)
        return MLOperand(self, desc, "input", name=name)

    def constant(self, value: Any, data_type: str | None = None,
                 shape: Sequence[int] | None = None) -> MLOperand:
        """A constant operand; the data is copied now, so later edits of `value` are ignored.

        `value` is a numpy array or scalar (its dtype is the operand's unless `data_type` is
        given), a Python number or nested list (then `data_type` is required; numbers are
        converted with the spec's cast rules), or an MLTensor from
        `MLContext.create_constant_tensor`. `shape` reshapes a flat buffer of the same
        element count, or fills the shape with a single number.

        4-bit constants (`data_type` "int4" / "uint4", or a numpy array of the `ml_dtypes`
        4-bit types) take their values unpacked: integers in the type's range (MLTypeError
        otherwise; floats are cast with the spec's rules); the operand's value is stored as
        int8 / uint8 (see `converter.core.webnn.dtypes`).
        """
        self._check_state("constant")
        if isinstance(value, MLTensor):
            return self._constant_from_tensor(value)
        if isinstance(value, (np.ndarray, np.generic)):
            arr = np.asarray(value)
            if data_type is None:
                data_type = data_type_of(arr.dtype)
                if data_type is None:
                    raise MLTypeError(f"constant: numpy dtype {arr.dtype} is not a WebNN data "
                                      f"type ({', '.join(DATA_TYPES)})")
        elif data_type is None:
            raise MLTypeError("constant: data_type is required for a Python number or list")
        else:
            arr = np.asarray(value, dtype=np.float64 if _has_float(value) else None)
        v.enum("constant", "data type", data_type, ALL_DATA_TYPES)
        storage = numpy_dtype(data_type)
        if data_type in FOUR_BIT_TYPES and arr.dtype.kind != "f":
            try:
                arr = to_storage(arr, data_type)
            except ValueError as exc:
                raise MLTypeError(f"constant: {exc}") from None
        if arr.dtype.kind not in "fiub":
            raise MLTypeError(f"constant: values of dtype {arr.dtype} are not numbers")
        if arr.dtype != storage:
            if arr.ndim == 0 and arr.dtype.kind == "f" and data_type not in FOUR_BIT_TYPES:
                arr = np.array(cast_number(float(arr), data_type), dtype=data_type)
            else:
                arr = cast_array(arr, data_type)
        if shape is not None:
            shape = v.shape_of("constant", "shape", shape)
            if arr.size == 1 and int(np.prod(shape)) != 1:
                arr = np.full(shape, arr.reshape(()), dtype=arr.dtype)
            elif arr.size != int(np.prod(shape, dtype=np.int64)):
                raise MLTypeError(f"constant: {arr.size} values do not fill shape {list(shape)}")
            arr = arr.reshape(shape)
        desc = descriptor("constant", data_type, arr.shape)
        if _immutable(arr) and arr.flags.c_contiguous and arr.dtype == storage:
            data = arr  # nothing can change these bytes: sharing them is the same as copying
        else:
            data = np.array(arr, dtype=storage, copy=True, order="C")
            data.setflags(write=False)
        return MLOperand(self, desc, "constant", value=data)

    def packed_constant(self, data: Any, data_type: str, shape: Sequence[int]) -> MLOperand:
        """A 4-bit constant ("int4" / "uint4") of `shape` from its packed bytes, as the
        spec's `constant(descriptor, buffer)` takes them: two values per byte, the first in
        the low nibble, row-major (`byte_length(data_type, count)` bytes: a numpy array of
        any shape whose bytes are those, or a bytes-like object). Every byte is a valid
        pair of values, so nothing is checked but the length. The bytes are kept as they
        are (never unpacked here; `MLOperand.value` unpacks them when read): shared when
        nothing can write them (bytes, read-only mmaps), copied otherwise."""
        self._check_state("constant")
        v.enum("constant", "data type", data_type, FOUR_BIT_TYPES)
        shape = v.shape_of("constant", "shape", shape)
        desc = descriptor("constant", data_type, shape)
        if isinstance(data, np.ndarray):
            raw = data.reshape(-1).view(np.uint8) if data.flags.c_contiguous else \
                np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        else:
            raw = np.frombuffer(data, np.uint8)
        if raw.size != desc.byte_length:
            raise MLTypeError(f"constant: {data_type}{list(shape)} takes {desc.byte_length} "
                              f"packed bytes, got {raw.size}")
        if not _immutable(raw):
            raw = raw.copy()
            raw.setflags(write=False)
        return MLOperand(self, desc, "constant", packed=raw)

    def _constant_from_tensor(self, tensor: MLTensor) -> MLOperand:
        if tensor.context is not self.context:
            raise MLTypeError("constant: the tensor belongs to another context")
        if tensor.destroyed:
            raise MLTypeError("constant: the tensor has been destroyed")
        if not tensor.constant:
            raise MLTypeError("constant: the tensor was not created by create_constant_tensor")
        data = tensor.data.copy()
        data.setflags(write=False)
        return MLOperand(self, tensor.descriptor, "constant", value=data)

    # -- build ---------------------------------------------------------------------------
    def build(self, outputs: Mapping[str, MLOperand]) -> MLGraph:
        """Build the graph reachable from `outputs`; a builder builds at most one graph."""
        self._check_state("build")
        if not isinstance(outputs, Mapping) or not outputs:
            raise MLTypeError("build: outputs must be a non-empty mapping of name to operand")
        for name, operand in outputs.items():
            if not isinstance(name, str) or not name:
                raise MLTypeError("build: output names must be non-empty strings")
            if not isinstance(operand, MLOperand) or operand.builder is not self:
                raise MLTypeError(f"build: output {name!r} is not an operand of this builder")
            if operand.kind != "output":
                raise MLTypeError(f"build: output {name!r} is a graph {operand.kind}; "
                                  "wrap it with identity()")
            limits.check_io(f"build: output {name!r}", operand.data_type, operand.rank,
                            output_types=self.context.output_data_types)
        operations, inputs, constants = _walk(list(outputs.values()))
        self._built = True
        return MLGraph(self.context, inputs, tuple(constants), tuple(operations), dict(outputs))


def _immutable(arr: np.ndarray) -> bool:
    """True when no one can write to `arr`'s bytes: every array in its base chain is
    read-only and the memory at the bottom is a read-only buffer (bytes, a read-only mmap).
    An array that owns its memory is never immutable (its owner may set it writable again)."""
    x: Any = arr
    while isinstance(x, np.ndarray):
        if x.flags.writeable:
            return False
        x = x.base
    if x is None:
        return False
    try:
        return memoryview(x).readonly
    except TypeError:
        return False


def _has_float(value: Any) -> bool:
    return np.asarray(value).dtype.kind == "f"


def _walk(roots: list[MLOperand]) -> tuple[list[Operation], dict[str, MLOperand], list[MLOperand]]:
    """Topologically ordered operations, inputs and constants reachable from roots."""
    order: list[Operation] = []
    seen_ops: set[int] = set()
    inputs: dict[str, MLOperand] = {}
    constants: dict[int, MLOperand] = {}
    stack: list[tuple[MLOperand, bool]] = [(r, False) for r in reversed(roots)]
    while stack:
        operand, expanded = stack.pop()
        if operand.kind == "input":
            inputs.setdefault(operand.name or "", operand)
            continue
        if operand.kind == "constant":
            constants.setdefault(id(operand), operand)
            continue
        operation = operand.operator
        assert operation is not None
        if id(operation) in seen_ops:
            continue
        if expanded:
            seen_ops.add(id(operation))
            order.append(operation)
            continue
        stack.append((operand, True))
        for dep in reversed(operation.operand_tuple()):
            if dep.kind != "output" or id(dep.operator) not in seen_ops:
                stack.append((dep, False))
    return order, inputs, list(constants.values())
