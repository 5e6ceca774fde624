"""ONNX BitShift and BitwiseAnd/Or/Xor/Not vs onnxruntime, and vs Python's integer shifts
where onnxruntime lacks opset 28."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check_node

RNG = np.random.default_rng(0)


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


def _run(op: str, items: list[tuple[str, np.ndarray]], attrs: dict | None = None,
         opset: int = 28) -> np.ndarray:
    import converter
    from tests.op_mappings.onnx.harness import node_model

    model = node_model(op, items, attrs, opset=opset)
    return converter.convert(model, target="spec").run(dict(items))["y"]


def _edge_values(dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    vals = [info.min, info.min + 1, -1, 0, 1, 2, 3, 0x55, info.max - 1, info.max]
    return np.array([v for v in vals if info.min <= v <= info.max], dtype=dtype)


def _shift_oracle(x: np.ndarray, s: np.ndarray, right: bool) -> np.ndarray:
    """ONNX 28 BitShift written out with Python integers: two's complement patterns of the
    type's width, arithmetic right shifts, out-of-range counts give the sign fill."""
    bits = x.dtype.itemsize * 8
    signed = x.dtype.kind == "i"
    out = []
    for a, n in zip(x.reshape(-1).tolist(), s.reshape(-1).tolist(), strict=True):
        if n < 0 or n >= bits:
            out.append(-1 if right and a < 0 else 0)
        elif right:
            out.append(a >> n)  # Python >> on ints is arithmetic (floor)
        else:
            v = (a << n) & ((1 << bits) - 1)
            out.append(v - (1 << bits) if signed and v >> (bits - 1) else v)
    return np.array(out, dtype=np.int64 if signed else np.uint64).astype(x.dtype).reshape(
        x.shape)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "int64", "uint64"])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift_all_types_exact(dtype: str, direction: str) -> None:
    """Every edge value against every shift count in [-2, bits + 1] (opset 28; onnxruntime
    has no opset 28, the oracle is Python's integer shifts)."""
    bits = np.dtype(dtype).itemsize * 8
    x = _edge_values(dtype)
    counts = np.arange(-2 if dtype[0] == "i" else 0, bits + 2)
    xs = np.repeat(x, len(counts))
    ss = np.tile(counts, len(x)).astype(dtype)
    got = _run("BitShift", [("x", xs), ("s", ss)], {"direction": direction})
    np.testing.assert_array_equal(got, _shift_oracle(xs, ss.astype(np.int64), direction ==
                                                     "RIGHT"))


@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bit_shift_uint64_vs_onnxruntime(direction: str) -> None:
    x = RNG.integers(0, 1 << 63, size=(2, 5), dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    y = RNG.integers(0, 64, size=(5,)).astype(np.uint64)
    check_node("BitShift", [("x", x), ("s", y)], {"direction": direction}, opset=11)


@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_bitwise_64(op: str, dtype: str) -> None:
    """vs onnxruntime, including the extreme values (sign bit, all ones)."""
    info = np.iinfo(dtype)
    edge = _edge_values(dtype)
    fill = RNG.integers(info.min, info.max, size=16 - len(edge), dtype=dtype)
    a = np.concatenate([edge, fill]).reshape(2, 8)
    b = np.concatenate([fill, edge[::-1]])[:8]
    check_node(op, [("a", a), ("b", b)], opset=18)


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_bitwise_not_64(dtype: str) -> None:
    check_node("BitwiseNot", [("a", _edge_values(dtype))], opset=18)
