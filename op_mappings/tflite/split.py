"""SPLIT (inputs: axis, x; num_splits) and SPLIT_V (inputs: x, size_splits, axis; at most one
-1 in size_splits) -> WebNN split. Axis and sizes must be constant."""

from __future__ import annotations

from typing import Any

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints, data_in, finish, norm_axis


def _outputs(ctx: ImportContext, node: Node, parts: list[Any], raw: bool) -> list[Any]:
    return [finish(ctx, node, p, raw, o) for o, p in enumerate(parts)]


@tflite_op("SPLIT", since=1, const_inputs=(0,))
def split(ctx: ImportContext, node: Node) -> Outputs:
    """Equal parts: the axis is input 0, the data input 1."""
    (x,), raw = data_in(ctx, node, (1,))
    axis = norm_axis(const_ints(ctx, node, 0)[0], len(x.shape))
    n = int(node.attrs["num_splits"])
    if n < 1 or x.shape[axis] % n:
        raise InvalidModel(f"num_splits {n} does not divide dim {x.shape[axis]}")
    parts = ctx.builder.split(x, n, axis=axis) if n > 1 else [ctx.builder.identity(x)]
    return _outputs(ctx, node, parts, raw)


@tflite_op("SPLIT_V", since=1, const_inputs=(1, 2))
def split_v(ctx: ImportContext, node: Node) -> Outputs:
    """Listed sizes: data input 0, sizes input 1, axis input 2."""
    (x,), raw = data_in(ctx, node)
    axis = norm_axis(const_ints(ctx, node, 2)[0], len(x.shape))
    sizes = const_ints(ctx, node, 1)
    if sizes.count(-1) > 1:
        raise InvalidModel(f"size_splits {sizes} has more than one -1")
    if -1 in sizes:
        sizes[sizes.index(-1)] = x.shape[axis] - sum(s for s in sizes if s != -1)
    if sum(sizes) != x.shape[axis] or any(s < 0 for s in sizes):
        raise InvalidModel(f"size_splits {sizes} do not sum to dim {x.shape[axis]}")
    if any(s == 0 for s in sizes):
        raise InvalidModel(f"size_splits {sizes}: empty outputs are not representable in "
                           "WebNN")
    parts = ctx.builder.split(x, sizes, axis=axis) if len(sizes) > 1 else [
        ctx.builder.identity(x)]
    return _outputs(ctx, node, parts, raw)
