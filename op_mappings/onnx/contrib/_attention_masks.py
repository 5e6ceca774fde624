"""Masks and biases of onnxruntime's attention ops (com.microsoft Attention,
MultiHeadAttention, DecoderMaskedMultiHeadAttention, GroupQueryAttention): the key mask of
a mask input in each of its forms, the causal mask, and the checked attention_bias input."""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.webnn import MLOperand
from converter.importer import ImportContext
from op_mappings.onnx.contrib._attention_common import (
    Mask,
    compare,
    float_input,
    int_value,
    mask_and,
    reshape,
    shape_of,
)

MASK_FILTER = -10000.0
"""onnxruntime's default `mask_filter_value`: what a masked key adds to its score."""


def key_mask(ctx: ImportContext, name: str, batch: int, seq: int, past: int, total: int,
             what: str) -> Mask:
    """The allowed-mask [B, 1, S or 1, T] of an onnxruntime mask input: key lengths [B]
    (right padding), end and start positions [2B] (left padding), a 0/1 mask [B, T] or
    [B, S, T], or the 4-D [B, 1, M, M] form (rows past..past+S, columns 0..T)."""
    shape = shape_of(ctx, name, (1, 2, 3, 4), what)
    keys = np.arange(total, dtype=np.int32).reshape(1, 1, 1, total)
    mask = int_value(ctx, name)
    if len(shape) == 1:
        if shape[0] == batch:
            return compare(ctx, "lt", keys, reshape(ctx, mask, [batch, 1, 1, 1]))
        if shape[0] == 2 * batch:
            ends = _rows(ctx, mask, 0, batch)
            starts = _rows(ctx, mask, batch, batch)
            both = mask_and(ctx, compare(ctx, "lt", keys, ends),
                            compare(ctx, "ge", keys, starts))
            assert both is not None
            return both
        if shape[0] == 3 * batch + 2:
            raise UnsupportedAttribute(f"{what} of shape [3·batch + 2] (packed sequence "
                                       "offsets) is not supported")
        raise InvalidModel(f"{what} of shape {list(shape)} fits no mask form for batch "
                           f"{batch}")
    zero = np.zeros((), np.int32)
    if len(shape) == 2:
        if shape != (batch, total):
            raise InvalidModel(f"{what} of shape {list(shape)} must be [batch, "
                               f"total_sequence_length] = [{batch}, {total}]")
        return compare(ctx, "gt", reshape(ctx, mask, [batch, 1, 1, total]), zero)
    if len(shape) == 3:
        if shape != (batch, seq, total):
            raise InvalidModel(f"{what} of shape {list(shape)} must be [batch, "
                               f"sequence_length, total_sequence_length] = "
                               f"[{batch}, {seq}, {total}]")
        return compare(ctx, "gt", reshape(ctx, mask, [batch, 1, seq, total]), zero)
    if shape[0] != batch or shape[1] != 1 or shape[2] != shape[3] or shape[3] < total:
        raise InvalidModel(f"{what} of shape {list(shape)} must be [batch, 1, "
                           f"max_sequence_length, max_sequence_length] with "
                           f"max_sequence_length >= {total}")
    if isinstance(mask, np.ndarray):
        part: Any = mask[:, :, past:past + seq, :total]
    else:
        part = ctx.builder.slice(mask, [0, 0, past, 0], [batch, 1, seq, total])
    return compare(ctx, "gt", part, zero)


def _rows(ctx: ImportContext, mask: Any, start: int, count: int) -> Any:
    """mask[start:start + count] as [count, 1, 1, 1]."""
    if isinstance(mask, np.ndarray):
        return mask[start:start + count].reshape(count, 1, 1, 1)
    part = ctx.builder.slice(mask, [start], [count])
    return ctx.builder.reshape(part, [count, 1, 1, 1])


def causal_mask(seq: int, past: int, total: int) -> np.ndarray:
    """[1, 1, S, T]: query s (absolute position past + s) sees keys j <= past + s."""
    rows = np.arange(seq).reshape(seq, 1) + past
    return (np.arange(total).reshape(1, total) <= rows).reshape(1, 1, seq, total)


def attention_bias(ctx: ImportContext, name: str, batch: int, heads: int, seq: int,
                   total: int) -> MLOperand:
    """The attention_bias input [B or 1, N or 1, S, T], checked."""
    shape = shape_of(ctx, name, (4,), "attention_bias")
    if (shape[0] not in (1, batch) or shape[1] not in (1, heads) or shape[2] != seq
            or shape[3] != total):
        raise InvalidModel(f"attention_bias of shape {list(shape)} must be [{batch} or 1, "
                           f"{heads} or 1, {seq}, {total}]")
    return float_input(ctx, name, "attention_bias")
