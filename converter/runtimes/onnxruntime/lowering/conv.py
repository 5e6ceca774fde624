"""ONNX lowerings: conv2d, convTranspose2d, averagePool2d, l2Pool2d, maxPool2d.

Restrictions and notes:
- "nhwc" inputs are transposed to NCHW and back; filters are transposed to OIHW (conv2d) or
  IOHW (convTranspose2d), at export time when the filter is a constant.
- Convolutions, averagePool2d and l2Pool2d compute in float32 (float16 lifted, rounded once).
- convTranspose2d: explicit pads plus `output_padding = output size − calculated size`
  (covers both `outputPadding` and `outputSizes`).
- Pools never see padding: the WebNN output size (floor or ceil rounding, or outputSizes) is
  reproduced with floor-mode ONNX pools and explicit end padding. averagePool2d excludes
  padded cells (count_include_pad = 0); l2Pool2d is LpPool p = 2. When a padding is not
  smaller than the window (onnxruntime pools reject it) the window sums come from a
  depthwise Conv with a ones filter, divided by the statically known count of real cells
  (average) or square-rooted after squaring the input (l2). maxPool2d uses MaxPool for
  float32/float16/int8/uint8 and otherwise (other types, or such padding) a maximum over
  the window taps (strided Slices) of the input padded with the type's lowest value. A window without any real
  cell yields 0, as in the reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.webnn.operand import MLOperand, Operation
from converter.runtimes.onnxruntime.lowering.context import Emitter, constant_value, lowering

F32 = "float32"
_TO_OIHW = {"oihw": (0, 1, 2, 3), "hwio": (3, 2, 0, 1), "ohwi": (0, 3, 1, 2),
            "ihwo": (3, 0, 1, 2)}
_TO_IOHW = {"iohw": (0, 1, 2, 3), "hwoi": (3, 2, 0, 1), "ohwi": (3, 0, 1, 2)}
_MAXPOOL_TYPES = {"float32", "float16", "int8", "uint8"}


def _filter(e: Emitter, w: MLOperand, perm: tuple[int, ...]) -> str:
    if w.kind == "constant" and w.data_type == F32 and perm == tuple(range(len(perm))):
        return e.value(w)  # already an initializer in the right layout: no copy
    value = constant_value(w)
    if value is not None:
        return e.const(np.transpose(value, perm), F32, "filter")
    return e.transpose(e.input(w, F32), perm)


def _nchw(e: Emitter, x: MLOperand, nhwc: bool, data_type: str | None = F32) -> str:
    v = e.input(x, data_type)
    return e.transpose(v, [0, 3, 1, 2]) if nhwc else v


def _finish(e: Emitter, y: str, nhwc: bool, out: str) -> list[str]:
    if nhwc:
        y = e.transpose(y, [0, 2, 3, 1])
    return [e.cast(y, out)]


def _onnx_pads(padding: list[int]) -> list[int]:
    """WebNN [beginH, endH, beginW, endW] → ONNX [beginH, beginW, endH, endW]."""
    return [int(padding[0]), int(padding[2]), int(padding[1]), int(padding[3])]


@lowering("conv2d")
def conv2d(e: Emitter, op: Operation) -> list[str]:
    """ONNX Conv; a 1-D Conv (operand reshaped around it) when one spatial axis is trivial
    (input and window size 1, no padding), as converted Conv1d layers have: onnxruntime
    runs that faster than a 2-D Conv with a unit axis."""
    x, w = op.args
    o = op.options
    out = op.outputs[0].data_type
    nhwc = o["inputLayout"] == "nhwc"
    filt = _filter(e, w, _TO_OIHW[o["filterLayout"]])
    xv = _nchw(e, x, nhwc)
    pads = _onnx_pads(o["padding"])
    strides = [int(s) for s in o["strides"]]
    dilations = [int(d) for d in o["dilations"]]
    in_hw = x.shape[1:3] if nhwc else x.shape[2:4]
    out_shape = op.outputs[0].shape
    out_nchw = [out_shape[0], out_shape[3], out_shape[1], out_shape[2]] if nhwc else list(
        out_shape)
    k_hw = np.empty(w.shape).transpose(_TO_OIHW[o["filterLayout"]]).shape[2:]
    keep = None
    for axis in (1, 0):  # the spatial axis kept by a 1-D convolution
        gone = 1 - axis
        if in_hw[gone] == 1 and k_hw[gone] == 1 and pads[gone] == 0 and pads[gone + 2] == 0:
            keep = axis
            break
    if keep is not None:
        n, c = (x.shape[0], x.shape[3]) if nhwc else x.shape[:2]
        xv = e.reshape(xv, [n, c, in_hw[keep]])
        oi = np.empty(w.shape).transpose(_TO_OIHW[o["filterLayout"]]).shape[:2]
        value = constant_value(w)
        filt = (e.const(np.transpose(value, _TO_OIHW[o["filterLayout"]]).reshape(
            *oi, k_hw[keep]), F32, "filter") if value is not None
            else e.reshape(filt, [*oi, k_hw[keep]]))
        pads, strides, dilations = [pads[keep], pads[keep + 2]], [strides[keep]], [
            dilations[keep]]
    inputs = [xv, filt]
    if o.get("bias") is not None:
        inputs.append(e.input(o["bias"], F32))
    y = e.node("Conv", inputs, F32, pads=pads, strides=strides, dilations=dilations,
               group=int(o["groups"]))
    if keep is not None:
        e.shapes[y] = (out_nchw[0], out_nchw[1], out_nchw[2 + keep])
        y = e.reshape(y, out_nchw)
    return _finish(e, y, nhwc, out)


@lowering("convTranspose2d")
def conv_transpose2d(e: Emitter, op: Operation) -> list[str]:
    x, w = op.args
    o = op.options
    out = op.outputs[0].data_type
    nhwc = o["inputLayout"] == "nhwc"
    perm = _TO_IOHW[o["filterLayout"]]
    kh, kw = np.empty(w.shape).transpose(perm).shape[2:]
    in_hw = x.shape[1:3] if nhwc else x.shape[2:4]
    out_hw = op.outputs[0].shape[1:3] if nhwc else op.outputs[0].shape[2:4]
    pad = o["padding"]
    extra = []
    for i, k in enumerate((kh, kw)):
        s, d = int(o["strides"][i]), int(o["dilations"][i])
        calc = (in_hw[i] - 1) * s + (k - 1) * d + 1 - pad[2 * i] - pad[2 * i + 1]
        extra.append(int(out_hw[i] - calc))
    inputs = [_nchw(e, x, nhwc), _filter(e, w, perm)]
    if o.get("bias") is not None:
        inputs.append(e.input(o["bias"], F32))
    y = e.node("ConvTranspose", inputs, F32, pads=_onnx_pads(pad),
               strides=[int(s) for s in o["strides"]],
               dilations=[int(d) for d in o["dilations"]], group=int(o["groups"]),
               output_padding=extra)
    return _finish(e, y, nhwc, out)


def _real_counts(size: int, k: int, begin: int, stride: int, dilation: int, out_len: int
                 ) -> np.ndarray:
    """Number of real (non-padding) cells of each window along one axis."""
    pos = np.arange(out_len)[:, None] * stride - begin + np.arange(k)[None, :] * dilation
    counts: np.ndarray = ((pos >= 0) & (pos < size)).sum(axis=1)
    return counts


@lowering("averagePool2d", "l2Pool2d", "maxPool2d")
def pool2d(e: Emitter, op: Operation) -> list[str]:
    x = op.args[0]
    o = op.options
    out = op.outputs[0].data_type
    nhwc = o["layout"] == "nhwc"
    in_hw = x.shape[1:3] if nhwc else x.shape[2:4]
    out_hw = op.outputs[0].shape[1:3] if nhwc else op.outputs[0].shape[2:4]
    window = [int(k) for k in o["windowDimensions"]]
    strides = [int(s) for s in o["strides"]]
    dilations = [int(d) for d in o["dilations"]]
    begin = [int(o["padding"][0]), int(o["padding"][2])]
    end = [max(0, (out_hw[i] - 1) * strides[i] + (window[i] - 1) * dilations[i] + 1
               - in_hw[i] - begin[i]) for i in range(2)]
    counts = np.outer(*[_real_counts(in_hw[i], window[i], begin[i], strides[i], dilations[i],
                                     out_hw[i]) for i in range(2)])
    pads = [begin[0], begin[1], end[0], end[1]]
    attrs: dict[str, Any] = {"kernel_shape": window, "strides": strides,
                             "dilations": dilations}  # ONNX attributes, as Emitter.node's
    native = all(p < window[i % 2] for i, p in enumerate(pads))
    if op.op == "maxPool2d":
        ct = x.data_type
        xv = _nchw(e, x, nhwc, None)
        if native and ct in _MAXPOOL_TYPES:
            y = e.node("MaxPool", [xv], ct, pads=pads, **attrs)
        else:
            y = _max_taps(e, xv, ct, pads, window, strides, dilations, out_hw)
    elif native:
        ct = F32
        if (op.op == "averagePool2d" and window == list(in_hw) and dilations == [1, 1]
                and not any(pads)):
            # one window over the whole plane: the same mean, and onnxruntime fuses it
            y = e.node("GlobalAveragePool", [_nchw(e, x, nhwc)], ct)
        elif op.op == "l2Pool2d":
            y = e.node("LpPool", [_nchw(e, x, nhwc)], ct, p=2, pads=pads, **attrs)
        else:
            y = e.node("AveragePool", [_nchw(e, x, nhwc)], ct, pads=pads,
                       count_include_pad=0, **attrs)
    else:
        # Padding not smaller than the window (onnxruntime pools reject it, also after
        # fusing an explicit Pad): window sums as a depthwise Conv with a ones filter.
        ct = F32
        xv = _nchw(e, x, nhwc)
        if op.op == "l2Pool2d":
            xv = e.node("Mul", [xv, xv], ct)
        channels = x.shape[3] if nhwc else x.shape[1]
        ones = e.const(np.ones((channels, 1, *window)), ct, "window_ones")
        y = e.node("Conv", [xv, ones], ct, pads=pads, group=channels, **attrs)
        if op.op == "l2Pool2d":
            y = e.node("Sqrt", [y], ct)
        else:
            y = e.node("Div", [y, e.const(np.maximum(counts, 1), ct, "counts")], ct)
    if not counts.all():
        y = e.where(e.const(counts == 0, "bool", "empty_windows"), e.scalar(0, ct), y)
    return _finish(e, y, nhwc, out)


def _lowest(data_type: str) -> float | int:
    return -np.inf if data_type in ("float32", "float16") else int(
        np.iinfo(np.dtype(data_type)).min)


def _pad(e: Emitter, xv: str, pads: list[int], value: float | int) -> str:
    if not any(pads):
        return xv
    onnx_pads = [0, 0, pads[0], pads[1], 0, 0, pads[2], pads[3]]
    return e.node("Pad", [xv, e.ints(onnx_pads, "pads"), e.scalar(value, e.dtype(xv))],
                  e.dtype(xv), mode="constant")


def _max_taps(e: Emitter, xv: str, data_type: str, pads: list[int], window: list[int],
              strides: list[int], dilations: list[int], out_hw: tuple[int, ...]) -> str:
    """Max pooling as an element-wise Max over the window taps (strided Slices) of the input
    padded with the lowest value of its type: exact for every data type."""
    xp = _pad(e, xv, pads, _lowest(data_type))
    taps = []
    for i in range(window[0]):
        for j in range(window[1]):
            starts = [i * dilations[0], j * dilations[1]]
            ends = [starts[0] + (out_hw[0] - 1) * strides[0] + 1,
                    starts[1] + (out_hw[1] - 1) * strides[1] + 1]
            taps.append(e.node("Slice", [xp, e.ints(starts, "starts"), e.ints(ends, "ends"),
                                         e.ints([2, 3], "axes"), e.ints(strides, "steps")],
                               data_type))
    return taps[0] if len(taps) == 1 else e.node("Max", taps, data_type)
