"""SEGMENT_SUM and UNSORTED_SEGMENT_SUM / MAX / MIN / PROD -> gather + where + reduce.

data's leading dims (as many as segment_ids has) are flattened to M rows; output row s
reduces the rows i with segment_ids[i] = s. With constant segment ids the rows of each
segment are gathered into a [S, L, ...] table (L = the largest segment; short segments
padded and masked with `where`) and reduced over L with reduceSum / reduceMax /
reduceMin / reduceProduct. Empty segments get the reduction's identity, as LiteRT:
0 (sum), the type's lowest value (max), its largest value (min), 1 (prod). Integer data
stays exact.

SEGMENT_SUM: segment_ids [N] sorted, output rows segment_ids[-1] + 1 (TensorFlow's
semantics: skipped ids are empty segments; LiteRT itself only accepts ids starting at 0 in
steps of 0 or 1). UNSORTED_SEGMENT_*: segment_ids of any rank up to data's (a prefix
of its shape), num_segments rows; negative ids are dropped, constant ids >= num_segments
rejected (as LiteRT; computed ones are dropped).
Computed segment ids (UNSORTED_SEGMENT_* only) use a one-hot
`equal(ids, iota)` mask [S, M] and a reduction over M (S·M·row-size elements).
Restrictions: SEGMENT_SUM needs constant segment ids and UNSORTED_SEGMENT_* a constant
num_segments (the output shape depends on them); float32 / int32 data as LiteRT.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints

_REDUCE = {"SUM": "reduce_sum", "MAX": "reduce_max", "MIN": "reduce_min",
           "PROD": "reduce_product"}


def _identity(kind: str, dtype: str) -> float | int:
    if kind == "SUM":
        return 0
    if kind == "PROD":
        return 1
    if np.dtype(dtype).kind == "f":
        finfo = np.finfo(dtype)
        return float(finfo.min if kind == "MAX" else finfo.max)
    iinfo = np.iinfo(dtype)
    return int(iinfo.min if kind == "MAX" else iinfo.max)


def _segments(ctx: ImportContext, data: MLOperand, ids: np.ndarray, segments: int,
              kind: str) -> MLOperand:
    """Reduce data rows by constant ids (rows with ids outside [0, segments) dropped)."""
    b = ctx.builder
    m = int(ids.size)
    rest = list(data.shape[ids.ndim:])
    flat = b.reshape(data, [m, *rest]) if ids.ndim != 1 else data
    ids = ids.reshape(-1).astype(np.int64)
    ctx.check_constant(max(segments, 0) * 2, 8, "the segment tables would take")
    counts = np.bincount(ids[(ids >= 0) & (ids < segments)], minlength=segments)
    width = max(int(counts.max()) if counts.size else 0, 1)
    ctx.check_constant([segments, width], 5, "the segment tables would take")
    table = np.zeros((segments, width), np.int32)
    mask = np.zeros((segments, width), bool)
    fill = np.zeros(segments, np.int64)
    for i, s in enumerate(ids.tolist()):
        if 0 <= s < segments:
            table[s, fill[s]] = i
            mask[s, fill[s]] = True
            fill[s] += 1
    rows = b.gather(flat, ctx.constant(table), axis=0)  # [S, L, *rest]
    if not mask.all():
        cond = ctx.constant(mask.reshape(segments, width, *([1] * len(rest))))
        ident = b.constant(np.array(_identity(kind, data.data_type), data.data_type))
        rows = b.where(cond, rows, ident)
    reduced: MLOperand = getattr(b, _REDUCE[kind])(rows, axes=[1])
    return reduced


def _segments_dynamic(ctx: ImportContext, data: MLOperand, ids: MLOperand, segments: int,
                      kind: str) -> MLOperand:
    """Reduce data rows by computed ids with a one-hot mask [S, M]."""
    b = ctx.builder
    m = int(np.prod(ids.shape, dtype=np.int64))
    rest = list(data.shape[len(ids.shape):])
    ctx.check_constant(max(segments, 0), 8, "the segment index table would take")
    flat = b.reshape(data, [1, m, *rest])
    iota = b.constant(np.arange(segments, dtype=ids.data_type).reshape(segments, 1))
    onehot = b.equal(b.reshape(ids, [1, m]), iota)  # [S, M]
    cond = b.reshape(onehot, [segments, m, *([1] * len(rest))])
    ident = b.constant(np.array(_identity(kind, data.data_type), data.data_type))
    reduced: MLOperand = getattr(b, _REDUCE[kind])(b.where(cond, flat, ident), axes=[1])
    return reduced


def _check(data: MLOperand, ids_shape: tuple[int, ...]) -> None:
    if len(ids_shape) > len(data.shape) or list(data.shape[:len(ids_shape)]) != list(
            ids_shape):
        raise InvalidModel(f"segment_ids shape {list(ids_shape)} is not a prefix of the data "
                           f"shape {list(data.shape)}")


@tflite_op("SEGMENT_SUM", since=1, const_inputs=(1,))
def segment_sum(ctx: ImportContext, node: Node) -> Outputs:
    """Sorted segment sum (gather table + reduceSum). Restrictions: constant, sorted,
    non-negative segment ids (output rows = last id + 1)."""
    data = ctx.operand(node.inputs[0])
    ids = np.asarray(ctx.const_input(node, 1))
    if ids.ndim != 1:
        raise InvalidModel(f"SEGMENT_SUM segment_ids must be 1-D, got shape {list(ids.shape)}")
    _check(data, ids.shape)
    steps = np.diff(ids.astype(np.int64))
    if ids.size == 0 or ids[0] < 0 or np.any(steps < 0):
        raise InvalidModel(f"SEGMENT_SUM segment_ids {ids.tolist()} must be non-negative and "
                           "sorted")
    return [_segments(ctx, data, ids, int(ids[-1]) + 1, "SUM")]


@tflite_op(("UNSORTED_SEGMENT_SUM", "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_MIN",
            "UNSORTED_SEGMENT_PROD"), since=1, const_inputs=(2,))
def unsorted_segment(ctx: ImportContext, node: Node) -> Outputs:
    """Unsorted segment reduction into num_segments rows. Restrictions: constant
    num_segments; computed ids use a [num_segments, M] one-hot mask."""
    data = ctx.operand(node.inputs[0])
    kind = node.op_type.rsplit("_", 1)[1]
    num = const_ints(ctx, node, 2)
    if len(num) != 1 or num[0] < 1:
        raise InvalidModel(f"{node.op_type} num_segments {num} must be one value >= 1")
    name = node.inputs[1]
    _check(data, ctx.shape(name))
    if ctx.is_constant(name):
        ids = np.asarray(ctx.const_value(name))
        if ids.size and int(ids.max()) >= num[0]:
            raise InvalidModel(f"{node.op_type} segment id {int(ids.max())} is not below "
                               f"num_segments {num[0]}")
        return [_segments(ctx, data, ids, num[0], kind)]
    return [_segments_dynamic(ctx, data, ctx.operand(name), num[0], kind)]
