"""DILATE (inputs: x, dilations [rank], padding_value) -> reshape + pad + reshape + slice:
d - 1 copies of padding_value are inserted between neighbouring elements along each axis
(output size (n - 1)·d + 1).

Each dilated axis n becomes [n, 1], the inserted axis is padded at the end to d with the
padding value, the pair is merged to n·d and the trailing d - 1 cells are sliced off. A
constant padding value is WebNN pad's `value`; a computed one fills the holes with
`where` and a constant mask. Copies stored values (quantized tensors stay integers, the
padding value in the same stored form, as LiteRT).
Restrictions: dilations must be constant and >= 1.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints


@tflite_op("DILATE", since=1, const_inputs=(1,))
def dilate(ctx: ImportContext, node: Node) -> Outputs:
    """Interleave padding values along every dilated axis. Restrictions: constant
    dilations."""
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    rank = len(x.shape)
    dil = const_ints(ctx, node, 1)
    if len(dil) != rank or min(dil, default=1) < 1:
        raise InvalidModel(f"DILATE dilations {dil} must be {rank} values >= 1")
    if all(d == 1 for d in dil):
        return [x]
    pv_name = node.inputs[2]
    const_pv = ctx.is_constant(pv_name)
    value: float | int = 0
    if const_pv:
        pv = np.asarray(ctx.const_value(pv_name))
        if pv.size != 1:
            raise InvalidModel("DILATE padding_value must be a scalar")
        value = pv.reshape(()).item()
    split, ends = [], []
    for n, d in zip(x.shape, dil, strict=True):
        split += [n, 1] if d > 1 else [n]
        ends += [0, d - 1] if d > 1 else [0]
    y = b.pad(b.reshape(x, split), [0] * len(split), ends, value=value)
    merged = [n * d for n, d in zip(x.shape, dil, strict=True)]
    out = [(n - 1) * d + 1 for n, d in zip(x.shape, dil, strict=True)]
    y = b.slice(b.reshape(y, merged), [0] * rank, out)
    if not const_pv:
        pv_op = ctx.operand(pv_name)
        if int(np.prod(pv_op.shape, dtype=np.int64)) != 1:
            raise InvalidModel("DILATE padding_value must be a scalar")
        holes = np.ones(out, bool)
        holes[tuple(slice(None, None, d) for d in dil)] = False
        y = b.where(ctx.constant(holes), b.reshape(pv_op, []), y)
    return [y]
