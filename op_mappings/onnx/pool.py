"""ONNX MaxPool, AveragePool, LpPool, GlobalAveragePool, GlobalMaxPool, GlobalLpPool ->
WebNN maxPool2d / averagePool2d / l2Pool2d.

- auto_pad -> explicit padding; 1-D pools are lifted to 2-D.
- ceil_mode: ONNX drops a last window that would start in the end padding, WebNN's ceil
  formula does not; so the ONNX output size is computed and reached with floor rounding and
  extra end padding (padding never contributes to max/average/L2).
- AveragePool count_include_pad = 1: explicit zero `pad` then pooling without padding.
Restrictions: MaxPool's Indices output and storage_order = 1 are not supported; LpPool only
p = 2; 1-D or 2-D spatial; average/L2 pools take float32/float16.
"""

from __future__ import annotations

import math
from typing import Any

from converter.formats.onnx import Node
from converter.importer import ImportContext
from op_mappings.onnx import onnx_op
from op_mappings.onnx._spatial import check_spatial_rank, resolve_pads, webnn_padding
from op_mappings.onnx._util import ints

_METHODS = {"MaxPool": "max_pool2d", "AveragePool": "average_pool2d", "LpPool": "l2_pool2d",
            "GlobalMaxPool": "max_pool2d", "GlobalAveragePool": "average_pool2d",
            "GlobalLpPool": "l2_pool2d"}


def _lift(ctx: ImportContext, x: Any) -> tuple[Any, bool]:
    if x.rank == 3:
        return ctx.builder.reshape(x, [*x.shape, 1]), True
    return x, False


def _drop(ctx: ImportContext, y: Any, lifted: bool) -> Any:
    return ctx.builder.reshape(y, list(y.shape[:-1])) if lifted else y


@onnx_op(("MaxPool", "AveragePool", "LpPool"), since=1)
def pool(ctx: ImportContext, node: Node) -> list[Any]:
    a = node.attrs
    if node.op_type == "MaxPool" and (len(node.outputs) > 1 and node.outputs[1]):
        raise ctx.unsupported("MaxPool's Indices output is not supported")
    if a.get("storage_order", 0):
        raise ctx.unsupported("storage_order = 1 is not supported")
    if node.op_type == "LpPool" and int(a.get("p", 2)) != 2:
        raise ctx.unsupported(f"LpPool p = {a['p']} is not supported (only p = 2)")
    x = ctx.operand(node.inputs[0])
    check_spatial_rank(node.op_type, x.rank)
    n = x.rank - 2
    kernel = ints(a["kernel_shape"])
    strides = ints(a["strides"]) if "strides" in a else [1] * n
    dilations = ints(a["dilations"]) if "dilations" in a else [1] * n
    in_sizes = list(x.shape[2:])
    pads = resolve_pads(a.get("auto_pad", "NOTSET"), in_sizes, kernel, strides, dilations,
                        ints(a["pads"]) if "pads" in a else None)
    if a.get("ceil_mode", 0):
        if node.op_type == "AveragePool" and a.get("count_include_pad", 0):
            raise ctx.unsupported("ceil_mode with count_include_pad = 1 is not supported")
        adjusted = []
        for i in range(n):
            dk = (kernel[i] - 1) * dilations[i] + 1
            pb, pe = pads[i]
            out = math.ceil((in_sizes[i] + pb + pe - dk) / strides[i]) + 1
            if (out - 1) * strides[i] >= in_sizes[i] + pb:
                out -= 1
            adjusted.append((pb, max(pe, (out - 1) * strides[i] + dk - in_sizes[i] - pb)))
        pads = adjusted
    b = ctx.builder
    if node.op_type == "AveragePool" and a.get("count_include_pad", 0) and any(
            v for p in pads for v in p):
        x = b.pad(x, [0, 0, *(p[0] for p in pads)], [0, 0, *(p[1] for p in pads)])
        pads = [(0, 0)] * n
    x, lifted = _lift(ctx, x)
    if lifted:
        kernel, strides, dilations, pads = ([*kernel, 1], [*strides, 1], [*dilations, 1],
                                            [*pads, (0, 0)])
    y = getattr(b, _METHODS[node.op_type])(x, window_dimensions=kernel,
                                           padding=webnn_padding(pads), strides=strides,
                                           dilations=dilations)
    return [_drop(ctx, y, lifted)]


@onnx_op(("GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"), since=1)
def global_pool(ctx: ImportContext, node: Node) -> list[Any]:
    if node.op_type == "GlobalLpPool" and int(node.attrs.get("p", 2)) != 2:
        raise ctx.unsupported(f"GlobalLpPool p = {node.attrs['p']} is not supported")
    x = ctx.operand(node.inputs[0])
    check_spatial_rank(node.op_type, x.rank)
    x, lifted = _lift(ctx, x)
    y = getattr(ctx.builder, _METHODS[node.op_type])(x)
    return [_drop(ctx, y, lifted)]
