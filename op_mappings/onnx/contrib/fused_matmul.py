"""onnxruntime's matmul fusions (com.microsoft) -> WebNN gemm / matmul.

- FusedMatMul (and TransposeMatMul, its older duplicate): alpha · op(A) @ op(B), numpy
  matmul semantics. op() applies transBatch (the leading dimension moved behind the batch
  dimensions: [d0, d1, ..., dn-2, dn-1] is read as [d1, ..., dn-2, d0, dn-1]) and then
  trans (the last two dimensions swapped). Two 2-D operands become one WebNN gemm
  (aTranspose/bTranspose/alpha); otherwise transpose + matmul (+ mul by alpha).
- GemmFastGelu: FastGelu(X @ W + bias) (onnxruntime's CUDA/ROCm fusion of MatMul and
  FastGelu): gemm or matmul, then the tanh GELU approximation.
"""

from __future__ import annotations

from typing import Any

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import demote_vectors, promote_vector
from op_mappings.onnx.contrib._common import (
    attr_float,
    attr_int,
    check_arity,
    check_same_type,
    check_shape,
    fast_gelu,
    float_operand,
    scalar,
)

MS = "com.microsoft"


def _flag(node: Node, name: str) -> bool:
    value = attr_int(node, name, 0)
    if value not in (0, 1):
        raise InvalidModel(f"{node.op_type} attribute {name!r} must be 0 or 1, got {value}")
    return bool(value)


def _permutation(rank: int, trans: bool, trans_batch: bool) -> list[int]:
    perm = list(range(rank))
    if trans_batch:
        perm = perm[1:rank - 1] + [0, rank - 1]
    if trans:
        perm[-2], perm[-1] = perm[-1], perm[-2]
    return perm


def _matmul(ctx: ImportContext, node: Node, a: Any, b: Any, trans_a: bool, trans_b: bool,
            trans_batch_a: bool, trans_batch_b: bool, alpha: float, c: Any = None) -> Any:
    """alpha · op(a) @ op(b) (+ c, a vector of the output's last dimension) with numpy's
    1-D promotion; transposes of 1-D operands are ignored (as onnxruntime does)."""
    bld = ctx.builder
    if a.rank == 0 or b.rank == 0:
        raise InvalidModel(f"{node.op_type} operands must have rank >= 1, got shapes "
                           f"{list(a.shape)} and {list(b.shape)}")
    if trans_batch_a or trans_batch_b:
        if a.rank < 3 or a.rank != b.rank:
            raise InvalidModel(f"{node.op_type} transBatchA/transBatchB need A and B of one "
                               f"rank >= 3, got shapes {list(a.shape)} and {list(b.shape)}")
    trans_a = trans_a and a.rank > 1
    trans_b = trans_b and b.rank > 1
    if a.rank == 2 and b.rank == 2 and not (trans_batch_a or trans_batch_b):
        k_a = a.shape[0] if trans_a else a.shape[1]
        k_b = b.shape[1] if trans_b else b.shape[0]
        if k_a != k_b:
            raise InvalidModel(f"{node.op_type} inner dimensions differ: {list(a.shape)} and "
                               f"{list(b.shape)} (transA={int(trans_a)}, "
                               f"transB={int(trans_b)})")
        return bld.gemm(a, b, c=c, alpha=alpha, a_transpose=trans_a, b_transpose=trans_b)
    a1, b1 = a.rank == 1, b.rank == 1
    if a1:
        a = promote_vector(bld, a, 0)
    elif trans_a or trans_batch_a:
        a = bld.transpose(a, permutation=_permutation(a.rank, trans_a, trans_batch_a))
    if b1:
        b = promote_vector(bld, b, 1)
    elif trans_b or trans_batch_b:
        b = bld.transpose(b, permutation=_permutation(b.rank, trans_b, trans_batch_b))
    if a.shape[-1] != b.shape[-2]:
        raise InvalidModel(f"{node.op_type} inner dimensions differ: op(A) is {list(a.shape)}, "
                           f"op(B) is {list(b.shape)}")
    y = demote_vectors(bld, bld.matmul(a, b), a1, b1)
    if alpha != 1.0:
        y = bld.mul(y, scalar(ctx, alpha, y.data_type))
    if c is not None:
        y = bld.add(y, c)
    return y


@onnx_op(("FusedMatMul", "TransposeMatMul"), since=1, domain=MS)
def fused_matmul(ctx: ImportContext, node: Node) -> Outputs:
    """alpha · op(A) @ op(B) (see the module docstring).
    Restrictions: float32/float16; transBatchA/transBatchB need A and B of one rank >= 3
    (onnxruntime's rule); transA/transB of a 1-D operand are ignored, as in onnxruntime."""
    check_arity(node, (2, 2))
    a = float_operand(ctx, node, 0, "A")
    b = float_operand(ctx, node, 1, "B")
    check_same_type(node, [(a, "A"), (b, "B")])
    return [_matmul(ctx, node, a, b, _flag(node, "transA"), _flag(node, "transB"),
                    _flag(node, "transBatchA"), _flag(node, "transBatchB"),
                    attr_float(node, "alpha", 1.0))]


@onnx_op("GemmFastGelu", since=1, domain=MS)
def gemm_fast_gelu(ctx: ImportContext, node: Node) -> Outputs:
    """FastGelu(X @ W + bias).
    Restrictions: float32/float16; numpy matmul semantics for X and W (W of rank >= 2); the
    optional bias is 1-D with W's last dimension."""
    check_arity(node, (2, 3))
    x = float_operand(ctx, node, 0, "X")
    w = float_operand(ctx, node, 1, "W")
    bias = float_operand(ctx, node, 2, "bias") if node.input(2) else None
    check_same_type(node, [(x, "X"), (w, "W"), (bias, "bias")])
    if w.rank < 2:
        raise InvalidModel(f"GemmFastGelu W must have rank >= 2, got shape {list(w.shape)}")
    if bias is not None:
        check_shape(node, bias, [w.shape[-1]], "bias")
    y = _matmul(ctx, node, x, w, False, False, False, False, 1.0, c=bias)
    return [fast_gelu(ctx, y)]
