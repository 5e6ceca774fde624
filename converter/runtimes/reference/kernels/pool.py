"""Reference kernels: averagePool2d, l2Pool2d, maxPool2d, vectorised.

The window reduction is separable, so each pool reduces the height axis and then the width
axis, each as a loop over the window taps on strided slices (or, for windows longer than
`_TAP_LOOP_MAX`, one reduction over a sliding-window view); a single window (global pooling)
is one reduction over both axes. Padding never takes part:
maxPool2d pads with the lowest value of the dtype, the sums pad with 0 and averagePool2d
divides by the number of real cells. Windows that reach past the padded input (ceil rounding)
are handled the same way. A window with no real cell at all yields 0 for every pool.
averagePool2d and l2Pool2d compute in float64; maxPool2d is exact in the input dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from converter.core.webnn.operand import Operation
from converter.runtimes.reference.registry import kernel

_TAP_LOOP_MAX = 16


def _lowest(dtype: np.dtype) -> float | int:
    return -np.inf if dtype.kind == "f" else int(np.iinfo(dtype).min)


def _reduce_axis(a: np.ndarray, axis: int, k: int, stride: int, dilation: int, out_len: int,
                 ufunc: np.ufunc) -> np.ndarray:
    """Reduce windows of k (dilated) taps along one already padded axis; the window of output
    i starts at position i * stride."""

    def along(start: int, step: int, count: int) -> tuple[slice, ...]:
        index = [slice(None)] * a.ndim
        index[axis] = slice(start, start + (count - 1) * step + 1, step)
        return tuple(index)

    if k <= _TAP_LOOP_MAX:
        if k == 1:
            return a[along(0, stride, out_len)].copy()
        out: np.ndarray = ufunc(a[along(0, stride, out_len)],
                                a[along(dilation, stride, out_len)])
        for t in range(2, k):
            ufunc(out, a[along(t * dilation, stride, out_len)], out=out)
        return out
    windows = sliding_window_view(a, (k - 1) * dilation + 1, axis=axis)
    windows = windows[along(0, stride, out_len)][..., ::dilation]
    reduced: np.ndarray = ufunc.reduce(windows, axis=-1)  # np.ufunc calls are typed Any
    return reduced


def _pad(a: np.ndarray, axes: tuple[int, int], begins: tuple[int, int],
         ends: tuple[int, int], fill: float | int) -> np.ndarray:
    """`a` with `begins`/`ends` cells of `fill` added on two axes (a itself if none)."""
    if not any(begins) and not any(ends):
        return a
    shape = list(a.shape)
    inner = [slice(None)] * a.ndim
    for axis, begin, end in zip(axes, begins, ends, strict=True):
        inner[axis] = slice(begin, begin + shape[axis])
        shape[axis] += begin + end
    out = np.full(shape, fill, dtype=a.dtype)
    out[tuple(inner)] = a
    return out


def _counts(size: int, k: int, pad_begin: int, stride: int, dilation: int, out_len: int
            ) -> np.ndarray:
    """Number of real (non-padding) cells in each window along one axis."""
    pos = (np.arange(out_len)[:, None] * stride - pad_begin) + np.arange(k)[None, :] * dilation
    counts: np.ndarray = ((pos >= 0) & (pos < size)).sum(axis=1)
    return counts


@kernel("averagePool2d", "l2Pool2d", "maxPool2d")
def pool2d(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x = args[0]
    nhwc = options["layout"] == "nhwc"
    h_axis, w_axis = (1, 2) if nhwc else (2, 3)
    kh, kw = options["windowDimensions"]
    top, _, left, _ = options["padding"]
    sh, sw = options["strides"]
    dh, dw = options["dilations"]
    out_shape = op.outputs[0].shape
    oh, ow = out_shape[h_axis], out_shape[w_axis]
    ufunc: np.ufunc
    if op.op == "maxPool2d":
        work, fill, ufunc = x, _lowest(x.dtype), np.maximum
    elif op.op == "averagePool2d":
        work, fill, ufunc = x.astype(np.float64), 0.0, np.add
    else:
        work, fill, ufunc = np.square(x.astype(np.float64)), 0.0, np.add
    # Pad once: the begin padding, and at the end as far as the last window reaches (which
    # may be short of the end padding, or beyond it with ceil rounding).
    ends = tuple(max(0, (o - 1) * s + (k - 1) * d + 1 - p - x.shape[axis])
                 for o, s, k, d, p, axis in ((oh, sh, kh, dh, top, h_axis),
                                             (ow, sw, kw, dw, left, w_axis)))
    work = _pad(work, (h_axis, w_axis), (top, left), ends, fill)
    if oh == ow == 1:  # one window (e.g. global pooling): a single reduction
        index = [slice(None)] * 4
        index[h_axis] = slice(0, (kh - 1) * dh + 1, dh)
        index[w_axis] = slice(0, (kw - 1) * dw + 1, dw)
        work = ufunc.reduce(work[tuple(index)], axis=(h_axis, w_axis), keepdims=True)
    else:
        # Height first: its slices keep whole rows contiguous, and the width pass (strided
        # innermost for nchw) then runs on fewer rows.
        work = _reduce_axis(work, h_axis, kh, sh, dh, oh, ufunc)
        work = _reduce_axis(work, w_axis, kw, sw, dw, ow, ufunc)
    count = (_counts(x.shape[h_axis], kh, top, sh, dh, oh)[:, None]
             * _counts(x.shape[w_axis], kw, left, sw, dw, ow)[None, :])
    count = count[:, :, None] if nhwc else count
    if op.op == "averagePool2d":
        work = work / np.maximum(count, 1)
    elif op.op == "l2Pool2d":
        work = np.sqrt(work)
    if not count.all():
        work = np.where(count == 0, np.zeros((), dtype=work.dtype), work)
    return [work]
