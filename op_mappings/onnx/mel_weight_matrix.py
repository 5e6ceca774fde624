"""ONNX MelWeightMatrix (17) -> a constant, computed at conversion time from the ONNX
specification.

Every input must be known at conversion time: num_mel_bins, dft_length and sample_rate
decide the output shape [dft_length / 2 + 1, num_mel_bins], and the edge frequencies decide
the integer bin positions of the triangles. The spec's algorithm: mel(f) = 2595·log10(1 +
f / 700); num_mel_bins + 2 points from mel(lower_edge_hertz) in steps of (mel(upper) -
mel(lower)) / (num_mel_bins + 2); back to hertz (700·(10^(m / 2595) - 1)); bin index
floor((dft_length + 1)·hz / sample_rate). Column i is the triangle rising linearly from
bin[i] (0) to bin[i + 1] (1) and falling to bin[i + 2] (exclusive); a zero-width rise puts
a single 1 at bin[i + 1]. Computed in float64, stored as `output_datatype` (float32 by
default).
Restrictions: all inputs constant; every bin index must fall inside the output rows (an
upper edge above the Nyquist frequency is rejected).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from onnx import helper

from converter.core.errors import InvalidModel
from converter.core.ir import Node
from converter.importer import ImportContext
from converter.importer.op_handler import Outputs
from op_mappings.onnx import onnx_op


def _scalar(value: Any) -> Any:
    arr = np.asarray(value)
    if arr.size != 1:
        raise InvalidModel(f"MelWeightMatrix inputs must be scalars, got shape {list(arr.shape)}")
    return arr.reshape(-1)[0]


def mel_weight_matrix(num_mel_bins: int, dft_length: int, sample_rate: int, lower_hz: float,
                      upper_hz: float, dtype: Any = np.float32) -> np.ndarray:
    """The [dft_length // 2 + 1, num_mel_bins] matrix of triangular mel filters."""
    if num_mel_bins < 1 or dft_length < 1 or sample_rate < 1:
        raise InvalidModel(f"MelWeightMatrix num_mel_bins {num_mel_bins}, dft_length "
                           f"{dft_length} and sample_rate {sample_rate} must be positive")
    rows = dft_length // 2 + 1
    mel_lo = 2595.0 * np.log10(1.0 + float(lower_hz) / 700.0)
    mel_hi = 2595.0 * np.log10(1.0 + float(upper_hz) / 700.0)
    points = num_mel_bins + 2
    mel = mel_lo + np.arange(points) * ((mel_hi - mel_lo) / points)
    hz = 700.0 * (np.power(10.0, mel / 2595.0) - 1.0)
    bins = np.floor((dft_length + 1) * hz / sample_rate).astype(np.int64)
    if bins.min() < 0 or bins.max() >= rows:
        raise InvalidModel(f"MelWeightMatrix bin indices {bins.tolist()} fall outside the "
                           f"{rows} spectrogram bins (edges {lower_hz}..{upper_hz} Hz at "
                           f"sample rate {sample_rate})")
    lo, mid, hi = bins[:-2], bins[1:-1], bins[2:]
    j = np.arange(rows)[:, None]
    out = np.zeros((rows, num_mel_bins))
    rise = (j >= lo) & (j <= mid) & (mid > lo)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(rise, (j - lo) / np.maximum(mid - lo, 1), out)
        fall = (j >= mid) & (j < hi)
        out = np.where(fall, (hi - j) / np.maximum(hi - mid, 1), out)
    out = np.where(j == mid, 1.0, out)
    return out.astype(dtype)


def _compute(node: Node, values: list[Any]) -> np.ndarray:
    dtype = helper.tensor_dtype_to_np_dtype(int(node.attrs.get("output_datatype", 1)))
    n_mel, dft, rate, lo, hi = (_scalar(v) for v in values[:5])
    return mel_weight_matrix(int(n_mel), int(dft), int(rate), float(lo), float(hi), dtype)


def _check(ctx: ImportContext, values: list[Any]) -> None:
    n_mel, dft = (int(_scalar(v)) for v in values[:2])
    ctx.check_constant([dft // 2 + 1, max(n_mel, 0) + 2], 8, "the mel weight matrix would take")


def _fold(ctx: ImportContext, node: Node, values: list[Any]) -> list[np.ndarray]:
    _check(ctx, values)
    return [_compute(node, values)]


@onnx_op("MelWeightMatrix", since=17, const_inputs=(0, 1, 2, 3, 4), fold=_fold)
def mel_weight_matrix_op(ctx: ImportContext, node: Node) -> Outputs:
    values = [ctx.const_value(name) for name in node.inputs[:5]]
    _check(ctx, values)
    return [ctx.constant(_compute(node, values), what="MelWeightMatrix output")]
