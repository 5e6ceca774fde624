"""SHAPE, RANK, ZEROS_LIKE, FILL, RANGE, BROADCAST_ARGS: folded to constants
(every WebNN operand has a static shape).

FILL with a non-constant value becomes expand(value). ZEROS_LIKE is zeros (not identity).
RANGE needs constant start/limit/delta.
"""

from __future__ import annotations

import math

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import ints
from op_mappings.tflite import tflite_op


def _np_dtype(node: Node, o: int = 0) -> str:
    return node.output_infos[o].dtype


@tflite_op("SHAPE", since=1)
def shape(ctx: ImportContext, node: Node) -> Outputs:
    """The static shape as an int32/int64 constant."""
    return [np.array(ctx.shape(node.inputs[0]), dtype=_np_dtype(node))]


@tflite_op("RANK", since=1)
def rank(ctx: ImportContext, node: Node) -> Outputs:
    """The rank as a scalar constant."""
    return [np.array(len(ctx.shape(node.inputs[0])), dtype=_np_dtype(node))]


@tflite_op("ZEROS_LIKE", since=1)
def zeros_like(ctx: ImportContext, node: Node) -> Outputs:
    """Zeros of the input's shape and type."""
    shape = ctx.shape(node.inputs[0])
    ctx.check_constant(shape, _np_dtype(node))
    return [np.zeros(shape, dtype=_np_dtype(node))]


@tflite_op("FILL", since=1, const_inputs=(0,))
def fill(ctx: ImportContext, node: Node) -> Outputs:
    """FILL(dims, value)."""
    dims = ints(ctx.const_input(node, 0))
    if ctx.is_constant(node.inputs[1]):
        value = np.asarray(ctx.const_value(node.inputs[1])).reshape(())
        ctx.check_constant(dims, _np_dtype(node))
        return [np.full(dims, value, dtype=_np_dtype(node))]
    v = ctx.builder.reshape(ctx.operand(node.inputs[1]), [])
    return [ctx.builder.expand(v, dims)]


@tflite_op("RANGE", since=1, const_inputs=(0, 1, 2))
def range_(ctx: ImportContext, node: Node) -> Outputs:
    """arange(start, limit, delta)."""
    start, limit, delta = (np.asarray(ctx.const_input(node, i)).reshape(()) for i in range(3))
    if delta == 0:
        raise InvalidModel("RANGE delta is 0")
    count = max(math.ceil((float(limit) - float(start)) / float(delta)), 0)
    ctx.check_constant(count, max(np.dtype(_np_dtype(node)).itemsize, start.dtype.itemsize))
    # numpy's stubs reject the 0-d arrays np.arange accepts (it reads them as scalars)
    values = np.arange(start, limit, delta)  # type: ignore[call-overload]
    return [values.astype(_np_dtype(node))]


@tflite_op("BROADCAST_ARGS", since=1, const_inputs=(0, 1))
def broadcast_args(ctx: ImportContext, node: Node) -> Outputs:
    """The broadcast shape of two constant shapes."""
    a, b = ints(ctx.const_input(node, 0)), ints(ctx.const_input(node, 1))
    return [np.array(np.broadcast_shapes(tuple(a), tuple(b)), dtype=_np_dtype(node))]
