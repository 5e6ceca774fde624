"""Helpers for convolution and pooling handlers: auto_pad, ONNX pads -> WebNN padding, and
1-D ops lifted to 2-D (not a mapping module)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from converter.errors import UnsupportedAttribute


def resolve_pads(auto_pad: str, in_sizes: Sequence[int], kernel: Sequence[int],
                 strides: Sequence[int], dilations: Sequence[int],
                 pads: Sequence[int] | None) -> list[tuple[int, int]]:
    """Per spatial axis (begin, end) padding. SAME_UPPER puts the odd cell at the end,
    SAME_LOWER at the beginning; VALID pads nothing; NOTSET uses `pads`
    ([x1_begin, x2_begin, ..., x1_end, x2_end, ...])."""
    n = len(in_sizes)
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for i in range(n):
            dk = (kernel[i] - 1) * dilations[i] + 1
            target = math.ceil(in_sizes[i] / strides[i])
            total = max(0, (target - 1) * strides[i] + dk - in_sizes[i])
            small, big = total // 2, total - total // 2
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
