"""DYNAMIC_UPDATE_SLICE (operand, update, constant start indices) -> where(mask,
pad(update), operand). Start indices are clamped so the update fits, as LiteRT does."""

from __future__ import annotations

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints, data_in, finish


@tflite_op("DYNAMIC_UPDATE_SLICE", since=1, const_inputs=(2,))
def dynamic_update_slice(ctx: ImportContext, node: Node) -> Outputs:
    """Overwrite a window of the operand with the update."""
    (x, u), raw = data_in(ctx, node, (0, 1))
    b = ctx.builder
    start = const_ints(ctx, node, 2)
    start = [min(max(s, 0), d - ud) for s, d, ud in zip(start, x.shape, u.shape, strict=True)]
    ends = [d - s - ud for s, d, ud in zip(start, x.shape, u.shape, strict=True)]
    mask = np.zeros(x.shape, np.uint8)
    mask[tuple(slice(s, s + ud) for s, ud in zip(start, u.shape, strict=True))] = 1
    padded = b.pad(u, start, ends) if any(start + ends) else u
    return [finish(ctx, node, b.where(b.constant(mask), padded, x), raw)]
