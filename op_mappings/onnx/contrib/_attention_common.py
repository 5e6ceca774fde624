"""Helpers shared by the attention-family mappings (not a mapping module: no handlers here).

Used by the com.microsoft Attention / MultiHeadAttention / GroupQueryAttention /
DecoderMaskedMultiHeadAttention / RotaryEmbedding handlers and by the standard-domain
Attention (23/24) and RotaryEmbedding (23) handlers.

- attribute and input-count checks that fail with a one-line `InvalidModel` (the importer adds
  the node's name and op type);
- head layout: `split_heads` ([B, S, N·H] -> [B, N, S, H]), `merge_heads` (back);
- masks: a boolean "allowed" mask is either a numpy array (known at conversion time, folded
  into a constant) or a uint8 operand (computed in the graph); `mask_and` combines them;
- `attend`: scaled dot-product attention with grouped KV heads, softcap, additive biases, a
  mask (additive `mask_filter_value` semantics or exclusion semantics) and an optional extra
  "sink" logit per head, using one batched matmul for Q·Kᵀ and one for P·V (never one per head);
- rotary embeddings: `rotary_tables` builds per-position [cos, sin] rows laid out over the whole
  head (the untouched tail gets cos 1, sin 0) and `apply_rotary` computes
  x·C + x[perm]·S with one gather for the rotate-half / rotate-pairs permutation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeAlias, TypeVar

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.core.webnn.rotary import rotary_perm
from converter.importer import ImportContext
from op_mappings._common.values import const_or_none

Mask: TypeAlias = "np.ndarray | MLOperand"
"""Boolean "allowed" mask: a numpy bool array, or a uint8 (0/1) operand."""

Value: TypeAlias = "np.ndarray | MLOperand"
"""A tensor known at conversion time (numpy) or computed in the graph (operand)."""

T = TypeVar("T")


def derived(ctx: ImportContext, what: str, sources: Sequence[object],
            params: tuple[object, ...], make: Callable[[], T]) -> T:
    """`make()`, computed once per builder (`ctx.memo`) for the same `sources` (compared by
    identity: operands, cached arrays) and `params` (hashable). The layers of a transformer
    read the same sequence lengths, positions and cos/sin caches: what is derived from
    them alone (masks, rotary rows, KV placement conditions) is built once and shared.
    `make` must depend on nothing else (when it raises, nothing is stored)."""
    key = ("attention", what, tuple(id(s) for s in sources), params)
    hit = ctx.memo.get(key)
    if hit is not None:
        result: T = hit[1]
        return result
    result = make()
    ctx.memo[key] = (tuple(sources), result)  # the sources stay alive: their ids stay theirs
    return result


# -- attributes and inputs -----------------------------------------------------------------


def int_attr(node: Node, name: str, default: int | None = None) -> int:
    """Integer attribute `name`; `default` when absent (None: the attribute is required)."""
    value = node.attrs.get(name)
    if value is None:
        if default is None:
            raise InvalidModel(f"required attribute {name!r} is missing")
        return default
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise InvalidModel(f"attribute {name!r} must be an integer, got {value!r}")
    return int(value)


def float_attr(node: Node, name: str, default: float) -> float:
    """Float attribute `name` (an integer value is accepted); `default` when absent."""
    value = node.attrs.get(name)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise InvalidModel(f"attribute {name!r} must be a float, got {value!r}")
    return float(value)


def ints_attr(node: Node, name: str) -> list[int] | None:
    """Integer-list attribute `name`, or None when absent."""
    value = node.attrs.get(name)
    if value is None:
        return None
    if not isinstance(value, (tuple, list)) or not all(
            isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in value):
        raise InvalidModel(f"attribute {name!r} must be a list of integers, got {value!r}")
    return [int(v) for v in value]


def flag_attr(node: Node, name: str, default: int = 0) -> bool:
    """A 0/1 attribute as a bool; any other value is an InvalidModel error."""
    value = int_attr(node, name, default)
    if value not in (0, 1):
        raise InvalidModel(f"attribute {name!r} must be 0 or 1, got {value}")
    return bool(value)


def check_arity(node: Node, n_in: tuple[int, int], n_out: tuple[int, int]) -> None:
    """Raise InvalidModel unless the node has n_in[0]..n_in[1] inputs and n_out[0]..n_out[1]
    outputs (trailing omitted ones count)."""
    for what, count, (lo, hi) in (("inputs", len(node.inputs), n_in),
                                  ("outputs", len(node.outputs), n_out)):
        if not lo <= count <= hi:
            span = f"{lo}" if lo == hi else f"{lo} to {hi}"
            raise InvalidModel(f"expects {span} {what}, got {count}")


def require(node: Node, index: int, what: str) -> str:
    """The name of required input `index`; InvalidModel when it is omitted."""
    name = node.input(index)
    if not name:
        raise InvalidModel(f"required input {index} ({what}) is missing")
    return name


def reject_inputs(node: Node, indices: Sequence[int], names: Sequence[str],
                  why: str = "") -> None:
    """UnsupportedAttribute when one of the optional inputs `indices` is given."""
    for i, name in zip(indices, names, strict=True):
        if node.input(i):
            raise UnsupportedAttribute(f"input {i} ({name}) is not supported{why}")


def shape_of(ctx: ImportContext, name: str, ranks: Sequence[int], what: str
             ) -> tuple[int, ...]:
    """The static shape of input `name`, checked to have one of `ranks`."""
    shape = tuple(int(d) for d in ctx.shape(name))
    if len(shape) not in ranks:
        want = " or ".join(str(r) for r in ranks)
        raise InvalidModel(f"{what} must have rank {want}, got shape {list(shape)}")
    return shape


def float_input(ctx: ImportContext, name: str, what: str) -> MLOperand:
    """Operand of a float32/float16 input (UnsupportedAttribute for other types)."""
    x = ctx.operand(name)
    if x.data_type not in ("float32", "float16"):
        raise UnsupportedAttribute(f"{what} has data type {x.data_type}; float32 or float16 "
                                   "is needed")
    return x


def value(ctx: ImportContext, name: str) -> Value:
    """The numpy value of `name` when it is a constant, else its operand."""
    v = const_or_none(ctx, name)
    return v if v is not None else ctx.operand(name)


def const_int_scalar(ctx: ImportContext, node: Node, index: int, what: str) -> int:
    """Input `index` as a Python int; it must be known at conversion time and hold one
    element."""
    arr = np.asarray(ctx.const_input(node, index))
    if arr.size != 1:
        raise InvalidModel(f"{what} must hold one element, got shape {list(arr.shape)}")
    return int(arr.reshape(-1)[0])


# -- operands ------------------------------------------------------------------------------


def scalar(ctx: ImportContext, x: float | int, data_type: str) -> MLOperand:
    """A 0-D constant operand (one per value and type per builder)."""
    arr = np.asarray(x).astype(data_type)
    return derived(ctx, "scalar", (), (data_type, arr.tobytes()),
                   lambda: ctx.builder.constant(arr))


def operand(ctx: ImportContext, v: Value, data_type: str | None = None) -> MLOperand:
    """`v` as an operand (numpy arrays become constants; bool -> uint8)."""
    if isinstance(v, np.ndarray):
        return ctx.constant(v, data_type)
    if data_type is not None and v.data_type != data_type:
        return ctx.builder.cast(v, data_type)
    return v


def reshape(ctx: ImportContext, v: Value, shape: Sequence[int]) -> Value:
    if isinstance(v, np.ndarray):
        return v.reshape(shape)
    if list(v.shape) == list(shape):
        return v
    return ctx.builder.reshape(v, list(shape))


def split_heads(ctx: ImportContext, x: MLOperand, heads: int) -> MLOperand:
    """[B, S, N·H] -> [B, N, S, H]."""
    bsz, seq, hidden = x.shape
    b = ctx.builder
    x = b.reshape(x, [bsz, seq, heads, hidden // heads])
    return b.transpose(x, permutation=[0, 2, 1, 3])


def merge_heads(ctx: ImportContext, x: MLOperand) -> MLOperand:
    """[B, N, S, H] -> [B, S, N·H]."""
    bsz, heads, seq, size = x.shape
    b = ctx.builder
    return b.reshape(b.transpose(x, permutation=[0, 2, 1, 3]), [bsz, seq, heads * size])


def optional_past(ctx: ImportContext, name: str, axis: int) -> MLOperand | None:
    """Operand of a past-state input, or None when it is omitted or has length 0 along `axis`
    (an empty past: WebNN has no zero-size operands, concatenating nothing is the identity)."""
    if not name:
        return None
    if ctx.shape(name)[axis] == 0:
        return None
    return ctx.operand(name)


# -- masks ---------------------------------------------------------------------------------


def mask_and(ctx: ImportContext, a: Mask | None, b: Mask | None) -> Mask | None:
    """Logical and of two allowed-masks (numpy when both are known)."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.logical_and(a, b)
    return ctx.builder.logical_and(operand(ctx, a, "uint8"), operand(ctx, b, "uint8"))


def compare(ctx: ImportContext, op: str, a: Value, b: Value) -> Mask:
    """a <op> b for op in lt, le, ge, gt, ne: numpy when both are known, else a uint8
    operand (the operands are brought to int32 first)."""
    fns = {"lt": (np.less, "lesser"), "le": (np.less_equal, "lesser_or_equal"),
           "ge": (np.greater_equal, "greater_or_equal"), "gt": (np.greater, "greater"),
           "ne": (np.not_equal, "not_equal")}
    np_fn, wn = fns[op]
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np_fn(a, b)
    dt = "int32"
    for v in (a, b):
        if not isinstance(v, np.ndarray) and v.data_type.startswith("float"):
            dt = v.data_type
    fn: Callable[[MLOperand, MLOperand], MLOperand] = getattr(ctx.builder, wn)
    return fn(operand(ctx, a, dt), operand(ctx, b, dt))


def int_value(ctx: ImportContext, name: str) -> Value:
    """An integer input as int32 numpy (constant) or an int32 operand."""
    v = value(ctx, name)
    if isinstance(v, np.ndarray):
        return v.astype(np.int64).astype(np.int32)
    if v.data_type.startswith("float"):
        raise InvalidModel(f"{name!r} must be an integer tensor, got {v.data_type}")
    if v.data_type == "int32":
        return v
    x = v
    return derived(ctx, "int32", (x,), (), lambda: ctx.builder.cast(x, "int32"))


def arith(ctx: ImportContext, op: str, a: Value, b: Value | int) -> Value:
    """a + b / a - b / min(a, b) on int32 values (numpy when both are known)."""
    if isinstance(b, int):
        b = np.asarray(b, dtype=np.int32)
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        out = {"add": np.add, "sub": np.subtract, "min": np.minimum}[op](a, b)
        return np.asarray(out, dtype=np.int32)
    fn: Callable[[MLOperand, MLOperand], MLOperand] = getattr(ctx.builder, op)
    return fn(operand(ctx, a, "int32"), operand(ctx, b, "int32"))


# -- attention core ------------------------------------------------------------------------


def lowest(data_type: str) -> float:
    """The most negative finite value of a float type (the fill of excluded scores)."""
    return float(np.finfo(np.dtype(data_type)).min)


def attend(ctx: ImportContext, q: MLOperand, k: MLOperand, v: MLOperand, *, scale: float,
           biases: Sequence[Value] = (),
           mask: Mask | None = None, mask_fill: float | None = None,
           exclude: Mask | None = None, softcap: float = 0.0, sink: Value | None = None,
           extra: str | None = None, zero_empty_rows: bool = False
           ) -> tuple[MLOperand, MLOperand | None]:
    """Scaled dot-product attention. q [B, N, S, H]; k [B, Nk, T, H]; v [B, Nk, T, Hv]; N a multiple of Nk (grouped KV heads: head n reads KV
    head n // (N / Nk)). Returns ([B, N, S, Hv], an extra [B, N, S, T] tensor or None):
    `extra` "raw" gives the scaled Q·Kᵀ, "masked" the scores going into the softmax, "probs"
    the softmax output. `zero_empty_rows` gives 0 probabilities (so a 0 output) to query rows
    whose keys are all excluded (the ONNX Attention rule) instead of a uniform average.

    Scores are (q·scale)·kᵀ, then softcap·tanh(x / softcap) when softcap > 0, then each of
    `biases` added (broadcast to [B, N, S, T]), then the masks: keys not allowed by
    `exclude` (or by `mask` when `mask_fill` is None) get the lowest finite value (they drop
    out of the softmax); keys not allowed by `mask` get `mask_fill` added to their score (the
    com.microsoft `mask_filter_value` semantics). `sink` ([N], or a scalar) is one extra logit
    per head that takes part in the softmax normalisation only."""
    b = ctx.builder
    dt = q.data_type
    bsz, heads, seq, size = q.shape
    kv_heads = k.shape[1]
    total = k.shape[2]
    if heads % kv_heads:
        raise InvalidModel(f"{heads} query heads are not a multiple of {kv_heads} KV heads")
    group = heads // kv_heads
    if scale != 1.0:
        q = b.mul(q, scalar(ctx, scale, dt))
    if group > 1:
        q = b.reshape(q, [bsz, kv_heads, group * seq, size])
    scores = b.matmul(q, b.transpose(k, permutation=[0, 1, 3, 2]))
    if group > 1:
        scores = b.reshape(scores, [bsz, heads, seq, total])
    raw = scores
    if softcap > 0.0:
        scores = b.mul(b.tanh(b.div(scores, scalar(ctx, softcap, dt))),
                       scalar(ctx, softcap, dt))
    for bias in biases:
        scores = b.add(scores, operand(ctx, bias, dt))
    add_mask, excl = (None, mask) if mask_fill is None else (mask, None)
    excl = mask_and(ctx, excl, exclude)
    allowed = excl
    fill_value = 0.0 if mask_fill is None else mask_fill
    if isinstance(add_mask, np.ndarray) and isinstance(excl, np.ndarray | None):
        additive = np.where(add_mask, 0.0, fill_value)
        if excl is not None:
            additive = np.where(excl, additive, lowest(dt))
        add_mask, excl = None, None
        if additive.any():
            scores = b.add(scores, ctx.constant(additive.astype(dt)))
    if add_mask is not None:
        scores = b.add(scores, b.where(operand(ctx, add_mask, "uint8"), scalar(ctx, 0.0, dt),
                                       scalar(ctx, fill_value, dt)))
    if isinstance(excl, np.ndarray):
        if not excl.all():
            scores = b.add(scores, ctx.constant(np.where(excl, 0.0, lowest(dt)).astype(dt)))
    elif excl is not None:
        scores = b.where(excl, scores, scalar(ctx, lowest(dt), dt))
    pre = scores
    if sink is None:
        probs = b.softmax(scores, 3)
    else:
        if isinstance(sink, np.ndarray):
            row = np.asarray(sink, dtype=dt).reshape(1, -1, 1, 1)
            col = ctx.constant(np.broadcast_to(row, (bsz, heads, seq, 1)).copy())
        else:
            count = int(np.prod(sink.shape))
            col = b.expand(b.reshape(operand(ctx, sink, dt), [1, count, 1, 1]),
                           [bsz, heads, seq, 1])
        probs = b.softmax(b.concat([scores, col], 3), 3)
        probs = b.slice(probs, [0, 0, 0, 0], [bsz, heads, seq, total])
    if zero_empty_rows and allowed is not None:
        zero = scalar(ctx, 0.0, dt)
        if isinstance(allowed, np.ndarray):
            keep = allowed.any(axis=-1, keepdims=True)
            if not keep.all():
                probs = b.where(ctx.constant(keep), probs, zero)
        else:
            probs = b.where(b.reduce_max(allowed, axes=[3], keep_dimensions=True), probs, zero)
    chosen = {"raw": raw, "masked": pre, "probs": probs}.get(extra or "")
    if group > 1:
        probs = b.reshape(probs, [bsz, kv_heads, group * seq, total])
    out = b.matmul(probs, v)
    if group > 1:
        out = b.reshape(out, [bsz, heads, seq, v.shape[3]])
    return out, chosen


def default_scale(scale: float, head_size: int) -> float:
    """The attention scale: `scale`, or 1/sqrt(head_size) when it is 0."""
    return scale if scale != 0.0 else 1.0 / math.sqrt(head_size)


# -- rotary embeddings ---------------------------------------------------------------------


def _layout(head_size: int, rotary_dim: int, interleaved: bool) -> tuple[np.ndarray, np.ndarray]:
    """For each head element: which cos/sin column it reads (rotary_dim/2 = the constant
    column: cos 1, sin 0) and the sign of its sin term."""
    half = rotary_dim // 2
    col = np.full(head_size, half, dtype=np.int32)
    sign = np.zeros(head_size)
    if interleaved:
        col[:rotary_dim] = np.arange(rotary_dim) // 2
        sign[:rotary_dim:2], sign[1:rotary_dim:2] = -1.0, 1.0
    else:
        col[:half] = col[half:rotary_dim] = np.arange(half)
        sign[:half], sign[half:rotary_dim] = -1.0, 1.0
    return col, sign


def rotary_tables(ctx: ImportContext, cos: Value, sin: Value, head_size: int,
                  interleaved: bool) -> tuple[Value, Value]:
    """cos/sin caches [..., rotary_dim/2] -> C, S [..., head_size] with
    x_rot = x·C + x[perm]·S (C is 1 and S is 0 on the untouched tail)."""
    half = int(cos.shape[-1])
    rotary_dim = 2 * half
    col, sign = _layout(head_size, rotary_dim, interleaved)
    if isinstance(cos, np.ndarray) and isinstance(sin, np.ndarray):
        ones = np.ones((*cos.shape[:-1], 1), cos.dtype)
        c_ext = np.concatenate([cos, ones], axis=-1)
        s_ext = np.concatenate([sin, np.zeros_like(ones, dtype=sin.dtype)], axis=-1)
        return (np.take(c_ext, col, axis=-1),
                (np.take(s_ext, col, axis=-1) * sign).astype(sin.dtype))
    b = ctx.builder
    dt = next(t.data_type for t in (cos, sin) if isinstance(t, MLOperand))
    c_op, s_op = operand(ctx, cos, dt), operand(ctx, sin, dt)
    rank = len(c_op.shape)
    lead = list(c_op.shape[:-1])
    if rotary_dim < head_size:
        c_op = b.concat([c_op, ctx.constant(np.ones(lead + [1], dt))], rank - 1)
        s_op = b.concat([s_op, ctx.constant(np.zeros(lead + [1], dt))], rank - 1)
    c_full = b.gather(c_op, ctx.constant(col), axis=rank - 1)
    s_full = b.mul(b.gather(s_op, ctx.constant(col), axis=rank - 1),
                   ctx.constant(sign.astype(dt)))
    return c_full, s_full


def take_rows(ctx: ImportContext, table: Value, positions: Value) -> Value:
    """table[positions] along axis 0 (numpy when both are known)."""
    if isinstance(table, np.ndarray) and isinstance(positions, np.ndarray):
        rows = table.shape[0]
        pos = positions.astype(np.int64)
        if pos.size and (pos.min() < 0 or pos.max() >= rows):
            raise InvalidModel(f"position ids {int(pos.min())}..{int(pos.max())} are outside "
                               f"the {rows}-row cos/sin cache")
        return table[pos]
    idx = positions if not isinstance(positions, np.ndarray) else positions.astype(np.int32)
    return ctx.builder.gather(operand(ctx, table), operand(ctx, idx), axis=0)


def apply_rotary(ctx: ImportContext, x: MLOperand, c: Value, s: Value, rotary_dim: int,
                 interleaved: bool) -> MLOperand:
    """x·C + x[perm]·S along the last axis of x (C and S broadcast to x)."""
    b = ctx.builder
    dt = x.data_type
    size = int(x.shape[-1])
    perm = derived(ctx, "rotary_perm", (), (size, rotary_dim, interleaved),
                   lambda: ctx.constant(rotary_perm(size, rotary_dim, interleaved)))
    partner = b.gather(x, perm, axis=x.rank - 1)
    return b.add(b.mul(x, operand(ctx, c, dt)), b.mul(partner, operand(ctx, s, dt)))


def rotary_rows(ctx: ImportContext, cos: Value, sin: Value, positions: Value | None,
                head_size: int, interleaved: bool) -> tuple[Value, Value]:
    """The C and S rows [B or 1, S, head_size] of each token: cos/sin caches
    [max_position, rotary_dim/2] indexed by `positions` ([B or 1, S]), or per-token caches
    [B, S, rotary_dim/2] when `positions` is None."""
    c_tab, s_tab = derived(ctx, "rotary_tables", (cos, sin), (head_size, interleaved),
                           lambda: rotary_tables(ctx, cos, sin, head_size, interleaved))
    if positions is None:
        return c_tab, s_tab
    return derived(ctx, "rotary_rows", (c_tab, s_tab, positions), (),
                   lambda: (take_rows(ctx, c_tab, positions), take_rows(ctx, s_tab, positions)))


def rotate(ctx: ImportContext, x: MLOperand, cos: Value, sin: Value,
           positions: Value | None, *, heads: int, rotary_dim: int, interleaved: bool,
           rows: tuple[Value, Value] | None = None) -> MLOperand:
    """Rotary embedding of x: [B, S, N·H] (3-D, `heads` = N) or [B, N, S, H] (4-D).
    cos/sin/positions as in `rotary_rows` (or its result given as `rows`). The first
    `rotary_dim` elements of every head are rotated (halves, or even/odd pairs when
    `interleaved`)."""
    b = ctx.builder
    if x.rank == 3:
        bsz, seq, hidden = x.shape
        size = hidden // heads
        x4 = b.reshape(x, [bsz, seq, heads, size])
    else:
        bsz, _, seq, size = x.shape
        x4 = x
    c_tab, s_tab = rows or rotary_rows(ctx, cos, sin, positions, size, interleaved)
    count = int(c_tab.shape[0])
    shape = [count, seq, 1, size] if x.rank == 3 else [count, 1, seq, size]
    c4, s4 = derived(ctx, "rotary_rows4", (c_tab, s_tab), tuple(shape),
                     lambda: (reshape(ctx, c_tab, shape), reshape(ctx, s_tab, shape)))
    out = apply_rotary(ctx, x4, c4, s4, rotary_dim, interleaved)
    return out if x.rank == 4 else b.reshape(out, list(x.shape))
