"""TOPK_V2 vs LiteRT: several k, ties (lower index first), ranks 1-3, integer and int8
inputs; rejected k = 0, k > n, int16 indices and non-constant k."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import In, Quant, S, check, op_model, rand


def topk(x: np.ndarray, k: int, *, idx_type: str = "int32", const_k: bool = True,
         quant: Quant | None = None) -> tuple[bytes, list[np.ndarray]]:
    shape = [*x.shape[:-1], k]
    dtype = x.dtype.name
    return op_model("TOPK_V2", [In(x, quant=quant), In(np.array(k, np.int32), const_k)],
                    [(shape, dtype, quant) if quant else (shape, dtype), (shape, idx_type)],
                    S.TopKV2OptionsT())


@pytest.mark.parametrize("k", [1, 3, 7])
@pytest.mark.parametrize("shape", [[7], [2, 7], [2, 3, 7]])
def test_float(shape: list[int], k: int) -> None:
    x = rand(*shape, seed=k)
    m, feeds = topk(x, k)
    check(m, feeds, rtol=0, atol=0)


@pytest.mark.parametrize("k", [2, 4, 6])
def test_ties(k: int) -> None:
    # many repeated values: LiteRT keeps equal values in index order
    x = np.array([[1, 3, 3, 0, 3, 1], [2, 2, 2, 2, 2, 2], [-1, 5, -1, 5, 0, 5]], np.float32)
    m, feeds = topk(x, k)
    check(m, feeds, rtol=0, atol=0)


@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64"])
def test_integers(dtype: str) -> None:
    x = rand(3, 9, low=0, high=5, seed=2, dtype=dtype)  # small range: ties
    m, feeds = topk(x, 4)
    check(m, feeds)


def test_int8_quantized() -> None:
    x = rand(2, 10, low=-128, high=127, seed=5, dtype="int8")
    m, feeds = topk(x, 5, quant=Quant([0.1], [3]))
    result = check(m, feeds, steps=0)
    assert "dequantizeLinear" not in result.report.to_dict()["ops"]["TOPK_V2"]["webnn_ops"]


@pytest.mark.parametrize("k,idx_type,rule", [(0, "int32", "empty tensors"),
                                             (5, "int32", "outside 1..4"),
                                             (2, "int16", "int32 only")])
def test_rejected(k: int, idx_type: str, rule: str) -> None:
    m, _ = topk(rand(2, 4), k, idx_type=idx_type)
    with pytest.raises(ConversionFailed, match=rule):
        convert_tflite(m)


def test_k_must_be_constant() -> None:
    x = rand(2, 4)
    m, _ = topk(x, 2, const_k=False)
    with pytest.raises(ConversionFailed, match="TOPK_V2"):
        convert_tflite(m)
