"""com.microsoft Rfft (onnxruntime's CUDA cuFFT kernel) -> WebNN matmul with constant DFT
matrices.

Rfft of a real signal along the last axis (signal_ndim 1, n points): the one-sided spectrum
Y[..., k, :] = (Σ_t x_t·cos(2πkt/n), -Σ_t x_t·sin(2πkt/n)) for k = 0..n/2, as [..., n/2 + 1, 2]
(real, imaginary) pairs, unnormalised like cuFFT's forward transform. The real and imaginary
parts are two matmuls of x [..., n] with constant [n, n/2 + 1] matrices (computed in float64,
stored in x's type).
"""

from __future__ import annotations

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op
from op_mappings.onnx.contrib._common import attr_int, check_arity, float_operand

MS = "com.microsoft"


@onnx_op("Rfft", since=1, domain=MS)
def rfft(ctx: ImportContext, node: Node) -> Outputs:
    """One-sided DFT of the last axis (see the module docstring).
    Restrictions: float32/float16; signal_ndim 1, onesided 1 and normalized 0 (the CUDA
    kernel's only well-defined form: it ignores `normalized` and leaves a two-sided output
    partly unwritten)."""
    check_arity(node, (1, 1))
    if attr_int(node, "signal_ndim", 1) != 1 or attr_int(node, "onesided", 1) != 1 or \
            attr_int(node, "normalized", 0) != 0:
        raise UnsupportedAttribute("Rfft supports signal_ndim=1, onesided=1, normalized=0")
    b = ctx.builder
    x = float_operand(ctx, node, 0, "X")
    if x.rank < 1 or x.shape[-1] < 1:
        raise InvalidModel(f"Rfft X must have a signal axis, got {list(x.shape)}")
    n = x.shape[-1]
    bins = n // 2 + 1
    angle = 2.0 * np.pi * np.outer(np.arange(n), np.arange(bins)) / n  # [n, bins]
    lead = list(x.shape[:-1])
    x2 = b.reshape(x, [int(np.prod(lead, dtype=np.int64)) if lead else 1, n])
    parts = [b.matmul(x2, ctx.constant(m.astype(x.data_type)))
             for m in (np.cos(angle), -np.sin(angle))]
    y = b.concat([b.reshape(p, [*lead, bins, 1]) for p in parts], len(lead) + 1)
    return [y]
