"""ai.onnx.ml Binarizer and ArrayFeatureExtractor vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check_node, rand

ML = "ai.onnx.ml"


@pytest.mark.parametrize("threshold", [0.0, 0.7, -1.5])
def test_binarizer(threshold: float) -> None:
    x = rand(3, 4, 5, seed=1)
    x.reshape(-1)[:2] = [0.0, 0.7]  # exactly at the thresholds
    check_node("Binarizer", [("x", x)], {"threshold": threshold}, domain=ML)


@pytest.mark.parametrize("threshold", [0.0, 0.7, -1.5, -1.0])
def test_binarizer_int64(threshold: float) -> None:
    """onnxruntime has no int64 Binarizer: the oracle is the definition, x > threshold."""
    import converter
    from tests.op_mappings.onnx.harness import node_model

    x = np.arange(-4, 5, dtype=np.int64).reshape(3, 3)
    model = node_model("Binarizer", [("x", x)], {"threshold": threshold}, domain=ML)
    got = converter.convert(model).run({"x": x})["y"]
    np.testing.assert_array_equal(got, (x > threshold).astype(np.int64))


@pytest.mark.parametrize("shape,idx", [((3, 4), [0, 3, 1]), ((2, 3, 5), [[4, 0]]), ((6,), [5, 2]),
                                       ((2, 5), [[1], [3]])], ids=str)
def test_array_feature_extractor(shape: tuple[int, ...], idx: list) -> None:
    x = rand(*shape, seed=2)
    check_node("ArrayFeatureExtractor", [("x", x), ("i", np.array(idx, np.int64))], domain=ML)
    check_node("ArrayFeatureExtractor", [("x", x), ("i", np.array(idx, np.int64))], domain=ML,
               constants=("i",))
