"""The emitter the WebNN → ONNX lowerings write into.

An `Emitter` owns the ONNX nodes and initializers produced so far, the ONNX value name of
every WebNN operand, and the element type of every value it created (WebNN data type names
plus "bool" and "float64"). Lowerings only call its helpers, so value names are always fresh
and valid, and casts are deduplicated. Every initializer goes through `add_initializer`,
which notes its compact form (splat, band, broadcast) while the numpy array is at hand, for
the final `compact.compact_constants` pass.

Value names: graph inputs and outputs keep their WebNN names verbatim (ONNX names are
arbitrary strings); every other value gets a fresh name built from `[A-Za-z0-9_]` characters
that never collides with an input or output name: `v<n>` by default, so that naming costs a
few bytes per node (small models export at about their own size), or, with
`readable_names=True`, `<hint>_<n>` derived from the WebNN op and ONNX op type (e.g.
`conv2d0_Conv_25`). Nodes are unnamed (ONNX allows empty node names) unless
`readable_names` is set; nothing downstream reads internal names (the onnxruntime backend and
validation's taps only use graph output names).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from onnx import NodeProto, TensorProto, helper, numpy_helper

from converter.core.webnn.dtypes import FOUR_BIT_TYPES, numpy_dtype, pack_4bit
from converter.core.webnn.errors import MLOperationError
from converter.core.webnn.operand import MLOperand, Operation
from converter.core.webnn.operators import operator
from converter.runtimes.onnxruntime.lowering.compact_forms import CompactForm, compact_form

ONNX_TYPES: dict[str, int] = {
    "float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16, "float64": TensorProto.DOUBLE,
    "int32": TensorProto.INT32, "uint32": TensorProto.UINT32, "int64": TensorProto.INT64,
    "uint64": TensorProto.UINT64, "int8": TensorProto.INT8, "uint8": TensorProto.UINT8,
    "bool": TensorProto.BOOL, "int4": TensorProto.INT4, "uint4": TensorProto.UINT4,
}

Lowering = Callable[["Emitter", Operation], Sequence[str]]
LOWERINGS: dict[str, Lowering] = {}


def lowering(*ops: str) -> Callable[[Lowering], Lowering]:
    """Register the decorated function as the ONNX lowering of each WebNN op in `ops`.

    A lowering is called as `fn(emitter, operation)` and returns the ONNX value names of the
    operation's outputs, in order, each holding the output's WebNN data type and shape.
    `ops` are spec names of `converter.core.webnn.operators` (an unknown name is a
    ValueError).
    """
    for op in ops:
        operator(op)

    def register(fn: Lowering) -> Lowering:
        for op in ops:
            if op in LOWERINGS:
                raise ValueError(f"ONNX lowering for {op} registered twice")
            LOWERINGS[op] = fn
        return fn

    return register


def lift(data_type: str) -> str:
    """The type an inexact float computation runs in: float16 is computed in float32 (and
    rounded once at the end), every other type in itself."""
    return "float32" if data_type == "float16" else data_type


_SAFE = re.compile(r"[^A-Za-z0-9_]+")
_FLOAT_TYPES = ("float32", "float16")


def constant_value(operand: MLOperand | None) -> np.ndarray | None:
    """The value of an operand known at export time: a constant, or the result of cast (to a
    float type), reshape, transpose or identity applied to such a value (as converted models
    have for float16 weights); None for anything else."""
    if operand is None:
        return None
    if operand.kind == "constant":
        return None if operand.value is None else np.asarray(operand.value)
    op = operand.operator
    if op is None or op.op not in ("cast", "reshape", "transpose", "identity"):
        return None
    if op.op == "cast" and operand.data_type not in _FLOAT_TYPES:
        return None
    src = constant_value(op.args[0])
    if src is None:
        return None
    if op.op == "cast":
        return src.astype(operand.data_type)
    if op.op == "transpose":
        return np.transpose(src, [int(p) for p in op.options["permutation"]])
    return src.reshape(operand.shape)


class Emitter:
    """Collects ONNX nodes and initializers for one graph (see the module docstring)."""

    def __init__(self, opset: int, reserved: Iterable[str] = (),
                 compact_min_bytes: int | None = None, readable_names: bool = False) -> None:
        self.opset = opset
        #: Descriptive value and node names instead of `v<n>` and unnamed nodes (debugging).
        self.readable_names = readable_names
        self.nodes: list[NodeProto] = []
        self.initializers: list[TensorProto] = []
        #: Initializers larger than this many bytes get their compact form noted (None: no
        #: detection); see `compact`.
        self.compact_min_bytes = compact_min_bytes
        #: Initializer name -> its compact form (None: none), noted by `add_initializer`.
        self.compact_forms: dict[str, CompactForm | None] = {}
        self._used: set[str] = set(reserved)
        self._values: dict[int, str] = {}
        self._types: dict[str, str] = {}
        self._casts: dict[tuple[str, str], str] = {}
        self._consts: dict[tuple[str, tuple[int, ...], bytes], str] = {}
        self._counter = 0
        self.current: str = "graph"
        #: Static shapes of the values whose shape is known (bound operands, reshapes).
        self.shapes: dict[str, tuple[int, ...]] = {}

    # -- names and values -------------------------------------------------------------------
    def fresh(self, hint: str) -> str:
        """A new value name, unique in the model: `v<n>`, or derived from `hint` (sanitised)
        with `readable_names`."""
        base = "v"
        if self.readable_names:
            base = (_SAFE.sub("_", hint).strip("_")[:48] or "v") + "_"
        while True:
            self._counter += 1
            name = f"{base}{self._counter}"
            if name not in self._used:
                self._used.add(name)
                return name

    def node_name(self, hint: str) -> str:
        """The name of a new node: empty, or a fresh name derived from `hint` with
        `readable_names`."""
        return self.fresh(hint) if self.readable_names else ""

    def bind(self, operand: MLOperand, name: str) -> None:
        """Record that `operand`'s value is the ONNX value `name`."""
        self._values[id(operand)] = name
        self._types.setdefault(name, operand.data_type)
        self.shapes.setdefault(name, tuple(operand.shape))

    def declare(self, name: str, data_type: str) -> None:
        """Record the element type of a value created outside `node` (graph inputs)."""
        self._used.add(name)
        self._types[name] = data_type

    def value(self, operand: MLOperand) -> str:
        """The ONNX value name of a WebNN operand (in its own data type)."""
        return self._values[id(operand)]

    def dtype(self, name: str) -> str:
        return self._types[name]

    def input(self, operand: MLOperand, data_type: str | None = None) -> str:
        """The operand's value, cast to `data_type` when given and different."""
        name = self.value(operand)
        return name if data_type is None else self.cast(name, data_type)

    def rename_everywhere(self, old: str, new: str) -> None:
        """Rename a node-produced value (used to give graph outputs their WebNN names)."""
        for node in self.nodes:
            for i, n in enumerate(node.input):
                if n == old:
                    node.input[i] = new
            for i, n in enumerate(node.output):
                if n == old:
                    node.output[i] = new
        self._types[new] = self._types[old]

    # -- constants --------------------------------------------------------------------------
    def const(self, value: Any, data_type: str, hint: str = "const") -> str:
        """An initializer holding `value` converted to `data_type` (deduplicated when small)."""
        arr = np.array(value, dtype=np.bool_ if data_type == "bool" else numpy_dtype(data_type),
                       order="C")
        key = None
        if arr.size <= 64:
            key = (data_type, arr.shape, arr.tobytes())
            if key in self._consts:
                return self._consts[key]
        name = self.fresh(hint)
        self.add_initializer(arr, name, data_type)
        self._types[name] = data_type
        if key is not None:
            self._consts[key] = name
        return name

    def add_initializer(self, arr: np.ndarray, name: str, data_type: str | None = None) -> None:
        """Append `arr` as the initializer `name`, noting its compact form (splat, band or
        broadcast; see `compact`) when `compact_min_bytes` is set and `arr` is larger.
        `data_type` "int4" / "uint4" writes the int8 / uint8 values as a packed INT4 / UINT4
        tensor (two per byte, low nibble first; never compacted)."""
        if data_type in FOUR_BIT_TYPES:
            tensor = TensorProto(name=name, data_type=ONNX_TYPES[data_type],
                                 dims=list(arr.shape), raw_data=pack_4bit(arr))
            self.initializers.append(tensor)
            return
        self.initializers.append(numpy_helper.from_array(arr, name))
        if self.compact_min_bytes is not None and arr.nbytes > self.compact_min_bytes:
            self.compact_forms[name] = compact_form(arr, self.compact_min_bytes)

    def ints(self, values: Sequence[int], hint: str = "ints") -> str:
        """A 1-D int64 initializer (shapes, axes, pads, starts, ...)."""
        return self.const(np.asarray(list(values), dtype=np.int64).reshape(-1), "int64", hint)

    def scalar(self, value: float | int | bool, data_type: str, hint: str = "scalar") -> str:
        return self.const(np.asarray(value), data_type, hint)

    # -- nodes ------------------------------------------------------------------------------
    def node(self, op_type: str, inputs: Sequence[str], data_type: str | Sequence[str],
             outputs: int = 1, **attrs: Any) -> str:
        """Append one node; returns its (first) output name. `data_type` is the element type
        of the output(s); use `node_multi` for several outputs."""
        return self.node_multi(op_type, inputs, [data_type] * outputs if isinstance(
            data_type, str) else list(data_type), **attrs)[0]

    def node_multi(self, op_type: str, inputs: Sequence[str], data_types: Sequence[str],
                   **attrs: Any) -> list[str]:
        """Append one node with len(data_types) outputs; returns the output names."""
        outs = [self.fresh(f"{self.current}_{op_type}") for _ in data_types]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        node = helper.make_node(op_type, list(inputs), outs, name=self.node_name(
            f"n_{self.current}_{op_type}"), **attrs)
        self.nodes.append(node)
        for name, dt in zip(outs, data_types, strict=True):
            self._types[name] = dt
        return outs

    def cast(self, name: str, data_type: str) -> str:
        """`name` converted to `data_type` with an ONNX Cast (none when already that type)."""
        if self._types.get(name) == data_type:
            return name
        key = (name, data_type)
        if key not in self._casts:
            self._casts[key] = self.node("Cast", [name], data_type,
                                         to=ONNX_TYPES[data_type])
        return self._casts[key]

    def where(self, condition: str, if_true: str, if_false: str) -> str:
        """ONNX Where; uint64 values (no onnxruntime kernel) pass through int64 bit-exactly."""
        data_type = self.dtype(if_true)
        if data_type != "uint64":
            return self.node("Where", [condition, if_true, if_false], data_type)
        y = self.node("Where", [condition, self.cast(if_true, "int64"),
                                self.cast(if_false, "int64")], "int64")
        return self.cast(y, "uint64")

    def reshape(self, name: str, shape: Sequence[int]) -> str:
        out = self.node("Reshape", [name, self.ints(shape, "shape")], self.dtype(name))
        self.shapes[out] = tuple(int(d) for d in shape)
        return out

    def transpose(self, name: str, perm: Sequence[int]) -> str:
        if list(perm) == list(range(len(perm))):
            return name
        return self.node("Transpose", [name], self.dtype(name), perm=list(perm))

    def unsupported(self, op: Operation, why: str) -> MLOperationError:
        return MLOperationError(f"ONNX export: {op.op}: {why}")
