"""com.microsoft QAttention vs onnxruntime's CPU kernel: uint8 input with int8 / uint8 weights,
per-tensor and per-column weight scales and zero points, constant or graph-input scales and
zero points, mask_index forms, unidirectional, past -> present, scale and mask_filter_value,
float16 (vs onnxruntime in float32); malformed nodes give one-line errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import converter
from tests.op_mappings.onnx.contrib.attention_harness import MS, check_ms, conversion_error
from tests.op_mappings.onnx.harness import assert_close, node_model, rand, run_ort

B, S, D, N = 2, 5, 12, 3
RNG = np.random.default_rng(11)
X = RNG.integers(0, 256, (B, S, D)).astype(np.uint8)
W = RNG.integers(-128, 128, (D, 3 * D)).astype(np.int8)
BIAS = rand(3 * D, seed=3, low=-0.5, high=0.5)
IN_SCALE = np.array(0.02, np.float32)
IN_ZP = np.array(121, np.uint8)


def _qattention(*, w: np.ndarray = W, w_scale: np.ndarray | None = None,
                w_zp: np.ndarray | None = None, mask: np.ndarray | None = None,
                past: np.ndarray | None = None, attrs: dict[str, Any] | None = None,
                in_zp: np.ndarray | None = IN_ZP, present: bool = False,
                constants: tuple[str, ...] = ("w", "bias", "ws", "wzp")) -> dict[str, float]:
    inputs = [("x", X), ("w", w), ("bias", BIAS), ("is", IN_SCALE),
              ("ws", np.array(0.01, np.float32) if w_scale is None else w_scale),
              ("mask", mask), ("izp", in_zp), ("wzp", w_zp), ("past", past)]
    while inputs[-1][1] is None:
        inputs.pop()
    return check_ms("QAttention", inputs, {"num_heads": N, **(attrs or {})},
                    outputs=("y", "present") if present else ("y",), constants=constants)


def test_qattention_per_tensor() -> None:
    _qattention(w_zp=np.array(3, np.int8))
    _qattention(in_zp=None)  # zero points default to 0
    w_u8 = (W.astype(np.int16) + 128).astype(np.uint8)
    _qattention(w=w_u8, w_zp=np.array(131, np.uint8), mask=np.array([5, 2], np.int32))
    # scales and zero points computed in the graph (as DynamicQuantizeLinear gives them)
    _qattention(w_zp=np.array(-2, np.int8), constants=("w", "bias"))


def test_qattention_per_column() -> None:
    scales = rand(3 * D, seed=5, low=0.005, high=0.02)
    _qattention(w_scale=scales)
    _qattention(w_scale=scales, w_zp=(np.arange(3 * D) % 7 - 3).astype(np.int8),
                mask=np.array([3, 5], np.int32))


@pytest.mark.parametrize("form", ["lengths", "ends_starts", "2d", "3d"])
def test_qattention_mask_forms(form: str) -> None:
    rng = np.random.default_rng(4)
    if form == "lengths":
        mask = np.array([4, 2], np.int32)
    elif form == "ends_starts":
        mask = np.array([5, 4, 1, 0], np.int32)
    else:
        mask = (rng.random((B, S) if form == "2d" else (B, S, S)) > 0.4).astype(np.int32)
        mask[..., 0] = 1
    _qattention(mask=mask, w_zp=np.array(1, np.int8))


@pytest.mark.parametrize("past_len", [0, 3])
def test_qattention_unidirectional_past_present(past_len: int) -> None:
    past = rand(2, B, N, past_len, D // N, seed=7)
    mask = np.ones((B, past_len + S), np.int32)
    mask[1, -1] = 0
    _qattention(past=past, mask=mask, present=True, attrs={"unidirectional": 1})
    _qattention(past=past, present=True, attrs={"scale": 0.3, "mask_filter_value": -500.0},
                mask=np.array([past_len + S, past_len + 2], np.int32))


def test_qattention_float16() -> None:
    """float16 bias and scales: computed in float32 and rounded once (onnxruntime's CPU kernel
    has float32 only: compared with it on the same values in float32)."""
    bias16 = BIAS.astype(np.float16)
    scale16 = np.array(0.02, np.float16)
    inputs = [("x", X), ("w", W), ("bias", bias16), ("is", scale16),
              ("ws", np.array(0.01, np.float16)), ("mask", np.array([5, 3], np.int32)),
              ("izp", IN_ZP)]
    model = node_model("QAttention", inputs, {"num_heads": N}, domain=MS,
                       constants=("w", "bias", "ws"))
    f32 = [(n, v.astype(np.float32) if v.dtype == np.float16 else v) for n, v in inputs]
    oracle = node_model("QAttention", f32, {"num_heads": N}, domain=MS,
                        constants=("w", "bias", "ws"))
    feeds = {"x": X, "mask": np.array([5, 3], np.int32), "izp": IN_ZP}
    got = converter.convert(model).run({**feeds, "is": scale16})["y"]
    assert got.dtype == np.float16
    expected = run_ort(oracle, {**feeds, "is": scale16.astype(np.float32)})["y"]
    # the projection is rounded to float16 before the attention (as Attention's float16)
    assert_close(got.astype(np.float32), expected, 1e-2, 1e-2, "QAttention float16")


def test_qattention_malformed() -> None:
    base = [("x", X), ("w", W), ("bias", BIAS), ("is", IN_SCALE),
            ("ws", np.array(0.01, np.float32))]
    attrs = {"num_heads": N}
    assert "weight of shape [11, 36]" in conversion_error(
        "QAttention", [*base[:1], ("w", W[:11]), *base[2:]], attrs)
    assert "num_heads 5" in conversion_error("QAttention", base, {"num_heads": 5})
    assert "only per-tensor" in conversion_error(
        "QAttention", [*base[:3], ("is", np.full(2, 0.02, np.float32)), base[4]], attrs)
    assert "per column" in conversion_error(
        "QAttention", [*base[:4], ("ws", np.full(5, 0.01, np.float32))], attrs)
    assert "uint8 or int8" in conversion_error(
        "QAttention", [("x", X.astype(np.int32)), *base[1:]], attrs)
    assert "do_rotary" in conversion_error("QAttention", base, {**attrs, "do_rotary": 1})
