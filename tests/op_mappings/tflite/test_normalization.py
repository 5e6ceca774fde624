"""L2_NORMALIZATION and LOCAL_RESPONSE_NORMALIZATION vs LiteRT (default kernels)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import S, check, one_op, rand


def test_l2_normalization() -> None:
    x = rand(2, 3, 6)
    x[0, 0] = 0  # zero rows stay zero (epsilon on the norm)
    check(one_op("L2_NORMALIZATION", [x], S.L2NormOptionsT()), [x])


@pytest.mark.parametrize("radius,bias,alpha,beta", [(2, 1.0, 0.5, 0.75), (1, 2.0, 1e-2, 0.5),
                                                    (0, 1.0, 1.0, 1.0)])
def test_lrn(radius: int, bias: float, alpha: float, beta: float) -> None:
    o = S.LocalResponseNormalizationOptionsT()
    o.radius, o.bias, o.alpha, o.beta = radius, bias, alpha, beta
    x = rand(1, 2, 3, 7, low=-2, high=2)
    check(one_op("LOCAL_RESPONSE_NORMALIZATION", [x], o), [x])
    assert np.isfinite(x).all()
