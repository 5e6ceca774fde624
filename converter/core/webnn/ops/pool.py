"""MLGraphBuilder operators: averagePool2d, l2Pool2d, maxPool2d (spec 2.33).

Restrictions (spec): the input is 4-D; averagePool2d and l2Pool2d take float32/float16,
maxPool2d any data type. `windowDimensions` defaults to the full spatial size (global
pooling); `padding` is `[beginH, endH, beginW, endW]`; `strides` and `dilations` have two
non-zero items. Output size per spatial axis is `floor` or `ceil` (`outputShapeRounding`) of
`(in - ((k - 1) * d + 1) + padBegin + padEnd) / stride + 1`. `outputSizes`, when given, must
equal the all-floor or the all-ceil result and overrides `outputShapeRounding`.

Deliberate deviations from the spec text (see webnn-spec.md 7.1): `outputSizes` does not reset
`padding` to zeros, and the editorial "outputSizes items smaller than strides" check is not
enforced. Padded cells never take part in any pool: averagePool2d divides by the number of
real cells in the window.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from converter.core.webnn import validation as v
from converter.core.webnn.base import BuilderBase
from converter.core.webnn.operand import MLOperand
from converter.core.webnn.ops.conv import (
    INPUT_LAYOUTS,
    nonzero_pair,
    padding_option,
    spatial_axes,
    valid_output_size,
)

ROUNDINGS = ("floor", "ceil")


class PoolOps(BuilderBase):
    def _pool(self, op: str, input: Any, window_dimensions: Any, padding: Any, strides: Any,
              dilations: Any, layout: Any, output_shape_rounding: Any, output_sizes: Any,
              label: str) -> MLOperand:
        x = self._operand(op, "input", input)
        v.enum(op, "layout", layout, INPUT_LAYOUTS)
        v.enum(op, "outputShapeRounding", output_shape_rounding, ROUNDINGS)
        _, h_axis, w_axis = spatial_axes(layout)
        in_h, in_w = x.shape[h_axis], x.shape[w_axis]
        if window_dimensions is None:
            window = [in_h, in_w]
        else:
            window = list(v.unsigned_list(op, "windowDimensions", window_dimensions, 2))
            if 0 in window:
                raise v.fail(op, f"windowDimensions {window} must not contain 0")
        pad = padding_option(op, padding)
        st = nonzero_pair(op, "strides", strides)
        sizes_opt = (None if output_sizes is None
                     else list(v.unsigned_list(op, "outputSizes", output_sizes, 2)))
        dil = nonzero_pair(op, "dilations", dilations)
        floors, ceils = [], []
        for size, k, p0, p1, s, d in ((in_h, window[0], pad[0], pad[1], st[0], dil[0]),
                                      (in_w, window[1], pad[2], pad[3], st[1], dil[1])):
            num = size - ((k - 1) * d + 1) + p0 + p1
            floors.append(num // s + 1)
            ceils.append(-(-num // s) + 1)
        if sizes_opt is not None:
            if sizes_opt not in (floors, ceils):
                raise v.fail(op, f"outputSizes {sizes_opt} must equal the floor-rounded "
                                 f"{floors} or the ceil-rounded {ceils} output sizes")
            sizes = sizes_opt
        else:
            sizes = floors if output_shape_rounding == "floor" else ceils
        for axis, size, k, d, p, out in (("height", in_h, window[0], dil[0], pad[0] + pad[1],
                                          sizes[0]),
                                         ("width", in_w, window[1], dil[1], pad[2] + pad[3],
                                          sizes[1])):
            valid_output_size(op, f"output {axis}", out,
                              f"dilated window {axis} {(k - 1) * d + 1}, padded input "
                              f"{axis} {size + p}")
        shape = list(x.shape)
        shape[h_axis], shape[w_axis] = sizes
        options = {"windowDimensions": window, "padding": pad, "strides": st,
                   "dilations": dil, "layout": layout,
                   "outputShapeRounding": output_shape_rounding, "outputSizes": sizes_opt,
                   "label": label or None}
        return self._emit1(op, (x,), options, x.data_type, shape)

    def average_pool2d(self, input: MLOperand, *,
                       window_dimensions: Sequence[int] | None = None,
                       padding: Sequence[int] | None = None,
                       strides: Sequence[int] | None = None,
                       dilations: Sequence[int] | None = None, layout: str = "nchw",
                       output_shape_rounding: str = "floor",
                       output_sizes: Sequence[int] | None = None,
                       label: str = "") -> MLOperand:
        """Mean over each window of real (non-padding) cells; float32/float16 only."""
        return self._pool("averagePool2d", input, window_dimensions, padding, strides,
                          dilations, layout, output_shape_rounding, output_sizes, label)

    def l2_pool2d(self, input: MLOperand, *,
                  window_dimensions: Sequence[int] | None = None,
                  padding: Sequence[int] | None = None,
                  strides: Sequence[int] | None = None,
                  dilations: Sequence[int] | None = None, layout: str = "nchw",
                  output_shape_rounding: str = "floor",
                  output_sizes: Sequence[int] | None = None, label: str = "") -> MLOperand:
        """`sqrt(sum(x^2))` over each window (not the root mean square); float32/float16."""
        return self._pool("l2Pool2d", input, window_dimensions, padding, strides, dilations,
                          layout, output_shape_rounding, output_sizes, label)

    def max_pool2d(self, input: MLOperand, *,
                   window_dimensions: Sequence[int] | None = None,
                   padding: Sequence[int] | None = None,
                   strides: Sequence[int] | None = None,
                   dilations: Sequence[int] | None = None, layout: str = "nchw",
                   output_shape_rounding: str = "floor",
                   output_sizes: Sequence[int] | None = None,
                   label: str = "") -> MLOperand:
        """Maximum over each window of real cells; any data type."""
        return self._pool("maxPool2d", input, window_dimensions, padding, strides, dilations,
                          layout, output_shape_rounding, output_sizes, label)
