"""ONNX ReverseSequence -> WebNN gatherElements with a constant index table: along
`time_axis`, batch entry i has its first sequence_lens[i] elements reversed.

Restrictions: `sequence_lens` must be a constant (entries clamped to [0, T]); the index
table has the input's shape.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.formats.onnx import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op


@onnx_op("ReverseSequence", since=10, const_inputs=(1,))
def reverse_sequence(ctx: ImportContext, node: Node) -> list[Any]:
    x = ctx.operand(node.inputs[0])
    lens = np.asarray(ctx.const_input(node, 1)).reshape(-1).astype(np.int64)
    t_axis, b_axis = int(node.attrs["time_axis"]), int(node.attrs["batch_axis"])
    steps = x.shape[t_axis]
    lens = np.clip(lens, 0, steps)
    t = np.arange(steps)[None, :]
    table = np.where(t < lens[:, None], lens[:, None] - 1 - t, t)  # [batch, time]
    if t_axis < b_axis:
        table = table.T
    shape = [1] * x.rank
    shape[b_axis], shape[t_axis] = x.shape[b_axis], steps
    full = np.broadcast_to(table.reshape(shape), x.shape).astype(np.int32)
    return [ctx.builder.gather_elements(x, ctx.constant(np.ascontiguousarray(full)),
                                        axis=t_axis)]
