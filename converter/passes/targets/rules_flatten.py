"""Rule layout-flatten: the flatten at the end of a convolutional chain stays NHWC.

A CNN converted from a channels-first source flattens its last feature map for a dense layer:
`gemm(reshape(x_nchw, [N, C*H*W]), B)`. On a target preferring NHWC (see
`converter.passes.targets.rules_layout`) the feature map is `transpose(x_nhwc, [0, 3, 1, 2])`,
so Chromium runs a transpose only to reorder the flattened vector. Flattening the NHWC data
instead orders it (h, w, c); the dense layer's constant weights are reordered to match at
conversion time (their C*H*W axis permuted to H*W*C), and the transpose goes. The products
are the same; only the order of the dot product's sum differs (exact up to float rounding).

Restrictions: `gemm` (without aTranspose) and `matmul` of rank-2 operands whose first operand
is that reshape of that transpose (a 4-D NHWC->NCHW transpose flattened to [N, C*H*W]) and
whose second is a constant; inactive unless the limits prefer "nhwc".
"""

from __future__ import annotations

import numpy as np

from converter.core.webnn import MLOperand
from converter.core.webnn.operand import Operation
from converter.passes.targets.rewrite import Rewrite, rule
from converter.passes.targets.rules_layout import TO_NCHW, WHY, prefers_nhwc, transposed_from


def _nhwc_source(a: MLOperand) -> MLOperand | None:
    """x_nhwc when `a` is reshape(transpose(x_nhwc, TO_NCHW), [N, C*H*W]), else None."""
    op = a.operator
    if op is None or op.op != "reshape" or a.kind == "constant" or a.rank != 2:
        return None
    src = op.args[0]
    if not isinstance(src, MLOperand) or src.rank != 4:
        return None
    x = transposed_from(src, TO_NCHW)
    if x is None or list(a.shape) != [src.shape[0], int(np.prod(src.shape[1:]))]:
        return None
    return x


@rule("layout-flatten", "gemm", "matmul", limits=True, why=WHY)
def layout_flatten(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """gemm / matmul of an NCHW flatten of NHWC data and constant weights -> the same on the
    NHWC flatten with the weights' rows (or columns) reordered (module docstring)."""
    if not prefers_nhwc(rw):
        return None
    a, b = operation.args[0], operation.args[1]
    if not isinstance(a, MLOperand) or not isinstance(b, MLOperand) or b.rank != 2 or \
            b.kind != "constant" or b.value is None or operation.options.get("aTranspose"):
        return None
    x = _nhwc_source(a)
    if x is None:
        return None
    n, h, w, c = x.shape
    b_transposed = operation.op == "gemm" and bool(operation.options.get("bTranspose"))
    weights = b.value if b_transposed else b.value.T  # [M, C*H*W]
    m = weights.shape[0]
    reordered = np.ascontiguousarray(
        weights.reshape(m, c, h, w).transpose(0, 2, 3, 1).reshape(m, h * w * c))
    new_b = rw.b.constant(reordered if b_transposed else np.ascontiguousarray(reordered.T),
                          b.data_type)
    flat = rw.emit1("reshape", x, [n, h * w * c])
    rw.note("layout-flatten", "NCHW flatten of NHWC data read in NHWC order, the dense "
                              "weights reordered at conversion time (no transpose)")
    return rw.emit(operation.op, [flat, new_b, *operation.args[2:]], dict(operation.options))
