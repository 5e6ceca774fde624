"""op_mappings/_common values and padding: one implementation for both formats, each format
keeping its own axis rule."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import InvalidModel
from op_mappings._common.padding import same_pad
from op_mappings._common.values import ints, norm_axis


def test_value_helpers_keep_each_formats_axis_rule() -> None:
    assert ints(np.array([[1], [2]])) == [1, 2]
    assert norm_axis(-1, 3) == 2
    with pytest.raises(InvalidModel, match="out of range"):
        norm_axis(0, 0)  # ONNX: no axis on a scalar
    assert norm_axis(0, 0, scalar_ok=True) == 0  # TFLite kernels accept it
    from op_mappings.tflite._util import norm_axis as tflite_axis

    assert tflite_axis(0, 0) == 0


@pytest.mark.parametrize(("size", "kernel", "stride", "dilation", "expected"), [
    (5, 3, 1, 1, (1, 1)), (5, 2, 1, 1, (0, 1)), (6, 3, 2, 1, (0, 1)), (7, 3, 2, 2, (2, 2)),
    (4, 1, 4, 1, (0, 0)), (3, 5, 1, 1, (2, 2))])
def test_same_pad(size: int, kernel: int, stride: int, dilation: int,
                  expected: tuple[int, int]) -> None:
    """Output ceil(size / stride); the odd cell at the end."""
    begin, end = same_pad(size, kernel, stride, dilation)
    assert (begin, end) == expected
    eff = (kernel - 1) * dilation + 1
    assert (size + begin + end - eff) // stride + 1 == -(-size // stride)
