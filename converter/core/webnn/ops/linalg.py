"""MLGraphBuilder operators: matmul and gemm.

Restrictions (spec):
- matmul: float32/float16, both ranks >= 2 (1-D operands are not promoted as in numpy), same
  data type, `a[..., M, K] × b[..., K, N]`; batch dimensions broadcast bidirectionally.
- gemm: float32/float16, a and b exactly rank 2, same data type; K must match after the
  optional transposes; `c` (rank 0-2, same data type) broadcasts unidirectionally to [M, N];
  `alpha` and `beta` are finite doubles, cast to the operand data type when computing.
"""

from __future__ import annotations

import math
from typing import Any

from converter.core.webnn import validation as v
from converter.core.webnn.base import BuilderBase
from converter.core.webnn.operand import MLOperand


def _finite(op: str, what: str, value: Any) -> float:
    """A WebIDL `double` (not unrestricted): a finite number."""
    value = v.number(op, what, value)
    if not math.isfinite(value):
        raise v.fail(op, f"{what} must be a finite number, got {value}")
    return float(value)


class LinalgOps(BuilderBase):
    def matmul(self, a: MLOperand, b: MLOperand, *, label: str = "") -> MLOperand:
        """Batched matrix product; output shape `broadcast(batch dims) ++ [M, N]`."""
        op = "matmul"
        x = self._operand(op, "a", a)
        y = self._operand(op, "b", b)
        v.same_type(op, "b", y.data_type, "a", x.data_type)
        if x.shape[-1] != y.shape[-2]:
            raise v.fail(op, f"a columns ({x.shape[-1]}) must equal b rows ({y.shape[-2]}) "
                             f"for shapes {list(x.shape)} and {list(y.shape)}")
        batch = v.bidirectional_broadcast(op, x.shape[:-2], y.shape[:-2],
                                          "batch dimensions of a and b")
        return self._emit1(op, (x, y), {"label": label or None}, x.data_type,
                           (*batch, x.shape[-2], y.shape[-1]))

    def gemm(self, a: MLOperand, b: MLOperand, *, c: MLOperand | None = None,
             alpha: float = 1.0, beta: float = 1.0, a_transpose: bool = False,
             b_transpose: bool = False, label: str = "") -> MLOperand:
        """alpha·A'·B' + beta·C where A' and B' are optionally transposed; output [M, N]."""
        op = "gemm"
        x = self._operand(op, "a", a)
        y = self._operand(op, "b", b)
        v.same_type(op, "b", y.data_type, "a", x.data_type)
        at = v.boolean(op, "aTranspose", a_transpose)
        bt = v.boolean(op, "bTranspose", b_transpose)
        m, k = x.shape[::-1] if at else x.shape
        kb, n = y.shape[::-1] if bt else y.shape
        if k != kb:
            raise v.fail(op, f"K of a ({k}) must equal K of b ({kb}) for shapes "
                             f"{list(x.shape)} and {list(y.shape)} (aTranspose={at}, "
                             f"bTranspose={bt})")
        z = self._optional(op, "c", c)
        if z is not None:
            v.same_type(op, "c", z.data_type, "a", x.data_type)
            v.unidirectional_broadcast(op, z.shape, (m, n), "c")
        return self._emit1(op, (x, y), {"c": z, "alpha": _finite(op, "alpha", alpha),
                                        "beta": _finite(op, "beta", beta),
                                        "aTranspose": at, "bTranspose": bt,
                                        "label": label or None}, x.data_type, (m, n))
