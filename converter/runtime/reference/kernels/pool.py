"""Reference kernels: averagePool2d, l2Pool2d, maxPool2d, vectorised.

The window reduction is separable, so each pool reduces the width axis and then the height
axis, each as a loop over the window taps on strided slices (or, for windows longer than
`_TAP_LOOP_MAX`, one reduction over a sliding-window view). Padding never takes part:
maxPool2d pads with the lowest value of the dtype, the sums pad with 0 and averagePool2d
divides by the number of real cells. Windows that reach past the padded input (ceil rounding)
are handled the same way. A window with no real cell at all yields 0 for every pool.
averagePool2d and l2Pool2d compute in float64; maxPool2d is exact in the input dtype.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ....webnn.operand import Operation
from ..registry import kernel

_TAP_LOOP_MAX = 16


def _lowest(dtype: np.dtype) -> float | int:
    return -np.inf if dtype.kind == "f" else int(np.iinfo(dtype).min)


def _pool_axis(a: np.ndarray, axis: int, k: int, pad_begin: int, stride: int, dilation: int,
               out_len: int, fill: float | int, ufunc: np.ufunc) -> np.ndarray:
    """Reduce windows of k taps (dilated) along one axis; the window at output i starts at
    input position i*stride - pad_begin and positions outside the input read `fill`."""
    size = a.shape[axis]
    extent = (out_len - 1) * stride + (k - 1) * dilation + 1
    pad_end = max(0, extent - pad_begin - size)
    if pad_begin or pad_end:
        shape = list(a.shape)
        shape[axis] = pad_begin + size + pad_end
        padded = np.full(shape, fill, dtype=a.dtype)
        inner = [slice(None)] * a.ndim
        inner[axis] = slice(pad_begin, pad_begin + size)
        padded[tuple(inner)] = a
        a = padded

    def along(start: int, step: int, count: int) -> tuple[slice, ...]:
        index = [slice(None)] * a.ndim
        index[axis] = slice(start, start + (count - 1) * step + 1, step)
        return tuple(index)

    if k <= _TAP_LOOP_MAX:
        out = a[along(0, stride, out_len)].copy()
        for t in range(1, k):
            ufunc(out, a[along(t * dilation, stride, out_len)], out=out)
        return out
    windows = sliding_window_view(a, (k - 1) * dilation + 1, axis=axis)
    windows = windows[along(0, stride, out_len)][..., ::dilation]
    return ufunc.reduce(windows, axis=-1)


def _counts(size: int, k: int, pad_begin: int, stride: int, dilation: int, out_len: int
            ) -> np.ndarray:
    """Number of real (non-padding) cells in each window along one axis."""
    pos = (np.arange(out_len)[:, None] * stride - pad_begin) + np.arange(k)[None, :] * dilation
    return ((pos >= 0) & (pos < size)).sum(axis=1)


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
    if op.op == "maxPool2d":
        work, fill, ufunc = x, _lowest(x.dtype), np.maximum
    elif op.op == "averagePool2d":
        work, fill, ufunc = x.astype(np.float64), 0.0, np.add
    else:
        work, fill, ufunc = np.square(x.astype(np.float64)), 0.0, np.add
    work = _pool_axis(work, w_axis, kw, left, sw, dw, ow, fill, ufunc)
    work = _pool_axis(work, h_axis, kh, top, sh, dh, oh, fill, ufunc)
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
