"""ONNX DepthToSpace (DCR / CRD) and SpaceToDepth (DCR / CRD, the `mode` attribute of opset
28) -> reshape -> 6-D transpose -> reshape.

Restrictions: 4-D NCHW input; C divisible by blocksize² (DepthToSpace), H and W divisible by
blocksize (SpaceToDepth).
"""

from __future__ import annotations

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import attr_in_range
from op_mappings.onnx import onnx_op


@onnx_op("DepthToSpace", since=1)
def depth_to_space(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    if x.rank != 4:
        raise InvalidModel(f"DepthToSpace needs a 4-D input, got rank {x.rank}")
    bs = int(attr_in_range(node, "blocksize", 1))
    n, c, h, w = x.shape
    if c % (bs * bs):
        raise InvalidModel(f"DepthToSpace channels {c} not divisible by blocksize² {bs * bs}")
    mode = str(node.attrs.get("mode", "DCR"))
    if mode == "DCR":
        t = b.reshape(x, [n, bs, bs, c // (bs * bs), h, w])
        t = b.transpose(t, permutation=[0, 3, 4, 1, 5, 2])
    elif mode == "CRD":
        t = b.reshape(x, [n, c // (bs * bs), bs, bs, h, w])
        t = b.transpose(t, permutation=[0, 1, 4, 2, 5, 3])
    else:
        raise UnsupportedAttribute(f"DepthToSpace mode {mode!r} is not DCR or CRD")
    return [b.reshape(t, [n, c // (bs * bs), h * bs, w * bs])]


@onnx_op("SpaceToDepth", since=1)
def space_to_depth(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    if x.rank != 4:
        raise InvalidModel(f"SpaceToDepth needs a 4-D input, got rank {x.rank}")
    bs = int(attr_in_range(node, "blocksize", 1))
    n, c, h, w = x.shape
    if h % bs or w % bs:
        raise InvalidModel(f"SpaceToDepth spatial size {h}x{w} not divisible by {bs}")
    mode = str(node.attrs.get("mode", "DCR"))
    if mode not in ("DCR", "CRD"):
        raise UnsupportedAttribute(f"SpaceToDepth mode {mode!r} is not DCR or CRD")
    t = b.reshape(x, [n, c, h // bs, bs, w // bs, bs])
    # DCR: output channel (by·bs + bx)·C + c; CRD: c·bs² + by·bs + bx
    perm = [0, 3, 5, 1, 2, 4] if mode == "DCR" else [0, 1, 3, 5, 2, 4]
    t = b.transpose(t, permutation=perm)
    return [b.reshape(t, [n, c * bs * bs, h // bs, w // bs])]
