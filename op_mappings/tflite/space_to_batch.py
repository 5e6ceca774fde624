"""SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND (constant block_shape, paddings/crops) as
pad -> reshape -> transpose -> reshape (and reshape -> transpose -> reshape -> slice).

Restrictions: not fused into a dilated conv2d (the chain is emitted as is; results are
identical, only slower).
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import const_ints, data_in, finish, is_quantized


@tflite_op("SPACE_TO_BATCH_ND", since=1, const_inputs=(1, 2))
def space_to_batch(ctx: ImportContext, node: Node) -> Outputs:
    """[b, s..., r...] -> [b*prod(block), (s+pad)/block..., r...]."""
    (x,), raw = data_in(ctx, node)
    b = ctx.builder
    block = const_ints(ctx, node, 1)
    pads = np.asarray(ctx.const_input(node, 2)).astype(np.int64).reshape(-1, 2)
    m = len(block)
    rank = len(x.shape)
    begins = [0] + [int(p) for p in pads[:, 0]] + [0] * (rank - 1 - m)
    ends = [0] + [int(p) for p in pads[:, 1]] + [0] * (rank - 1 - m)
    value = 0
    info = node.input_infos[0]
    if raw and is_quantized(info) and info is not None and info.quant is not None:
        value = int(info.quant.zero_point[0])
    y = b.pad(x, begins, ends, value=value) if any(begins + ends) else x
    padded = list(y.shape)
    shape = [padded[0]]
    for i in range(m):
        if padded[1 + i] % block[i]:
            raise InvalidModel(f"padded dim {padded[1 + i]} not divisible by block {block[i]}")
        shape += [padded[1 + i] // block[i], block[i]]
    shape += padded[1 + m:]
    y = b.reshape(y, shape)
    perm = [2 + 2 * i for i in range(m)] + [0] + [1 + 2 * i for i in range(m)] + list(
        range(1 + 2 * m, len(shape)))
    y = b.transpose(y, permutation=perm)
    out = [padded[0] * int(np.prod(block))] + [padded[1 + i] // block[i] for i in range(m)] + \
        padded[1 + m:]
    return [finish(ctx, node, b.reshape(y, out), raw)]


@tflite_op("BATCH_TO_SPACE_ND", since=1, const_inputs=(1, 2))
def batch_to_space(ctx: ImportContext, node: Node) -> Outputs:
    """[b*prod(block), s..., r...] -> [b, s*block - crops..., r...]."""
    (x,), raw = data_in(ctx, node)
    b = ctx.builder
    block = const_ints(ctx, node, 1)
    crops = np.asarray(ctx.const_input(node, 2)).astype(np.int64).reshape(-1, 2)
    m = len(block)
    shape_in = list(x.shape)
    prod = int(np.prod(block))
    if shape_in[0] % prod:
        raise InvalidModel(f"batch {shape_in[0]} not divisible by block product {prod}")
    batch = shape_in[0] // prod
    y = b.reshape(x, block + [batch] + shape_in[1:])
    perm = [m]
    for i in range(m):
        perm += [m + 1 + i, i]
    perm += list(range(2 * m + 1, len(shape_in) + m))
    y = b.transpose(y, permutation=perm)
    full = [batch] + [shape_in[1 + i] * block[i] for i in range(m)] + shape_in[1 + m:]
    y = b.reshape(y, full)
    if np.any(crops):
        starts = [0] + [int(c) for c in crops[:, 0]] + [0] * (len(full) - 1 - m)
        sizes = [batch] + [full[1 + i] - int(crops[i, 0]) - int(crops[i, 1]) for i in range(m)
                           ] + full[1 + m:]
        y = b.slice(y, starts, sizes)
    return [finish(ctx, node, y, raw)]
