"""DEPTH_TO_SPACE and SPACE_TO_DEPTH (block_size read from the options; TF "DCR" order)
as reshape -> transpose -> reshape on NHWC tensors."""

from __future__ import annotations

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import data_in, finish


@tflite_op("DEPTH_TO_SPACE", since=1)
def depth_to_space(ctx: ImportContext, node: Node) -> Outputs:
    """[n,h,w,b*b*c] -> [n,h*b,w*b,c]."""
    (x,), raw = data_in(ctx, node)
    bs = int(node.attrs["block_size"])
    n, h, w, c = x.shape
    if bs < 1 or c % (bs * bs):
        raise InvalidModel(f"block size {bs} does not divide depth {c}")
    c2 = c // (bs * bs)
    b = ctx.builder
    y = b.reshape(x, [n, h, w, bs, bs, c2])
    y = b.transpose(y, permutation=[0, 1, 3, 2, 4, 5])
    return [finish(ctx, node, b.reshape(y, [n, h * bs, w * bs, c2]), raw)]


@tflite_op("SPACE_TO_DEPTH", since=1)
def space_to_depth(ctx: ImportContext, node: Node) -> Outputs:
    """[n,h,w,c] -> [n,h/b,w/b,b*b*c]."""
    (x,), raw = data_in(ctx, node)
    bs = int(node.attrs["block_size"])
    n, h, w, c = x.shape
    if bs < 1 or h % bs or w % bs:
        raise InvalidModel(f"block size {bs} does not divide {h}x{w}")
    b = ctx.builder
    y = b.reshape(x, [n, h // bs, bs, w // bs, bs, c])
    y = b.transpose(y, permutation=[0, 1, 3, 2, 4, 5])
    return [finish(ctx, node, b.reshape(y, [n, h // bs, w // bs, bs * bs * c]), raw)]
