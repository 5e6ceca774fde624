"""Helpers for convolution and pooling handlers: auto_pad, ONNX pads -> WebNN padding, and
1-D ops lifted to 2-D (not a mapping module)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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
    """WebNN conv2d of `x` (NCHW or NCW) with the OIHW / OIW filter `w`, under the node's
    Conv attributes (kernel_shape, strides, dilations, pads / auto_pad, group); a 1-D
    convolution runs as 2-D with a unit width. Shared by Conv, QLinearConv and ConvInteger."""
    check_spatial_rank(node.op_type, x.rank)
    b = ctx.builder
    n = x.rank - 2
    a = node.attrs
    kernel = ints(a["kernel_shape"]) if "kernel_shape" in a else list(w.shape[2:])
    strides = ints(a["strides"]) if "strides" in a else [1] * n
    dilations = ints(a["dilations"]) if "dilations" in a else [1] * n
    pads = resolve_pads(str(a.get("auto_pad", "NOTSET")), x.shape[2:], kernel, strides,
                        dilations, ints(a["pads"]) if "pads" in a else None)
    one_d = n == 1
    if one_d:
        x = b.reshape(x, [*x.shape, 1])
        w = b.reshape(w, [*w.shape, 1])
        strides, dilations, pads = [*strides, 1], [*dilations, 1], [*pads, (0, 0)]
    y = b.conv2d(x, w, padding=webnn_padding(pads), strides=strides, dilations=dilations,
                 groups=int(a.get("group", 1)), bias=bias)
    return b.reshape(y, list(y.shape[:-1])) if one_d else y
