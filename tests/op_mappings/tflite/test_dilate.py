"""DILATE vs LiteRT: ranks 1-4, dilation 1 on some axes, constant and computed padding
values, int32 and int8 data, and the dilation-count rule."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import In, Quant, check, op_model, rand


def model(x: np.ndarray, dil: list[int], pv: np.ndarray, *, const_pv: bool = True,
          quant: Quant | None = None) -> tuple[bytes, list[np.ndarray]]:
    out = [(n - 1) * d + 1 for n, d in zip(x.shape, dil, strict=False)]
    dtype = x.dtype.name
    return op_model("DILATE", [In(x, quant=quant), In(np.array(dil, np.int32), True),
                               In(pv, const_pv, quant)],
                    [(out, dtype, quant) if quant else (out, dtype)])


@pytest.mark.parametrize("shape,dil", [([5], [3]), ([3, 4], [2, 1]), ([2, 3, 4], [1, 2, 3]),
                                       ([2, 2, 3, 2], [2, 3, 1, 2]), ([2, 3], [1, 1])])
@pytest.mark.parametrize("const_pv", [True, False])
def test_float(shape: list[int], dil: list[int], const_pv: bool) -> None:
    m, feeds = model(rand(*shape, seed=1), dil, np.array(-7.5, np.float32), const_pv=const_pv)
    check(m, feeds, rtol=0, atol=0)


def test_int32() -> None:
    m, feeds = model(rand(3, 3, low=-9, high=9, dtype="int32"), [2, 2], np.array(0, np.int32))
    check(m, feeds)


def test_int8_quantized() -> None:
    q = Quant([0.2], [10])
    m, feeds = model(rand(2, 3, low=-128, high=127, seed=2, dtype="int8"), [3, 2],
                     np.array(10, np.int8), quant=q)
    check(m, feeds, steps=0)


def test_dilation_count_rule() -> None:
    m, _ = op_model("DILATE", [In(rand(2, 3)), In(np.array([2], np.int32), True),
                               In(np.array(0.0, np.float32), True)], [([3, 3], "float32")])
    with pytest.raises(ConversionFailed, match="must be 2 values >= 1"):
        convert_tflite(m)
