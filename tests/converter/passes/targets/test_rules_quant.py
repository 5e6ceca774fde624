"""converter.passes.targets.rules_quant: which dequantizeLinear operations the quantization rules
rewrite for chromium-tflite (the values they keep are checked in test_passes.py against numpy
on the cases of cases.py)."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder
from converter.passes.targets import load_target
from converter.passes.targets.passes import lower

TARGET = load_target("chromium-tflite")


def _dequantize(shape: tuple[int, ...], scale_shape: tuple[int, ...], data_type: str
                ) -> dict[str, int]:
    b = MLGraphBuilder(ML().create_context())
    q = np.ones(shape, np.int8 if data_type in ("int4", "int8") else np.uint8)
    z = np.zeros(scale_shape, q.dtype)
    w = b.dequantize_linear(b.constant(q, data_type),
                            b.constant(np.full(scale_shape, 0.5, np.float32)),
                            b.constant(z, data_type))
    x = b.input("x", [1] * len(shape), "float32")
    return lower(b.build({"y": b.mul(w, x)}), TARGET).applied


@pytest.mark.parametrize(("shape", "scale", "data_type", "applied"), [
    ((48, 20), (48, 1), "int4", {"dequantize-blocks": 1}),
    ((48, 20), (48, 1), "uint4", {"dequantize-uint4": 1, "dequantize-blocks": 1}),
    ((48, 21), (48, 1), "int8", {"dequantize-blocks": 1}),  # 3 blocks of 7
    ((32, 32), (32, 1), "int4", {}),  # square: builds in Chromium
    ((48, 20), (1, 20), "int4", {}),
    ((48, 20), (48, 2), "int4", {}),
    ((48, 20), (1, 1), "uint4", {"dequantize-uint4": 1}),
    ((8, 4, 3, 3), (8, 1, 1, 1), "int8", {}),  # per-channel filters
])
def test_which_dequantizations_are_rewritten(shape: tuple[int, ...], scale: tuple[int, ...],
                                             data_type: str, applied: dict[str, int]) -> None:
    assert _dequantize(shape, scale, data_type) == applied


def test_blocks_keep_the_values() -> None:
    b = MLGraphBuilder(ML().create_context())
    rng = np.random.default_rng(3)
    q = rng.integers(-8, 8, (6, 9)).astype(np.int8)
    z = rng.integers(-8, 8, (6, 1)).astype(np.int8)
    s = rng.uniform(0.1, 1, (6, 1)).astype(np.float32)
    w = b.dequantize_linear(b.constant(q, "int4"), b.constant(s), b.constant(z, "int4"))
    ctx = b.context
    graph = b.build({"y": b.mul(w, b.input("x", [1, 1], "float32"))})
    lowered = lower(graph, TARGET)
    assert lowered.applied == {"dequantize-blocks": 1}
    scales = [c for c in lowered.graph.constants if c.data_type == "float32"]
    assert [list(c.shape) for c in scales] == [[6, 3]]  # 9 = 3 blocks of 3
    got = ctx.compute(lowered.graph, {"x": np.ones((1, 1), np.float32)})["y"]
    np.testing.assert_allclose(got, (q.astype(np.float64) - z) * s, rtol=1e-6)


@pytest.mark.parametrize("count", [6, 7])
def test_packed_uint4_stays_packed_as_int4(count: int) -> None:
    """Packed uint4 bytes become packed int4 bytes (q - 8) without unpacking; an odd count's
    padding nibble is kept."""
    from converter.core.webnn.dtypes import unpack_4bit

    rng = np.random.default_rng(5)
    packed = rng.integers(0, 256, (count + 1) // 2).astype(np.uint8)
    if count % 2:
        packed[-1] = (packed[-1] & 0x0F) | 0x50  # a non-zero padding nibble
    b = MLGraphBuilder(ML().create_context())
    q = b.packed_constant(packed, "uint4", [1, count])
    w = b.dequantize_linear(q, b.constant(np.full((1, 1), 0.25, np.float32)),
                            b.packed_constant(np.array([3], np.uint8), "uint4", [1, 1]))
    graph = b.build({"y": b.mul(w, b.input("x", [1, 1], "float32"))})
    lowered = lower(graph, TARGET)
    assert lowered.applied == {"dequantize-uint4": 1}
    new_q = next(c for c in lowered.graph.constants if c.data_type == "int4" and c.shape[1] > 1)
    assert new_q.packed is not None and new_q._value is None  # never unpacked
    values = unpack_4bit(packed, "uint4", [1, count]).astype(np.int64)
    np.testing.assert_array_equal(unpack_4bit(new_q.packed, "int4", [1, count]), values - 8)
    if count % 2:
        assert new_q.packed[-1] >> 4 == 0x5
    got = b.context.compute(lowered.graph, {"x": np.ones((1, 1), np.float32)})["y"]
    np.testing.assert_allclose(got, (values - 3) * 0.25)
