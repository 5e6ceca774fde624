"""Torch implementations: averagePool2d, l2Pool2d, maxPool2d (mirrors the reference
kernels/pool.py).

Float pools whose windows torch's own padding reproduces (beginning padding at most half the
effective window, and torch's output size, with or without ceil_mode, equal to WebNN's) run
with that implicit padding: the windows start at the same cells and padding cells are -inf
(max) or 0 (sums), exactly as below, without a padded copy of the input. Otherwise the
input (channels-first view) is padded (or cropped at the end) so that its spatial size is
exactly what the output windows span, then pooled with no implicit padding: float maxPool2d
uses `F.max_pool2d` on an input padded with -inf; the sums of averagePool2d / l2Pool2d use
`F.avg_pool2d(divisor_override=1)` on a zero-padded input (or, with dilations, strided
`unfold` windows), divided by the number of real (non-padding) cells of each window (sums in float32, also for
float16 on CUDA).
On the CPU, float pools run on a channels-last copy of the input (torch's channels-first CPU
pooling kernels are several times slower) and return channels-last results, which the
following convolutions take as they are. Integer maxPool2d reduces `unfold` windows with `amax` exactly in the storage dtype (uint64 in
unsigned order). A window with no real cell yields 0 for every pool. Floats are computed in
float32 (float16 natively on CUDA).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from converter.runtimes.torch.registry import INT64_MIN, Fn, Node, impl


def _counts(size: int, k: int, pad_begin: int, stride: int, dilation: int, out_len: int
            ) -> np.ndarray:
    """Number of real (non-padding) cells in each window along one axis."""
    pos = (np.arange(out_len)[:, None] * stride - pad_begin) + np.arange(k)[None, :] * dilation
    counts: np.ndarray = ((pos >= 0) & (pos < size)).sum(axis=1)
    return counts


def _window_reduce(x: torch.Tensor, k: tuple[int, int], s: tuple[int, int],
                   d: tuple[int, int], maximum: bool) -> torch.Tensor:
    """Separable window reduction of an exactly padded NCHW tensor via unfold views."""
    for axis, kk, ss, dd in ((3, k[1], s[1], d[1]), (2, k[0], s[0], d[0])):
        windows = x.unfold(axis, (kk - 1) * dd + 1, ss)[..., ::dd]
        x = torch.amax(windows, dim=-1) if maximum else torch.sum(windows, dim=-1)
    return x


def _native_padding(size: tuple[int, int], out: tuple[int, int], k: tuple[int, int],
                    s: tuple[int, int], d: tuple[int, int], begin: tuple[int, int]
                    ) -> bool | None:
    """The `ceil_mode` with which torch's implicit padding of `begin` cells on both sides
    yields exactly `out` windows starting where WebNN's do, or None when none does."""
    spans = [(kk - 1) * dd + 1 for kk, dd in zip(k, d, strict=True)]
    if any(2 * p > span for p, span in zip(begin, spans, strict=True)):
        return None
    for ceil_mode in (False, True):
        sizes = []
        for n, p, span, ss in zip(size, begin, spans, s, strict=True):
            num = n + 2 * p - span
            o = (-(-num // ss) if ceil_mode else num // ss) + 1
            if ceil_mode and (o - 1) * ss >= n + p:  # torch drops a window starting in padding
                o -= 1
            sizes.append(o)
        if tuple(sizes) == tuple(out):
            return ceil_mode
    return None


@impl("averagePool2d", "l2Pool2d", "maxPool2d")
def pool2d(node: Node) -> Fn:
    o = node.options
    nhwc = o["layout"] == "nhwc"
    kh, kw = (int(v) for v in o["windowDimensions"])
    top, _, left, _ = (int(p) for p in o["padding"])
    sh, sw = (int(v) for v in o["strides"])
    dh, dw = (int(v) for v in o["dilations"])
    xs, out = node.operand(0).shape, node.out_shape
    h, w = (xs[1], xs[2]) if nhwc else (xs[2], xs[3])
    oh, ow = (out[1], out[2]) if nhwc else (out[2], out[3])
    span_h = (oh - 1) * sh + (kh - 1) * dh + 1
    span_w = (ow - 1) * sw + (kw - 1) * dw + 1
    # (left, right, top, bottom); a negative end crops cells no window reaches.
    pads = (left, span_w - left - w, top, span_h - top - h)
    padded = any(pads)
    dt = node.in_type
    fl = node.fl if node.op.op == "maxPool2d" else node.acc
    floating = dt in ("float32", "float16")
    count = (_counts(h, kh, top, sh, dh, oh)[:, None] * _counts(w, kw, left, sw, dw, ow)[None, :])
    empty = None if count.all() else node.ctx.tensor(count == 0)
    kind = node.op.op
    divisor = node.ctx.tensor(np.maximum(count, 1), torch.float32)
    k, s, d = (kh, kw), (sh, sw), (dh, dw)
    native = _native_padding((h, w), (oh, ow), k, s, d, (top, left)) if (
        floating and padded and (kind == "maxPool2d" or d == (1, 1))) else None

    if kind == "maxPool2d":
        if floating:
            fill: float | int = -float("inf")
        else:
            fill = INT64_MIN if dt in ("int64", "uint64") else int(np.iinfo(np.dtype(dt)).min)

        def reduce(x: torch.Tensor) -> torch.Tensor:
            if native is not None:
                return F.max_pool2d(x, k, s, (top, left), d, ceil_mode=native)
            if padded:
                x = F.pad(x, pads, value=fill)
            if floating:
                return F.max_pool2d(x, k, s, 0, d)
            return _window_reduce(x, k, s, d, maximum=True)
    else:
        square = kind == "l2Pool2d"

        def reduce(x: torch.Tensor) -> torch.Tensor:
            if square:
                x = x * x
            if native is not None:
                total = F.avg_pool2d(x, k, s, (top, left), ceil_mode=native,
                                     divisor_override=1)
                return torch.sqrt(total) if square else total / divisor
            if padded:
                x = F.pad(x, pads)
            if d == (1, 1):
                total = F.avg_pool2d(x, k, s, 0, divisor_override=1)
            else:
                total = _window_reduce(x, k, s, d, maximum=False)
            return torch.sqrt(total) if square else total / divisor

    uint64 = dt == "uint64"

    channels_last = floating and node.ctx.device.type == "cpu"

    def fn(x: torch.Tensor) -> list[torch.Tensor]:
        x = fl(x)
        if nhwc:
            x = x.permute(0, 3, 1, 2)
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        if uint64:
            x = x ^ INT64_MIN
        y = reduce(x)
        if uint64:
            y = y ^ INT64_MIN
        if empty is not None:
            y = torch.where(empty, torch.zeros((), dtype=y.dtype, device=y.device), y)
        return [y.permute(0, 2, 3, 1) if nhwc else y]

    return fn
