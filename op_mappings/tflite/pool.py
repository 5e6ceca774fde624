"""AVERAGE_POOL_2D, MAX_POOL_2D, L2_POOL_2D (NHWC, explicit SAME padding, fused activation).

Average pooling excludes padded cells (as WebNN does); never lowered as PAD + VALID.
L2_POOL_2D = sqrt(averagePool2d(x*x)) (root of the MEAN of squares over valid cells, not
WebNN l2Pool2d). MAX_POOL_2D runs on stored integers when input and output share
quantization parameters; so does an int8/uint8 AVERAGE_POOL_2D without fused activation,
rounding the mean of the stored integers half AWAY from zero as LiteRT's integer kernel does
(a dequantize -> average -> quantizeLinear chain would round half to even).
"""

from __future__ import annotations

from typing import Any

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import (
    NONE,
    activation,
    data_in,
    fin,
    fin_required,
    fout,
    spatial_padding,
)


def _window(node: Node, shape: tuple[int, ...]) -> dict[str, Any]:
    if len(shape) != 4:
        raise InvalidModel(f"input has rank {len(shape)}, 4 expected")
    a = node.attrs
    window = [int(a["filter_height"]), int(a["filter_width"])]
    strides = [int(a["stride_h"]), int(a["stride_w"])]
    return {"window_dimensions": window, "strides": strides, "layout": "nhwc",
            "padding": spatial_padding(a["padding"], shape[1:3], window, strides)}


@tflite_op("MAX_POOL_2D", since=1)
def max_pool(ctx: ImportContext, node: Node) -> Outputs:
    """maxPool2d; padded cells never win."""
    act = int(node.attrs["fused_activation_function"])
    if act == NONE:
        (x,), raw = data_in(ctx, node)
    else:
        x, raw = fin_required(ctx, node, 0), False
    y = ctx.builder.max_pool2d(x, **_window(node, x.shape))
    if raw:
        return [y]
    return [fout(ctx, node, 0, activation(ctx, y, act))]


@tflite_op("AVERAGE_POOL_2D", since=1)
def average_pool(ctx: ImportContext, node: Node) -> Outputs:
    """averagePool2d (count excludes padding)."""
    act = int(node.attrs["fused_activation_function"])
    if act == NONE:
        (raw_x,), raw = data_in(ctx, node)
        if raw and raw_x.data_type in ("int8", "uint8"):
            return [_integer_average(ctx, node, raw_x)]
    x = fin(ctx, node, 0)
    assert x is not None
    y = ctx.builder.average_pool2d(x, **_window(node, x.shape))
    return [fout(ctx, node, 0, activation(ctx, y, node.attrs["fused_activation_function"]))]


@tflite_op("L2_POOL_2D", since=1)
def l2_pool(ctx: ImportContext, node: Node) -> Outputs:
    """sqrt(mean of squares over the valid cells of each window)."""
    x = fin(ctx, node, 0)
    assert x is not None
    b = ctx.builder
    y = b.sqrt(b.average_pool2d(b.mul(x, x), **_window(node, x.shape)))
    return [fout(ctx, node, 0, activation(ctx, y, node.attrs["fused_activation_function"]))]


def _integer_average(ctx: ImportContext, node: Node, x: Any) -> Any:
    """LiteRT's integer average: mean of the stored values over the valid cells, rounded half
    away from zero. The float32 mean is exact enough: a non-tie mean lies at least 1/(2*count)
    from the nearest .5, far above float32 rounding at |mean| <= 255."""
    b = ctx.builder
    mean = b.average_pool2d(b.cast(x, "float32"), **_window(node, x.shape))
    half = b.constant(0.5, data_type="float32")
    rounded = b.mul(b.sign(mean), b.floor(b.add(b.abs(mean), half)))
    return b.cast(rounded, x.data_type)
