"""com.microsoft CropAndResize (TensorFlow's crop_and_resize, written by tf2onnx for detection
models) -> WebNN gather + the GridSample sampling.

For each box r (rois [R, 4] = (y1, x1, y2, x2), normalised to [0, 1]) of image
batch_indices[r] of X [N, C, H, W], the output [R, C, crop_h, crop_w] samples the image at
y_i = y1·(H - 1) + i·(y2 - y1)·(H - 1)/(crop_h - 1) (0.5·(y1 + y2)·(H - 1) when crop_h is
1) and likewise x_j, corner aligned: bilinear or nearest (mode; halfway coordinates round
up, as onnxruntime's roundf does), and `extrapolation_value`
where a coordinate falls outside [0, H - 1] / [0, W - 1]. The coordinates are computed in
float32 as onnxruntime does, then sampled by the GridSample mapping (align_corners, border
padding) on the images gathered per box.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import ints
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    attr_float,
    attr_str,
    check_arity,
    float_operand,
    scalar,
)
from op_mappings.onnx.grid_sample import grid_sample

MS = "com.microsoft"


def _coords(ctx: ImportContext, lo: Any, hi: Any, size: int, crop: int) -> Any:
    """[R, crop] float32 pixel coordinates along one axis from box edges lo, hi [R, 1]."""
    b = ctx.builder
    span = scalar(ctx, float(size - 1), "float32")
    if crop == 1:
        return b.mul(b.mul(b.add(lo, hi), scalar(ctx, 0.5, "float32")), span)
    step = b.div(b.mul(b.sub(hi, lo), span), scalar(ctx, float(crop - 1), "float32"))
    steps = ctx.constant(np.arange(crop, dtype=np.float32).reshape(1, crop))
    return b.add(b.mul(lo, span), b.mul(steps, step))


def _normalised(ctx: ImportContext, coord: Any, size: int) -> Any:
    """Pixel coordinates as GridSample's align_corners grid values 2·c/(L - 1) - 1."""
    b = ctx.builder
    if size == 1:
        return b.mul(coord, scalar(ctx, 0.0, "float32"))
    return b.sub(b.mul(coord, scalar(ctx, 2.0 / (size - 1), "float32")),
                 scalar(ctx, 1.0, "float32"))


@onnx_op("CropAndResize", since=1, domain=MS, const_inputs=(3,))
def crop_and_resize(ctx: ImportContext, node: Node) -> Outputs:
    """Boxes of the images resized to crop_size (see the module docstring).
    Restrictions: float32/float16 X [N, C, H, W]; crop_size constant."""
    check_arity(node, (4, 4))
    b = ctx.builder
    x = float_operand(ctx, node, 0, "X")
    rois = float_operand(ctx, node, 1, "rois")
    idx = ctx.operand(node.inputs[2])
    mode = attr_str(node, "mode", "bilinear")
    if mode not in ("bilinear", "nearest"):
        raise UnsupportedAttribute(f"CropAndResize mode {mode!r} is not bilinear or nearest")
    size = ints(ctx.const_input(node, 3), "CropAndResize crop_size")
    if x.rank != 4 or rois.rank != 2 or rois.shape[1] != 4 or len(size) != 2 or min(size) < 1 \
            or list(idx.shape) != [rois.shape[0]]:
        raise InvalidModel(f"CropAndResize X {list(x.shape)}, rois {list(rois.shape)}, "
                           f"batch_indices {list(idx.shape)} and crop_size {size} must be "
                           "[N, C, H, W], [R, 4], [R] and two positive sizes")
    n, c, h, w = x.shape
    boxes = rois.shape[0]
    crop_h, crop_w = size
    r32 = b.cast(rois, "float32") if rois.data_type != "float32" else rois
    edge = [b.slice(r32, [0, i], [boxes, 1]) for i in range(4)]  # y1, x1, y2, x2: [R, 1]
    ys = _coords(ctx, edge[0], edge[2], h, crop_h)  # [R, crop_h]
    xs = _coords(ctx, edge[1], edge[3], w, crop_w)  # [R, crop_w]
    sy, sx = ys, xs
    if mode == "nearest":  # onnxruntime's roundf (half away from zero; in range c >= 0)
        half = scalar(ctx, 0.5, "float32")
        sy, sx = b.floor(b.add(ys, half)), b.floor(b.add(xs, half))
    gy = b.expand(b.reshape(_normalised(ctx, sy, h), [boxes, crop_h, 1, 1]),
                  [boxes, crop_h, crop_w, 1])
    gx = b.expand(b.reshape(_normalised(ctx, sx, w), [boxes, 1, crop_w, 1]),
                  [boxes, crop_h, crop_w, 1])
    grid = b.concat([gx, gy], 3)
    images = b.gather(x, idx, axis=0) if n > 1 or boxes != 1 else x  # [R, C, H, W]
    if images.shape[0] != boxes:
        images = b.expand(images, [boxes, c, h, w])
    y = grid_sample(ctx, node, images, grid, "linear" if mode == "bilinear" else "nearest",
                    "border", True)

    def outside(coord: Any, limit: int) -> Any:
        return b.logical_or(b.lesser(coord, scalar(ctx, 0.0, "float32")),
                            b.greater(coord, scalar(ctx, float(limit - 1), "float32")))

    out = b.logical_or(b.reshape(outside(ys, h), [boxes, 1, crop_h, 1]),
                       b.reshape(outside(xs, w), [boxes, 1, 1, crop_w]))
    fill = scalar(ctx, attr_float(node, "extrapolation_value", 0.0), x.data_type)
    return [b.where(out, fill, y)]
