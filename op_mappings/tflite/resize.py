"""RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (NHWC; constant size input [new_h, new_w]).

resample2d (sizes, axes [1, 2]) is used only where it is provably identical to LiteRT:
bilinear with half_pixel_centers, nearest with an integer up-scale and no align_corners.
Every other mode is lowered exactly with per-axis index tables computed at conversion time in
float32 like LiteRT (align_corners, half_pixel_centers, TfLiteRound half away from zero):
gather rows/columns, and for bilinear blend lo/hi with lerp weights.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints, data_in, fin, finish, fout


def _scale(size_in: int, size_out: int, align: bool) -> np.float32:
    if align and size_out > 1:
        return np.float32(size_in - 1) / np.float32(size_out - 1)
    return np.float32(size_in) / np.float32(size_out)


def bilinear_table(size_in: int, size_out: int, align: bool, half: bool
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    scale = _scale(size_in, size_out, align)
    o = np.arange(size_out, dtype=np.float32)
    src = (o + np.float32(0.5)) * scale - np.float32(0.5) if half else o * scale
    src = src.astype(np.float32)
    lo = np.maximum(np.floor(src), 0).astype(np.int32)
    hi = np.minimum(np.ceil(src), size_in - 1).astype(np.int32)
    t = (src - lo.astype(np.float32)).astype(np.float32)
    return lo, hi, t


def nearest_table(size_in: int, size_out: int, align: bool, half: bool) -> np.ndarray:
    scale = _scale(size_in, size_out, align)
    src = ((np.arange(size_out, dtype=np.float32) + np.float32(0.5 if half else 0.0)) * scale
           ).astype(np.float32)
    if align:
        idx = np.sign(src) * np.floor(np.abs(src) + np.float32(0.5))  # TfLiteRound
    else:
        idx = np.floor(src)
    idx = np.minimum(idx, size_in - 1)
    if half:
        idx = np.maximum(idx, 0)
    table: np.ndarray = idx.astype(np.int32)  # numpy's stubs: Any for unknown dtypes
    return table


def _sizes(ctx: ImportContext, node: Node) -> list[int]:
    size = const_ints(ctx, node, 1)
    if len(size) != 2 or min(size) < 1:
        raise InvalidModel(f"resize size {size} is not two positive integers")
    return size


@tflite_op("RESIZE_BILINEAR", since=1, const_inputs=(1,))
def resize_bilinear(ctx: ImportContext, node: Node) -> Outputs:
    """Bilinear resize, exact for every align_corners / half_pixel_centers combination."""
    x = fin(ctx, node, 0)
    assert x is not None
    b = ctx.builder
    size = _sizes(ctx, node)
    align, half = bool(node.attrs["align_corners"]), bool(node.attrs["half_pixel_centers"])
    if half and not align:
        return [fout(ctx, node, 0, b.resample2d(x, mode="linear", sizes=size, axes=[1, 2]))]
    y: MLOperand = x
    for axis, out in ((1, size[0]), (2, size[1])):
        lo, hi, t = bilinear_table(x.shape[axis], out, align, half)
        a_lo = b.gather(y, b.constant(lo), axis=axis)
        if np.array_equal(lo, hi):
            y = a_lo
            continue
        a_hi = b.gather(y, b.constant(hi), axis=axis)
        shape = [1, 1, 1, 1]
        shape[axis] = out
        tw = b.constant(t.reshape(shape).astype(x.data_type))
        y = b.add(a_lo, b.mul(b.sub(a_hi, a_lo), tw))
    return [fout(ctx, node, 0, y)]


@tflite_op("RESIZE_NEAREST_NEIGHBOR", since=1, const_inputs=(1,))
def resize_nearest(ctx: ImportContext, node: Node) -> Outputs:
    """Nearest-neighbour resize; works on stored integers for quantized tensors."""
    (x,), raw = data_in(ctx, node)
    b = ctx.builder
    size = _sizes(ctx, node)
    align, half = bool(node.attrs["align_corners"]), bool(node.attrs["half_pixel_centers"])
    h, w = x.shape[1], x.shape[2]
    if not align and size[0] % h == 0 and size[1] % w == 0:
        return [finish(ctx, node, b.resample2d(x, mode="nearest-neighbor", sizes=size,
                                               axes=[1, 2]), raw)]
    y = x
    for axis, out in ((1, size[0]), (2, size[1])):
        idx = nearest_table(x.shape[axis], out, align, half)
        if out == x.shape[axis] and np.array_equal(idx, np.arange(out)):
            continue
        y = b.gather(y, b.constant(idx), axis=axis)
    if y is x:
        y = b.identity(x)
    return [finish(ctx, node, y, raw)]
