"""ONNX DepthToSpace (DCR/CRD) and SpaceToDepth vs onnxruntime."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check_node, rand


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(mode: str) -> None:
    check_node("DepthToSpace", [("x", rand(2, 8, 3, 2))], {"blocksize": 2, "mode": mode},
               opset=13)


def test_space_to_depth() -> None:
    check_node("SpaceToDepth", [("x", rand(2, 3, 4, 6))], {"blocksize": 2}, opset=13)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_space_to_depth_modes_opset28(mode: str) -> None:
    """opset 28 `mode` (onnxruntime lacks opset 28): oracle written from the ONNX definition,
    y[n, (by·bs + bx)·C + c] (DCR) or y[n, c·bs² + by·bs + bx] (CRD) = x[n, c, h·bs + by,
    w·bs + bx]."""
    import numpy as np

    import converter
    from tests.op_mappings.onnx.harness import node_model

    x = rand(2, 3, 4, 6)
    bs, (n, c, h, w) = 2, x.shape
    want = np.empty((n, c * bs * bs, h // bs, w // bs), np.float32)
    for ch in range(c):
        for by in range(bs):
            for bx in range(bs):
                out_c = (by * bs + bx) * c + ch if mode == "DCR" else ch * bs * bs + by * bs + bx
                want[:, out_c] = x[:, ch, by::bs, bx::bs]
    model = node_model("SpaceToDepth", [("x", x)], {"blocksize": bs, "mode": mode}, opset=28)
    np.testing.assert_array_equal(converter.convert(model).run({"x": x})["y"], want)
