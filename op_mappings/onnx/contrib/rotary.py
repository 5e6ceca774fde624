"""com.microsoft RotaryEmbedding -> WebNN gather / mul / add.

x·C + x[perm]·S along each head, where C and S are the cos/sin rows of each position laid
out over the head (cos 1, sin 0 on the part beyond rotary_embedding_dim) and `perm` swaps the
two halves (or the even/odd pairs when interleaved): 4 ops when the caches and positions are
known at conversion time (the rows are then constants), 2 gathers more otherwise.
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._attention_common import (
    Value,
    arith,
    check_arity,
    flag_attr,
    float_attr,
    float_input,
    int_attr,
    int_value,
    reshape,
    rotate,
    shape_of,
    value,
)


@onnx_op("RotaryEmbedding", since=1, domain="com.microsoft")
def rotary_embedding(ctx: ImportContext, node: Node) -> Outputs:
    """com.microsoft RotaryEmbedding: input [B, S, hidden] or [B, N, S, H]; position_ids
    [1] (start position, positions start..start+S-1) or [B, S]; cos/sin caches
    [max_sequence_length, rotary_dim/2]; interleaved; partial rotation with
    rotary_embedding_dim (then num_heads is needed for 3-D input). Restrictions:
    float32/float16; no is_packed_batching; the `scale` attribute is ignored, as onnxruntime's
    CPU kernel does (a warning says so)."""
    check_arity(node, (4, 4), (1, 1))
    x = float_input(ctx, node.inputs[0], "input")
    if flag_attr(node, "is_packed_batching"):
        raise UnsupportedAttribute("is_packed_batching=1 is not supported")
    if float_attr(node, "scale", 1.0) != 1.0:
        ctx.warn("the scale attribute is ignored (as onnxruntime's CPU kernel does)")
    interleaved = flag_attr(node, "interleaved")
    heads = int_attr(node, "num_heads", 0)
    rotary_dim = int_attr(node, "rotary_embedding_dim", 0)
    if heads < 0 or rotary_dim < 0:
        raise InvalidModel("num_heads and rotary_embedding_dim must not be negative")
    c_shape = shape_of(ctx, node.inputs[2], (2,), "cos_cache")
    if shape_of(ctx, node.inputs[3], (2,), "sin_cache") != c_shape:
        raise InvalidModel("cos_cache and sin_cache must have the same shape")
    half = c_shape[1]
    if x.rank == 3:
        bsz, seq, hidden = x.shape
        if rotary_dim and not heads:
            raise InvalidModel("num_heads is needed with rotary_embedding_dim")
        size = hidden // heads if heads else 2 * half
        if size == 0 or hidden % size:
            raise InvalidModel(f"hidden size {hidden} is not a multiple of the head size "
                               f"{size}")
        heads = hidden // size
    elif x.rank == 4:
        bsz, _, seq, size = x.shape
    else:
        raise InvalidModel(f"input must have rank 3 or 4, got {list(x.shape)}")
    rotary_dim = rotary_dim or size
    if rotary_dim != 2 * half or rotary_dim > size:
        raise InvalidModel(f"cos_cache of shape {list(c_shape)} does not fit rotary dimension "
                           f"{rotary_dim} (head size {size})")
    p_shape = shape_of(ctx, node.inputs[1], (1, 2), "position_ids")
    pos = int_value(ctx, node.inputs[1])
    steps = np.arange(seq, dtype=np.int32).reshape(1, seq)
    if p_shape == (1,):
        positions: Value = arith(ctx, "add", reshape(ctx, pos, [1, 1]), steps)
    elif p_shape == (bsz, seq):
        positions = pos
    else:
        raise InvalidModel(f"position_ids of shape {list(p_shape)} must be [1] or "
                           f"[{bsz}, {seq}]")
    return [rotate(ctx, x, value(ctx, node.inputs[2]), value(ctx, node.inputs[3]), positions,
                   heads=heads, rotary_dim=rotary_dim, interleaved=interleaved)]
