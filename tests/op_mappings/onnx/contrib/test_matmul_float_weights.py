"""com.microsoft MatMulBlockQuantizedFp8Weight and MatMulBlockQuantizedFp4Weight (CUDA only) vs
float64 numpy written from the schemas (ml_dtypes' float8 E4M3 for the FP8 values and scales)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import helper

from tests.op_mappings.onnx.contrib.oracle import compare, expect_error, ms_model, rng_array

N, K = 6, 64


def _fp8_model(block: int, bias: bool) -> tuple[onnx.ModelProto, np.ndarray, np.ndarray,
                                                  np.ndarray | None]:
    w = rng_array(N, K, seed=1, low=-2, high=2).astype(ml_dtypes.float8_e4m3fn)
    groups = -(-K // block)
    scale = rng_array(N, groups, seed=2, low=0.01, high=0.1)
    bb = rng_array(N, seed=3).astype(np.float16) if bias else None
    items = [("a", rng_array(3, K, seed=4).astype(np.float16)), ("w", np.zeros((N, K))),
             ("s", scale), ("as", None), ("bb", bb)]
    model = ms_model("MatMulBlockQuantizedFp8Weight", items, {"block_size": block},
                     constants=("w", "s", "bb"))
    init = next(t for t in model.graph.initializer if t.name == "w")
    init.CopyFrom(helper.make_tensor("w", onnx.TensorProto.FLOAT8E4M3FN, [N, K],
                                     w.view(np.uint8).tobytes(), raw=True))
    return model, w.astype(np.float64), scale, bb


@pytest.mark.parametrize("block", [16, 128])
@pytest.mark.parametrize("bias", [False, True])
def test_fp8_weight(block: int, bias: bool) -> None:
    model, w, scale, bb = _fp8_model(block, bias)
    a = rng_array(3, K, seed=4).astype(np.float16)
    full = np.repeat(scale.astype(np.float64), block, axis=1)[:, :K]
    want = a.astype(np.float64) @ (w * full).T + (0 if bb is None else bb.astype(np.float64))
    compare(model, {"a": a}, {"y": want.astype(np.float16)}, "Fp8Weight", 1e-2, 2e-2)


@pytest.mark.parametrize("bias", [False, True])
def test_fp4_weight(bias: bool) -> None:
    rng = np.random.default_rng(5)
    codes = rng.integers(0, 16, (N, K)).astype(np.uint8)
    packed = (codes[:, 0::2] | (codes[:, 1::2] << 4)).astype(np.uint8)
    scales = rng_array(N, K // 16, seed=6, low=0.1, high=2).astype(ml_dtypes.float8_e4m3fn)
    global_scale = np.array(0.7, np.float32)
    table = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6])
    values = np.where(codes & 8, -1.0, 1.0) * table[codes & 7]
    weight = values * 0.7 * np.repeat(scales.astype(np.float64), 16, axis=1)
    a = rng_array(2, 3, K, seed=7).astype(np.float16)
    bb = rng_array(N, seed=8).astype(np.float16) if bias else None
    want = a.astype(np.float64) @ weight.T + (0 if bb is None else bb.astype(np.float64))
    items = [("a", a), ("w", packed), ("s", scales.view(np.uint8)), ("g", global_scale),
             ("is", None), ("bb", bb)]
    model = ms_model("MatMulBlockQuantizedFp4Weight", items, constants=("w", "s", "g", "bb"))
    compare(model, {"a": a}, {"y": want.astype(np.float16)}, "Fp4Weight", 1e-2, 5e-2)


def test_malformed_nodes() -> None:
    items = [("a", rng_array(3, K).astype(np.float16)), ("w", np.zeros((N, K // 2), np.uint8)),
             ("s", np.zeros((N, K // 16), np.uint8)), ("g", np.array(1.0, np.float32)),
             ("is", np.array(1.0, np.float32))]
    expect_error(ms_model("MatMulBlockQuantizedFp4Weight", items,
                          constants=("w", "s", "g", "is")),
                 "unsupported_attribute", "input_scale is not supported")


def test_e4m3_table_matches_ml_dtypes() -> None:
    from op_mappings.onnx.contrib.matmul_float_weights import e4m3_values
    bits = np.arange(256, dtype=np.uint8)
    np.testing.assert_array_equal(e4m3_values(bits),
                                  bits.view(ml_dtypes.float8_e4m3fn).astype(np.float32))
