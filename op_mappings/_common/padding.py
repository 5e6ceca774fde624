"""Padding rules shared by the ONNX and TFLite convolution and pooling handlers."""

from __future__ import annotations


def same_pad(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    """(begin, end) padding of one spatial axis for "same" output size ceil(size / stride)
    with a dilated kernel; an odd total puts the extra cell at the end (TFLite SAME, ONNX
    SAME_UPPER; ONNX SAME_LOWER swaps the two)."""
    eff = (kernel - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + eff - size, 0)
    return total // 2, total - total // 2
