"""ONNX RotaryEmbedding (23) -> WebNN gather / mul / add.

x·C + x[perm]·S along each head, where C and S are the cos/sin rows of each token laid out
over the head (cos 1, sin 0 on the part beyond rotary_embedding_dim) and `perm` swaps the two
halves (or the even/odd pairs when interleaved): 4 ops when the caches and position ids are
known at conversion time, 2 gathers more otherwise. The shared helpers live in
op_mappings/onnx/contrib/_attention_common.py.
"""

from __future__ import annotations

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._attention_common import (
    check_arity,
    flag_attr,
    float_input,
    int_attr,
    int_value,
    rotate,
    shape_of,
    value,
)


@onnx_op("RotaryEmbedding", since=23)
def rotary_embedding(ctx: ImportContext, node: Node) -> Outputs:
    """X [B, S, hidden] (num_heads required) or [B, N, S, H]; cos/sin caches
    [max_position, rotary_dim/2] indexed by position_ids [B, S], or [B, S, rotary_dim/2]
    without position_ids; interleaved; partial rotation with rotary_embedding_dim.
    Restrictions: float32/float16."""
    check_arity(node, (3, 4), (1, 1))
    x = float_input(ctx, node.inputs[0], "X")
    interleaved = flag_attr(node, "interleaved")
    heads = int_attr(node, "num_heads", 0)
    rotary_dim = int_attr(node, "rotary_embedding_dim", 0)
    if x.rank == 3:
        bsz, seq, hidden = x.shape
        if heads <= 0 or hidden % heads:
            raise InvalidModel(f"3-D input needs num_heads dividing the hidden size {hidden}, "
                               f"got num_heads {heads}")
        size = hidden // heads
    elif x.rank == 4:
        bsz, heads, seq, size = x.shape
    else:
        raise InvalidModel(f"X must have rank 3 or 4, got {list(x.shape)}")
    rotary_dim = rotary_dim or size
    if rotary_dim < 0 or rotary_dim > size or rotary_dim % 2:
        raise InvalidModel(f"rotary_embedding_dim {rotary_dim} must be even and at most the "
                           f"head size {size}")
    pos_name = node.input(3)
    c_shape = shape_of(ctx, node.inputs[1], (2,) if pos_name else (3,), "cos_cache")
    if shape_of(ctx, node.inputs[2], (len(c_shape),), "sin_cache") != c_shape:
        raise InvalidModel("cos_cache and sin_cache must have the same shape")
    want = (c_shape[0], rotary_dim // 2) if pos_name else (bsz, seq, rotary_dim // 2)
    if c_shape != want:
        raise InvalidModel(f"cos_cache of shape {list(c_shape)} must be {list(want)}"
                           + ("" if pos_name else " (no position_ids)"))
    positions = None
    if pos_name:
        if shape_of(ctx, pos_name, (2,), "position_ids") != (bsz, seq):
            raise InvalidModel(f"position_ids must be [{bsz}, {seq}]")
        positions = int_value(ctx, pos_name)
    return [rotate(ctx, x, value(ctx, node.inputs[1]), value(ctx, node.inputs[2]), positions,
                   heads=heads, rotary_dim=rotary_dim, interleaved=interleaved)]
