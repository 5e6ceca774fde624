"""QUANTIZE / DEQUANTIZE vs LiteRT: float16 weights (cast or folded), int8/uint8 per-tensor
and per-axis, int8 -> int8 requantization."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.tflite.tflite_builder import ModelBuilder, Quant, S, check, one_op, rand


@pytest.mark.parametrize("fold", [False, True])
def test_fp16_weights(fold: bool) -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    w16 = mb.const("w16", rand(2, 3, seed=1).astype(np.float16))
    w = mb.tensor("w", [2, 3])
    y = mb.output(mb.tensor("y", [2, 3]))
    mb.op("DEQUANTIZE", [w16], [w], version=3)
    mb.op("ADD", [x, w], [y], S.AddOptionsT())
    res = check(mb.build(), [rand(2, 3)], settings={"fold_fp16": fold})
    ops = res.report.to_dict()["ops"]["DEQUANTIZE"]
    assert (ops["folded"] == ["w"]) if fold else (ops["webnn_ops"] == ["cast"])


@pytest.mark.parametrize("dtype,zp", [("int8", -3), ("uint8", 128)])
def test_dequantize(dtype: str, zp: int) -> None:
    x = rand(2, 5, low=-128 if dtype == "int8" else 0, high=127 if dtype == "int8" else 255,
             dtype=dtype)
    check(one_op("DEQUANTIZE", [x], quant_in=[Quant([0.07], [zp])], out_dtype="float32",
                 version=2), [x])


def test_dequantize_per_axis_constant() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [3, 2])
    q = mb.const("q", rand(3, 2, low=-127, high=127, dtype="int8"),
                 quant=Quant([0.1, 0.2, 0.3], [0, 0, 0], 0))
    d = mb.tensor("d", [3, 2])
    y = mb.output(mb.tensor("y", [3, 2]))
    mb.op("DEQUANTIZE", [q], [d], version=4)
    mb.op("ADD", [x, d], [y], S.AddOptionsT())
    res = check(mb.build(), [rand(3, 2)])
    assert res.report.to_dict()["ops"]["DEQUANTIZE"]["webnn_ops"] == ["dequantizeLinear"]


@pytest.mark.parametrize("dtype,zp", [("int8", 5), ("uint8", 120)])
def test_quantize(dtype: str, zp: int) -> None:
    x = rand(3, 7, low=-5, high=5)
    check(one_op("QUANTIZE", [x], quant_out=Quant([0.04], [zp]), out_dtype=dtype), [x],
          steps=1)


def test_requantize() -> None:
    x = rand(2, 6, low=-128, high=127, dtype="int8")
    check(one_op("QUANTIZE", [x], quant_in=[Quant([0.05], [1])], quant_out=Quant([0.1], [-4]),
                 version=2), [x], steps=1)
