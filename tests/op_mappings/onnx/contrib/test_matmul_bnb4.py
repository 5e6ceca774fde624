"""com.microsoft MatMulBnb4 (weights quantized by onnxruntime's own MatMulBnb4Quantizer) vs
onnxruntime's CPU kernel."""

from __future__ import annotations

import numpy as np
import pytest
from onnxruntime.quantization.matmul_bnb4_quantizer import MatMulBnb4Quantizer

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

K, N = 48, 20


def _quantized(quant_type: int, block: int) -> tuple[np.ndarray, np.ndarray]:
    weight = rng_array(K, N, seed=1, low=-1, high=1)  # MatMul's B [K, N]
    quantizer = MatMulBnb4Quantizer.__new__(MatMulBnb4Quantizer)
    quantizer.block_size, quantizer.quant_type = block, quant_type
    return quantizer.bnb4_block_quant(weight)


@pytest.mark.parametrize("quant_type", [0, 1])
@pytest.mark.parametrize("block", [16, 64])
@pytest.mark.parametrize("a_shape", [(3, K), (2, 3, K), (K,)])
def test_matmul_bnb4(quant_type: int, block: int, a_shape: tuple[int, ...]) -> None:
    packed, absmax = _quantized(quant_type, block)
    items = [("a", rng_array(*a_shape, seed=2)), ("b", packed), ("m", absmax)]
    attrs = {"K": K, "N": N, "block_size": block, "quant_type": quant_type}
    check_ms("MatMulBnb4", items, attrs, constants=("b", "m"), rtol=1e-4, atol=1e-4)


def test_matmul_bnb4_float16() -> None:
    packed, absmax = _quantized(1, 32)
    items = [("a", rng_array(3, K, seed=4).astype(np.float16)), ("b", packed),
             ("m", absmax.astype(np.float16))]
    attrs = {"K": K, "N": N, "block_size": 32, "quant_type": 1}
    check_ms("MatMulBnb4", items, attrs, constants=("b", "m"), rtol=1e-2, atol=2e-2)


def test_malformed_nodes() -> None:
    packed, absmax = _quantized(1, 32)
    items = [("a", rng_array(3, K)), ("b", packed), ("m", absmax)]
    expect_error(ms_model("MatMulBnb4", items, {"K": K, "N": N, "block_size": 32,
                                                 "quant_type": 2}, constants=("b", "m")),
                 "invalid_model", "quant_type must be 0 (FP4) or 1 (NF4)")
    expect_error(ms_model("MatMulBnb4", items, {"K": K, "N": N, "block_size": 32,
                                                 "quant_type": 1}),
                 "unsupported_attribute", "B and absmax must be constant")
    expect_error(ms_model("MatMulBnb4", items, {"K": K, "N": N, "block_size": 32,
                                                 "quant_type": 1, "transB": 0},
                          constants=("b", "m")),
                 "unsupported_attribute", "transB=0")
