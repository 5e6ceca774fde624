"""The importer's decomposition of com.microsoft GroupQueryAttention, found in a WebNN graph
and lowered back to one GroupQueryAttention node (onnxruntime's fused kernel), for the
onnxruntime backend only (`to_onnx(..., contrib_ops=True)`; the standard export never
emits com.microsoft ops).

What is matched is exactly what `op_mappings/onnx/contrib/group_query_attention.py` builds for
a decode or chunked-prefill step over a KV buffer whose fill level is computed in the graph
(`seqlens_k` an int32 operand [B], past key/value graph values [B, Nk, P, H], S new tokens,
total_sequence_length T, present length L = max(T, P) = T):

- q, k, v: the three outputs of one `split` of a packed QKV [B, S, (N + 2·Nk)·H] along axis 2
  (sizes N·H, Nk·H, Nk·H), or three separate [B, S, N·H] / [B, S, Nk·H] operands; each head
  split is transpose(reshape(x, [B, S, n, H]), [0, 2, 1, 3]);
- rotary (optional, on q and k alike): x·C + gather(x, perm, axis 3)·S with C, S =
  reshape(gather(table, positions, axis 0), [1 or B, 1, S, H]), tables that are the
  importer's layout of cos/sin caches [max_position, R/2] (checked element by element,
  rotate-half or interleaved, R ≤ H, R/2 a multiple of 8 as onnxruntime's kernel requires)
  and positions = reshape(seqlens − (S − 1), [B, 1]) +
  arange(S);
- present = where(p < past_rows, pad(past) or past, where(p < past_rows + S, new', 0)) with
  past_rows = seqlens − (S − 1), p = arange(L) along axis 2, new' = gather(new, clamp(arange(L)
  − past_rows, 0, S − 1), axis 2) (S > 1) or new (S = 1): onnxruntime's placement of the new
  rows after the seqlens_k + 1 − S valid past rows;
- scores = matmul(reshape(q·scale, [B, Nk, g·S, H]), transpose(present_k, [0, 1, 3, 2]))
  reshaped to [B, N, S, L] (no reshapes when g = N / Nk = 1), then where(j < min(past_rows +
  i + 1, seqlens + 1), scores, lowest float32), softmax over axis 3, the product with
  present_v (through the same grouping reshapes) and the head merge transpose(.., [0, 2, 1,
  3]) + reshape to [B, S, N·H]: causal attention over the keys 0..seqlens.

Every constant (aranges, offsets, clamp bounds, pad widths, split sizes, the lowest value,
the zero fill, the rotary permutation and tables) is checked, and every intermediate operand
must have the shape the decomposition gives it. Anything else (float16, a first prompt, a
constant seqlens_k, no past, a local window, softcap, attention bias, head sink, a present
longer than T, non-causal) is left decomposed. The fused node's outputs replace the attention
output and the two presents; the decomposed operations then feed nothing and are removed by
`fusion.remove_dead_nodes` (unless something else reads them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from converter.core.webnn.context import MLGraph
from converter.core.webnn.operand import MLOperand
from converter.core.webnn.rotary import rotary_perm
from converter.runtimes.onnxruntime.lowering.context import Emitter
from converter.runtimes.onnxruntime.lowering.matching import (
    const_of,
    equals,
    has_shape,
    made_by,
    merged_heads,
    reshaped,
    scalar_of,
    split_heads,
    transposed,
)

F32 = "float32"
DOMAIN = "com.microsoft"


@dataclass(frozen=True)
class Rotary:
    """cos/sin caches [max_position, R/2] and the rotation layout of a matched rotary."""

    cos: np.ndarray
    sin: np.ndarray
    interleaved: bool


@dataclass(frozen=True)
class GqaMatch:
    """One matched GroupQueryAttention: its inputs, attributes and the three WebNN operands
    it computes (attention output [B, S, N·H], present key, present value)."""

    query: MLOperand
    key: MLOperand | None
    value: MLOperand | None
    past_key: MLOperand
    past_value: MLOperand
    seqlens: MLOperand
    total: int
    heads: int
    kv_heads: int
    scale: float
    rotary: Rotary | None
    outputs: tuple[MLOperand, MLOperand, MLOperand]


# -- small matchers --------------------------------------------------------------------------
def _past_rows(operand: object, seqlens: MLOperand, seq: int, shape: tuple[int, ...]) -> bool:
    """Whether `operand` is seqlens − (seq − 1), reshaped to `shape` (or not reshaped when
    `shape` is seqlens' own)."""
    if not isinstance(operand, MLOperand) or not has_shape(operand, shape):
        return False
    x = reshaped(operand) if made_by(operand, "reshape") is not None else operand
    sub = made_by(x, "sub")
    return (sub is not None and sub.args[0] is seqlens and scalar_of(sub.args[1]) == seq - 1
            and sub.outputs[0].data_type == "int32")


# -- rotary ----------------------------------------------------------------------------------
def _rotary_tables(cos: np.ndarray, sin: np.ndarray, size: int,
                   interleaved: bool) -> tuple[np.ndarray, np.ndarray]:
    """The importer's C, S tables [max_position, H] of cos/sin caches [max_position, R/2]:
    x_rot = x·C + x[perm]·S (C 1 and S 0 beyond R)."""
    half = cos.shape[1]
    rotary_dim = 2 * half
    c = np.ones((cos.shape[0], size), cos.dtype)
    s = np.zeros((cos.shape[0], size), sin.dtype)
    if interleaved:
        c[:, 0:rotary_dim:2] = c[:, 1:rotary_dim:2] = cos
        s[:, 0:rotary_dim:2], s[:, 1:rotary_dim:2] = -sin, sin
    else:
        c[:, :half] = c[:, half:rotary_dim] = cos
        s[:, :half], s[:, half:rotary_dim] = -sin, sin
    return c, s


def _rotary_layout(perm: np.ndarray, size: int) -> tuple[int, bool] | None:
    """(R, interleaved) of a rotary permutation of `size` head elements, else None."""
    for interleaved in (False, True):
        for rotary_dim in range(2, size + 1, 2):
            if np.array_equal(perm, rotary_perm(size, rotary_dim, interleaved)):
                return rotary_dim, interleaved
    return None


def _table_rows(operand: object, positions_ok: object, seq: int, size: int
                ) -> np.ndarray | None:
    """The table of `operand` = reshape(gather(table, positions, axis 0), [1 or B, 1, S, H])
    when its positions pass `positions_ok`."""
    g = made_by(reshaped(operand), "gather")
    if (g is None or int(g.options.get("axis", 0)) != 0 or not isinstance(operand, MLOperand)
            or operand.rank != 4 or tuple(operand.shape[1:]) != (1, seq, size)):
        return None
    table = const_of(g.args[0])
    if table is None or table.ndim != 2 or table.shape[1] != size:
        return None
    if not callable(positions_ok) or not positions_ok(g.args[1]):
        return None
    return table


def _unrotated(x: MLOperand, seqlens: MLOperand, bsz: int, seq: int, size: int
               ) -> tuple[MLOperand, np.ndarray, np.ndarray, np.ndarray] | None:
    """(h, C, S, perm) when `x` is h·C + gather(h, perm, axis 3)·S (see the module docstring),
    else None."""
    add = made_by(x, "add")
    if add is None:
        return None

    def positions_ok(p: object) -> bool:
        a = made_by(p, "add")
        if a is None or not isinstance(p, MLOperand) or not has_shape(p, (bsz, seq)):
            return False
        return (_past_rows(a.args[0], seqlens, seq, (bsz, 1))
                and equals(a.args[1], np.arange(seq).reshape(1, seq)))

    for m1, m2 in ((add.args[0], add.args[1]), (add.args[1], add.args[0])):
        direct, crossed = made_by(m1, "mul"), made_by(m2, "mul")
        if direct is None or crossed is None:
            continue
        h, c_rows = direct.args
        g, s_rows = crossed.args
        gather = made_by(g, "gather")
        if gather is None or gather.args[0] is not h or int(gather.options.get("axis", 0)) != 3:
            continue
        perm = const_of(gather.args[1])
        c = _table_rows(c_rows, positions_ok, seq, size)
        s = _table_rows(s_rows, positions_ok, seq, size)
        if perm is None or c is None or s is None or c.shape != s.shape:
            continue
        return h, c, s, perm.reshape(-1)
    return None


def _rotary(q: MLOperand, k: MLOperand, seqlens: MLOperand, bsz: int, seq: int, size: int
            ) -> tuple[MLOperand, MLOperand, Rotary] | None:
    """(q heads, k heads, caches) when both are rotated with the same tables, else None."""
    qr, kr = _unrotated(q, seqlens, bsz, seq, size), _unrotated(k, seqlens, bsz, seq, size)
    if qr is None or kr is None:
        return None
    layout = _rotary_layout(qr[3], size)
    if layout is None or not np.array_equal(qr[3], kr[3]):
        return None
    rotary_dim, interleaved = layout
    if rotary_dim % 16:  # onnxruntime: cos_cache width a multiple of 8
        return None
    c, s = qr[1], qr[2]
    if not (np.array_equal(c, kr[1]) and np.array_equal(s, kr[2])) or c.dtype != np.float32:
        return None
    half = rotary_dim // 2
    cos = np.ascontiguousarray(c[:, 0:rotary_dim:2] if interleaved else c[:, :half])
    sin = np.ascontiguousarray(s[:, 1:rotary_dim:2] if interleaved else s[:, half:rotary_dim])
    want_c, want_s = _rotary_tables(cos, sin, size, interleaved)
    if not (np.array_equal(want_c, c) and np.array_equal(want_s, s)):
        return None
    return qr[0], kr[0], Rotary(cos, sin, interleaved)


# -- present KV ------------------------------------------------------------------------------
def _present(x: MLOperand, seqlens: MLOperand, bsz: int, kv_heads: int, seq: int,
             length: int, size: int) -> tuple[MLOperand, MLOperand] | None:
    """(past, new heads [B, Nk, S, H]) when `x` is the importer's dynamic placement."""
    outer = made_by(x, "where")
    if outer is None or not has_shape(x, (bsz, kv_heads, length, size)):
        return None
    before, padded, tail = outer.args
    pos = np.arange(length).reshape(1, 1, length, 1)
    lt = made_by(before, "lesser")
    if lt is None or not equals(lt.args[0], pos) or not _past_rows(
            lt.args[1], seqlens, seq, (bsz, 1, 1, 1)):
        return None
    past = padded
    pad = made_by(padded, "pad")
    if pad is not None:
        if (pad.options.get("mode", "constant") != "constant"
                or float(pad.options.get("value", 0.0)) != 0.0):
            return None
        past = pad.args[0]
        held = int(past.shape[2])
        if ([int(v) for v in pad.args[1]] != [0, 0, 0, 0]
                or [int(v) for v in pad.args[2]] != [0, 0, length - held, 0]):
            return None
    if not has_shape(past, (bsz, kv_heads, int(past.shape[2]), size)) or past.shape[2] > length:
        return None
    inner = made_by(tail, "where")
    if inner is None:
        return None
    within, shifted, zero = inner.args
    lt2 = made_by(within, "lesser")
    add = made_by(lt2.args[1], "add") if lt2 is not None else None
    if (lt2 is None or add is None or not equals(lt2.args[0], pos)
            or not _past_rows(add.args[0], seqlens, seq, (bsz, 1, 1, 1))
            or scalar_of(add.args[1]) != seq or scalar_of(zero) != 0.0):
        return None
    new = shifted
    if seq > 1:
        g = made_by(shifted, "gather")
        if g is None or int(g.options.get("axis", 0)) != 2:
            return None
        clamp = made_by(g.args[1], "clamp")
        sub = made_by(clamp.args[0], "sub") if clamp is not None else None
        if (clamp is None or sub is None or clamp.options.get("minValue") != 0
                or clamp.options.get("maxValue") != seq - 1
                or not equals(sub.args[0], np.arange(length))
                or not _past_rows(sub.args[1], seqlens, seq, (1,)) or bsz != 1):
            return None
        new = g.args[0]
    if not has_shape(new, (bsz, kv_heads, seq, size)):
        return None
    return past, new


def _causal_mask(mask: object, seqlens: MLOperand, bsz: int, seq: int, keys: int) -> bool:
    """Whether `mask` is j < min(past_rows + i + 1, seqlens + 1) over [B, 1, S, T]."""
    lt = made_by(mask, "lesser")
    if lt is None or not equals(lt.args[0], np.arange(keys).reshape(1, 1, 1, keys)):
        return False
    ends = made_by(lt.args[1], "min")
    if ends is None:
        return False
    rows, total = ends.args
    add = made_by(rows, "add")
    if (add is None or not _past_rows(add.args[0], seqlens, seq, (bsz, 1, 1, 1))
            or not equals(add.args[1], np.arange(1, seq + 1).reshape(1, 1, seq, 1))):
        return False
    inner = reshaped(total)
    plus = made_by(inner, "add")
    return (plus is not None and isinstance(total, MLOperand)
            and has_shape(total, (bsz, 1, 1, 1)) and plus.args[0] is seqlens
            and scalar_of(plus.args[1]) == 1.0)


# -- the whole node --------------------------------------------------------------------------
def match_group_query_attention(out: MLOperand) -> GqaMatch | None:
    """The GroupQueryAttention whose attention output is `out` (see the module docstring),
    else None."""
    if out.data_type != F32:
        return None
    heads_of = merged_heads(out)
    if heads_of is None:
        return None
    merged, bsz, heads, seq, size = heads_of
    # probs·V, through the grouping reshapes when N > Nk
    grouped = reshaped(merged)
    product = made_by(grouped if grouped is not None else merged, "matmul")
    if product is None:
        return None
    probs_g, present_v = product.args
    if present_v.rank != 4:
        return None
    kv_heads, length = int(present_v.shape[1]), int(present_v.shape[2])
    group = heads // kv_heads if kv_heads and heads % kv_heads == 0 else 0
    if group == 0 or (group > 1) != (grouped is not None):
        return None
    probs = reshaped(probs_g) if group > 1 else probs_g
    soft = made_by(probs, "softmax")
    if soft is None or int(soft.args[1] if len(soft.args) > 1 else soft.options["axis"]) != 3:
        return None
    masked = made_by(soft.args[0], "where")
    if masked is None or scalar_of(masked.args[2]) != float(np.finfo(np.float32).min):
        return None
    mask, raw = masked.args[0], masked.args[1]
    if not has_shape(raw, (bsz, heads, seq, length)):
        return None
    scores = made_by(reshaped(raw) if group > 1 else raw, "matmul")
    if scores is None:
        return None
    q_g, k_t = scores.args
    present_k = transposed(k_t, [0, 1, 3, 2])
    q_scaled = reshaped(q_g) if group > 1 else q_g
    if present_k is None or q_scaled is None or not has_shape(q_scaled, (bsz, heads, seq, size)):
        return None
    scale = 1.0
    mul = made_by(q_scaled, "mul")
    q_rot = q_scaled
    if mul is not None and scalar_of(mul.args[1]) is not None:
        scale, q_rot = float(np.float32(scalar_of(mul.args[1]))), mul.args[0]
    # the seqlens operand: from the causal mask's total
    lt = made_by(mask, "lesser")
    ends = made_by(lt.args[1], "min") if lt is not None else None
    plus = made_by(reshaped(ends.args[1]), "add") if ends is not None else None
    if plus is None:
        return None
    seqlens: MLOperand = plus.args[0]
    if seqlens.data_type != "int32" or not has_shape(seqlens, (bsz,)):
        return None
    if not _causal_mask(mask, seqlens, bsz, seq, length):
        return None
    pk = _present(present_k, seqlens, bsz, kv_heads, seq, length, size)
    pv = _present(present_v, seqlens, bsz, kv_heads, seq, length, size)
    if pk is None or pv is None or pk[0].shape != pv[0].shape or seq >= length:
        return None
    past_key, k_new = pk
    past_value, v_heads = pv
    rotary = None
    q_heads, k_heads = q_rot, k_new
    if made_by(q_rot, "add") is not None:
        found = _rotary(q_rot, k_new, seqlens, bsz, seq, size)
        if found is None:
            return None
        q_heads, k_heads, rotary = found
    q = split_heads(q_heads, bsz, seq, heads, size)
    k = split_heads(k_heads, bsz, seq, kv_heads, size)
    v = split_heads(v_heads, bsz, seq, kv_heads, size)
    if q is None or k is None or v is None:
        return None
    query, key, value = q, k, v
    packed: MLOperand | None = None
    split = q.operator if q.kind == "output" else None
    if (split is not None and split.op == "split" and k.operator is split
            and v.operator is split and list(split.outputs) == [q, k, v]
            and int(split.options.get("axis", 0)) == 2):
        packed = split.args[0]
    if packed is not None:
        return GqaMatch(packed, None, None, past_key, past_value, seqlens, length, heads,
                        kv_heads, scale, rotary, (out, present_k, present_v))
    return GqaMatch(query, key, value, past_key, past_value, seqlens, length, heads, kv_heads,
                    scale, rotary, (out, present_k, present_v))


def plan_group_query_attention(graph: MLGraph) -> dict[int, tuple[GqaMatch, int]]:
    """For each operation computing an output of a matched GroupQueryAttention: (the match,
    which output: 0 attention, 1 present key, 2 present value)."""
    index = {id(o): i for i, op in enumerate(graph.operations) for o in op.outputs}
    plan: dict[int, tuple[GqaMatch, int]] = {}
    for op in graph.operations:
        if op.op != "reshape" or op.outputs[0].rank != 3:
            continue
        match = match_group_query_attention(op.outputs[0])
        if match is None:
            continue
        slots = [index.get(id(o)) for o in match.outputs]
        if any(s is None or s in plan for s in slots):
            continue
        for k, s in enumerate(slots):
            assert s is not None
            plan[s] = (match, k)
    return plan


def emit_group_query_attention(e: Emitter, match: GqaMatch) -> list[str]:
    """The outputs (attention, present key, present value) of one com.microsoft
    GroupQueryAttention node computing `match`."""
    inputs = [e.input(match.query),
              e.input(match.key) if match.key is not None else "",
              e.input(match.value) if match.value is not None else "",
              e.input(match.past_key), e.input(match.past_value), e.input(match.seqlens),
              e.const(np.asarray(match.total, np.int32), "int32", "total_sequence_length")]
    attrs: dict[str, object] = {}
    if match.rotary is not None:
        inputs += [e.const(match.rotary.cos, F32, "cos_cache"),
                   e.const(match.rotary.sin, F32, "sin_cache")]
        attrs = {"do_rotary": 1, "rotary_interleaved": int(match.rotary.interleaved)}
    return e.node_multi("GroupQueryAttention", inputs, [F32, F32, F32], domain=DOMAIN,
                        num_heads=match.heads, kv_num_heads=match.kv_heads,
                        scale=match.scale, **attrs)
