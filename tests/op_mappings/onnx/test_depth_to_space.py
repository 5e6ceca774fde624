"""ONNX DepthToSpace (DCR/CRD) and SpaceToDepth vs onnxruntime."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import rand
from tests.op_mappings.onnx.harness_ext import check_node


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_to_space(mode: str) -> None:
    check_node("DepthToSpace", [("x", rand(2, 8, 3, 2))], {"blocksize": 2, "mode": mode},
               opset=13)


def test_space_to_depth() -> None:
    check_node("SpaceToDepth", [("x", rand(2, 3, 4, 6))], {"blocksize": 2}, opset=13)
