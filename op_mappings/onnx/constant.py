"""ONNX Constant -> a constant (no operation). The reader already decodes the Constant nodes
of the model (with `constant_node_value`); this handler serves Constant nodes created later
(e.g. by inlined function bodies).

Restrictions: string constants cannot enter the graph (they may feed other constants).
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op


@onnx_op("Constant", since=1)
def constant(ctx: ImportContext, node: Node) -> Outputs:
    return [constant_node_value(node)]


def constant_node_value(node: Node) -> np.ndarray:
    """The value of a `Constant` node, from whichever value attribute it sets (read-only)."""
    a = node.attrs
    if "value" in a:
        arr = np.asarray(a["value"])
    elif "sparse_value" in a:
        arr = np.asarray(a["sparse_value"])
    elif "value_float" in a:
        arr = np.array(a["value_float"], np.float32)
    elif "value_floats" in a:
        arr = np.array(a["value_floats"], np.float32)
    elif "value_int" in a:
        arr = np.array(a["value_int"], np.int64)
    elif "value_ints" in a:
        arr = np.array(a["value_ints"], np.int64)
    elif "value_string" in a:
        arr = np.array(a["value_string"], object)
    elif "value_strings" in a:
        arr = np.array(a["value_strings"], object)
    else:
        raise InvalidModel(f"Constant node {node.name!r} sets no value attribute",
                           node_name=node.name, op_type="Constant", version=node.version)
    arr.setflags(write=False)
    return arr
