"""RESHAPE, SQUEEZE, EXPAND_DIMS -> WebNN reshape.

RESHAPE: the shape input (when present and constant) has priority over
`ReshapeOptions.new_shape`; one -1 is resolved. A shape input that is not constant falls back
to `new_shape`, then to the output tensor's stored shape. SQUEEZE with empty `squeeze_dims`
drops every size-1 dim. EXPAND_DIMS takes a constant axis (negative = axis + rank + 1).
Quantized tensors are reshaped as stored integers when the parameters match.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, RequiresConstantInput
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import ints
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import data_in, finish, norm_axes


def resolve_shape(shape: list[int], total: int) -> list[int]:
    if shape.count(-1) > 1:
        raise InvalidModel(f"new shape {shape} has more than one -1")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        if known == 0 or total % known:
            raise InvalidModel(f"cannot reshape {total} elements to {shape}")
        shape = [total // known if d == -1 else d for d in shape]
    if int(np.prod(shape, dtype=np.int64)) != total:
        raise InvalidModel(f"cannot reshape {total} elements to {shape}")
    return shape


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    x = np.asarray(values[0])
    return [x.reshape(_target(ctx, node, x.size))]


def _target(ctx: ImportContext, node: Node, total: int) -> list[int]:
    shape: list[int] | None = None
    if len(node.inputs) > 1 and node.inputs[1]:
        try:
            shape = ints(ctx.const_input(node, 1))
        except RequiresConstantInput:
            shape = None
    if shape is None and node.attrs.get("new_shape"):
        shape = [int(d) for d in node.attrs["new_shape"]]
    if shape is None:
        info = node.output_infos[0]
        shape = list(info.shape)
        if info.shape_signature is not None and info.shape_signature.count(-1) == 1:
            shape = list(info.shape_signature)
    return resolve_shape(shape, total)


@tflite_op("RESHAPE", since=1, fold=_fold)
def reshape(ctx: ImportContext, node: Node) -> Outputs:
    """reshape to the static target shape."""
    (x,), raw = data_in(ctx, node)
    total = int(np.prod(x.shape, dtype=np.int64))
    return [finish(ctx, node, ctx.builder.reshape(x, _target(ctx, node, total)), raw)]


@tflite_op("SQUEEZE", since=1)
def squeeze(ctx: ImportContext, node: Node) -> Outputs:
    """Drop the listed size-1 dims (all of them when the list is empty)."""
    (x,), raw = data_in(ctx, node)
    dims = node.attrs.get("squeeze_dims") or ()
    axes = norm_axes(list(dims), len(x.shape)) if dims else [
        i for i, d in enumerate(x.shape) if d == 1]
    for a in axes:
        if x.shape[a] != 1:
            raise InvalidModel(f"cannot squeeze dim {a} of size {x.shape[a]}")
    shape = [d for i, d in enumerate(x.shape) if i not in axes]
    return [finish(ctx, node, ctx.builder.reshape(x, shape), raw)]


@tflite_op("EXPAND_DIMS", since=1, const_inputs=(1,))
def expand_dims(ctx: ImportContext, node: Node) -> Outputs:
    """Insert a size-1 dim at the constant axis."""
    (x,), raw = data_in(ctx, node)
    rank = len(x.shape)
    axis = ints(ctx.const_input(node, 1))[0]
    if not -rank - 1 <= axis <= rank:
        raise InvalidModel(f"axis {axis} out of range for rank {rank}")
    if axis < 0:
        axis += rank + 1
    shape = list(x.shape)
    shape.insert(axis, 1)
    return [finish(ctx, node, ctx.builder.reshape(x, shape), raw)]
