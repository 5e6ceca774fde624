"""com.microsoft BiasDropout, BitmaskBiasDropout and BitmaskDropout in inference (CUDA-only
kernels: checked against Add / Identity graphs in onnxruntime, the masks against onnxruntime's
CUDA kernel's inference branch: all true, all bits set) and ScaledSiLU (onnxruntime CPU
kernel)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import helper

import converter
from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

X = rng_array(2, 5, 7, seed=1)
BIAS = rng_array(7, seed=2)
RES = rng_array(2, 5, 7, seed=3)


def _adds(ins: list[str], outs: list[str]) -> list[Any]:
    x, b, r = (ins + [""])[:3]
    nodes = [helper.make_node("Add", [x, b], ["xb"])]
    last = "xb"
    if r:
        nodes.append(helper.make_node("Add", ["xb", r], ["xbr"]))
        last = "xbr"
    return nodes + [helper.make_node("Identity", [last], outs[:1])]


@pytest.mark.parametrize("op", ["BiasDropout", "BitmaskBiasDropout"])
@pytest.mark.parametrize("residual", [True, False])
@pytest.mark.parametrize("training", [None, False])
def test_bias_dropout(op: str, residual: bool, training: bool | None) -> None:
    items = [("x", X), ("b", BIAS), ("r", RES if residual else None),
             ("ratio", np.array(0.1, np.float32)),
             ("t", None if training is None else np.array(training))]
    check_ms(op, items, constants=("ratio", "t"), reference=_adds)


@pytest.mark.parametrize("op,mask", [
    ("BiasDropout", np.ones((2, 5, 7), np.bool_)),
    ("BitmaskBiasDropout", np.full([3], 0xFFFFFFFF, np.uint32))])
def test_bias_dropout_mask(op: str, mask: np.ndarray) -> None:
    model = ms_model(op, [("x", X), ("b", BIAS)], outputs=("y", "m"), constants=("b",))
    got = converter.convert(model, target="spec").run({"x": X})
    np.testing.assert_allclose(got["y"], X + BIAS, rtol=1e-6)
    carrier = np.uint8 if mask.dtype == np.bool_ else mask.dtype  # bool travels as uint8
    assert got["m"].dtype == carrier and np.array_equal(got["m"], mask)


def test_bitmask_dropout() -> None:
    model = ms_model("BitmaskDropout", [("x", X)], outputs=("y", "m"))
    got = converter.convert(model, target="spec").run({"x": X})
    assert np.array_equal(got["y"], X)
    assert np.array_equal(got["m"], np.full([3], 0xFFFFFFFF, np.uint32))
    check_ms("BitmaskDropout", [("x", X)],
             reference=lambda ins, outs: [helper.make_node("Identity", ins[:1], outs)])


def test_training_mode_refused() -> None:
    items = [("x", X), ("b", BIAS), ("r", None), ("ratio", np.array(0.1, np.float32)),
             ("t", np.array(True))]
    expect_error(ms_model("BiasDropout", items, constants=("ratio", "t")),
                 "unsupported_attribute", "training mode is not supported")


def test_training_mode_ratio_zero_is_inference() -> None:
    items = [("x", X), ("b", BIAS), ("r", None), ("ratio", np.array(0.0, np.float32)),
             ("t", np.array(True))]
    check_ms("BiasDropout", items, constants=("ratio", "t"), reference=_adds)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("scale", [None, 0.75])
@pytest.mark.parametrize("alpha", [None, 1.5])
def test_scaled_silu(dtype: str, scale: float | None, alpha: float | None) -> None:
    items = [("x", X.astype(dtype)), ("s", None if scale is None else np.array(scale, dtype))]
    tol = (1e-6, 1e-6) if dtype == "float32" else (2e-3, 2e-3)
    check_ms("ScaledSiLU", items, {} if alpha is None else {"alpha": alpha},
             constants=("s",), rtol=tol[0], atol=tol[1])
