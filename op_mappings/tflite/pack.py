"""PACK (axis) = reshape each input to insert the axis + concat; UNPACK (num, axis) = split
+ reshape. Stored integers are used when quantization parameters match."""

from __future__ import annotations

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import data_in, finish, norm_axis


@tflite_op("PACK", since=1)
def pack(ctx: ImportContext, node: Node) -> Outputs:
    """Stack N tensors along a new axis; `values_count` must be N (LiteRT's rule)."""
    count = int(node.attrs.get("values_count", len(node.inputs)))
    if count != len(node.inputs):
        raise InvalidModel(f"values_count is {count}, the operator lists {len(node.inputs)} "
                           "input(s)")
    xs, raw = data_in(ctx, node, list(range(len(node.inputs))))
    rank = len(xs[0].shape)
    axis = int(node.attrs["axis"])
    axis = norm_axis(axis, rank + 1)
    parts = []
    for x in xs:
        shape = list(x.shape)
        shape.insert(axis, 1)
        parts.append(ctx.builder.reshape(x, shape))
    y = parts[0] if len(parts) == 1 else ctx.builder.concat(parts, axis)
    if len(parts) == 1:
        y = ctx.builder.identity(y)
    return [finish(ctx, node, y, raw)]


@tflite_op("UNPACK", since=1)
def unpack(ctx: ImportContext, node: Node) -> Outputs:
    """Split along an axis into `num` tensors with that axis removed."""
    (x,), raw = data_in(ctx, node)
    axis = norm_axis(int(node.attrs["axis"]), len(x.shape))
    n = x.shape[axis]
    shape = [d for i, d in enumerate(x.shape) if i != axis]
    parts = ctx.builder.split(x, n, axis=axis) if n > 1 else [x]
    return [finish(ctx, node, ctx.builder.reshape(p, shape), raw, o)
            for o, p in enumerate(parts)]
