"""ONNX Mod (fmod 0/1, signed/unsigned/float), BitShift, Bitwise* vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import rand
from tests.op_mappings.onnx.harness_ext import check_node

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("dtype", ["int32", "int64", "int8"])
@pytest.mark.parametrize("fmod", [0, 1])
def test_mod_integers(dtype: str, fmod: int) -> None:
    a = RNG.integers(-50, 50, size=(3, 4)).astype(dtype)
    b = RNG.integers(1, 9, size=(4,)).astype(dtype) * np.array([1, -1, 1, -1], dtype)
    check_node("Mod", [("a", a), ("b", b)], {"fmod": fmod}, opset=13)


def test_mod_unsigned_and_float() -> None:
    a = RNG.integers(0, 200, size=(3, 4)).astype(np.uint8)
    b = RNG.integers(1, 9, size=(3, 4)).astype(np.uint8)
    check_node("Mod", [("a", a), ("b", b)], opset=13)
    check_node("Mod", [("a", rand(3, 4, low=-9, high=9)), ("b", rand(4, low=0.5, high=3))],
               {"fmod": 1}, opset=13, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["uint8", "uint32"])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift(dtype: str, direction: str) -> None:
    bits = 8 if dtype == "uint8" else 32
    x = RNG.integers(0, 1 << bits, size=(2, 5), dtype=np.uint64).astype(dtype)
    y = RNG.integers(0, bits, size=(2, 5)).astype(dtype)
    check_node("BitShift", [("x", x), ("s", y)], {"direction": direction}, opset=11)


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "uint32"])
def test_bitwise(op: str, dtype: str) -> None:
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, size=(3, 4), dtype=np.int64).astype(dtype)
    b = RNG.integers(info.min, info.max, size=(4,), dtype=np.int64).astype(dtype)
    check_node(op, [("a", a), ("b", b)], opset=18)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int32", "uint32"])
def test_bitwise_not(dtype: str) -> None:
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, size=(3, 4), dtype=np.int64).astype(dtype)
    check_node("BitwiseNot", [("a", a)], opset=18)
