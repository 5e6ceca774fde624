"""onnxruntime's channels-last ops (com.microsoft) -> transpose + the channels-first WebNN op
+ transpose.

- NhwcConv (the transformers optimizer's FusionNhwcConv, for diffusion UNets/VAEs): Conv on
  an (N, spatial..., C) input with an (M, kernel..., C/group) filter, giving
  (N, spatial..., M); the Conv attributes as ONNX Conv.
- NhwcFusedConv: NhwcConv + the optional Z (sum, channels-last) input + FusedConv's
  `activation` / `activation_params`.
- NhwcMaxPool (onnxruntime's NHWC transformer, int8/uint8): ONNX MaxPool (kernel_shape,
  strides, pads / auto_pad, dilations, ceil_mode) on an (N, spatial..., C) input.
- QLinearConv (com.microsoft, from onnxruntime's NHWC transformer): ONNX QLinearConv with the
  `channels_last` attribute (1: input and output (N, spatial..., C); the filter stays OIHW).
Input, filter and output are transposed to channels-first around the WebNN op; the
converter's layout passes (the default target's NHWC rules) cancel the transposes where they
meet.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import attr_int, check_arity, float_operand
from op_mappings.onnx.contrib._quant_common import quantized_input
from op_mappings.onnx.contrib.fused_conv import fused_conv_operands
from op_mappings.onnx.pool import pool
from op_mappings.onnx.quantize import qlinear_conv as standard_qlinear_conv

MS = "com.microsoft"


def to_channels_first(ctx: ImportContext, x: Any) -> Any:
    """(N, spatial..., C) -> (N, C, spatial...)."""
    return ctx.builder.transpose(x, permutation=[0, x.rank - 1, *range(1, x.rank - 1)])


def to_channels_last(ctx: ImportContext, y: Any) -> Any:
    """(N, C, spatial...) -> (N, spatial..., C)."""
    return ctx.builder.transpose(y, permutation=[0, *range(2, y.rank), 1])


def _check_rank(node: Node, x: Any, what: str = "X") -> None:
    if x.rank not in (3, 4):
        raise InvalidModel(f"{node.op_type} {what} must be 3-D or 4-D (1 or 2 spatial axes), "
                           f"got shape {list(x.shape)}")


def _nhwc_conv(ctx: ImportContext, node: Node, fused: bool) -> Outputs:
    check_arity(node, (2, 4 if fused else 3))
    x = float_operand(ctx, node, 0, "X")
    w = float_operand(ctx, node, 1, "W")
    _check_rank(node, x)
    if w.rank != x.rank:
        raise InvalidModel(f"{node.op_type} W must have X's rank {x.rank}, got shape "
                           f"{list(w.shape)}")
    bias = float_operand(ctx, node, 2, "B") if node.input(2) else None
    z = float_operand(ctx, node, 3, "Z") if node.input(3) else None
    if z is not None:
        _check_rank(node, z, "Z")
    y = fused_conv_operands(ctx, node, to_channels_first(ctx, x), to_channels_first(ctx, w),
                            bias, None if z is None else to_channels_first(ctx, z))
    return [to_channels_last(ctx, y)]


@onnx_op("NhwcConv", since=1, domain=MS)
def nhwc_conv(ctx: ImportContext, node: Node) -> Outputs:
    """Conv on channels-last X and an (M, kernel..., C/group) filter (see the module
    docstring). Restrictions: float32/float16; 1 or 2 spatial axes."""
    return _nhwc_conv(ctx, node, False)


@onnx_op("NhwcFusedConv", since=1, domain=MS)
def nhwc_fused_conv(ctx: ImportContext, node: Node) -> Outputs:
    """activation(NhwcConv(X, W, B) + Z) (see the module docstring).
    Restrictions: float32/float16; 1 or 2 spatial axes; Z of the output's shape; FusedConv's
    activations."""
    return _nhwc_conv(ctx, node, True)


def _with_operand(ctx: ImportContext, node: Node, x: MLOperand, fn: Any, **changes: Any
                  ) -> Any:
    """fn(ctx, node') where node' reads operand `x` as its input 0 (standard handlers read
    their inputs by name)."""
    key = f"{node.name}\x00channels_first"
    ctx.operands[key] = x
    try:
        return fn(ctx, replace(node, inputs=(key, *node.inputs[1:]), **changes))[0]
    finally:
        del ctx.operands[key]


@onnx_op("NhwcMaxPool", since=1, domain=MS)
def nhwc_max_pool(ctx: ImportContext, node: Node) -> Outputs:
    """ONNX MaxPool on a channels-last input (see the module docstring).
    Restrictions: 1 or 2 spatial axes; int8/uint8 (onnxruntime's types) or float."""
    check_arity(node, (1, 1))
    x = ctx.operand(node.inputs[0])
    _check_rank(node, x)
    if "kernel_shape" not in node.attrs:
        raise InvalidModel("NhwcMaxPool required attribute 'kernel_shape' is missing")
    attrs = {"auto_pad": "NOTSET", "ceil_mode": 0, "storage_order": 0, **node.attrs}
    y = _with_operand(ctx, node, to_channels_first(ctx, x), pool, op_type="MaxPool",
                      domain="", version=12, attrs=attrs, outputs=node.outputs[:1])
    return [to_channels_last(ctx, y)]


@onnx_op("QLinearConv", since=1, domain=MS)
def qlinear_conv(ctx: ImportContext, node: Node) -> Outputs:
    """ONNX QLinearConv with `channels_last` (see the module docstring).
    Restrictions: those of ONNX QLinearConv (1 or 2 spatial axes; per-tensor x / y and
    per-tensor or per-channel w parameters)."""
    check_arity(node, (8, 9))
    last = attr_int(node, "channels_last", 0)
    if last not in (0, 1):
        raise InvalidModel(f"QLinearConv channels_last must be 0 or 1, got {last}")
    attrs = {"auto_pad": "NOTSET", "group": 1,
             **{k: v for k, v in node.attrs.items() if k != "channels_last"}}
    std: dict[str, Any] = {"domain": "", "version": 10, "attrs": attrs}
    if not last:
        return standard_qlinear_conv(ctx, replace(node, **std))
    x = quantized_input(ctx, node, 0, "x")
    _check_rank(node, x, "x")
    y = _with_operand(ctx, node, to_channels_first(ctx, x), standard_qlinear_conv, **std)
    return [to_channels_last(ctx, y)]
