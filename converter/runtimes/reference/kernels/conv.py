"""Reference kernels: conv2d and convTranspose2d, vectorised, float64 inside.

conv2d works on a channels-first view of the input: im2col with `as_strided` on the padded
input (one copy that also converts to float64), then one batched BLAS matmul over
(batch, group). 1x1 convolutions without padding skip im2col (a plain matmul on the strided
input); depthwise convolutions (one input and one output channel per group) use a
multiply-add loop over the kernel taps instead of a matmul. Large im2col buffers are built
in blocks of output rows. convTranspose2d is a matmul to columns followed by a col2im
scatter-add over the kernel taps.

Filters of constant operands are converted once (layout, groups, float64) and cached for the
lifetime of the constant operand, so repeated runs of a compiled graph do not pay for it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from converter.core.webnn.operand import MLOperand, Operation
from converter.runtimes.reference.registry import kernel

# (role layout) -> permutation to the canonical layout (oihw for conv2d, iohw for transposed).
_TO_OIHW = {"oihw": (0, 1, 2, 3), "hwio": (3, 2, 0, 1), "ohwi": (0, 3, 1, 2),
            "ihwo": (3, 0, 1, 2)}
_TO_IOHW = {"iohw": (0, 1, 2, 3), "hwoi": (3, 2, 0, 1), "ohwi": (3, 0, 1, 2)}

# Upper bound on the im2col buffer (float64 elements); larger convolutions run in row blocks.
_IM2COL_MAX_ELEMENTS = 1 << 24

_PREPARED: weakref.WeakKeyDictionary[MLOperand, dict[Hashable, np.ndarray]] = (
    weakref.WeakKeyDictionary())


def prepared_operand(op: Operation, index: int, array: np.ndarray, tag: Hashable,
                     prepare: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """`prepare(array)`, cached per constant operand and `tag` when `op.args[index]` is a
    constant (constants are immutable copies owned by the graph)."""
    operand = op.args[index]
    if not (isinstance(operand, MLOperand) and operand.kind == "constant"
            and operand.value is array):
        return prepare(array)
    per_operand = _PREPARED.setdefault(operand, {})
    hit = per_operand.get(tag)
    if hit is None:
        hit = prepare(array)
        hit.setflags(write=False)
        per_operand[tag] = hit
    return hit


def pad_spatial(x: np.ndarray, pads: tuple[int, int, int, int]) -> np.ndarray:
    """A C-contiguous copy of NCHW `x` with `[top, bottom, left, right]` zeros around the
    last two axes, in x's dtype (x itself when there is no padding)."""
    top, bottom, left, right = pads
    if not (top or bottom or left or right):
        return x
    n, c, h, w = x.shape
    out = np.zeros((n, c, h + top + bottom, w + left + right), dtype=x.dtype)
    out[:, :, top:top + h, left:left + w] = x
    return out


def _output_hw(op: Operation, nhwc: bool) -> tuple[int, int]:
    shape = op.outputs[0].shape
    return (shape[1], shape[2]) if nhwc else (shape[2], shape[3])


def _finish(out: np.ndarray, bias: np.ndarray | None, nhwc: bool) -> list[np.ndarray]:
    """Add the bias (NCHW `out`, float64) and return the result in the requested layout."""
    if bias is not None:
        out += bias.astype(np.float64)[None, :, None, None]
    if nhwc:
        out = np.ascontiguousarray(out.transpose(0, 2, 3, 1))
    return [out]


@kernel("conv2d")
def conv2d(op: Operation, args: list[Any], options: dict[str, Any]) -> list[np.ndarray]:
    x, w = args
    groups = options["groups"]
    pads = tuple(options["padding"])
    sh, sw = options["strides"]
    dh, dw = options["dilations"]
    nhwc = options["inputLayout"] == "nhwc"
    flayout = options["filterLayout"]
    xc = x.transpose(0, 3, 1, 2) if nhwc else x
    n = xc.shape[0]
    oh, ow = _output_hw(op, nhwc)
    o, cg, kh, kw = w.transpose(_TO_OIHW[flayout]).shape
    og = o // groups

    if cg == 1 and og == 1:
        # Depthwise (one input and one output channel per group): multiply-add over the taps.
        wt = prepared_operand(op, 1, w, ("conv2d-dw", flayout), lambda a: np.ascontiguousarray(
            a.transpose(_TO_OIHW[flayout]), dtype=np.float64).reshape(o, kh, kw))
        xp = pad_spatial(xc, pads)
        out = np.zeros((n, o, oh, ow))
        tmp = np.empty_like(out)
        for i in range(kh):
            for j in range(kw):
                tap = xp[:, :, i * dh:i * dh + (oh - 1) * sh + 1:sh,
                         j * dw:j * dw + (ow - 1) * sw + 1:sw]
                np.multiply(tap, wt[None, :, i, j, None, None], out=tmp)
                out += tmp
        return _finish(out, options.get("bias"), nhwc)

    wm = prepared_operand(op, 1, w, ("conv2d", flayout, groups), lambda a: np.ascontiguousarray(
        a.transpose(_TO_OIHW[flayout]), dtype=np.float64).reshape(groups, og, cg * kh * kw))
    if kh == kw == 1 and not any(pads):
        # 1x1 convolution: a plain matmul on the (strided) input.
        cols = np.ascontiguousarray(xc[:, :, :(oh - 1) * sh + 1:sh, :(ow - 1) * sw + 1:sw],
                                    dtype=np.float64)
        out = np.matmul(wm, cols.reshape(n, groups, cg, oh * ow))
        return _finish(out.reshape(n, o, oh, ow), options.get("bias"), nhwc)

    # im2col, in blocks of output rows so that the columns stay below _IM2COL_MAX_ELEMENTS.
    xp = pad_spatial(xc, pads)
    s_n, s_c, s_h, s_w = xp.strides
    k = cg * kh * kw
    rows = max(1, min(oh, _IM2COL_MAX_ELEMENTS // (n * groups * k * ow)))
    acc = np.empty((n, groups, og, oh, ow)) if rows < oh else None
    for r0 in range(0, oh, rows):
        r1 = min(oh, r0 + rows)
        view = as_strided(xp[:, :, r0 * sh:], (n, groups, cg, kh, kw, r1 - r0, ow),
                          (s_n, cg * s_c, s_c, dh * s_h, dw * s_w, sh * s_h, sw * s_w),
                          writeable=False)
        cols = np.empty(view.shape)
        np.copyto(cols, view)
        block = np.matmul(wm, cols.reshape(n, groups, k, (r1 - r0) * ow))
        if acc is None:
            acc = block
        else:
            acc[:, :, :, r0:r1] = block.reshape(n, groups, og, r1 - r0, ow)
    assert acc is not None
    return _finish(acc.reshape(n, o, oh, ow), options.get("bias"), nhwc)


@kernel("convTranspose2d")
def conv_transpose2d(op: Operation, args: list[Any], options: dict[str, Any]
                     ) -> list[np.ndarray]:
    x, w = args
    groups = options["groups"]
    top, _, left, _ = options["padding"]
    sh, sw = options["strides"]
    dh, dw = options["dilations"]
    nhwc = options["inputLayout"] == "nhwc"
    flayout = options["filterLayout"]
    xc = x.transpose(0, 3, 1, 2) if nhwc else x
    n, c, h, wd = xc.shape
    oh, ow = _output_hw(op, nhwc)
    _, og, kh, kw = w.transpose(_TO_IOHW[flayout]).shape
    cg = c // groups
    o = og * groups
    # (groups, og*kh*kw, cg): columns = W_g^T @ X_g for every (batch, group).
    wt = prepared_operand(op, 1, w, ("convTranspose2d", flayout, groups), lambda a: (
        np.ascontiguousarray(a.transpose(_TO_IOHW[flayout]).reshape(groups, cg, og * kh * kw)
                             .transpose(0, 2, 1), dtype=np.float64)))
    xm = np.ascontiguousarray(xc, dtype=np.float64).reshape(n, groups, cg, h * wd)
    cols = np.matmul(wt, xm).reshape(n, o, kh, kw, h, wd)
    full_h = max((h - 1) * sh + (kh - 1) * dh + 1, top + oh)
    full_w = max((wd - 1) * sw + (kw - 1) * dw + 1, left + ow)
    canvas = np.zeros((n, o, full_h, full_w))
    for i in range(kh):
        for j in range(kw):
            canvas[:, :, i * dh:i * dh + (h - 1) * sh + 1:sh,
                   j * dw:j * dw + (wd - 1) * sw + 1:sw] += cols[:, :, i, j]
    out = np.ascontiguousarray(canvas[:, :, top:top + oh, left:left + ow])
    return _finish(out, options.get("bias"), nhwc)
