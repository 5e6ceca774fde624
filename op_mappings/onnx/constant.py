"""ONNX Constant -> a constant (no operation). The reader already decodes the Constant nodes
of the model; this handler serves Constant nodes created later (e.g. by inlined function
bodies).

Restrictions: string constants cannot enter the graph (they may feed other constants).
"""

from __future__ import annotations

from typing import Any

from converter.core.ir import Node
from converter.frontends.onnx.tensors import constant_node_value
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op


@onnx_op("Constant", since=1)
def constant(ctx: ImportContext, node: Node) -> list[Any]:
    return [constant_node_value(node)]
