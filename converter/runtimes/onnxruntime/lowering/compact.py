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
4. A float32 band matrix (one nonzero value on the diagonals `lo <= j - i <= hi` of the last
   two axes, +0.0 elsewhere; the 0/1 channel-window matrix of the LRN decomposition), or a
   broadcast of one, is written as ConstantOfShape → Trilu(upper=0, k=hi) →
   Trilu(upper=1, k=lo) (→ Expand).

The replacement node produces a value of the initializer's name, element type and shape,
bit for bit (elements are compared as raw bits: -0.0 and 0.0 differ, NaNs of the same
payload are equal), so consumers are untouched. onnxruntime constant-folds ConstantOfShape,
Trilu and Expand of initializers at session creation (ORT_ENABLE_BASIC and above), so a
session built from the compacted model holds and fuses the same initializer values as one
built from the verbatim model, with bit-identical outputs. (Its common-subexpression
elimination also merges equal ConstantOfShape nodes, which share their shape operand, and
then convolutions of one input with such equal weights: fewer copies, same values.)

Detection happens when an initializer is created (`Emitter.add_initializer`, while its
numpy array is at hand: reading a large initializer back out of its TensorProto copies it)
and costs O(1) per axis for arrays that are not constant along it (one pair of elements is
compared first) and one pass over the array per axis otherwise; the rewrite happens last
(`compact_constants`), on the initializers still used.

Restrictions: only exact broadcasts along whole axes are found (no tiling with a period
greater than 1, no low-rank factorisations); band matrices only in float32; constants of at
most `COMPACT_MIN_BYTES` bytes are kept verbatim; the shape operand of each replacement is
an int64 initializer shared between equal shapes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from onnx import NodeProto, TensorProto, helper, numpy_helper

from converter.runtimes.onnxruntime.lowering.compact_forms import (
    COMPACT_MIN_BYTES,
    compact_form,
)
from converter.runtimes.onnxruntime.lowering.context import Emitter


def prune_initializers(e: Emitter, keep: Iterable[str] = ()) -> None:
    """Drop the initializers that no node of `e` reads and that are not named in `keep`."""
    used = {name for node in e.nodes for name in node.input} | set(keep)
    e.initializers[:] = [t for t in e.initializers if t.name in used]


#: Element types `compact_constants` detects forms of by itself (for initializers the
#: emitter did not note): those numpy holds natively. Packed types (INT4/UINT4, read back
#: unpacked) and strings are left alone.
_COMPACTABLE = frozenset({
    TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BOOL,
    TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT16,
    TensorProto.INT32, TensorProto.UINT32, TensorProto.INT64, TensorProto.UINT64,
})


def _tensor_nbytes(t: TensorProto) -> int:
    size = 1
    for d in t.dims:
        size *= int(d)
    return size * np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type)).itemsize


def compact_constants(e: Emitter, min_bytes: int = COMPACT_MIN_BYTES) -> None:
    """Rewrite the splat, band and broadcast initializers of `e` larger than `min_bytes`
    bytes as ConstantOfShape / Trilu / Expand nodes (see the module docstring), using the
    forms `e.add_initializer` noted (detected here for initializers it did not note). The
    new nodes are placed first, before every node that could read them."""
    original = list(e.initializers)
    replaced: set[str] = set()
    sources: list[TensorProto] = []
    front: list[NodeProto] = []

    def add(op_type: str, inputs: list[str], output: str, **attrs: Any) -> str:
        front.append(helper.make_node(op_type, inputs, [output],
                                      name=e.node_name(f"n_{output}_{op_type}"), **attrs))
        return output

    for t in original:
        if t.name in e.compact_forms:
            form = e.compact_forms[t.name]
        elif t.dims and t.data_type in _COMPACTABLE and _tensor_nbytes(t) > min_bytes:
            form = compact_form(numpy_helper.to_array(t), min_bytes)
        else:
            form = None
        if form is None:
            continue
        replaced.add(t.name)
        whole = form.source_shape == form.shape
        out = t.name if whole else e.fresh(f"{t.name}_source")
        if form.source is not None:
            lead = next(k for k, d in enumerate(form.source_shape) if d != 1)
            sources.append(numpy_helper.from_array(
                form.source.reshape(form.source_shape[lead:]), out))
        else:
            assert form.value is not None
            value = numpy_helper.from_array(form.value)  # unnamed: the attribute names it
            if form.band is None:  # a splat: no Expand needed
                add("ConstantOfShape", [e.ints(form.shape, "shape")], t.name, value=value)
                continue
            lo, hi = form.band
            full = add("ConstantOfShape", [e.ints(form.source_shape, "shape")],
                       e.fresh(f"{t.name}_full"), value=value)
            upper = add("Trilu", [full, e.scalar(hi, "int64", "k")],
                        e.fresh(f"{t.name}_upper"), upper=0)
            add("Trilu", [upper, e.scalar(lo, "int64", "k")], out, upper=1)
        if not whole:
            add("Expand", [out, e.ints(form.shape, "shape")], t.name)
    created = e.initializers[len(original):]  # shape and k operands added by e.ints/scalar
    e.initializers[:] = [t for t in original if t.name not in replaced] + sources + created
    e.nodes[:0] = front
