"""Reference kernels: quantizeLinear and dequantizeLinear (float64 inside).

scale and zeroPoint are expanded blockwise to the input shape: along each axis every element
is repeated input_dim / scale_dim times, so each covers one contiguous block.
quantizeLinear rounds half to even and saturates to the zeroPoint data type's range
(NaN becomes 0, as the spec's integer cast does).

4-bit operands (int4 / uint4) arrive as their int8 / uint8 storage arrays (one value per
byte, see `converter.core.webnn.dtypes`); dequantizeLinear reads them like any integer array and
quantizeLinear saturates to [-8, 7] / [0, 15] and returns the storage array.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.webnn.dtypes import numpy_dtype, type_range
from converter.core.webnn.operand import Operation
from converter.runtimes.reference.registry import kernel


def blockwise_expand(x: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """Repeat each element of x over a contiguous block so that the result has `shape`."""
    for axis, (have, want) in enumerate(zip(x.shape, shape, strict=True)):
        if have != want:
            x = np.repeat(x, want // have, axis=axis)
    return x


@kernel("dequantizeLinear")
def dequantize_linear(op: Operation, args: list[Any], options: dict[str, Any]
                      ) -> list[np.ndarray]:
    x, scale, zero_point = args
    shape = x.shape
    s = blockwise_expand(scale.astype(np.float64), shape)
    zp = blockwise_expand(zero_point.astype(np.float64), shape)
    with np.errstate(over="ignore", invalid="ignore"):
        return [(x.astype(np.float64) - zp) * s]


@kernel("quantizeLinear")
def quantize_linear(op: Operation, args: list[Any], options: dict[str, Any]
                    ) -> list[np.ndarray]:
    x, scale, zero_point = args
    shape = x.shape
    s = blockwise_expand(scale.astype(np.float64), shape)
    zp = blockwise_expand(zero_point.astype(np.float64), shape)
    out_type = op.outputs[0].data_type
    lo, hi = type_range(out_type)
    with np.errstate(all="ignore"):
        q = np.rint(x.astype(np.float64) / s) + zp
    q = np.clip(np.nan_to_num(q, nan=0.0), float(lo), float(hi))
    return [q.astype(numpy_dtype(out_type))]
