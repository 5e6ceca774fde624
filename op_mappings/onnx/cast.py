"""ONNX Cast, CastLike -> WebNN cast.

Cast to BOOL is notEqual(x, 0) (uint8 inside the graph); from BOOL it is a cast of the uint8
0/1 values. Cast to DOUBLE produces float32 (with a warning). Casting to the same type is a
no-op. `saturate` and `round_mode` only concern float8 types, which are not supported.
Restrictions: targets are WebNN's types plus BOOL and DOUBLE; float -> int out of range
differs between backends (both truncate toward zero in range).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.frontends.onnx.tensors import dtype_name
from converter.importer import ImportContext
from converter.ir import Node
from converter.webnn.dtypes import carrier_type
from op_mappings.onnx import onnx_op


def cast_to(ctx: ImportContext, x: Any, target: str) -> Any:
    """Emit a cast of operand x to the ONNX dtype `target`."""
    inner = carrier_type(target)
    if inner is None:
        raise ctx.unsupported(f"cast to {target} is not supported (WebNN has no {target})")
    if target == "float64":
        ctx.warn("cast to float64 computes in float32")
    if target == "bool":
        if x.data_type == "uint8":  # could already be a bool: normalise anyway
            return ctx.builder.not_equal(x, ctx.constant(np.array(0, np.uint8)))
        return ctx.builder.not_equal(x, ctx.constant(np.array(0, x.data_type)))
    if x.data_type == inner:
        return x
    return ctx.builder.cast(x, inner)


@onnx_op("Cast", since=6)
def cast(ctx: ImportContext, node: Node) -> list[Any]:
    return [cast_to(ctx, ctx.operand(node.inputs[0]), dtype_name(node.attrs["to"]))]


@onnx_op("CastLike", since=15)
def cast_like(ctx: ImportContext, node: Node) -> list[Any]:
    target = ctx.dtype(node.inputs[1])
    return [cast_to(ctx, ctx.operand(node.inputs[0]), target)]
