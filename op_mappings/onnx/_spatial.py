"""Helpers for convolution and pooling handlers: auto_pad, ONNX pads -> WebNN padding, 1-D
ops lifted to 2-D and 3-D convolutions as one conv2d (not a mapping module)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.errors import UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from op_mappings._common.checks import int_list
from op_mappings._common.padding import same_pad
from op_mappings._common.values import ints


def resolve_pads(auto_pad: str, in_sizes: Sequence[int], kernel: Sequence[int],
                 strides: Sequence[int], dilations: Sequence[int],
                 pads: Sequence[int] | None) -> list[tuple[int, int]]:
    """Per spatial axis (begin, end) padding. SAME_UPPER puts the odd cell at the end,
    SAME_LOWER at the beginning; VALID pads nothing; NOTSET uses `pads`
    ([x1_begin, x2_begin, ..., x1_end, x2_end, ...]). InvalidModel unless `kernel`,
    `strides` and `dilations` have one entry >= 1 per spatial axis and `pads` two."""
    n = len(in_sizes)
    int_list(kernel, "kernel_shape", n, 1)
    int_list(strides, "strides", n, 1)
    int_list(dilations, "dilations", n, 1)
    if pads:
        int_list(pads, "pads", 2 * n)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for i in range(n):
            small, big = same_pad(in_sizes[i], kernel[i], strides[i], dilations[i])
            out.append((small, big) if auto_pad == "SAME_UPPER" else (big, small))
        return out
    if auto_pad == "VALID":
        return [(0, 0)] * n
    if auto_pad != "NOTSET":
        raise UnsupportedAttribute(f"auto_pad {auto_pad!r} is unknown")
    p = list(pads) if pads else [0] * (2 * n)
    if any(v < 0 for v in p):
        raise UnsupportedAttribute(f"negative pads {p} are not supported")
    return [(p[i], p[i + n]) for i in range(n)]


def webnn_padding(pads: Sequence[tuple[int, int]]) -> list[int]:
    """[(bH, eH), (bW, eW)] -> WebNN [beginH, endH, beginW, endW]."""
    return [v for pair in pads for v in pair]


def check_spatial_rank(op: str, rank: int) -> None:
    if rank not in (3, 4):
        raise UnsupportedAttribute(f"{op} with {rank - 2} spatial dimensions is not supported "
                                   "(WebNN has 2-D ops; 1-D ones are lifted to 2-D)")


def conv(ctx: ImportContext, node: Node, x: Any, w: Any, bias: Any) -> Any:
    """WebNN conv2d of `x` (NCHW, NCW or NCDHW) with the OIHW / OIW / OIDHW filter `w`, under
    the node's Conv attributes (kernel_shape, strides, dilations, pads / auto_pad, group); a
    1-D convolution runs as 2-D with a unit width, a 3-D one as one conv2d over its depth
    taps (`_conv3d`). Shared by Conv, QLinearConv and ConvInteger."""
    if x.rank != 5:
        check_spatial_rank(node.op_type, x.rank)
    b = ctx.builder
    n = x.rank - 2
    a = node.attrs
    kernel = ints(a["kernel_shape"]) if "kernel_shape" in a else list(w.shape[2:])
    strides = ints(a["strides"]) if "strides" in a else [1] * n
    dilations = ints(a["dilations"]) if "dilations" in a else [1] * n
    pads = resolve_pads(str(a.get("auto_pad", "NOTSET")), x.shape[2:], kernel, strides,
                        dilations, ints(a["pads"]) if "pads" in a else None)
    if n == 3:
        if node.op_type == "Conv" and ctx.is_constant(node.inputs[1]):
            wv = np.asarray(ctx.const_value(node.inputs[1]))  # rearranged here, not in the graph
            w = ctx.constant(np.ascontiguousarray(np.transpose(wv, (0, 2, 1, 3, 4))).reshape(
                wv.shape[0], -1, *wv.shape[3:]))
        return _conv3d(ctx, x, w, bias, kernel, strides, dilations, pads,
                       int(a.get("group", 1)))
    one_d = n == 1
    if one_d:
        x = b.reshape(x, [*x.shape, 1])
        w = b.reshape(w, [*w.shape, 1])
        strides, dilations, pads = [*strides, 1], [*dilations, 1], [*pads, (0, 0)]
    y = b.conv2d(x, w, padding=webnn_padding(pads), strides=strides, dilations=dilations,
                 groups=int(a.get("group", 1)), bias=bias)
    return b.reshape(y, list(y.shape[:-1])) if one_d else y


def _conv3d(ctx: ImportContext, x: Any, w: Any, bias: Any, kernel: Sequence[int],
            strides: Sequence[int], dilations: Sequence[int],
            pads: Sequence[tuple[int, int]], groups: int) -> Any:
    """A 3-D convolution as one conv2d (WebNN has no 3-D convolution): x [N, C, D, H, W]
    padded on depth, as [N, Dp, C, H, W]; for each depth tap k the strided depth slice
    x[:, k*dd :: sd] ([N, Do, C, H, W]) folded into the batch ([N*Do, C, H, W]); the KD
    slices concatenated on channels group by group ([N*Do, G, KD*C/G, H*W] -> [N*Do,
    KD*C, H, W]), the filter [O, C/G, KD, KH, KW] as [O, KD*C/G, KH, KW] in the same
    tap-major order (`w` is either, a constant filter rearranged by the caller); one grouped conv2d with the H/W padding, strides and dilations; the
    result [N*Do, O, Ho, Wo] back to [N, O, Do, Ho, Wo]. Every shape here has rank <= 5."""
    b = ctx.builder
    n, c, d, h, wd = x.shape
    o, kd = w.shape[0], kernel[0]
    cg = c // groups
    sd, dd = strides[0], dilations[0]
    (pb, pe) = pads[0]
    xt = b.transpose(x, permutation=[0, 2, 1, 3, 4])
    if pb or pe:
        xt = b.pad(xt, [0, pb, 0, 0, 0], [0, pe, 0, 0, 0])
    dp = d + pb + pe
    span = (kernel[0] - 1) * dd + 1
    if dp < span:
        raise UnsupportedAttribute(f"Conv: padded depth {dp} is smaller than the dilated "
                                   f"kernel depth {span}")
    do = (dp - span) // sd + 1
    taps = []
    for k in range(kd):
        tap = b.slice(xt, [0, k * dd, 0, 0, 0], [n, (do - 1) * sd + 1, c, h, wd],
                      strides=[1, sd, 1, 1, 1])
        taps.append(b.reshape(tap, [n * do, groups, cg, h * wd]))
    folded = b.reshape(taps[0] if kd == 1 else b.concat(taps, 2), [n * do, kd * c, h, wd])
    wf = w if w.rank == 4 else b.reshape(b.transpose(w, permutation=[0, 2, 1, 3, 4]),
                                         [o, kd * cg, *w.shape[3:]])
    y = b.conv2d(folded, wf, padding=webnn_padding(pads[1:]), strides=list(strides[1:]),
                 dilations=list(dilations[1:]), groups=groups, bias=bias)
    ho, wo = y.shape[2], y.shape[3]
    return b.transpose(b.reshape(y, [n, do, o, ho, wo]), permutation=[0, 2, 1, 3, 4])
