"""Small matchers over a built WebNN graph, shared by the ONNX lowering's re-fusions
(`attention`, `group_query_attention`, `recurrent_fusion`): which operation made an operand,
an operand's constant value, shape tests, and the transpose / reshape steps of a multi-head
attention's head split and merge.

Restrictions: read-only; an operand counts as made by an operation only when it is an
operation's output (inputs and constants are made by none); constants are read with
`context.constant_value` (None for anything that is not a constant).
"""

from __future__ import annotations

import numpy as np

from converter.core.webnn.operand import MLOperand, Operation
from converter.runtimes.onnxruntime.lowering.context import constant_value


def made_by(operand: object, name: str) -> Operation | None:
    """The operation named `name` that produced `operand`, else None."""
    if not isinstance(operand, MLOperand) or operand.kind != "output":
        return None
    op = operand.operator
    return op if op is not None and op.op == name else None


def const_of(operand: object) -> np.ndarray | None:
    """The value of `operand` when it is a constant, else None."""
    return constant_value(operand) if isinstance(operand, MLOperand) else None


def equals(operand: object, expected: np.ndarray) -> bool:
    """Whether `operand` is a constant equal to `expected` (values broadcast to one shape of
    as many elements)."""
    v = const_of(operand)
    if v is None or v.size != np.asarray(expected).size:
        return False
    return bool(np.array_equal(v.reshape(-1), np.asarray(expected).reshape(-1)))


def scalar_of(operand: object) -> float | None:
    """The value of a one-element constant, else None."""
    v = const_of(operand)
    return float(v.reshape(-1)[0]) if v is not None and v.size == 1 else None


def has_shape(operand: MLOperand, shape: tuple[int, ...]) -> bool:
    """Whether `operand`'s shape is `shape`."""
    return tuple(int(d) for d in operand.shape) == shape


def transposed(operand: object, perm: list[int]) -> MLOperand | None:
    """x when `operand` is transpose(x, `perm`), else None."""
    op = made_by(operand, "transpose")
    if op is None or [int(p) for p in op.options["permutation"]] != perm:
        return None
    x: MLOperand = op.args[0]
    return x


def reshaped(operand: object) -> MLOperand | None:
    """x when `operand` is reshape(x, ...), else None."""
    op = made_by(operand, "reshape")
    if op is None:
        return None
    x: MLOperand = op.args[0]
    return x


def split_heads(operand: object, bsz: int, seq: int, n: int, size: int) -> MLOperand | None:
    """x when `operand` is transpose(reshape(x, [B, S, n, H]), [0, 2, 1, 3]) of x [B, S, n·H]."""
    r = transposed(operand, [0, 2, 1, 3])
    if r is None or not has_shape(r, (bsz, seq, n, size)):
        return None
    x = reshaped(r)
    return x if x is not None and has_shape(x, (bsz, seq, n * size)) else None


def merged_heads(out: MLOperand) -> tuple[MLOperand, int, int, int, int] | None:
    """(m, B, N, S, H) when `out` [B, S, N·H] is reshape(transpose(m, [0, 2, 1, 3])) of
    m [B, N, S, H] (the head merge), else None."""
    if out.rank != 3:
        return None
    merged = transposed(reshaped(out), [0, 2, 1, 3])
    if merged is None or merged.rank != 4:
        return None
    bsz, heads, seq, size = (int(d) for d in merged.shape)
    if not has_shape(out, (bsz, seq, heads * size)):
        return None
    return merged, bsz, heads, seq, size


__all__ = ["const_of", "equals", "has_shape", "made_by", "merged_heads", "reshaped",
           "scalar_of", "split_heads", "transposed"]
