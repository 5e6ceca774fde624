"""L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION (last axis).

L2_NORMALIZATION = x / max(sqrt(sum(x^2, last)), 1e-6) (LiteRT's hard-coded epsilon on the
norm). LRN = x * (bias + alpha * sum_{c-r..c+r} x^2)^(-beta) with the inclusive, clipped
channel window and alpha NOT divided by the window size (LiteRT's default kernel); emitted as
pad + slices + add.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.tflite import tflite_op
from op_mappings.tflite._util import fin, fout


@tflite_op("L2_NORMALIZATION", since=1)
def l2_normalization(ctx: ImportContext, node: Node) -> Outputs:
    """Last axis; epsilon 1e-6 on the norm; the fused activation field is ignored (as in
    LiteRT)."""
    x = fin(ctx, node, 0)
    assert x is not None
    b = ctx.builder
    norm = b.sqrt(b.reduce_sum(b.mul(x, x), axes=[len(x.shape) - 1], keep_dimensions=True))
    norm = b.max(norm, b.constant(np.array(1e-6, dtype=x.data_type)))
    return [fout(ctx, node, 0, b.div(x, norm))]


@tflite_op("LOCAL_RESPONSE_NORMALIZATION", since=1)
def lrn(ctx: ImportContext, node: Node) -> Outputs:
    """Inclusive window [c - radius, c + radius] over the last axis."""
    x = fin(ctx, node, 0)
    assert x is not None
    b = ctx.builder
    a = node.attrs
    r = int(a["radius"])
    rank = len(x.shape)
    c = x.shape[-1]
    sq = b.mul(x, x)
    if r > 0:
        pad = b.pad(sq, [0] * (rank - 1) + [r], [0] * (rank - 1) + [r])
        total = None
        for j in range(2 * r + 1):
            part = b.slice(pad, [0] * (rank - 1) + [j], list(x.shape[:-1]) + [c])
            total = part if total is None else b.add(total, part)
        sq = total  # type: ignore[assignment]
    dt = x.data_type

    def k(v: float) -> Any:
        return b.constant(np.array(v, dtype=dt))

    base = b.add(k(float(a["bias"])), b.mul(k(float(a["alpha"])), sq))
    return [fout(ctx, node, 0, b.mul(x, b.pow(base, k(-float(a["beta"])))))]
