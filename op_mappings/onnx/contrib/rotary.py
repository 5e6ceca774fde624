"""com.microsoft RotaryEmbedding, MRotaryEmbedding, GemmaRotaryEmbedding -> WebNN gather /
mul / add.

x·C + x[perm]·S along each head, where C and S are the cos/sin rows of each position laid
out over the head (cos 1, sin 0 on the part beyond rotary_embedding_dim) and `perm` swaps the
two halves (or the even/odd pairs when interleaved): 4 ops when the caches and positions are
known at conversion time (the rows are then constants), 2 gathers more otherwise.
MRotaryEmbedding builds each token's cos/sin row from the rows of its three (T, H, W)
positions, then rotates the same way; GemmaRotaryEmbedding is the element-wise
q·cos(emb) + q_rot·sin(emb) (and the same for k).
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn import MLOperand
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
    ints_attr,
    operand,
    reshape,
    rotate,
    shape_of,
    take_rows,
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
    if x.rank == 3 and rotary_dim and not heads:
        raise InvalidModel("num_heads is needed with rotary_embedding_dim")
    bsz, seq, heads, rotary_dim = _head_layout(x, heads, rotary_dim, c_shape)
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


def _head_layout(x: MLOperand, heads: int, rotary_dim: int, c_shape: tuple[int, ...]
                 ) -> tuple[int, int, int, int]:
    """(batch, sequence, num_heads, rotary_dim) of a RotaryEmbedding-style input x
    ([B, S, hidden]: the heads from num_heads, else from the cache's head size 2 * half;
    [B, N, S, H]: num_heads as given) whose cos/sin caches have shape `c_shape`
    [positions, half]; rotary_dim 0 means the whole head. InvalidModel when they do not
    fit."""
    half = c_shape[1]
    if x.rank == 3:
        bsz, seq, hidden = x.shape
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
    return bsz, seq, heads, rotary_dim


def mrope_sources(half: int, sections: list[int], layout: int) -> np.ndarray:
    """For each of the half_rotary_dim cos/sin columns: which position stream (0 T, 1 H, 2 W)
    it is read with (layout 0 sectioned, 1 interleaved; see MRotaryEmbedding)."""
    if layout == 0:
        return np.repeat(np.arange(3), sections).astype(np.int32)
    src = np.zeros(half, np.int32)
    for stream in (1, 2):
        src[stream:sections[stream] * 3:3] = stream
    return src


@onnx_op("MRotaryEmbedding", since=1, domain="com.microsoft")
def m_rotary_embedding(ctx: ImportContext, node: Node) -> Outputs:
    """com.microsoft MRotaryEmbedding (Qwen-VL's multimodal RoPE): the cos/sin row of each
    token combined column-wise from the rows of its T, H and W positions (position_ids
    [3, B, S]) by `mrope_section` (mrope_layout 0: contiguous sections, 1: interleaved), then
    the RotaryEmbedding rotation. Restrictions: those of RotaryEmbedding; mrope_section of
    three values summing to rotary_dim / 2."""
    check_arity(node, (4, 4), (1, 1))
    b = ctx.builder
    x = float_input(ctx, node.inputs[0], "input")
    if flag_attr(node, "is_packed_batching"):
        raise UnsupportedAttribute("is_packed_batching=1 is not supported")
    if float_attr(node, "scale", 1.0) != 1.0:
        ctx.warn("the scale attribute is ignored (as onnxruntime's CPU kernel does)")
    sections = ints_attr(node, "mrope_section")
    layout = int_attr(node, "mrope_layout", 0)
    interleaved = flag_attr(node, "interleaved")
    heads = int_attr(node, "num_heads", 0)
    rotary_dim = int_attr(node, "rotary_embedding_dim", 0)
    c_shape = shape_of(ctx, node.inputs[2], (2,), "cos_cache")
    if shape_of(ctx, node.inputs[3], (2,), "sin_cache") != c_shape:
        raise InvalidModel("cos_cache and sin_cache must have the same shape")
    half = c_shape[1]
    if sections is None or len(sections) != 3 or sum(sections) != half or min(sections) < 0:
        raise InvalidModel(f"mrope_section {sections} must be three values summing to "
                           f"{half} (the cache's columns)")
    if layout not in (0, 1):
        raise InvalidModel(f"mrope_layout {layout} does not fit mrope_section {sections}")
    bsz, seq, heads, rotary_dim = _head_layout(x, heads, rotary_dim, c_shape)
    if shape_of(ctx, node.inputs[1], (3,), "position_ids") != (3, bsz, seq):
        raise InvalidModel(f"position_ids must be [3, {bsz}, {seq}]")
    pos = int_value(ctx, node.inputs[1])
    src = mrope_sources(half, sections, layout)
    rows: list[Value] = []
    for table in (value(ctx, node.inputs[2]), value(ctx, node.inputs[3])):
        streams = [take_rows(ctx, table, pos[i] if isinstance(pos, np.ndarray) else
                             b.reshape(b.slice(pos, [i, 0, 0], [1, bsz, seq]), [bsz, seq]))
                   for i in range(3)]
        arrays = [s for s in streams if isinstance(s, np.ndarray)]
        if len(arrays) == 3:
            rows.append(np.choose(src, arrays))
            continue
        ops = [operand(ctx, s, x.data_type) for s in streams]
        picked = b.where(ctx.constant((src == 1).astype(np.uint8)), ops[1], ops[2])
        rows.append(b.where(ctx.constant((src == 0).astype(np.uint8)), ops[0], picked))
    return [rotate(ctx, x, rows[0], rows[1], None, heads=heads, rotary_dim=rotary_dim,
                   interleaved=interleaved)]


@onnx_op("GemmaRotaryEmbedding", since=1, domain="com.microsoft")
def gemma_rotary_embedding(ctx: ImportContext, node: Node) -> Outputs:
    """com.microsoft GemmaRotaryEmbedding: with C = cos(emb), S = sin(emb) (emb [B, S, D]
    float32, cast to float16 and broadcast over the heads), q·C + q_rot·S and k·C + k_rot·S
    (q, q_rot, k, k_rot [B, N, S, D] float16). Restrictions: the schema's types (float32 emb,
    float16 q/k); every q/k input of one shape."""
    check_arity(node, (5, 5), (2, 2))
    b = ctx.builder
    emb = float_input(ctx, node.inputs[0], "emb")
    qk = [float_input(ctx, node.inputs[i], what)
          for i, what in ((1, "q"), (2, "q_rot"), (3, "k"), (4, "k_rot"))]
    if emb.data_type != "float32" or any(t.data_type != "float16" for t in qk):
        raise InvalidModel("GemmaRotaryEmbedding needs a float32 emb and float16 q/k inputs")
    if emb.rank != 3 or any(t.rank != 4 or list(t.shape) != list(qk[0].shape) for t in qk) \
            or [qk[0].shape[0], qk[0].shape[2], qk[0].shape[3]] != list(emb.shape):
        raise InvalidModel(f"GemmaRotaryEmbedding emb {list(emb.shape)} must be [B, S, D] and "
                           f"q, q_rot, k, k_rot one [B, N, S, D] shape")
    bsz, seq, dim = emb.shape
    c = b.reshape(b.cast(b.cos(emb), "float16"), [bsz, 1, seq, dim])
    s = b.reshape(b.cast(b.sin(emb), "float16"), [bsz, 1, seq, dim])
    q, q_rot, k, k_rot = qk
    return [b.add(b.mul(q, c), b.mul(q_rot, s)), b.add(b.mul(k, c), b.mul(k_rot, s))]
