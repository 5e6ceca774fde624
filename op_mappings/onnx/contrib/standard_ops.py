"""com.microsoft ops that are standard ONNX ops under onnxruntime's domain -> the standard
handlers.

onnxruntime registers these in com.microsoft for opsets (or types) the standard domain did
not have yet; each is converted by the standard ONNX handler of the equivalent op, with the
contrib schema's attribute defaults filled in (the reader fills none for this domain):
- QuantizeLinear / DequantizeLinear (onnxruntime's quantizer writes them in com.microsoft for
  int16/uint16/int4/uint4 QDQ models before opset 21, or with `UseQDQContribOps`): ONNX
  QuantizeLinear / DequantizeLinear 21 without block_size (`axis` default 1). A DequantizeLinear
  of a constant (int16 / uint16 weights included) folds to float at conversion time.
- GatherND: ONNX GatherND 11 (batch_dims 0). Pad: ONNX Pad 11 (pads and value inputs, `mode`
  default "constant"). Trilu: ONNX Trilu 14 (`upper` default 1). GridSample: ONNX GridSample 16
  (`mode` "bilinear", `padding_mode` "zeros", `align_corners` 0 by default; 4-D input).
- Range: start, limit and the optional delta (default 1), all constant: a constant.
- ExpandDims (an int32 scalar `axis` input, constant, in [-rank - 1, rank]): a reshape that
  inserts a dimension of 1 there.
- ConvTransposeWithDynamicPads: ONNX ConvTranspose with the pads read from a constant input.
- SampleOp (onnxruntime's sample echo op): the input itself.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import finite_scalar
from op_mappings._common.values import ints, norm_axis
from op_mappings.onnx import lookup, onnx_op
from op_mappings.onnx.contrib._common import attr_int, check_arity
from op_mappings.onnx.conv_transpose import conv_transpose
from op_mappings.onnx.range import constant_range

MS = "com.microsoft"

# op type -> (standard opset whose handler converts it, the contrib schema's defaults)
_STANDARD: dict[str, tuple[int, dict[str, Any]]] = {
    "QuantizeLinear": (21, {"axis": 1, "block_size": 0}),
    "DequantizeLinear": (21, {"axis": 1, "block_size": 0}),
    "GatherND": (11, {"batch_dims": 0}),
    "Pad": (11, {"mode": "constant"}),
    "Trilu": (14, {"upper": 1}),
    "GridSample": (16, {"mode": "bilinear", "padding_mode": "zeros", "align_corners": 0}),
}


def standard_node(node: Node) -> Node:
    """`node` as the standard ONNX node of the same op type (defaults filled in)."""
    version, defaults = _STANDARD[node.op_type]
    return replace(node, domain="", version=version, attrs={**defaults, **node.attrs})


def _convert(ctx: ImportContext, node: Node) -> Outputs:
    std = standard_node(node)
    handler = lookup(std.op_type, "", std.version)
    assert handler is not None  # every _STANDARD op has a standard handler
    return handler.fn(ctx, std)


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any] | None:
    """The standard handler's numpy fold, else None (the handler is replayed)."""
    std = standard_node(node)
    handler = lookup(std.op_type, "", std.version)
    if handler is None or not callable(handler.fold):
        return None
    out = handler.fold(ctx, std, values)
    return None if out is None else list(out)


def _fold_dequantize(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any] | None:
    """16-bit constants (no WebNN type) dequantized in numpy, per tensor or along `axis`;
    other types as the standard fold does."""
    x, scale = values[0], values[1]
    if x.dtype.name not in ("int16", "uint16"):
        return _fold(ctx, node, values)
    zp = values[2] if len(values) > 2 and values[2] is not None else np.zeros_like(scale, x.dtype)
    if scale.size != 1:
        axis = norm_axis(attr_int(node, "axis", 1), x.ndim)
        if scale.shape != (x.shape[axis],) or zp.shape != scale.shape:
            raise InvalidModel(f"DequantizeLinear scale {list(scale.shape)} and zero point "
                               f"{list(zp.shape)} do not fit axis {axis} of {list(x.shape)}")
        shape = [1] * x.ndim
        shape[axis] = -1
        scale, zp = scale.reshape(shape), zp.reshape(shape)
    y = (x.astype(np.float64) - zp.astype(np.float64)) * scale.astype(np.float64)
    return [y.astype(scale.dtype)]


def _no_blocks(node: Node) -> None:
    if "block_size" in node.attrs:
        raise InvalidModel(f"com.microsoft {node.op_type} has no block_size attribute")


@onnx_op("QuantizeLinear", since=1, domain=MS, fold=_fold)
def quantize_linear(ctx: ImportContext, node: Node) -> Outputs:
    """ONNX QuantizeLinear (axis default 1; per-tensor or per-axis).
    Restrictions: int8/uint8/int4/uint4 outputs (WebNN has no int16: the int16/uint16 forms
    convert only where every input is constant, folded at conversion time)."""
    check_arity(node, (2, 3))
    _no_blocks(node)
    return _convert(ctx, node)


@onnx_op("DequantizeLinear", since=1, domain=MS, fold=_fold_dequantize)
def dequantize_linear(ctx: ImportContext, node: Node) -> Outputs:
    """ONNX DequantizeLinear (axis default 1; per-tensor or per-axis).
    Restrictions: int8/uint8/int32/int4/uint4 computed inputs; int16/uint16 only as constants
    (folded to float at conversion time: WebNN has no int16)."""
    check_arity(node, (2, 3))
    _no_blocks(node)
    return _convert(ctx, node)


@onnx_op("GatherND", since=1, domain=MS)
def gather_nd(ctx: ImportContext, node: Node) -> Outputs:
    """ONNX GatherND (batch_dims 0). Restrictions: those of GatherND."""
    check_arity(node, (2, 2))
    return _convert(ctx, node)


@onnx_op("Pad", since=1, domain=MS, const_inputs=(1,))
def pad(ctx: ImportContext, node: Node) -> Outputs:
    """ONNX Pad 11 (constant pads; mode constant, reflect or edge).
    Restrictions: those of Pad; pads constant."""
    check_arity(node, (2, 3))
    return _convert(ctx, node)


@onnx_op("Trilu", since=1, domain=MS, const_inputs=(1,))
def trilu(ctx: ImportContext, node: Node) -> Outputs:
    """ONNX Trilu (upper default 1). Restrictions: k constant; rank >= 2."""
    check_arity(node, (1, 2))
    return _convert(ctx, node)


@onnx_op("GridSample", since=1, domain=MS)
def grid_sample(ctx: ImportContext, node: Node) -> Outputs:
    """ONNX GridSample 16 (mode bilinear / nearest / bicubic, padding_mode zeros / border /
    reflection, align_corners). Restrictions: those of GridSample; float32/float16."""
    check_arity(node, (2, 2))
    return _convert(ctx, node)


@onnx_op("Range", since=1, domain=MS, const_inputs=(0, 1, 2))
def range_(ctx: ImportContext, node: Node) -> Outputs:
    """start + i·delta for i < ceil((limit - start) / delta) (delta default 1), a constant.
    Restrictions: start, limit and delta constant; an empty range cannot enter the graph."""
    check_arity(node, (2, 3))
    start = finite_scalar(ctx, node, 0, "start")
    limit = finite_scalar(ctx, node, 1, "limit")
    delta = finite_scalar(ctx, node, 2, "delta") if node.input(2) else np.ones((), start.dtype)
    return [constant_range(ctx, start, limit, delta)]


@onnx_op("ExpandDims", since=1, domain=MS, const_inputs=(1,))
def expand_dims(ctx: ImportContext, node: Node) -> Outputs:
    """X with a dimension of 1 inserted at `axis` (a reshape).
    Restrictions: axis a constant scalar in [-rank - 1, rank]."""
    check_arity(node, (2, 2))
    x = ctx.operand(node.inputs[0])
    values = ints(ctx.const_input(node, 1), "ExpandDims axis")
    if len(values) != 1:
        raise InvalidModel(f"ExpandDims axis must be one value, got {len(values)}")
    axis = values[0]
    if not -x.rank - 1 <= axis <= x.rank:
        raise InvalidModel(f"ExpandDims axis {axis} is outside [{-x.rank - 1}, {x.rank}] for "
                           f"an input of rank {x.rank}")
    axis = axis + x.rank + 1 if axis < 0 else axis
    shape = list(x.shape)
    return [ctx.builder.reshape(x, shape[:axis] + [1] + shape[axis:])]


@onnx_op("ConvTransposeWithDynamicPads", since=1, domain=MS, const_inputs=(2,))
def conv_transpose_with_dynamic_pads(ctx: ImportContext, node: Node) -> Outputs:
    """ONNX ConvTranspose with its pads given as input 2 (int64 [2 · spatial]).
    Restrictions: those of ConvTranspose; Pads constant and given (onnxruntime's kernel
    requires it)."""
    check_arity(node, (3, 4))
    attrs = {"group": 1, **node.attrs, "auto_pad": "NOTSET",
             "pads": tuple(ints(ctx.const_input(node, 2), "ConvTransposeWithDynamicPads Pads"))}
    std = replace(node, op_type="ConvTranspose", domain="", version=11, attrs=attrs,
                  inputs=(node.inputs[0], node.inputs[1], node.input(3)))
    return conv_transpose(ctx, std)


@onnx_op("SampleOp", since=1, domain=MS)
def sample_op(ctx: ImportContext, node: Node) -> Outputs:
    """onnxruntime's sample echo operator: Y = X (no operation)."""
    check_arity(node, (1, 1))
    name = node.inputs[0]
    return [ctx.const_value(name) if ctx.is_constant(name) else ctx.operand(name)]
