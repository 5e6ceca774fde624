"""ONNX ReverseSequence -> WebNN gatherElements with a constant index table: along
`time_axis`, batch entry i has its first sequence_lens[i] elements reversed.

Restrictions: `sequence_lens` must be a constant (entries clamped to [0, T]); the index
table has the input's shape (`converter.webnn.decompose.reverse_sequence`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.importer import ImportContext
from converter.ir import Node
from converter.webnn import decompose as dc
from op_mappings.onnx import onnx_op


@onnx_op("ReverseSequence", since=10, const_inputs=(1,))
def reverse_sequence(ctx: ImportContext, node: Node) -> list[Any]:
    x = ctx.operand(node.inputs[0])
    lens = np.asarray(ctx.const_input(node, 1))
    return [dc.reverse_sequence(ctx.builder, x, lens, int(node.attrs["time_axis"]),
                                int(node.attrs["batch_axis"]))]
