"""CONV_3D and CONV_3D_TRANSPOSE (NDHWC) -> WebNN conv2d / convTranspose2d over H and W with
the kernel depth folded into channels (WebNN has no 3-D convolution).

CONV_3D (x [N, D, H, W, C], filter [KD, KH, KW, C, O], bias [O]?): pad D (SAME, odd cell at
the end, dilated kernel); for each depth tap kd take the strided depth slice
x[:, kd·dd :: sd] ([N, Do, H, W, C]); concat the KD slices on channels, reshape to
[N·Do, H, W, KD·C] and run one conv2d (NHWC, filter reshaped to HWIO [KH, KW, KD·C, O] in
tap-major order) with the H/W padding, strides and dilations; reshape to
[N, Do, Ho, Wo, O]; fused activation.

CONV_3D_TRANSPOSE (output_shape [5], filter [KD, KH, KW, O, C], x [N, D, H, W, C], bias?):
one convTranspose2d over H/W for all depth taps at once (filter as "hwoi"
[KH, KW, KD·O, C]), giving [N·D, OH, OW, KD·O]; the depth scatter
out[od] = Σ {z[id, kd] : od = id·sd + kd·dd − pad_front} is a matmul with a constant 0/1
matrix [OD, D·KD]; then bias and fused activation. Padding: LiteRT's SAME formula with the
requested output as the forward input.

Constant filters are rearranged at conversion time, computed ones with transpose/reshape.
Restrictions: float (LiteRT has no quantized 3-D convolutions); no grouped convolution
(filter in-channels must equal the input's); output_shape must be constant.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.padding import same_pad
from op_mappings.tflite import tflite_op
from op_mappings.tflite._recurrent import Weight, operand, weight
from op_mappings.tflite._util import (
    SAME,
    VALID,
    activation,
    const_ints,
    fin,
    fout,
)


def _geometry(a: Mapping[str, Any]) -> tuple[int, list[int], list[int]]:
    padding = int(a["padding"])
    if padding not in (SAME, VALID):
        raise UnsupportedAttribute(f"padding {padding} is not SAME or VALID")
    strides = [int(a["stride_d"]), int(a["stride_h"]), int(a["stride_w"])]
    dil = [int(a["dilation_d_factor"]), int(a["dilation_h_factor"]),
           int(a["dilation_w_factor"])]
    if min(strides) < 1 or min(dil) < 1:
        raise InvalidModel(f"strides {strides} and dilations {dil} must be >= 1")
    return padding, strides, dil


def _pads(padding: int, size: int, k: int, s: int, d: int) -> tuple[int, int]:
    return same_pad(size, k, s, d) if padding == SAME else (0, 0)


def _rearrange(ctx: ImportContext, w: Weight, shape: list[int]) -> MLOperand:
    """[KD, KH, KW, A, B] -> [KH, KW, KD, A, B] -> `shape`."""
    if isinstance(w, np.ndarray):
        return ctx.constant(np.ascontiguousarray(w.transpose(1, 2, 0, 3, 4)).reshape(shape))
    b = ctx.builder
    return b.reshape(b.transpose(w, permutation=[1, 2, 0, 3, 4]), shape)


def _filter(ctx: ImportContext, node: Node, i: int) -> tuple[Weight, list[int]]:
    w = weight(ctx, node, i)
    if w is None:
        raise InvalidModel("the filter is required")
    shape = [int(d) for d in w.shape]
    if len(shape) != 5:
        raise InvalidModel(f"filter has shape {shape}, expected 5-D")
    return w, shape


def _input(ctx: ImportContext, node: Node, i: int) -> MLOperand:
    x = fin(ctx, node, i)
    assert x is not None
    if len(x.shape) != 5:
        raise InvalidModel(f"input has shape {list(x.shape)}, expected 5-D (NDHWC)")
    return x


def _bias(ctx: ImportContext, node: Node, i: int, channels: int) -> MLOperand | None:
    if len(node.inputs) <= i or not node.input(i):
        return None
    bias = weight(ctx, node, i)
    assert bias is not None
    if [int(d) for d in bias.shape] != [channels]:
        raise InvalidModel(f"bias has shape {list(bias.shape)}, expected [{channels}]")
    return operand(ctx, bias)


@tflite_op("CONV_3D", since=1)
def conv_3d(ctx: ImportContext, node: Node) -> Outputs:
    """Depth taps folded into channels + one conv2d. Restrictions: float; no grouped 3-D
    convolution."""
    b = ctx.builder
    a = node.attrs
    padding, (sd, sh, sw), (dd, dh, dw) = _geometry(a)
    x = _input(ctx, node, 0)
    w, (kd, kh, kw, ci, co) = _filter(ctx, node, 1)
    n, depth, h, wd, c = x.shape
    if ci != c:
        raise InvalidModel(f"filter in-channels {ci} differ from the input's {c} (grouped 3-D "
                           "convolution is not supported)")
    bias = _bias(ctx, node, 2, co)
    pf, pb = _pads(padding, depth, kd, sd, dd)
    span = depth + pf + pb - (kd - 1) * dd
    if span < 1:
        raise InvalidModel(f"kernel depth {kd} (dilation {dd}) exceeds the input depth {depth}")
    out_d = (span - 1) // sd + 1
    if pf or pb:
        x = b.pad(x, [0, pf, 0, 0, 0], [0, pb, 0, 0, 0])
    taps = []
    for t in range(kd):
        if kd == 1 and sd == 1 and x.shape[1] == out_d:
            taps.append(x)
            continue
        taps.append(b.slice(x, [0, t * dd, 0, 0, 0], [n, (out_d - 1) * sd + 1, h, wd, c],
                            strides=[1, sd, 1, 1, 1]))
    stacked = taps[0] if kd == 1 else b.concat(taps, 4)
    x2 = b.reshape(stacked, [n * out_d, h, wd, kd * c])
    w2 = _rearrange(ctx, w, [kh, kw, kd * c, co])
    pad_h, pad_w = _pads(padding, h, kh, sh, dh), _pads(padding, wd, kw, sw, dw)
    y = b.conv2d(x2, w2, padding=[*pad_h, *pad_w], strides=[sh, sw], dilations=[dh, dw],
                 input_layout="nhwc", filter_layout="hwio", bias=bias)
    y = b.reshape(y, [n, out_d, *y.shape[1:]])
    return [fout(ctx, node, 0, activation(ctx, y, a["fused_activation_function"]))]


@tflite_op("CONV_3D_TRANSPOSE", since=1, const_inputs=(0,))
def conv_3d_transpose(ctx: ImportContext, node: Node) -> Outputs:
    """convTranspose2d over H/W for every depth tap + a 0/1 matmul scattering along depth.
    Restrictions: constant output_shape; float; no grouped convolution."""
    b = ctx.builder
    a = node.attrs
    padding, (sd, sh, sw), (dd, dh, dw) = _geometry(a)
    shape = const_ints(ctx, node, 0)
    w, (kd, kh, kw, co, ci) = _filter(ctx, node, 1)
    x = _input(ctx, node, 2)
    n, depth, h, wd, c = x.shape
    if len(shape) != 5 or shape[0] != n or shape[4] != co:
        raise InvalidModel(f"output_shape {shape} does not fit input {list(x.shape)} and "
                           f"filter {[kd, kh, kw, co, ci]}")
    if ci != c:
        raise InvalidModel(f"filter in-channels {ci} differ from the input's {c}")
    out_d, out_h, out_w = shape[1:4]
    bias = _bias(ctx, node, 3, co)
    pads = [_pads(padding, size, k, s, d) for size, k, s, d in
            ((out_d, kd, sd, dd), (out_h, kh, sh, dh), (out_w, kw, sw, dw))]
    w2 = _rearrange(ctx, w, [kh, kw, kd * co, c])
    z = b.conv_transpose2d(b.reshape(x, [n * depth, h, wd, c]), w2,
                           padding=[*pads[1], *pads[2]], strides=[sh, sw], dilations=[dh, dw],
                           output_sizes=[out_h, out_w], input_layout="nhwc",
                           filter_layout="hwoi")
    plane = out_h * out_w
    z = b.reshape(z, [n, depth, plane, kd, co])
    z = b.reshape(b.transpose(z, permutation=[0, 1, 3, 2, 4]), [n, depth * kd, plane * co])
    scatter = np.zeros((out_d, depth, kd), np.float32)
    for t in range(kd):
        od = np.arange(depth) * sd + t * dd - pads[0][0]
        ok = (od >= 0) & (od < out_d)
        scatter[od[ok], np.arange(depth)[ok], t] = 1.0
    m = ctx.constant(scatter.reshape(out_d, depth * kd).astype(z.data_type))
    y = b.reshape(b.matmul(m, z), [n, out_d, out_h, out_w, co])
    if bias is not None:
        y = b.add(y, bias)
    return [fout(ctx, node, 0, activation(ctx, y, a["fused_activation_function"]))]
