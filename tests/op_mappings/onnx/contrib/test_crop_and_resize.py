"""com.microsoft CropAndResize vs onnxruntime's CPU kernel."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

X = rng_array(2, 3, 7, 9, seed=1)
ROIS = np.array([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 1.0], [-0.2, 0.3, 0.6, 1.3],
                 [0.5, 0.7, 0.2, 0.1]], np.float32)
BATCH = np.array([0, 1, 1, 0], np.int32)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("crop", [(5, 4), (1, 3), (1, 1)])
@pytest.mark.parametrize("extrapolation", [0.0, -2.5])
def test_crop_and_resize(mode: str, crop: tuple[int, int], extrapolation: float) -> None:
    items = [("x", X), ("rois", ROIS), ("idx", BATCH), ("size", np.array(crop, np.int32))]
    atol = 1e-5 if mode == "bilinear" else 0
    check_ms("CropAndResize", items, {"mode": mode, "extrapolation_value": extrapolation},
             constants=("size",), rtol=1e-5, atol=atol)


def test_malformed_nodes() -> None:
    items = [("x", X), ("rois", ROIS[:, :3]), ("idx", BATCH), ("size", np.array([2, 2], np.int32))]
    expect_error(ms_model("CropAndResize", items, constants=("size",)), "invalid_model",
                 "must be [N, C, H, W], [R, 4], [R] and two positive sizes")
