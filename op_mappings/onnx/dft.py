"""ONNX DFT (17, 20) and STFT (17) -> matmuls with constant cos/sin bases.

DFT: the signal axis (attribute `axis`, default 1, in opset 17; input 2, default -2, in
opset 20) is moved last; the real and imaginary parts (last input dimension 1 or 2) are
multiplied by constant [N, M] cos and sin matrices: forward Y = Σ x·e^{-2πi·nm/L}, inverse
Y = (1/L)·Σ x·e^{+2πi·nm/L}. `dft_length` L truncates or zero-pads the signal; `onesided`
keeps the first L//2 + 1 bins. Output [..., M, 2]. `inverse` with `onesided` is the inverse
real FFT (numpy irfft, as the ONNX reference): a one-sided spectrum of M bins -> a real signal
of L = dft_length (default 2·(M - 1)) samples, output [..., L, 1].
STFT: frames are gathered with a constant [frames, frame_length] index table
(frames = 1 + (T - frame_length) // frame_step), multiplied by `window`, then a DFT along
the frame axis (onesided by default). Output [batch, frames, bins, 2].
Restrictions: dft_length, axis, frame_step and frame_length must be constants;
float32/float16; the basis is computed in float64 and rounded to the signal type.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import norm_axis
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import float_dtype_check


def _basis(n: int, length: int, bins: int, inverse: bool) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of 2π·n·m/L for n < min(n, L) rows, m < bins columns (scaled for inverse)."""
    rows = np.arange(min(n, length))[:, None]
    cols = np.arange(bins)[None, :]
    theta = 2 * np.pi * ((rows * cols) % length) / length
    scale = 1.0 / length if inverse else 1.0
    return np.cos(theta) * scale, np.sin(theta) * scale


def dft(ctx: ImportContext, x: Any, axis: int, length: int | None, inverse: bool,
        onesided: bool) -> Any:
    """DFT of x ([..., C], C in {1, 2}) along `axis` (< rank - 1)."""
    b = ctx.builder
    rank = x.rank
    if x.shape[-1] not in (1, 2):
        raise InvalidModel(f"DFT input's last dimension must be 1 or 2, got {x.shape[-1]}")
    n = x.shape[axis]
    irfft = inverse and onesided
    if length is None:
        length = 2 * (n - 1) if irfft else n
    if length < 1:
        raise InvalidModel(f"DFT length {length} must be positive")
    ctx.check_constant(min(n, length) * length, 8, "the DFT basis would take")
    if irfft:
        return _irfft(ctx, x, axis, length)
    bins = length // 2 + 1 if onesided else length
    dt = x.data_type
    # [..., signal, C] with the signal axis just before C
    perm = [i for i in range(rank - 1) if i != axis] + [axis, rank - 1]
    xt = b.transpose(x, permutation=perm) if perm != list(range(rank)) else x
    lead = list(xt.shape[:-2])
    used = min(n, length)
    if used < n:
        xt = b.slice(xt, [0] * rank, [*lead, used, xt.shape[-1]])

    def part(c: int) -> Any:
        p = b.slice(xt, [0] * rank, [*lead, used, 1]) if c == 0 else b.slice(
            xt, [0] * (rank - 1) + [1], [*lead, used, 1])
        return b.reshape(p, [max(1, int(np.prod(lead, dtype=np.int64))), used])

    cos, sin = _basis(used, length, bins, inverse)
    cos_c, sin_c = ctx.constant(cos.astype(dt)), ctx.constant(sin.astype(dt))
    re = part(0)
    sign = 1.0 if inverse else -1.0
    # Y_re = re·C - sign·im·S ; Y_im = im·C + sign·re·S
    y_re = b.matmul(re, cos_c)
    y_im = b.matmul(re, sin_c)
    if sign < 0:
        y_im = b.neg(y_im)
    if xt.shape[-1] == 2:
        im = part(1)
        im_s = b.matmul(im, sin_c)
        y_re = b.add(y_re, im_s) if sign < 0 else b.sub(y_re, im_s)
        y_im = b.add(y_im, b.matmul(im, cos_c))
    out = b.concat([b.reshape(y_re, [*lead, bins, 1]), b.reshape(y_im, [*lead, bins, 1])],
                   rank - 1)
    inv = [int(i) for i in np.argsort(perm)]
    return b.transpose(out, permutation=inv) if perm != list(range(rank)) else out


def _irfft(ctx: ImportContext, x: Any, axis: int, length: int) -> Any:
    """Inverse of a one-sided spectrum (numpy irfft): bins m < min(M, L//2 + 1) of x
    (Hermitian-extended) -> the real signal [..., L, 1] along `axis`:
    y[t] = (1/L)·Σ_m w_m·(Re X_m·cos(2πmt/L) - Im X_m·sin(2πmt/L)), w_m = 2 except for the
    DC bin and (even L) the Nyquist bin, whose imaginary parts are ignored."""
    b = ctx.builder
    rank = x.rank
    dt = x.data_type
    perm = [i for i in range(rank - 1) if i != axis] + [axis, rank - 1]
    xt = b.transpose(x, permutation=perm) if perm != list(range(rank)) else x
    lead = list(xt.shape[:-2])
    used = min(x.shape[axis], length // 2 + 1)
    rows = max(1, int(np.prod(lead, dtype=np.int64)))
    m = np.arange(used)[:, None]
    t = np.arange(length)[None, :]
    theta = 2 * np.pi * ((m * t) % length) / length
    weight = np.full((used, 1), 2.0)
    weight[0] = 1.0
    if length % 2 == 0 and used == length // 2 + 1:
        weight[-1] = 1.0
    cos_c = ctx.constant((weight * np.cos(theta) / length).astype(dt))
    re = b.reshape(b.slice(xt, [0] * rank, [*lead, used, 1]), [rows, used])
    y = b.matmul(re, cos_c)
    if xt.shape[-1] == 2:
        sin_c = ctx.constant((-weight * np.sin(theta) / length).astype(dt))
        im = b.reshape(b.slice(xt, [0] * (rank - 1) + [1], [*lead, used, 1]), [rows, used])
        y = b.add(y, b.matmul(im, sin_c))
    out = b.reshape(y, [*lead, length, 1])
    inv = [int(i) for i in np.argsort(perm)]
    return b.transpose(out, permutation=inv) if perm != list(range(rank)) else out


def _length(ctx: ImportContext, node: Node, i: int) -> int | None:
    value = ctx.const_input(node, i)
    return None if value is None else int(np.asarray(value).reshape(-1)[0])


@onnx_op("DFT", since=17, const_inputs=(1,))
def dft17(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    float_dtype_check(node, x)
    axis = norm_axis(node.attrs["axis"], x.rank)
    return [dft(ctx, x, axis, _length(ctx, node, 1), bool(node.attrs["inverse"]),
                bool(node.attrs["onesided"]))]


@onnx_op("DFT", since=20, const_inputs=(1, 2))
def dft20(ctx: ImportContext, node: Node) -> Outputs:
    x = ctx.operand(node.inputs[0])
    float_dtype_check(node, x)
    raw = _length(ctx, node, 2)
    axis = norm_axis(-2 if raw is None else raw, x.rank)
    if axis == x.rank - 1:
        raise InvalidModel("DFT axis must not be the last (complex) dimension")
    return [dft(ctx, x, axis, _length(ctx, node, 1), bool(node.attrs["inverse"]),
                bool(node.attrs["onesided"]))]


@onnx_op("STFT", since=17, const_inputs=(1, 3))
def stft(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    float_dtype_check(node, x)
    if x.rank != 3:
        raise InvalidModel(f"STFT signal must be [batch, length, 1 or 2], got {list(x.shape)}")
    step = _length(ctx, node, 1)
    assert step is not None
    window_name = node.input(2)
    frame_len = _length(ctx, node, 3)
    if frame_len is None:
        if not window_name:
            raise InvalidModel("STFT needs a window or a frame_length")
        frame_len = ctx.shape(window_name)[0]
    total = x.shape[1]
    frames = 1 + (total - frame_len) // step
    if frames < 1 or step < 1:
        raise InvalidModel(f"STFT frame_length {frame_len} / frame_step {step} do not fit a "
                           f"signal of length {total}")
    table = (np.arange(frames)[:, None] * step + np.arange(frame_len)[None, :]).astype(np.int32)
    framed = b.gather(x, ctx.constant(table), axis=1)  # [batch, frames, frame_len, C]
    if window_name:
        w = b.reshape(ctx.operand(window_name), [1, 1, frame_len, 1])
        framed = b.mul(framed, w)
    return [dft(ctx, framed, 2, None, False, bool(node.attrs["onesided"]))]
