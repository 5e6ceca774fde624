"""REVERSE_SEQUENCE (inputs: x, seq_lengths; options seq_dim, batch_dim) -> WebNN
gatherElements along seq_dim with a constant index table
(`converter.core.webnn.decompose.reverse_sequence`): batch entry i has its first seq_lengths[i]
steps reversed, the rest unchanged.

Copies stored values (quantized tensors stay integers).
Restrictions: seq_lengths must be a constant, each in 0..x.shape[seq_dim]; the index table
has the input's shape.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.core.webnn import decompose as dc
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import norm_axis


@tflite_op("REVERSE_SEQUENCE", since=1, const_inputs=(1,))
def reverse_sequence(ctx: ImportContext, node: Node) -> Outputs:
    """gatherElements(x, table, {axis: seq_dim}). Restrictions: constant seq_lengths in
    0..x.shape[seq_dim]."""
    x = ctx.operand(node.inputs[0])
    rank = len(x.shape)
    seq = norm_axis(node.attrs["seq_dim"], rank, "seq_dim")
    batch = norm_axis(node.attrs["batch_dim"], rank, "batch_dim")
    if seq == batch:
        raise InvalidModel(f"REVERSE_SEQUENCE seq_dim and batch_dim are both {seq}")
    lens = np.asarray(ctx.const_input(node, 1)).reshape(-1).astype(np.int64)
    if lens.size != x.shape[batch]:
        raise InvalidModel(f"REVERSE_SEQUENCE has {lens.size} seq_lengths for a batch of "
                           f"{x.shape[batch]}")
    if np.any(lens < 0) or np.any(lens > x.shape[seq]):
        raise InvalidModel(f"REVERSE_SEQUENCE seq_lengths {lens.tolist()} must lie in "
                           f"0..{x.shape[seq]}")
    return [dc.reverse_sequence(ctx.builder, x, lens, seq, batch)]
