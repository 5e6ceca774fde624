"""ONNX Cast, CastLike -> WebNN cast.

Cast to BOOL is notEqual(x, 0) (uint8 inside the graph); from BOOL it is a cast of the uint8
0/1 values. Cast to DOUBLE produces float32 (with a warning). Casting to the same type is a
no-op. `saturate` and `round_mode` only concern float8 types, which are not supported.
Folding: a Cast of a constant between two WebNN types is computed with numpy (`fold_cast`),
as the reference backend's cast computes it (anything -> float and int -> int with
`astype`: rounding to nearest, two's-complement wrapping; float -> int truncating toward
zero when every value is finite and in the target's range). The other constant Casts (to
or from BOOL or DOUBLE, float -> int with NaN, infinities or out-of-range values) fold by
replaying the handler on a scratch graph.

Restrictions: targets are WebNN's types plus BOOL and DOUBLE; float -> int out of range
differs between backends (both truncate toward zero in range).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.core.webnn.dtypes import carrier_type, dtype_name
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx._element_types import ONNX_DTYPES, elem_type_name


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


def fold_cast(ctx: ImportContext, node: Node, values: list[Any]) -> Any:
    """The folded value of a Cast of constant `values[0]` (see "Folding" in the module
    docstring), or NotImplemented when the importer should fold it by replaying the handler
    (casts to or from BOOL/DOUBLE or other non-WebNN types, float -> int with a NaN, an
    infinity or a value outside the target's range)."""
    x, to = values[0], node.attrs.get("to")
    target = ONNX_DTYPES.get(to) if isinstance(to, int) else None
    if target is None or not isinstance(x, np.ndarray):
        return NotImplemented
    source = dtype_name(x.dtype)
    if carrier_type(source) != source or carrier_type(target) != target or not x.size:
        return NotImplemented
    if source == target:
        return [x]
    ctx.check_constant(x.shape, target, "the folded value (cast) would take")
    dtype = np.dtype(target)
    if x.dtype.kind == "f" and dtype.kind in "iu":
        t = np.trunc(x.astype(np.float64))
        info = np.iinfo(dtype)
        # [min, max + 1) as float64 (max + 1 is a power of two, exact): in range, the
        # reference's clip and its int64 top saturation change nothing
        if not (np.isfinite(t).all() and t.min() >= float(info.min)
                and t.max() < float(info.max) + 1.0):
            return NotImplemented
        return [t.astype(dtype)]
    with np.errstate(over="ignore"):
        return [x.astype(dtype)]


@onnx_op("Cast", since=6, fold=fold_cast)
def cast(ctx: ImportContext, node: Node) -> Outputs:
    return [cast_to(ctx, ctx.operand(node.inputs[0]), elem_type_name(node.attrs["to"]))]


@onnx_op("CastLike", since=15)
def cast_like(ctx: ImportContext, node: Node) -> Outputs:
    target = ctx.dtype(node.inputs[1])
    return [cast_to(ctx, ctx.operand(node.inputs[0]), target)]
