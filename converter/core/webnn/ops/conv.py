"""MLGraphBuilder operators: conv2d and convTranspose2d (spec 2.6, 2.7).

Restrictions (spec): input, filter and output are 4-D float32/float16 tensors of one data type;
bias is 1-D `[outputChannels]` of the same type. `padding` is `[beginH, endH, beginW, endW]`,
`strides` and `dilations` have two non-zero items, `groups` is non-zero. There is no autoPad
and no fused activation. Beyond the spec text, convTranspose2d also requires the input
channels to be divisible by `groups` (the grouped operation is undefined otherwise).

The shared spatial-option helpers here are also used by the pooling family (`pool.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from converter.core.webnn import validation as v
from converter.core.webnn.base import BuilderBase
from converter.core.webnn.dtypes import MAX_DIMENSION
from converter.core.webnn.operand import MLOperand

INPUT_LAYOUTS = ("nchw", "nhwc")
CONV2D_FILTER_LAYOUTS = ("oihw", "hwio", "ohwi", "ihwo")
CONV_TRANSPOSE2D_FILTER_LAYOUTS = ("iohw", "hwoi", "ohwi")


# -- shared spatial-option validation (conv2d, convTranspose2d, pools) -------------------------
def padding_option(op: str, padding: Any) -> list[int]:
    """`padding`: four unsigned integers `[beginH, endH, beginW, endW]` (default zeros)."""
    if padding is None:
        return [0, 0, 0, 0]
    return list(v.unsigned_list(op, "padding", padding, 4))


def nonzero_pair(op: str, what: str, values: Any) -> list[int]:
    """`strides` / `dilations`: two unsigned integers, none 0 (default `[1, 1]`)."""
    if values is None:
        return [1, 1]
    out = list(v.unsigned_list(op, what, values, 2))
    if 0 in out:
        raise v.fail(op, f"{what} {out} must not contain 0")
    return out


def spatial_axes(layout: str) -> tuple[int, int, int]:
    """(channel axis, height axis, width axis) of a 4-D tensor in `layout`."""
    return (1, 2, 3) if layout == "nchw" else (3, 1, 2)


def valid_output_size(op: str, what: str, size: int, detail: str) -> int:
    """An output spatial size must be a valid dimension."""
    if not 0 < size <= MAX_DIMENSION:
        raise v.fail(op, f"{what} ({size}) is not a valid dimension (1..{MAX_DIMENSION}): "
                         f"{detail}")
    return size


def conv_filter_dims(layout: str, shape: Sequence[int]) -> tuple[int, int, int, int]:
    """(outputChannels, filterInputChannels, height, width) of a conv2d filter."""
    a, b, c, d = shape
    return {"oihw": (a, b, c, d), "hwio": (d, c, a, b), "ohwi": (a, d, b, c),
            "ihwo": (d, a, b, c)}[layout]


def conv_transpose_filter_dims(layout: str, shape: Sequence[int]) -> tuple[int, int, int, int]:
    """(filterInputChannels, filterOutputChannels, height, width) of a convTranspose2d filter."""
    a, b, c, d = shape
    return {"iohw": (a, b, c, d), "hwoi": (d, c, a, b), "ohwi": (d, a, b, c)}[layout]


class ConvOps(BuilderBase):
    def _conv_common(self, op: str, input: Any, filter: Any, bias: Any, padding: Any,
                     strides: Any, dilations: Any, groups: Any, input_layout: Any,
                     filter_layout: Any, filter_layouts: tuple[str, ...]
                     ) -> tuple[MLOperand, MLOperand, MLOperand | None, list[int], list[int],
                                list[int], int]:
        x = self._operand(op, "input", input)
        w = self._operand(op, "filter", filter)
        b = self._optional(op, "bias", bias)
        v.same_type(op, "filter", w.data_type, "input", x.data_type)
        v.enum(op, "inputLayout", input_layout, INPUT_LAYOUTS)
        v.enum(op, "filterLayout", filter_layout, filter_layouts)
        pad = padding_option(op, padding)
        st = nonzero_pair(op, "strides", strides)
        dil = nonzero_pair(op, "dilations", dilations)
        g = v.unsigned(op, "groups", groups)
        if g == 0:
            raise v.fail(op, "groups must not be 0")
        return x, w, b, pad, st, dil, g

    def _check_bias(self, op: str, b: MLOperand | None, x: MLOperand, channels: int) -> None:
        if b is not None:
            v.same_shape(op, "bias", b.shape, (channels,))
            v.same_type(op, "bias", b.data_type, "input", x.data_type)

    def conv2d(self, input: MLOperand, filter: MLOperand, *,
               padding: Sequence[int] | None = None, strides: Sequence[int] | None = None,
               dilations: Sequence[int] | None = None, groups: int = 1,
               input_layout: str = "nchw", filter_layout: str = "oihw",
               bias: MLOperand | None = None, label: str = "") -> MLOperand:
        """2-D convolution.

        Filter layouts (O = output channels, I/g = input channels per group): oihw
        `[O, I/g, H, W]`, hwio `[H, W, I/g, O]`, ohwi `[O, H, W, I/g]`, ihwo `[I/g, H, W, O]`.
        Output size per spatial axis: `floor((in - ((k - 1) * d + 1) + padBegin + padEnd)
        / stride) + 1`, which must be a valid dimension. Input channels and output channels
        must both be divisible by `groups`.
        """
        op = "conv2d"
        x, w, b, pad, st, dil, g = self._conv_common(
            op, input, filter, bias, padding, strides, dilations, groups, input_layout,
            filter_layout, CONV2D_FILTER_LAYOUTS)
        c_axis, h_axis, w_axis = spatial_axes(input_layout)
        batches, in_c = x.shape[0], x.shape[c_axis]
        in_h, in_w = x.shape[h_axis], x.shape[w_axis]
        out_c, filter_in_c, k_h, k_w = conv_filter_dims(filter_layout, w.shape)
        if in_c % g:
            raise v.fail(op, f"input channels ({in_c}) / groups ({g}) is not an integer")
        if in_c // g != filter_in_c:
            raise v.fail(op, f"input channels ({in_c}) / groups ({g}) must equal the filter "
                             f"input channels ({filter_in_c}) of filter shape {list(w.shape)} "
                             f"({filter_layout})")
        if out_c % g:
            raise v.fail(op, f"output channels ({out_c}) / groups ({g}) is not an integer")
        self._check_bias(op, b, x, out_c)
        sizes = []
        for axis, size, k, p0, p1, s, d in (("height", in_h, k_h, pad[0], pad[1], st[0], dil[0]),
                                            ("width", in_w, k_w, pad[2], pad[3], st[1], dil[1])):
            eff = (k - 1) * d + 1
            out = (size - eff + p0 + p1) // s + 1
            sizes.append(valid_output_size(
                op, f"output {axis}", out,
                f"dilated filter {axis} {eff}, padded input {axis} {size + p0 + p1}, "
                f"stride {s}"))
        out_shape = ((batches, out_c, *sizes) if input_layout == "nchw"
                     else (batches, *sizes, out_c))
        options = {"padding": pad, "strides": st, "dilations": dil, "groups": g,
                   "inputLayout": input_layout, "filterLayout": filter_layout, "bias": b,
                   "label": label or None}
        return self._emit1(op, (x, w), options, x.data_type, out_shape)

    def conv_transpose2d(self, input: MLOperand, filter: MLOperand, *,
                         padding: Sequence[int] | None = None,
                         strides: Sequence[int] | None = None,
                         dilations: Sequence[int] | None = None,
                         output_padding: Sequence[int] | None = None,
                         output_sizes: Sequence[int] | None = None, groups: int = 1,
                         input_layout: str = "nchw", filter_layout: str = "iohw",
                         bias: MLOperand | None = None, label: str = "") -> MLOperand:
        """2-D transposed convolution.

        Filter layouts (I = input channels, O/g = output channels per group): iohw
        `[I, O/g, H, W]`, hwoi `[H, W, O/g, I]`, ohwi `[O/g, H, W, I]`; output channels are
        `O/g * groups`. `calc = (in - 1) * stride + (k - 1) * d + 1 - padBegin - padEnd`; the
        output size is `calc + outputPadding` (each outputPadding item < its stride), or
        `outputSizes` (which then must lie in `[calc, calc + stride)`, and outputPadding is
        ignored). Input channels must equal the filter's and be divisible by `groups`.
        """
        op = "convTranspose2d"
        x, w, b, pad, st, dil, g = self._conv_common(
            op, input, filter, bias, padding, strides, dilations, groups, input_layout,
            filter_layout, CONV_TRANSPOSE2D_FILTER_LAYOUTS)
        out_pad = ([0, 0] if output_padding is None
                   else list(v.unsigned_list(op, "outputPadding", output_padding, 2)))
        sizes_opt = (None if output_sizes is None
                     else list(v.unsigned_list(op, "outputSizes", output_sizes, 2)))
        if sizes_opt is None and (out_pad[0] >= st[0] or out_pad[1] >= st[1]):
            raise v.fail(op, f"outputPadding {out_pad} must be smaller than strides {st}")
        c_axis, h_axis, w_axis = spatial_axes(input_layout)
        batches, in_c = x.shape[0], x.shape[c_axis]
        in_h, in_w = x.shape[h_axis], x.shape[w_axis]
        filter_in_c, filter_out_c, k_h, k_w = conv_transpose_filter_dims(filter_layout, w.shape)
        if in_c != filter_in_c:
            raise v.fail(op, f"input channels ({in_c}) must equal the filter input channels "
                             f"({filter_in_c}) of filter shape {list(w.shape)} "
                             f"({filter_layout})")
        out_c = filter_out_c * g
        if out_c > MAX_DIMENSION:
            raise v.fail(op, f"output channels ({filter_out_c} * groups {g} = {out_c}) is not "
                             "a valid dimension")
        if in_c % g:
            raise v.fail(op, f"input channels ({in_c}) / groups ({g}) is not an integer")
        self._check_bias(op, b, x, out_c)
        sizes = []
        for i, (axis, size, k, p0, p1, s, d) in enumerate(
                (("height", in_h, k_h, pad[0], pad[1], st[0], dil[0]),
                 ("width", in_w, k_w, pad[2], pad[3], st[1], dil[1]))):
            calc = (size - 1) * s + (k - 1) * d + 1 - p0 - p1
            if sizes_opt is not None:
                out = sizes_opt[i]
                if not calc <= out < calc + s:
                    raise v.fail(op, f"outputSizes {axis} ({out}) must lie in [{calc}, "
                                     f"{calc + s}) (calculated size {calc}, stride {s})")
            else:
                out = calc + out_pad[i]
            sizes.append(valid_output_size(
                op, f"output {axis}", out,
                f"(in {size} - 1) * stride {s} + dilated filter {(k - 1) * d + 1} - padding "
                f"{p0 + p1}"))
        out_shape = ((batches, out_c, *sizes) if input_layout == "nchw"
                     else (batches, *sizes, out_c))
        options = {"padding": pad, "strides": st, "dilations": dil, "outputPadding": out_pad,
                   "outputSizes": sizes_opt, "groups": g, "inputLayout": input_layout,
                   "filterLayout": filter_layout, "bias": b, "label": label or None}
        return self._emit1(op, (x, w), options, x.data_type, out_shape)
