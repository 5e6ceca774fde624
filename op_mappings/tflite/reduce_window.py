"""REDUCE_WINDOW (inputs: x, init_value, window_dimensions, window_strides,
window_dilations, all int64 [rank]; option reduce_function ADD / MUL / MINIMUM / MAXIMUM /
ALL / ANY) -> separable strided-slice chains.

out[i] = init ⊕ x[i·s + k·d] over every window tap k (no padding, no base dilation:
output size (n - (w - 1)·d - 1) // s + 1 per axis). The reductions are associative and
commutative, so the window is reduced one axis at a time: per axis, the w strided slices
x[k·d :: s] are combined with add / mul / min / max / logicalAnd / logicalOr (Σ w slices
instead of Π w), then init is combined once. Float sums and products may round differently
from LiteRT's tap order (min / max / all / any are exact).
Restrictions: the window arguments must be constant; the init value a scalar; boolean
tensors for ALL / ANY.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints

_COMBINE = {1: "add", 2: "mul", 3: "min", 4: "max", 5: "logical_and", 6: "logical_or"}
_NAMES = {1: "ADD", 2: "MUL", 3: "MINIMUM", 4: "MAXIMUM", 5: "ALL", 6: "ANY"}


@tflite_op("REDUCE_WINDOW", since=1, const_inputs=(2, 3, 4))
def reduce_window(ctx: ImportContext, node: Node) -> Outputs:
    """Per-axis strided-slice reductions, then init. Restrictions: constant window
    dimensions, strides and dilations; scalar init value."""
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    rank = len(x.shape)
    fn = int(node.attrs["reduce_function"])
    if fn not in _COMBINE:
        raise UnsupportedAttribute(f"REDUCE_WINDOW reduce_function {fn} is not supported")
    combine = getattr(b, _COMBINE[fn])
    window, strides, dil = (const_ints(ctx, node, i) for i in (2, 3, 4))
    for what, vals in (("window_dimensions", window), ("window_strides", strides),
                       ("window_dilations", dil)):
        if len(vals) != rank or min(vals, default=1) < 1:
            raise InvalidModel(f"REDUCE_WINDOW {what} {vals} must be {rank} values >= 1")
    y: MLOperand = x
    for axis in range(rank):
        w, s, d = window[axis], strides[axis], dil[axis]
        n = y.shape[axis]
        span = n - (w - 1) * d
        if span < 1:
            raise InvalidModel(f"REDUCE_WINDOW window {w} (dilation {d}) exceeds dimension "
                               f"{n} of axis {axis}")
        out = (span - 1) // s + 1
        if w == 1 and s == 1:
            continue
        sizes = list(y.shape)
        sizes[axis] = (out - 1) * s + 1
        steps = [1] * rank
        steps[axis] = s
        acc: MLOperand | None = None
        for k in range(w):
            starts = [0] * rank
            starts[axis] = k * d
            tap = b.slice(y, starts, sizes, strides=steps)
            acc = tap if acc is None else combine(acc, tap)
        assert acc is not None
        y = acc
    init = ctx.operand(node.inputs[1])
    if int(np.prod(init.shape, dtype=np.int64)) != 1:
        raise InvalidModel("REDUCE_WINDOW init_value must be a scalar")
    return [combine(b.reshape(init, []), y)]
