"""MATRIX_DIAG and MATRIX_SET_DIAG vs LiteRT: ranks 1-3, square and non-square matrices,
float, integer and int8 (stored values copied) tensors, and shape errors."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import In, Quant, S, check, op_model, rand


@pytest.mark.parametrize("shape", [[4], [2, 3], [2, 2, 5]])
@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8"])
def test_matrix_diag(shape: list[int], dtype: str) -> None:
    x = rand(*shape, low=0 if dtype == "uint8" else -9, high=9, seed=1, dtype=dtype)
    m, feeds = op_model("MATRIX_DIAG", [In(x)], [([*shape, shape[-1]], dtype)],
                        S.MatrixDiagOptionsT())
    check(m, feeds, rtol=0, atol=0)


def test_matrix_diag_int8() -> None:
    q = Quant([0.5], [4])
    x = rand(2, 3, low=-128, high=127, seed=2, dtype="int8")
    m, feeds = op_model("MATRIX_DIAG", [In(x, quant=q)], [([2, 3, 3], "int8", q)],
                        S.MatrixDiagOptionsT())
    check(m, feeds, steps=0)


@pytest.mark.parametrize("shape", [[3, 3], [3, 5], [5, 3], [2, 4, 2], [2, 3, 2, 4]])
@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_matrix_set_diag(shape: list[int], dtype: str) -> None:
    x = rand(*shape, low=-9, high=9, seed=3, dtype=dtype)
    d = rand(*shape[:-2], min(shape[-2:]), low=-9, high=9, seed=4, dtype=dtype)
    m, feeds = op_model("MATRIX_SET_DIAG", [In(x), In(d)], [(shape, dtype)],
                        S.MatrixSetDiagOptionsT())
    check(m, feeds, rtol=0, atol=0)


def test_matrix_set_diag_constant_diagonal_int8() -> None:
    q = Quant([0.25], [-3])
    x = rand(2, 4, 3, low=-128, high=127, seed=5, dtype="int8")
    d = rand(2, 3, low=-128, high=127, seed=6, dtype="int8")
    m, feeds = op_model("MATRIX_SET_DIAG", [In(x, quant=q), In(d, True, q)],
                        [([2, 4, 3], "int8", q)], S.MatrixSetDiagOptionsT())
    check(m, feeds, steps=0)


def test_matrix_set_diag_bad_diagonal() -> None:
    x = rand(3, 4)
    m, _ = op_model("MATRIX_SET_DIAG", [In(x), In(rand(4))], [([3, 4], "float32")],
                    S.MatrixSetDiagOptionsT())
    with pytest.raises(ConversionFailed, match=r"diagonal has shape \[4\], expected \[3\]"):
        convert_tflite(m)


def test_matrix_diag_scalar_rejected() -> None:
    m, _ = op_model("MATRIX_DIAG", [In(np.array(1.0, np.float32))], [([1, 1], "float32")],
                    S.MatrixDiagOptionsT())
    with pytest.raises(ConversionFailed, match="rank >= 1"):
        convert_tflite(m)
