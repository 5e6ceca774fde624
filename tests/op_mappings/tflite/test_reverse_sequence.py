"""REVERSE_SEQUENCE vs LiteRT: seq_dim before/after batch_dim, lengths 0, 1 and full,
int64 lengths, integer and int8 data, and the length-range rule."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.errors import ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import In, Quant, S, check, op_model, rand


def options(seq_dim: int, batch_dim: int) -> S.ReverseSequenceOptionsT:
    o = S.ReverseSequenceOptionsT()
    o.seqDim, o.batchDim = seq_dim, batch_dim
    return o


@pytest.mark.parametrize("shape,seq,batch,lens", [
    ([3, 5, 2], 1, 0, [0, 5, 3]),
    ([5, 3, 2], 0, 1, [1, 4, 5]),
    ([2, 3, 4], 2, 0, [4, 2]),
    ([2, 4, 3, 2], 1, 2, [2, 3, 4]),
])
def test_float(shape: list[int], seq: int, batch: int, lens: list[int]) -> None:
    x = rand(*shape, seed=len(lens))
    m, feeds = op_model("REVERSE_SEQUENCE", [In(x), In(np.array(lens, np.int32), True)],
                        [(shape, "float32")], options(seq, batch))
    check(m, feeds, rtol=0, atol=0)


def test_int64_lengths_int32_data() -> None:
    x = rand(2, 6, low=-50, high=50, dtype="int32")
    m, feeds = op_model("REVERSE_SEQUENCE", [In(x), In(np.array([6, 3], np.int64), True)],
                        [([2, 6], "int32")], options(1, 0))
    check(m, feeds)


def test_uint8_quantized() -> None:
    q = Quant([0.1], [128])
    x = rand(3, 4, low=0, high=255, seed=3, dtype="uint8")
    m, feeds = op_model("REVERSE_SEQUENCE", [In(x, quant=q), In(np.array([4, 2, 3], np.int32),
                                                                  True)],
                        [([3, 4], "uint8", q)], options(1, 0))
    check(m, feeds, steps=0)


@pytest.mark.parametrize("lens,rule", [([1, 7], r"must lie in 0\.\.6"),
                                       ([1, 2, 3], "3 seq_lengths for a batch of 2")])
def test_rejected(lens: list[int], rule: str) -> None:
    m, _ = op_model("REVERSE_SEQUENCE", [In(rand(2, 6)), In(np.array(lens, np.int32), True)],
                    [([2, 6], "float32")], options(1, 0))
    with pytest.raises(ConversionFailed, match=rule):
        convert_tflite(m)


def test_lengths_must_be_constant() -> None:
    m, _ = op_model("REVERSE_SEQUENCE", [In(rand(2, 6)), In(np.array([1, 2], np.int32))],
                    [([2, 6], "float32")], options(1, 0))
    with pytest.raises(ConversionFailed, match="known at conversion time"):
        convert_tflite(m)
