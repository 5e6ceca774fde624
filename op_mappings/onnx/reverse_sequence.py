"""ONNX ReverseSequence -> WebNN gatherElements with a constant index table: along
`time_axis`, batch entry i has its first sequence_lens[i] elements reversed.

Restrictions: `sequence_lens` must be a constant (entries clamped to [0, T]); the index
table has the input's shape (`converter.core.webnn.decompose.reverse_sequence`).
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.core.webnn import decompose as dc
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import attr_in_range
from op_mappings._common.values import ints
from op_mappings.onnx import onnx_op


@onnx_op("ReverseSequence", since=10, const_inputs=(1,))
def reverse_sequence(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    if x.rank < 2:
        raise InvalidModel(f"input 0 has rank {x.rank}, ReverseSequence needs 2 or more")
    time_axis = int(attr_in_range(node, "time_axis", 0, 1))
    batch_axis = int(attr_in_range(node, "batch_axis", 0, 1))
    if time_axis == batch_axis:
        raise InvalidModel(f"time_axis and batch_axis are both {time_axis}")
    lens = np.asarray(ctx.const_input(node, 1))
    if lens.shape != (x.shape[batch_axis],):
        raise InvalidModel(f"sequence_lens has shape {list(lens.shape)}, the batch has "
                           f"{x.shape[batch_axis]} entries")
    ints(lens, "sequence_lens")
    return [dc.reverse_sequence(ctx.builder, x, lens, time_axis, batch_axis)]
