"""com.microsoft MoE and QMoE vs onnxruntime's CPU kernels (dense top-k mixture)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.oracle import (
    check_ms,
    compare,
    expect_error,
    ms_model,
    rng_array,
)
from tests.op_mappings.onnx.contrib.quant_oracle import pack_bits
from tests.op_mappings.onnx.harness import run_ort

T, H, INTER, E = 6, 16, 32, 4
X = rng_array(T, H, seed=1, low=-1, high=1)
LOGITS = rng_array(T, E, seed=2)


def _moe_items(act: str, bias: bool, shape3d: bool = False
               ) -> list[tuple[str, np.ndarray | None]]:
    f1 = 2 * INTER if act == "swiglu" else INTER
    x = X.reshape(2, 3, H) if shape3d else X
    return [("x", x), ("r", LOGITS), ("w1", rng_array(E, f1, H, seed=3, low=-0.5, high=0.5)),
            ("b1", rng_array(E, f1, seed=4, low=-0.2, high=0.2) if bias else None),
            ("w2", rng_array(E, H, INTER, seed=5, low=-0.5, high=0.5)),
            ("b2", rng_array(E, H, seed=6, low=-0.2, high=0.2) if bias else None)]


@pytest.mark.parametrize("act", ["relu", "gelu", "silu", "identity"])
@pytest.mark.parametrize("k,normalize", [(1, 0), (2, 0), (2, 1), (4, 0)])
def test_moe(act: str, k: int, normalize: int) -> None:
    attrs = {"activation_type": act, "k": k, "normalize_routing_weights": normalize}
    check_ms("MoE", _moe_items(act, True), attrs, constants=("w1", "b1", "w2", "b2"),
             rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("attrs", [
    {}, {"activation_alpha": 1.702, "activation_beta": 1.0, "swiglu_limit": 0.5}])
def test_moe_swiglu(attrs: dict[str, Any]) -> None:
    full = {"activation_type": "swiglu", "swiglu_fusion": 1, "k": 2} | attrs
    check_ms("MoE", _moe_items("swiglu", True), full, constants=("w1", "b1", "w2", "b2"),
             rtol=1e-4, atol=1e-5)


def test_moe_3d() -> None:
    check_ms("MoE", _moe_items("silu", False, shape3d=True), {"activation_type": "silu",
                                                              "k": 2},
             constants=("w1", "w2"), rtol=1e-4, atol=1e-5)


def test_moe_float16() -> None:
    """onnxruntime 1.31.1's CPU MoE returns zeros for float16: the oracle is its float32
    kernel on the same (float16-representable) values."""
    items = [(n, None if v is None else v.astype(np.float16))
             for n, v in _moe_items("silu", True)]
    attrs = {"activation_type": "silu", "k": 2}
    wide = [(n, None if v is None else v.astype(np.float32)) for n, v in items]
    const = ("w1", "b1", "w2", "b2")
    feeds = {"x": items[0][1], "r": items[1][1]}
    expected = run_ort(ms_model("MoE", wide, attrs, constants=const),
                       {k: v.astype(np.float32) for k, v in feeds.items()})
    compare(ms_model("MoE", items, attrs, constants=const), feeds,
            {"y": expected["y"].astype(np.float16)}, "MoE", 1e-2, 5e-3)


def test_moe_computed_weights() -> None:
    check_ms("MoE", _moe_items("relu", True), {"k": 2}, rtol=1e-4, atol=1e-5)


def _quantize(w: np.ndarray, bits: int, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric per-row (block 0) or blockwise quantization, zero point 2^(bits-1)."""
    e, n, k = w.shape
    groups = k // block if block else 1
    wb = w.reshape(e, n, groups, -1)
    qmax = 2 ** (bits - 1) - 1
    scale = np.abs(wb).max(axis=-1) / qmax
    q = np.clip(np.round(wb / scale[..., None]), -qmax - 1, qmax).astype(np.int32)
    q = (q + 2 ** (bits - 1)).reshape(e, n, k).astype(np.uint8)
    packed = pack_bits(q, 4) if bits == 4 else q
    return packed, (scale if block else scale[..., 0]).astype(np.float32)


@pytest.mark.parametrize("bits", [4, 8])
@pytest.mark.parametrize("block", [0, 16])
@pytest.mark.parametrize("k,normalize", [(2, 1), (4, 0)])
def test_qmoe(bits: int, block: int, k: int, normalize: int,
              monkeypatch: pytest.MonkeyPatch) -> None:
    """onnxruntime 1.31.1's CPU QMoE normalizes the top-k weights even with
    normalize_routing_weights=0 (its float MoE does not): compared where both agree. Its
    blockwise 8-bit path quantizes the activations to int8 unless ORT_QMOE_CPU_QNBIT_GEMM is
    "fp32" (set here: the oracle dequantizes the weights, as the conversion does)."""
    monkeypatch.setenv("ORT_QMOE_CPU_QNBIT_GEMM", "fp32")
    items = _moe_items("silu", True)
    w1, s1 = _quantize(items[2][1], bits, block)  # type: ignore[arg-type]
    w2, s2 = _quantize(items[4][1], bits, block)  # type: ignore[arg-type]
    qitems = [items[0], items[1], ("w1", w1), ("s1", s1), items[3], ("w2", w2), ("s2", s2),
              items[5]]
    attrs: dict[str, Any] = {"activation_type": "silu", "k": k, "expert_weight_bits": bits,
                             "normalize_routing_weights": normalize}
    if block:
        attrs["block_size"] = block
    check_ms("QMoE", qitems, attrs, constants=("w1", "s1", "b1", "w2", "s2", "b2"),
             rtol=1e-3, atol=1e-4)


def test_malformed_nodes() -> None:
    items = _moe_items("relu", False)
    expect_error(ms_model("MoE", items, {"activation_type": "softplus"}),
                 "unsupported_attribute", "activation_type 'softplus' is not one of")
    expect_error(ms_model("MoE", items, {"k": 5}), "invalid_model", "k=5 must be in [1, 4]")
    expect_error(ms_model("MoE", items, {"use_sparse_mixer": 1}), "unsupported_attribute",
                 "use_sparse_mixer=1")
