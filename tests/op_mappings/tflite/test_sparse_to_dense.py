"""SPARSE_TO_DENSE vs LiteRT: 2-D, 1-D and scalar indices, scalar and per-index values,
computed values and default value, repeated indices (last value wins), int32 / int64 index
types, int32 and int8 values, and the constant-indices and range rules."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import In, Quant, S, check, op_model, rand


def model(idx, shape, values, default, *, const_values=False, const_default=True,
          idx_type="int32", quant=None):
    out = list(shape)
    dtype = values.dtype.name
    return op_model("SPARSE_TO_DENSE",
                    [In(np.asarray(idx, idx_type), True),
                     In(np.asarray(shape, idx_type), True),
                     In(values, const_values, quant), In(default, const_default, quant)],
                    [(out, dtype, quant) if quant else (out, dtype)],
                    S.SparseToDenseOptionsT())


@pytest.mark.parametrize("const_default", [True, False])
@pytest.mark.parametrize("idx_type", ["int32", "int64"])
def test_2d(const_default: bool, idx_type: str) -> None:
    idx = [[0, 1, 2], [2, 3, 0], [1, 0, 1], [2, 2, 2]]
    m, feeds = model(idx, [3, 4, 3], rand(4, seed=1), np.array(-0.5, np.float32),
                     const_default=const_default, idx_type=idx_type)
    check(m, feeds, rtol=0, atol=0)


def test_1d_indices() -> None:
    m, feeds = model([4, 0, 2], [6], rand(3, seed=2), np.array(9.0, np.float32))
    check(m, feeds, rtol=0, atol=0)


def test_scalar_index_and_value() -> None:
    m, feeds = model(3, [5], np.array(2.5, np.float32), np.array(0.0, np.float32))
    check(m, feeds, rtol=0, atol=0)


def test_scalar_value_many_indices() -> None:
    m, feeds = model([[0, 0], [1, 2], [2, 1]], [3, 3], np.array(7, np.int32),
                     np.array(-1, np.int32))
    check(m, feeds)


def test_repeated_indices_last_wins() -> None:
    idx = [[1, 1], [0, 2], [1, 1], [0, 0], [0, 2]]
    m, feeds = model(idx, [2, 3], rand(5, seed=3), np.array(0.0, np.float32))
    check(m, feeds, rtol=0, atol=0)


def test_constant_values_int32() -> None:
    m, feeds = model([[0, 1], [1, 0]], [2, 2], np.array([5, 6], np.int32),
                     np.array(1, np.int32), const_values=True, const_default=False)
    check(m, feeds)


def test_int8_quantized() -> None:
    q = Quant([0.1], [-5])
    m, feeds = model([[1, 0], [0, 3]], [2, 4], np.array([100, -100], np.int8),
                     np.array(-5, np.int8), quant=q)
    check(m, feeds, steps=0)


def test_indices_must_be_constant() -> None:
    m, _ = op_model("SPARSE_TO_DENSE",
                    [In(np.array([[0], [2]], np.int32)), In(np.array([4], np.int32), True),
                     In(rand(2)), In(np.array(0.0, np.float32), True)],
                    [([4], "float32")], S.SparseToDenseOptionsT())
    with pytest.raises(ConversionFailed, match="known at conversion time"):
        convert_tflite(m)


def test_index_out_of_range() -> None:
    m, _ = model([[0, 4]], [2, 4], rand(1), np.array(0.0, np.float32))
    with pytest.raises(ConversionFailed, match="out of range"):
        convert_tflite(m)
