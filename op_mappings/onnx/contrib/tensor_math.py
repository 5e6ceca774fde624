"""Small com.microsoft math and data-movement ops -> WebNN gathers and element-wise ops.

- CDist (metric sqeuclidean or euclidean): C[i, j] = Σ_k (A[i, k] - B[j, k])² (its square
  root for euclidean), from the broadcast differences of A [M, K] and B [N, K].
- Inverse: the adjugate over the determinant, both by the Leibniz formula (one gather of every
  cofactor's permutation terms, reduceProduct, signs, reduceSum); matrices up to 5x5.
- ComplexMul / ComplexMulConj: A · B / A · conj(B) of complex values stored as [..., 2]
  (real, imaginary) pairs, numpy broadcasting of the leading axes.
- TorchEmbedding: weight[indices] (a gather on axis 0); padding_idx and scale_grad_by_freq
  only affect training.
- UnfoldTensor: every slice of `size` elements with stride `step` along `dim` (a gather with a
  constant [n, size] index), the slice axis appended last.
- IsAllFinite: true when no input holds a NaN or an infinity (isnan_only / isinf_only check
  one kind), a 0-D bool.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings._common.values import norm_axis
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import (
    attr_int,
    attr_str,
    check_arity,
    check_same_type,
    float_operand,
)
from op_mappings.onnx.det import signed_permutations

MS = "com.microsoft"
MAX_INVERSE_ORDER = 5


@onnx_op("CDist", since=1, domain=MS)
def cdist(ctx: ImportContext, node: Node) -> Outputs:
    """Pairwise (squared) euclidean distances of the rows of A and B.
    Restrictions: float32/float16; A [M, K] and B [N, K]; metric sqeuclidean or euclidean."""
    check_arity(node, (2, 2))
    b = ctx.builder
    x = float_operand(ctx, node, 0, "A")
    y = float_operand(ctx, node, 1, "B")
    check_same_type(node, [(x, "A"), (y, "B")])
    metric = attr_str(node, "metric", "sqeuclidean")
    if metric not in ("sqeuclidean", "euclidean"):
        raise UnsupportedAttribute(f"CDist metric {metric!r} is not sqeuclidean or euclidean")
    if x.rank != 2 or y.rank != 2 or x.shape[1] != y.shape[1]:
        raise InvalidModel(f"CDist A and B must be [M, K] and [N, K], got {list(x.shape)} and "
                           f"{list(y.shape)}")
    m, k = x.shape
    n = y.shape[0]
    diff = b.sub(b.reshape(x, [m, 1, k]), b.reshape(y, [1, n, k]))
    sq = b.reduce_sum(b.mul(diff, diff), axes=[2])
    return [b.sqrt(sq) if metric == "euclidean" else sq]


def _cofactor_terms(m: int) -> tuple[np.ndarray, np.ndarray]:
    """([M·M, (M-1)!, M-1] flat positions, [M·M, (M-1)!] signs) of the Leibniz terms of each
    cofactor C[i, j] = (-1)^(i+j) det(A without row i and column j)."""
    terms = signed_permutations(m - 1)
    positions, signs = [], []
    for i, j in itertools.product(range(m), repeat=2):
        rows = [r for r in range(m) if r != i]
        cols = [c for c in range(m) if c != j]
        positions.append([[rows[r] * m + cols[perm[r]] for r in range(m - 1)]
                          for perm, _ in terms])
        signs.append([sign * (-1.0) ** (i + j) for _, sign in terms])
    return np.array(positions, np.int32), np.array(signs)


@onnx_op("Inverse", since=1, domain=MS)
def inverse(ctx: ImportContext, node: Node) -> Outputs:
    """Matrix inverse adj(A) / det(A) (see the module docstring).
    Restrictions: float32/float16; square matrices [..., M, M] with M <= 5; the cofactor sums
    lose precision on ill-conditioned matrices (onnxruntime uses LU with pivoting); a singular
    matrix gives infinities or NaN instead of an error."""
    check_arity(node, (1, 1))
    b = ctx.builder
    x = float_operand(ctx, node, 0, "X")
    if x.rank < 2 or x.shape[-1] != x.shape[-2]:
        raise InvalidModel(f"Inverse needs square matrices [..., M, M], got {list(x.shape)}")
    m = x.shape[-1]
    if m > MAX_INVERSE_ORDER:
        raise UnsupportedAttribute(f"Inverse of {m}x{m} matrices is not supported (at most "
                                   f"{MAX_INVERSE_ORDER}x{MAX_INVERSE_ORDER})")
    lead = list(x.shape[:-2])
    if m == 1:
        return [b.reciprocal(x)]
    pos, signs = _cofactor_terms(m)
    flat = b.reshape(x, [*lead, m * m])
    factors = b.gather(flat, ctx.constant(pos), axis=len(lead))  # [..., M², (M-1)!, M-1]
    terms = b.reduce_product(factors, axes=[len(lead) + 2])
    cof = b.reduce_sum(b.mul(terms, ctx.constant(signs.astype(x.data_type))),
                       axes=[len(lead) + 1])  # [..., M²]: C[i, j] at i·M + j
    first_row = b.slice(cof, [0] * len(lead) + [0], [*lead, m])
    a_row = b.slice(flat, [0] * len(lead) + [0], [*lead, m])
    det = b.reduce_sum(b.mul(first_row, a_row), axes=[len(lead)], keep_dimensions=True)
    adj = b.transpose(b.reshape(cof, [*lead, m, m]),
                      permutation=[*range(len(lead)), len(lead) + 1, len(lead)])
    return [b.div(adj, b.reshape(det, [*lead, 1, 1]))]


def _complex_mul(ctx: ImportContext, node: Node, conj: bool) -> Any:
    check_arity(node, (2, 2))
    b = ctx.builder
    x = float_operand(ctx, node, 0, "A")
    y = float_operand(ctx, node, 1, "B")
    check_same_type(node, [(x, "A"), (y, "B")])
    if x.rank == 0 or y.rank == 0 or x.shape[-1] != 2 or y.shape[-1] != 2:
        raise InvalidModel(f"{node.op_type} A and B must end in a dimension of 2 (real, "
                           f"imaginary), got {list(x.shape)} and {list(y.shape)}")

    def part(v: Any, i: int) -> Any:
        return b.slice(v, [0] * (v.rank - 1) + [i], [*v.shape[:-1], 1])

    ar, ai, br, bi = part(x, 0), part(x, 1), part(y, 0), part(y, 1)
    if conj:
        real = b.add(b.mul(ar, br), b.mul(ai, bi))
        imag = b.sub(b.mul(ai, br), b.mul(ar, bi))
    else:
        real = b.sub(b.mul(ar, br), b.mul(ai, bi))
        imag = b.add(b.mul(ar, bi), b.mul(ai, br))
    return b.concat([real, imag], max(x.rank, y.rank) - 1)


@onnx_op("ComplexMul", since=1, domain=MS)
def complex_mul(ctx: ImportContext, node: Node) -> Outputs:
    """A · B on [..., 2] complex pairs. Restrictions: float32/float16."""
    return [_complex_mul(ctx, node, False)]


@onnx_op("ComplexMulConj", since=1, domain=MS)
def complex_mul_conj(ctx: ImportContext, node: Node) -> Outputs:
    """A · conj(B) on [..., 2] complex pairs. Restrictions: float32/float16."""
    return [_complex_mul(ctx, node, True)]


@onnx_op("TorchEmbedding", since=1, domain=MS)
def torch_embedding(ctx: ImportContext, node: Node) -> Outputs:
    """weight[indices] (see the module docstring).
    Restrictions: 2-D weight; out-of-range indices are not detected (WebNN gather clamps or
    is implementation-defined)."""
    check_arity(node, (2, 4))
    weight = ctx.operand(node.inputs[0])
    if weight.rank != 2:
        raise InvalidModel(f"TorchEmbedding weight must be 2-D, got {list(weight.shape)}")
    indices = ctx.operand(node.inputs[1])
    return [ctx.builder.gather(weight, indices, axis=0)]


@onnx_op("UnfoldTensor", since=1, domain=MS)
def unfold_tensor(ctx: ImportContext, node: Node) -> Outputs:
    """Sliding slices along `dim` (see the module docstring).
    Restrictions: size >= 1, step >= 1, size <= the dimension."""
    check_arity(node, (1, 1))
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    if x.rank == 0:
        raise InvalidModel("UnfoldTensor input must have rank >= 1")
    dim = norm_axis(attr_int(node, "dim", -1), x.rank, "dim")
    size = attr_int(node, "size", None)
    step = attr_int(node, "step", 1)
    length = x.shape[dim]
    if size < 1 or step < 1 or size > length:
        raise InvalidModel(f"UnfoldTensor size {size} and step {step} must be >= 1 with size "
                           f"<= {length} (dimension {dim})")
    count = (length - size) // step + 1
    index = np.arange(count)[:, None] * step + np.arange(size)[None, :]
    y = b.gather(x, ctx.constant(index.astype(np.int32)), axis=dim)  # [.., n, size, ..]
    perm = [a for a in range(y.rank) if a != dim + 1] + [dim + 1]
    return [b.transpose(y, permutation=perm) if dim + 1 != y.rank - 1 else y]


@onnx_op("IsAllFinite", since=1, domain=MS)
def is_all_finite(ctx: ImportContext, node: Node) -> Outputs:
    """True when every input is free of NaN and infinities (see the module docstring).
    Restrictions: float32/float16 inputs; isnan_only and isinf_only not both set."""
    if not node.inputs:
        raise InvalidModel("IsAllFinite needs at least one input")
    b = ctx.builder
    nan_only, inf_only = attr_int(node, "isnan_only", 0), attr_int(node, "isinf_only", 0)
    if nan_only and inf_only:
        raise InvalidModel("IsAllFinite isnan_only and isinf_only cannot both be set")
    worst = None
    for i in range(len(node.inputs)):
        x = float_operand(ctx, node, i, f"input {i}")
        flags = [b.is_nan(x)] if nan_only else [b.is_infinite(x)] if inf_only else \
            [b.is_nan(x), b.is_infinite(x)]
        bad = flags[0] if len(flags) == 1 else b.logical_or(flags[0], flags[1])
        count = b.reduce_max(b.cast(bad, "int32")) if x.rank else b.cast(bad, "int32")
        worst = count if worst is None else b.max(worst, count)
    assert worst is not None
    return [b.equal(worst, b.constant(np.zeros((), np.int32)))]


@onnx_op("NGramRepeatBlock", since=1, domain=MS)
def ngram_repeat_block(ctx: ImportContext, node: Node) -> Outputs:
    """scores with -inf for every token that would repeat an n-gram of input_ids: for each
    batch row and each start i <= S - n, when ids[i : i + n - 1] equals the last n - 1 ids,
    token ids[i + n - 1] is blocked (a [B, S - n + 1, V] comparison; n = ngram_size).
    Restrictions: float32/float16 scores [B, V]; input_ids [B, S] int32/int64; ngram_size >= 1
    (S < n blocks nothing)."""
    check_arity(node, (2, 2))
    b = ctx.builder
    ids = ctx.operand(node.inputs[0])
    scores = float_operand(ctx, node, 1, "scores")
    n = attr_int(node, "ngram_size", None)
    if ids.rank != 2 or scores.rank != 2 or ids.shape[0] != scores.shape[0] or n < 1:
        raise InvalidModel(f"NGramRepeatBlock input_ids {list(ids.shape)} and scores "
                           f"{list(scores.shape)} must be [B, S] and [B, V], ngram_size {n} "
                           ">= 1")
    bsz, seq = ids.shape
    vocab = scores.shape[1]
    starts = seq - n + 1
    if starts <= 0:
        return [scores]
    ids32 = b.cast(ids, "int32") if ids.data_type != "int32" else ids
    matched = None
    for j in range(n - 1):  # ids[i + j] == ids[S - n + 1 + j] for every start i
        window = b.slice(ids32, [0, j], [bsz, starts])
        last = b.slice(ids32, [0, seq - n + 1 + j], [bsz, 1])
        eq = b.equal(window, last)
        matched = eq if matched is None else b.logical_and(matched, eq)
    tokens = b.slice(ids32, [0, n - 1], [bsz, starts])  # [B, starts]
    hit = b.equal(b.reshape(tokens, [bsz, starts, 1]),
                  ctx.constant(np.arange(vocab, dtype=np.int32).reshape(1, 1, vocab)))
    if matched is not None:
        hit = b.logical_and(hit, b.reshape(matched, [bsz, starts, 1]))
    blocked = b.reduce_max(b.cast(hit, "uint8"), axes=[1])  # [B, V]
    return [b.where(blocked, b.constant(np.full((), -np.inf, scores.data_type)), scores)]
