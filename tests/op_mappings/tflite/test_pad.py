"""PAD, PADV2, MIRROR_PAD (REFLECT / SYMMETRIC) vs LiteRT, and int8 PAD with the zero
point."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import Quant, S, check, one_op, rand

PADS = np.array([[0, 1], [2, 0], [1, 2]], np.int32)


def test_pad() -> None:
    x = rand(2, 3, 4)
    check(one_op("PAD", [x, PADS], constants=[1]), [x])


def test_padv2() -> None:
    x = rand(2, 3, 4)
    check(one_op("PADV2", [x, PADS, np.array([1.5], np.float32)], constants=[1, 2]), [x])


def test_pad_int8_zero_point() -> None:
    x = rand(2, 3, 4, low=-128, high=127, dtype="int8")
    q = Quant([0.1], [7])
    res = check(one_op("PAD", [x, PADS], constants=[1], quant_in=[q], quant_out=q), [x],
                steps=0)
    assert res.report.to_dict()["ops"]["PAD"]["webnn_ops"] == ["pad"]


@pytest.mark.parametrize("mode", [0, 1])
def test_mirror_pad(mode: int) -> None:
    o = S.MirrorPadOptionsT()
    o.mode = mode
    x = rand(3, 4, 5)
    pads = np.array([[1, 2], [0, 2], [2, 1]], np.int32)
    check(one_op("MIRROR_PAD", [x, pads], o, constants=[1]), [x])
