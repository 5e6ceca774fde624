"""ONNX Det -> the Leibniz formula with one gather: det(A) = Σ_σ sign(σ)·Π_i A[i, σ(i)].

The matrices [..., M, M] are flattened to [..., M·M]; a constant [M!, M] table of the flat
positions i·M + σ(i) gathers every permutation's factors ([..., M!, M]), reduceProduct
multiplies them, the products are multiplied by the constant signs and reduceSum adds them.
Restrictions: float32/float16; M <= 6 (720 permutations); float rounding follows the
Leibniz sum, not LU elimination (the results agree to float32 precision for well-conditioned
matrices).
"""

from __future__ import annotations

import itertools

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx._util import float_dtype_check

MAX_ORDER = 6


def signed_permutations(m: int) -> list[tuple[tuple[int, ...], float]]:
    """Every permutation σ of range(m) with its sign (the Leibniz formula's terms; also the
    com.microsoft Inverse mapping's cofactors)."""
    out = []
    for p in itertools.permutations(range(m)):
        inversions = sum(1 for i in range(m) for j in range(i + 1, m) if p[i] > p[j])
        out.append((p, -1.0 if inversions % 2 else 1.0))
    return out


def _permutations(m: int) -> tuple[np.ndarray, np.ndarray]:
    """([M!, M] flat positions i·M + σ(i), [M!] signs)."""
    terms = signed_permutations(m)
    pos = np.array([[i * m + p[i] for i in range(m)] for p, _ in terms], dtype=np.int32)
    return pos, np.array([sign for _, sign in terms])


@onnx_op("Det", since=11)
def det(ctx: ImportContext, node: Node) -> Outputs:
    b = ctx.builder
    x = ctx.operand(node.inputs[0])
    float_dtype_check(node, x)
    if x.rank < 2 or x.shape[-1] != x.shape[-2]:
        raise InvalidModel(f"Det needs square matrices [..., M, M], got {list(x.shape)}")
    m = x.shape[-1]
    if m > MAX_ORDER:
        raise UnsupportedAttribute(f"Det of {m}x{m} matrices is not supported (at most "
                                   f"{MAX_ORDER}x{MAX_ORDER}: the Leibniz formula has M! terms)")
    lead = list(x.shape[:-2])
    if m == 1:
        return [b.reshape(x, lead)]
    pos, signs = _permutations(m)
    flat = b.reshape(x, [*lead, m * m])
    factors = b.gather(flat, ctx.constant(pos), axis=len(lead))  # [..., M!, M]
    terms = b.reduce_product(factors, axes=[len(lead) + 1])  # [..., M!]
    signed = b.mul(terms, ctx.constant(signs.astype(x.data_type)))
    return [b.reduce_sum(signed, axes=[len(lead)])]
