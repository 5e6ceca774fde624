"""EMBEDDING_LOOKUP_SPARSE (inputs: ids [N], indices [N, R], dense_shape [R], weights [N],
value [V, E...]; option combiner SUM / MEAN / SQRTN) -> gather + mul + one-hot matmul.

LiteRT (embedding_lookup_sparse.cc): entry i adds weights[i]·value[ids[i]] to the output
row given by its first R - 1 index coordinates (the last coordinate is ignored); MEAN
divides each non-empty row by the sum of its weights, SQRTN by the root of the sum of the
squared weights; rows without entries are zeros. Output shape
dense_shape[:-1] + value.shape[1:], float32.
Lowering: gather the N embeddings, scale by the weights, sum into rows with a constant 0/1
matrix [rows, N] (matmul); the divisor is the same matmul applied to the weights (or their
squares) plus 1 on empty rows.
Restrictions: indices and dense_shape must be constant (they fix the output shape), with
the entries grouped by output row in order (as the kernel assumes); ids and weights may
be computed.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints

SUM, MEAN, SQRTN = 0, 1, 2


@tflite_op("EMBEDDING_LOOKUP_SPARSE", since=1, const_inputs=(1, 2))
def embedding_lookup_sparse(ctx: ImportContext, node: Node) -> Outputs:
    """Σ weights·value[ids] per output row, then the combiner's divisor. Restrictions:
    constant indices and dense_shape, entries grouped by output row in order."""
    b = ctx.builder
    combiner = int(node.attrs["combiner"])
    if combiner not in (SUM, MEAN, SQRTN):
        raise UnsupportedAttribute(f"EMBEDDING_LOOKUP_SPARSE combiner {combiner} is unknown")
    indices = np.asarray(ctx.const_input(node, 1)).astype(np.int64)
    dense = const_ints(ctx, node, 2)
    ids, weights, value = (ctx.operand(node.inputs[i]) for i in (0, 3, 4))
    if indices.ndim != 2 or len(dense) != indices.shape[1]:
        raise InvalidModel(f"EMBEDDING_LOOKUP_SPARSE indices shape {list(indices.shape)} "
                           f"does not match dense_shape {dense}")
    n = indices.shape[0]
    if list(ids.shape) != [n] or list(weights.shape) != [n]:
        raise InvalidModel(f"EMBEDDING_LOOKUP_SPARSE needs {n} ids and weights, got shapes "
                           f"{list(ids.shape)} and {list(weights.shape)}")
    if len(value.shape) < 2:
        raise InvalidModel("EMBEDDING_LOOKUP_SPARSE value must have rank >= 2")
    lead = dense[:-1]
    rows = int(np.prod(lead, dtype=np.int64))
    coords = indices[:, :-1]
    if np.any(coords < 0) or np.any(coords >= np.array(lead, np.int64)):
        raise InvalidModel(f"EMBEDDING_LOOKUP_SPARSE indices out of range for {dense}")
    bucket = np.ravel_multi_index(coords.T, lead) if lead else np.zeros(n, np.int64)
    if np.any(np.diff(bucket) < 0):
        raise InvalidModel("EMBEDDING_LOOKUP_SPARSE indices must be grouped by output row in "
                           "row-major order")
    if ctx.is_constant(node.inputs[0]):
        id_vals = np.asarray(ctx.const_value(node.inputs[0]))
        if np.any(id_vals < 0) or np.any(id_vals >= value.shape[0]):
            raise InvalidModel(f"EMBEDDING_LOOKUP_SPARSE ids {id_vals.tolist()} out of range "
                               f"0..{value.shape[0] - 1}")
    emb = list(value.shape[1:])
    size = int(np.prod(emb, dtype=np.int64))
    table = b.reshape(value, [value.shape[0], size])
    w = b.reshape(weights, [n, 1])
    picked = b.mul(b.gather(table, ids, axis=0), w)  # [N, E]
    onehot = np.zeros((rows, n), np.float32)
    onehot[bucket, np.arange(n)] = 1.0
    m = ctx.constant(onehot)
    out = b.matmul(m, picked)  # [rows, E]
    if combiner != SUM:
        den = b.matmul(m, w if combiner == MEAN else b.mul(w, w))  # [rows, 1]
        if combiner == SQRTN:
            den = b.sqrt(den)
        empty = (onehot.sum(axis=1) == 0).astype(np.float32).reshape(rows, 1)
        if empty.any():
            den = b.add(den, ctx.constant(empty))
        out = b.div(out, den)
    return [b.reshape(out, [*lead, *emb])]
