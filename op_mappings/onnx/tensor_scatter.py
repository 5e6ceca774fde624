"""ONNX TensorScatter (24, KV-cache update) -> WebNN scatterElements along `axis`.

The indices have the update's shape: write_indices[batch] (0 when omitted) plus the position
along the sequence axis, taken modulo max_sequence_length in "circular" mode; broadcast over
the other axes with expand.
Restrictions: `axis` must not be the batch axis 0; in "linear" mode a write past the end of
the cache is unspecified (WebNN scatters do not check bounds); write_indices are assumed
non-negative.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import norm_axis
from op_mappings.onnx import onnx_op


@onnx_op("TensorScatter", since=24)
def tensor_scatter(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    past, update, write = ctx.required(node, 0), ctx.required(node, 1), ctx.optional(node, 2)
    axis = norm_axis(node.attrs.get("axis", -2), past.rank)
    mode = str(node.attrs.get("mode", "linear"))
    if mode not in ("linear", "circular"):
        raise UnsupportedAttribute(f"TensorScatter mode {mode!r} is unknown")
    if axis == 0:
        raise UnsupportedAttribute("TensorScatter along the batch axis 0 is not supported")
    if any(p != u for i, (p, u) in enumerate(zip(past.shape, update.shape, strict=True))
           if i != axis) or update.shape[axis] > past.shape[axis]:
        raise InvalidModel(f"TensorScatter update shape {list(update.shape)} does not fit "
                           f"the cache {list(past.shape)} along axis {axis}")
    length, seq = past.shape[axis], update.shape[axis]
    pos_shape = [1] * past.rank
    pos_shape[axis] = seq
    positions = np.arange(seq, dtype=np.int64).reshape(pos_shape)
    if write is None:
        idx: Any = ctx.constant(np.broadcast_to(positions % length if mode == "circular"
                                                else positions, update.shape).copy())
    else:
        w_shape = [1] * past.rank
        w_shape[0] = past.shape[0]
        w = b.reshape(b.cast(write, "int64"), w_shape)
        idx = b.add(w, ctx.constant(positions))
        if mode == "circular":
            size = ctx.constant(np.asarray(length, dtype=np.int64))
            idx = b.sub(idx, b.mul(b.div(idx, size), size))
        idx = b.expand(idx, list(update.shape))
    return [b.scatter_elements(past, idx, update, axis=axis)]
