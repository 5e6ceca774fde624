"""ONNX OneHot -> equal(indices, constant range) + where; ONNX EyeLike -> a constant.

OneHot: negative indices count from `depth`; float indices are truncated to integers;
`axis` places the one-hot dimension; `values` = [off, on] may be computed in the graph.
Indices outside [-depth, depth) give an all-off row (ONNX).
EyeLike: the identity pattern with diagonal `k` in `dtype` (default: the input's type).
Restrictions: OneHot `depth` must be a constant.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.checks import check_rank, finite_scalar
from op_mappings._common.values import ints, norm_axis, scalar
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import np_dtype


@onnx_op("OneHot", since=9, const_inputs=(1,))
def one_hot(ctx: ImportContext, node: Node) -> Outputs:
    depth = int(finite_scalar(ctx, node, 1, "depth"))
    if depth < 1:
        raise InvalidModel(f"depth (input 1) is {depth}, it must be at least 1")
    idx, values = ctx.required(node, 0), ctx.required(node, 2)
    b = ctx.builder
    if list(values.shape) != [2]:
        raise InvalidModel(f"values (input 2) must be [off, on] (shape [2]), it has shape "
                           f"{list(values.shape)}")
    axis = norm_axis(node.attrs["axis"], idx.rank + 1)
    if ctx.folding:
        ctx.check_constant([*idx.shape, depth], values.data_type)
    ctx.check_constant(depth, 8, "the one-hot index table would take")
    if idx.data_type in FLOAT_TYPES:
        idx = b.cast(idx, "int32")
    dt = idx.data_type
    if dt.startswith("int"):
        neg = b.lesser(idx, scalar(ctx, 0, dt))
        idx = b.where(neg, b.add(idx, scalar(ctx, depth, dt)), idx)
    idx = b.reshape(idx, [*idx.shape[:axis], 1, *idx.shape[axis:]])
    shape = [1] * (idx.rank)
    shape[axis] = depth
    mask = b.equal(idx, ctx.constant(np.arange(depth).astype(dt).reshape(shape)))
    off = b.reshape(b.slice(values, [0], [1]), [])
    on = b.reshape(b.slice(values, [1], [1]), [])
    return [b.where(mask, on, off)]


def _eye_fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[Any]:
    return [_eye(ctx, node)]


def _eye(ctx: ImportContext, node: Node) -> np.ndarray:
    shape = ctx.shape(node.inputs[0])
    dtype_attr = node.attrs.get("dtype")
    if dtype_attr is None:
        name = node.inputs[0]
        dtype = (np.asarray(ctx.const_value(name)).dtype if ctx.is_constant(name)
                 else np.dtype(ctx.operand(name).data_type))
    else:
        dtype = np_dtype(dtype_attr, "attribute 'dtype'")
    check_rank(shape, 2, "input 0")
    rows, cols = ints(shape)
    ctx.check_constant([rows, cols], dtype)
    return np.eye(rows, cols, k=int(node.attrs.get("k", 0)), dtype=dtype)


@onnx_op("EyeLike", since=9, fold=_eye_fold)
def eye_like(ctx: ImportContext, node: Node) -> Outputs:
    return [_eye(ctx, node)]
