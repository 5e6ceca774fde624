"""Torch implementations: conv2d and convTranspose2d (mirrors the reference kernels/conv.py).

Both run torch's native convolutions on a channels-first view of the input, in float32
(float16 natively on CUDA). Asymmetric padding is applied with an explicit zero pad before
conv2d; convTranspose2d computes the full (unpadded) transposed convolution and then crops
`[top, left]` off, extending with zeros where outputPadding / outputSizes reach past it.
Filters of constant operands are permuted to torch's layout once, at compile time.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F

from converter.runtimes.torch.registry import Fn, Node, impl

# (filter layout) -> permutation to OIHW (conv2d) / IOHW (convTranspose2d, torch's layout).
_TO_OIHW = {"oihw": (0, 1, 2, 3), "hwio": (3, 2, 0, 1), "ohwi": (0, 3, 1, 2),
            "ihwo": (3, 0, 1, 2)}
_TO_IOHW = {"iohw": (0, 1, 2, 3), "hwoi": (3, 2, 0, 1), "ohwi": (3, 0, 1, 2)}


def _filter(node: Node, perm: tuple[int, ...]) -> Callable[[torch.Tensor], torch.Tensor]:
    """filter tensor -> compute-dtype filter in torch's layout (precomputed if constant)."""
    fl = node.fl
    const = node.constant(1)
    if const is not None:
        prepared = fl(const).permute(perm).contiguous()
        return lambda w: prepared
    return lambda w: fl(w).permute(perm)


@impl("conv2d")
def conv2d(node: Node) -> Fn:
    o = node.options
    groups = int(o["groups"])
    top, bottom, left, right = (int(p) for p in o["padding"])
    strides = tuple(int(s) for s in o["strides"])
    dilations = tuple(int(d) for d in o["dilations"])
    nhwc = o["inputLayout"] == "nhwc"
    weight = _filter(node, _TO_OIHW[o["filterLayout"]])
    bias_pos, fl = node.opt("bias"), node.fl
    padded = bool(top or bottom or left or right)
    symmetric = top == bottom and left == right
    pads = (top, left) if symmetric else (0, 0)

    def fn(x: torch.Tensor, w: torch.Tensor, *rest: torch.Tensor) -> list[torch.Tensor]:
        x = fl(x)
        if nhwc:
            x = x.permute(0, 3, 1, 2)
        if padded and not symmetric:
            x = F.pad(x, (left, right, top, bottom))
        bias = fl(rest[0]) if bias_pos is not None else None
        y = F.conv2d(x, weight(w), bias, strides, pads, dilations, groups)
        return [y.permute(0, 2, 3, 1) if nhwc else y]

    return fn


@impl("convTranspose2d")
def conv_transpose2d(node: Node) -> Fn:
    o = node.options
    groups = int(o["groups"])
    top, _, left, _ = (int(p) for p in o["padding"])
    strides = tuple(int(s) for s in o["strides"])
    dilations = tuple(int(d) for d in o["dilations"])
    nhwc = o["inputLayout"] == "nhwc"
    weight = _filter(node, _TO_IOHW[o["filterLayout"]])
    bias_pos, fl = node.opt("bias"), node.fl
    xs = node.operand(0).shape
    h, wd = (xs[1], xs[2]) if nhwc else (xs[2], xs[3])
    out = node.out_shape
    oh, ow = (out[1], out[2]) if nhwc else (out[2], out[3])
    w_perm = node.operand(1).shape
    kh, kw = (w_perm[i] for i in _TO_IOHW[o["filterLayout"]][2:])
    full_h = (h - 1) * strides[0] + (kh - 1) * dilations[0] + 1
    full_w = (wd - 1) * strides[1] + (kw - 1) * dilations[1] + 1
    extend = (0, max(0, left + ow - full_w), 0, max(0, top + oh - full_h))

    def fn(x: torch.Tensor, w: torch.Tensor, *rest: torch.Tensor) -> list[torch.Tensor]:
        x = fl(x)
        if nhwc:
            x = x.permute(0, 3, 1, 2)
        y = F.conv_transpose2d(x, weight(w), None, strides, 0, 0, groups, dilations)
        if any(extend):
            y = F.pad(y, extend)
        y = y[:, :, top:top + oh, left:left + ow]
        if bias_pos is not None:
            y = y + fl(rest[0])[None, :, None, None]
        return [y.permute(0, 2, 3, 1) if nhwc else y]

    return fn
