"""SLICE and STRIDED_SLICE -> WebNN slice (+ reverse, reshape). Begin/end/strides/size
inputs must be constant.

SLICE: size -1 = to the end. STRIDED_SLICE implements all five masks and `offset`
(tflite-mapping.md §3.7): the spec is expanded (ellipsis, new axes), begin/end are
normalised and clamped per stride sign, axes with negative strides are reversed, then one
strided slice and a reshape that drops shrunk dims and inserts new ones.
Zero-length results (e.g. the head slice of a lowered TensorListSetItem at index 0) are
not representable in WebNN: they become empty numpy constants, which CONCATENATION drops.
"""

from __future__ import annotations

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints, data_in, empty, finish


@tflite_op("SLICE", since=1, const_inputs=(1, 2))
def slice_(ctx: ImportContext, node: Node) -> Outputs:
    """slice(x, begin, size) with size -1 meaning 'to the end'."""
    (x,), raw = data_in(ctx, node)
    begin, size = const_ints(ctx, node, 1), const_ints(ctx, node, 2)
    if len(begin) != len(x.shape) or len(size) != len(x.shape):
        raise InvalidModel(f"begin {begin} / size {size} do not match rank {len(x.shape)}")
    size = [d - b if s == -1 else s for b, s, d in zip(begin, size, x.shape, strict=True)]
    if any(s < 0 for s in size):
        raise InvalidModel(f"slice sizes {size} are negative")
    if any(s == 0 for s in size):
        return [empty(node, size)]
    return [finish(ctx, node, ctx.builder.slice(x, begin, size), raw)]


def _bit(mask: int, i: int) -> bool:
    return bool((int(mask) >> i) & 1)


@tflite_op("STRIDED_SLICE", since=1, const_inputs=(1, 2, 3))
def strided_slice(ctx: ImportContext, node: Node) -> Outputs:
    """Full STRIDED_SLICE semantics (masks, offset, negative strides)."""
    (x,), raw = data_in(ctx, node)
    b = ctx.builder
    a = node.attrs
    begin, end = const_ints(ctx, node, 1), const_ints(ctx, node, 2)
    strides = const_ints(ctx, node, 3) if len(node.inputs) > 3 and node.inputs[3] else [1] * len(
        begin)
    n = len(begin)
    if len(end) != n or len(strides) != n:
        raise InvalidModel("begin, end and strides differ in length")
    bm, em, el, na, sh = (int(a["begin_mask"]), int(a["end_mask"]), int(a["ellipsis_mask"]),
                          int(a["new_axis_mask"]), int(a["shrink_axis_mask"]))
    rank = len(x.shape)
    # expand the spec into one entry per dim of the (new-axes-inserted) input
    consumed = sum(1 for i in range(n) if not _bit(el, i) and not _bit(na, i))
    entries: list[tuple[str, int]] = []  # ("full"|"spec"|"new", spec index)
    seen_ellipsis = False
    for i in range(n):
        if _bit(el, i) and not seen_ellipsis:
            seen_ellipsis = True
            entries += [("full", -1)] * max(rank - consumed, 0)
        elif _bit(el, i):
            continue
        elif _bit(na, i):
            entries.append(("new", i))
        else:
            entries.append(("spec", i))
    real = sum(1 for kind, _ in entries if kind != "new")
    if real > rank:
        raise InvalidModel(f"strided slice spec addresses {real} dims of a rank-{rank} input")
    entries += [("full", -1)] * (rank - real)
    shape_in: list[int] = []
    dims = iter(x.shape)
    for kind, _ in entries:
        shape_in.append(1 if kind == "new" else next(dims))
    if len(shape_in) != rank:
        x = b.reshape(x, shape_in)
    starts, sizes, steps, reverse, out_shape = [], [], [], [], []
    is_empty = False
    for axis, ((kind, i), dim) in enumerate(zip(entries, shape_in, strict=True)):
        if kind != "spec":
            starts.append(0)
            sizes.append(dim)
            steps.append(1)
            out_shape.append(dim)
            continue
        s = strides[i]
        if s == 0:
            raise InvalidModel("strided slice stride 0")
        lo, hi = begin[i], end[i]
        if int(a["offset"]):
            hi = lo + hi
        if _bit(sh, i):
            idx = lo + dim if lo < 0 else lo
            if not 0 <= idx < dim:
                raise InvalidModel(f"shrink index {lo} out of range for dim {dim}")
            starts.append(idx)
            sizes.append(1)
            steps.append(1)
            continue
        if s > 0:
            lo = 0 if _bit(bm, i) else min(max(lo + dim if lo < 0 else lo, 0), dim)
            hi = dim if _bit(em, i) else min(max(hi + dim if hi < 0 else hi, 0), dim)
            count = max(-(-(hi - lo) // s), 0)
        else:
            lo = dim - 1 if _bit(bm, i) else min(max(lo + dim if lo < 0 else lo, -1), dim - 1)
            hi = -1 if _bit(em, i) else min(max(hi + dim if hi < 0 else hi, -1), dim - 1)
            count = max(-(-(lo - hi) // -s), 0)
        if count == 0:
            is_empty = True
        if s < 0:
            reverse.append(axis)
            lo = dim - 1 - lo
        starts.append(lo)
        sizes.append((count - 1) * abs(s) + 1)
        steps.append(abs(s))
        out_shape.append(count)
    if is_empty:
        return [empty(node, out_shape)]
    if reverse:
        x = b.reverse(x, axes=reverse)
    y = b.slice(x, starts, sizes, strides=steps)
    if list(y.shape) != out_shape:
        y = b.reshape(y, out_shape)
    elif y is x:
        y = b.identity(y)
    return [finish(ctx, node, y, raw)]
