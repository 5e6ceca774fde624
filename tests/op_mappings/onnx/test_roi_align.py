"""ONNX RoiAlign vs onnxruntime: avg and max, half_pixel and output_half_pixel, fixed and
adaptive (sampling_ratio 0) grids with rois given at run time or as constants, several
images (batch_indices), ROIs reaching outside the feature map, degenerate ROIs, a spatial
scale, opset 10 (no coordinate_transformation_mode), float16; and the conversion error of
the one unsupported variant."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import converter
from converter.core.errors import ConversionFailed
from tests.op_mappings.onnx.harness import check_node, node_model, rand

TOL = {"rtol": 1e-4, "atol": 1e-5}

# x1, y1, x2, y2 in input pixels (scaled by spatial_scale)
ROIS = np.array([[0.0, 0.0, 9.0, 9.0],
                 [1.3, 2.7, 6.1, 8.4],
                 [-3.0, -2.5, 4.2, 3.3],      # reaches out above/left
                 [5.5, 6.0, 14.0, 12.5],      # reaches out below/right
                 [2.0, 2.0, 2.0, 2.6],        # zero width
                 [7.9, 0.4, 3.1, 5.0]],       # x2 < x1
                dtype=np.float32)


def _inputs(n: int = 2, c: int = 3, seed: int = 0, rois: np.ndarray = ROIS
            ) -> list[tuple[str, np.ndarray]]:
    x = rand(n, c, 10, 9, seed=seed)
    batch = (np.arange(rois.shape[0]) % n).astype(np.int64)
    return [("x", x), ("rois", rois), ("batch", batch)]


def _attrs(mode: str, ctm: str, ratio: int, **kw: Any) -> dict[str, Any]:
    return {"mode": mode, "coordinate_transformation_mode": ctm, "sampling_ratio": ratio,
            "output_height": kw.pop("oh", 3), "output_width": kw.pop("ow", 4), **kw}


@pytest.mark.parametrize("ratio", [1, 2, 3])
@pytest.mark.parametrize("ctm", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("mode", ["avg", "max"])
def test_roi_align_fixed_grid(mode: str, ctm: str, ratio: int) -> None:
    check_node("RoiAlign", _inputs(), _attrs(mode, ctm, ratio), opset=16, **TOL)


@pytest.mark.parametrize("ctm", ["half_pixel", "output_half_pixel"])
def test_roi_align_adaptive_grid_runtime_rois(ctm: str) -> None:
    """sampling_ratio 0 with rois computed at run time (avg): data-dependent grid sizes,
    large ROIs (many samples per bin), ROIs far outside the map."""
    # (onnxruntime overflows on an inverted ROI with half_pixel: leave it out there)
    rois = ROIS[:5] if ctm == "half_pixel" else ROIS
    rois = np.concatenate([rois, [[-20.0, -15.0, 30.0, 25.0], [0.5, 0.5, 8.5, 9.5]]]
                          ).astype(np.float32)
    check_node("RoiAlign", _inputs(rois=rois), _attrs("avg", ctm, 0, oh=2, ow=3), opset=16,
               **TOL)
    check_node("RoiAlign", _inputs(n=1, rois=rois), _attrs("avg", ctm, 0, oh=5, ow=1,
                                                              spatial_scale=0.5),
               opset=16, **TOL)


@pytest.mark.parametrize("ctm", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("mode", ["avg", "max"])
def test_roi_align_adaptive_grid_constant_rois(mode: str, ctm: str) -> None:
    check_node("RoiAlign", _inputs(), _attrs(mode, ctm, 0, spatial_scale=0.7), opset=16,
               constants=("rois",), **TOL)


def test_roi_align_opset10_scale_and_single_image() -> None:
    """Opset 10 has no coordinate_transformation_mode (output_half_pixel behaviour)."""
    attrs = {"output_height": 2, "output_width": 2, "sampling_ratio": 2, "spatial_scale": 0.5}
    check_node("RoiAlign", _inputs(n=1), attrs, opset=10, **TOL)
    check_node("RoiAlign", _inputs(n=1), {**attrs, "mode": "max"}, opset=10, **TOL)


def test_roi_align_float16() -> None:
    inputs = [(n, v.astype(np.float16) if v.dtype == np.float32 else v)
              for n, v in _inputs(seed=3)]
    check_node("RoiAlign", inputs, _attrs("avg", "half_pixel", 2), opset=16, rtol=1e-2,
               atol=1e-2)


def test_roi_align_max_adaptive_runtime_rois_is_rejected() -> None:
    model = node_model("RoiAlign", _inputs(), _attrs("max", "half_pixel", 0), opset=16)
    with pytest.raises(ConversionFailed, match="needs constant rois"):
        converter.convert(model)
