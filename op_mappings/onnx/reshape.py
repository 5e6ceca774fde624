"""ONNX Reshape -> WebNN reshape with the final static shape.

`0` copies the input dimension unless `allowzero = 1` (opset 14); `-1` is inferred.
Restrictions: the shape input must be a constant (after folding); zero-size results are not
representable in WebNN.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import ints
from op_mappings.onnx import onnx_op


def target_shape(in_shape: Sequence[int], shape: Sequence[int], allowzero: bool) -> list[int]:
    """ONNX Reshape semantics -> an explicit shape."""
    out = [in_shape[i] if d == 0 and not allowzero and i < len(in_shape) else d
           for i, d in enumerate(shape)]
    if out.count(-1) > 1:
        raise InvalidModel(f"Reshape shape {list(shape)} has more than one -1")
    total = int(np.prod(in_shape, dtype=np.int64))
    if -1 in out:
        known = int(np.prod([d for d in out if d != -1], dtype=np.int64))
        if known == 0 or total % known:
            raise InvalidModel(f"cannot reshape {list(in_shape)} to {list(shape)}")
        out[out.index(-1)] = total // known
    if int(np.prod(out, dtype=np.int64)) != total or any(d < 0 for d in out):
        raise InvalidModel(f"cannot reshape {list(in_shape)} to {list(shape)}")
    return out


def _shape(ctx: ImportContext, node: Node) -> list[int]:
    return target_shape(ctx.shape(node.inputs[0]), ints(ctx.const_input(node, 1), "shape"),
                        bool(node.attrs.get("allowzero", 0)))


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    return [np.reshape(values[0], _shape(ctx, node))]


@onnx_op("Reshape", since=5, const_inputs=(1,), fold=_fold)
def reshape(ctx: ImportContext, node: Node) -> Outputs:
    return [ctx.builder.reshape(ctx.operand(node.inputs[0]), _shape(ctx, node))]
