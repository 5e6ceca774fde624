"""MATRIX_DIAG and MATRIX_SET_DIAG -> WebNN where with a constant identity mask.

MATRIX_DIAG: x [..., N] -> [..., N, N] with x on the main diagonal and zeros elsewhere:
`where(eye[N, N], reshape(x, [..., 1, N]), 0)`.
MATRIX_SET_DIAG: x [..., M, N], diagonal [..., min(M, N)] -> x with its main diagonal
replaced: `where(eye[M, N], reshape(pad(diagonal, to N), [..., 1, N]), x)`.
Both copy the stored values (quantized tensors stay integers; MATRIX_DIAG's off-diagonal
entries are stored zeros, as in LiteRT, not the zero point). Any element type WebNN has.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op


@tflite_op("MATRIX_DIAG", since=1)
def matrix_diag(ctx: ImportContext, node: Node) -> Outputs:
    """where(eye, x as rows, 0); stored values copied."""
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    if not x.shape:
        raise InvalidModel("MATRIX_DIAG input must have rank >= 1")
    n = x.shape[-1]
    ctx.check_constant([n, n], np.uint8, "the diagonal mask would take")
    eye = ctx.constant(np.eye(n, dtype=np.uint8))
    rows = b.reshape(x, [*x.shape[:-1], 1, n])
    zero = b.constant(np.zeros((), x.data_type))
    return [b.where(eye, rows, zero)]


@tflite_op("MATRIX_SET_DIAG", since=1)
def matrix_set_diag(ctx: ImportContext, node: Node) -> Outputs:
    """where(eye, diagonal as rows, x); stored values copied."""
    b = ctx.builder
    x, d = ctx.operand(node.inputs[0]), ctx.operand(node.inputs[1])
    if len(x.shape) < 2:
        raise InvalidModel("MATRIX_SET_DIAG input must have rank >= 2")
    m, n = x.shape[-2:]
    want = [*x.shape[:-2], min(m, n)]
    if list(d.shape) != want:
        raise InvalidModel(f"MATRIX_SET_DIAG diagonal has shape {list(d.shape)}, expected "
                           f"{want}")
    if d.data_type != x.data_type:
        raise InvalidModel(f"MATRIX_SET_DIAG diagonal type {d.data_type} differs from the "
                           f"input's {x.data_type}")
    if n > m:
        rank = len(d.shape)
        d = b.pad(d, [0] * rank, [0] * (rank - 1) + [n - m])
    eye = ctx.constant(np.eye(m, n, dtype=np.uint8))
    return [b.where(eye, b.reshape(d, [*x.shape[:-2], 1, n]), x)]
