"""Helpers shared by ONNX handlers (not a mapping module: no handlers here): axis lists,
numpy dtypes of ONNX element types, empty results, constant-aware slicing (`take`), numpy's
1-D promotion for matmul (`promote_vector` / `demote_vectors`) and the float-only check of
decompositions. Helpers both formats use (`ints`, `norm_axis`,
`const_or_none`, `scalar`) are in `op_mappings/_common/values.py`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import MLGraphBuilder, MLOperand
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.importer import ImportContext
from op_mappings._common.values import const_or_none, ints, norm_axis


def norm_axes(axes: Sequence[int] | np.ndarray, rank: int, what: str = "axes") -> list[int]:
    out = [norm_axis(a, rank, what) for a in ints(axes, what)]
    if len(set(out)) != len(out):
        raise InvalidModel(f"{what} {list(out)} repeats an axis")
    return out


def np_dtype(code: int, what: str = "data type") -> np.dtype:
    """The numpy dtype of ONNX element type `code` (an attribute such as Cast's `to`);
    InvalidModel when `code` is no ONNX type or has no numpy equivalent."""
    from onnx import helper

    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(int(code)))
    except (KeyError, ValueError, TypeError):
        raise InvalidModel(f"{what} {code} is not an ONNX data type numpy has") from None


def empty_value(ctx: ImportContext, name: str, shape: Sequence[int]) -> np.ndarray:
    """A zero-size result of `shape` with the source type of value `name` (bool for a bool
    carried as uint8; int4/uint4 widen to int8/uint8). Handlers return it for a result with
    no elements: its value is known at conversion time, so it is a constant (WebNN operands
    cannot be empty); Concat drops it and the nodes reading it fold."""
    if 0 not in shape:
        raise ValueError(f"shape {list(shape)} is not empty")
    dtype = "bool" if ctx.is_bool(name) else ctx.dtype(name)
    dtype = {"int4": "int8", "uint4": "uint8"}.get(dtype, dtype)
    return np.zeros([int(d) for d in shape], dtype=dtype)


def take(ctx: ImportContext, name: str, index: Sequence[int | slice]) -> Any:
    """`value[index]` (basic numpy indexing: ints drop a dimension, slices with step 1 keep
    it) as an operand: a constant when the input is constant, else slice + reshape."""
    value = const_or_none(ctx, name)
    if value is not None:
        arr = np.ascontiguousarray(value[tuple(index)])
        return ctx.constant(arr, what=f"part of {name!r}")
    x = ctx.operand(name)
    starts, sizes, keep = [], [], []
    full = list(index) + [slice(None)] * (x.rank - len(index))
    for dim, item in zip(x.shape, full, strict=True):
        if isinstance(item, slice):
            start, stop, step = item.indices(dim)
            if step != 1:
                raise ValueError("take: slices must have step 1")
            starts.append(start)
            sizes.append(stop - start)
            keep.append(stop - start)
        else:
            starts.append(int(item) % dim)
            sizes.append(1)
    b = ctx.builder
    out = x if starts == [0] * x.rank and list(sizes) == list(x.shape) else b.slice(
        x, starts, sizes)
    if list(out.shape) != keep:
        out = b.reshape(out, keep)
    return out


def float_dtype_check(node: Node, operand: Any, what: str = "input") -> None:
    """Raise UnsupportedDataType unless `operand` is float32 or float16."""
    if operand.data_type not in FLOAT_TYPES:
        raise UnsupportedDataType(f"{node.op_type} {what} has data type {operand.data_type}; "
                                  "this mapping needs float32 or float16")


def promote_vector(builder: MLGraphBuilder, x: MLOperand, side: int) -> MLOperand:
    """numpy matmul promotion of a 1-D operand: [K] becomes [1, K] as the left operand
    (`side` 0) or [K, 1] as the right one (`side` 1); operands of other ranks are returned
    as they are. `demote_vectors` removes the added dimensions from the product."""
    if x.rank != 1:
        return x
    return builder.reshape(x, [1, x.shape[0]] if side == 0 else [x.shape[0], 1])


def demote_vectors(builder: MLGraphBuilder, y: MLOperand, a1: bool, b1: bool) -> MLOperand:
    """The matmul product `y` without the dimensions `promote_vector` added to a 1-D left
    (`a1`) and/or right (`b1`) operand."""
    if not (a1 or b1):
        return y
    shape = list(y.shape)
    if b1:
        shape.pop(-1)
    if a1:
        shape.pop(-2 if not b1 else -1)
    return builder.reshape(y, shape)
