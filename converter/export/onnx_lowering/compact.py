"""Compact constants: the last pass of the ONNX export, run on the emitted nodes and
initializers.

1. Initializers no node reads are dropped (graph constants whose value a lowering consumed
   at export time, e.g. batchNormalization parameters folded into one factor, or filters
   re-laid out).
2. An initializer of more than `COMPACT_MIN_BYTES` bytes whose elements are all equal (a
   *splat*, as the ONNX "light" models' ConstantOfShape weights become) is written as
   ConstantOfShape(shape) with that one element as its `value`.
3. An initializer of more than `COMPACT_MIN_BYTES` bytes that is a broadcast of a smaller
   array (constant along some axes, e.g. a [C] vector expanded to [1, C, H, W], or a row
   repeated along several axes) is written as that smaller array (leading unit axes
   dropped) plus Expand(small, shape).

The replacement node produces a value of the initializer's name, element type and shape,
bit for bit (elements are compared as raw bits: -0.0 and 0.0 differ, NaNs of the same
payload are equal), so consumers are untouched. onnxruntime constant-folds ConstantOfShape
and Expand of initializers at session creation (ORT_ENABLE_BASIC and above), so a session
built from the compacted model holds and fuses the same initializers as before.

Restrictions: only exact broadcasts along whole axes are found (no tiling with a period
greater than 1, no low-rank factorisations); constants of at most `COMPACT_MIN_BYTES` bytes
are kept verbatim; the shape operand of each replacement is an int64 initializer shared
between equal shapes. Detection costs O(1) per axis for arrays that are not constant along
it (one pair of elements is compared first) and one pass over the array per axis otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from onnx import NodeProto, TensorProto, helper, numpy_helper

from .context import Emitter

#: Initializers larger than this (in bytes) are checked for splats and broadcasts. A
#: ConstantOfShape node costs about 100 bytes of protobuf, so rewriting pays off from about
#: 128 bytes; 256 (64 float32 elements, the size up to which `Emitter.const` deduplicates)
#: keeps scalars, shapes and small parameter vectors verbatim while still compacting the
#: per-channel splat vectors of wide layers (e.g. [256, 1, 1] batch-norm factors).
COMPACT_MIN_BYTES = 256


def prune_initializers(e: Emitter, keep: Iterable[str] = ()) -> None:
    """Drop the initializers that no node of `e` reads and that are not named in `keep`."""
    used = {name for node in e.nodes for name in node.input} | set(keep)
    e.initializers[:] = [t for t in e.initializers if t.name in used]


def _bits(arr: np.ndarray) -> np.ndarray:
    """`arr` viewed as unsigned integers of the same width (bit-exact comparisons)."""
    return arr.view(f"u{arr.dtype.itemsize}") if arr.dtype.itemsize in (1, 2, 4, 8) else arr


def broadcast_source(arr: np.ndarray) -> np.ndarray:
    """The smallest array of the same rank, with size 1 on every axis along which `arr` is
    constant (bit-exactly), whose broadcast to `arr.shape` is `arr`. Returns `arr` itself
    when it is constant along no axis of size > 1."""
    bits = _bits(np.ascontiguousarray(arr))
    for axis in range(bits.ndim):
        n = bits.shape[axis]
        if n <= 1:
            continue
        first = (slice(None),) * axis + (slice(0, 1),)
        origin = (0,) * bits.ndim
        probe = origin[:axis] + (1,) + origin[axis + 1:]
        if bits.size and bits[origin] != bits[probe]:
            continue  # cheap rejection: most weights differ right at the origin
        head = bits[first]
        if np.array_equal(bits, np.broadcast_to(head, bits.shape)):
            bits = head
    if bits.shape == arr.shape:
        return arr
    return np.ascontiguousarray(bits).view(arr.dtype)


def _tensor_nbytes(t: TensorProto) -> int:
    size = 1
    for d in t.dims:
        size *= int(d)
    return size * np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize


def compact_constants(e: Emitter, min_bytes: int = COMPACT_MIN_BYTES) -> None:
    """Rewrite the splat and broadcast initializers of `e` larger than `min_bytes` bytes as
    ConstantOfShape / Expand nodes (see the module docstring). The new nodes are placed
    first, before every node that could read them."""
    original = list(e.initializers)
    replaced: set[str] = set()
    sources: list[TensorProto] = []
    front: list[NodeProto] = []
    for t in original:
        if not t.dims or t.data_type == TensorProto.STRING or _tensor_nbytes(t) <= min_bytes:
            continue
        arr = numpy_helper.to_array(t)
        small = broadcast_source(arr)
        if small is arr:
            continue
        replaced.add(t.name)
        shape = e.ints(arr.shape, "shape")
        if small.size == 1:
            value = numpy_helper.from_array(small.reshape(1), "value")
            front.append(helper.make_node("ConstantOfShape", [shape], [t.name],
                                          name=e.fresh(f"n_{t.name}_ConstantOfShape"),
                                          value=value))
            continue
        lead = next(k for k, d in enumerate(small.shape) if d != 1)
        source = numpy_helper.from_array(small.reshape(small.shape[lead:]),
                                         e.fresh(f"{t.name}_source"))
        sources.append(source)
        front.append(helper.make_node("Expand", [source.name, shape], [t.name],
                                      name=e.fresh(f"n_{t.name}_Expand")))
    created = e.initializers[len(original):]  # shape operands added by e.ints
    e.initializers[:] = [t for t in original if t.name not in replaced] + sources + created
    e.nodes[:0] = front
