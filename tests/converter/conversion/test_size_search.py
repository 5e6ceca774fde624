"""Searched sizes for free dimensions the model implies none for
(`converter.conversion.size_search`, issue 24 point 2): the first error names concrete
values, and the flags it names convert a graph equal to onnxruntime's."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper, numpy_helper

import converter
from converter.conversion import size_search
from converter.core.errors import UnresolvedDimensions
from converter.core.fixes import Fix
from tests.converter.frontends.onnx.test_free_dims import _model, _vi


def _ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(sess.run(None, feeds)[0])


def _segmenter() -> onnx.ModelProto:
    """images [batch, 3, height, width] -> Conv 3x3 stride 2 (pads 1) -> Relu: a fully
    convolutional model exported with dynamic height and width."""
    w = numpy_helper.from_array(
        np.random.default_rng(0).normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["images", "w"], ["c"], strides=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["out"])]
    return _model(nodes, [_vi("images", ["batch", 3, "height", "width"])],
                  [_vi("out", ["batch", 4, None, None])], [w])


def _audio_frontend() -> onnx.ModelProto:
    """samples [1, samples] -> Reshape [1, 1, 1, -1] -> Conv 1x400 stride 160 (a 25 ms
    window every 10 ms at 16 kHz): fewer than 400 samples make no frame."""
    w = numpy_helper.from_array(
        np.random.default_rng(1).normal(0, 0.05, (8, 1, 1, 400)).astype(np.float32), "w")
    shape = numpy_helper.from_array(np.array([1, 1, 1, -1], np.int64), "shape")
    nodes = [helper.make_node("Reshape", ["samples", "shape"], ["r"]),
             helper.make_node("Conv", ["r", "w"], ["frames"], strides=[1, 160])]
    return _model(nodes, [_vi("samples", [1, "samples"])], [_vi("frames", [1, 8, 1, None])],
                  [w, shape])


def test_image_axes_get_the_usual_image_size() -> None:
    model = _segmenter()
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(model)
    assert info.value.fixes == (Fix("free_dims", "height", value=224),
                                Fix("free_dims", "width", value=224))
    cli = info.value.render("cli")
    assert "fix them with --dim height=224 --dim width=224" in cli
    assert "224, the usual image size" in cli
    result = converter.convert(model, free_dims={"height": 224, "width": 224})
    x = np.random.default_rng(2).normal(size=(1, 3, 224, 224)).astype(np.float32)
    np.testing.assert_allclose(result.run({"images": x})["out"], _ort(model, {"images": x}),
                               rtol=1e-5, atol=1e-5)


def test_other_dims_get_the_smallest_power_of_two_that_converts() -> None:
    """400 samples make the first frame: 512 is the smallest power of two that converts."""
    model = _audio_frontend()
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(model)
    assert info.value.fixes == (Fix("free_dims", "samples", value=512),)
    cli = info.value.render("cli")
    assert "512, the smallest power of two at which it converts" in cli
    assert "fix them with --dim samples=512" in cli
    result = converter.convert(model, free_dims={"samples": 512})
    x = np.random.default_rng(3).normal(size=(1, 512)).astype(np.float32)
    np.testing.assert_allclose(result.run({"samples": x})["frames"],
                               _ort(model, {"samples": x}), rtol=1e-5, atol=1e-5)


def test_given_sizes_are_kept_while_searching() -> None:
    """A size the user gave stays; only the open dimension is searched."""
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(_segmenter(), free_dims={"height": 64})
    assert info.value.fixes == (Fix("free_dims", "width", value=224),)


def test_no_search_over_the_node_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(size_search, "MAX_SEARCHED_NODES", 1)  # the models have 2 nodes
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(_audio_frontend())
    assert info.value.fixes == (Fix("free_dims", "samples"),)
    assert "--dim samples=N" in info.value.render("cli")


def test_no_size_converts_keeps_the_placeholder() -> None:
    """A graph that fails at every size (an op nobody converts) keeps N, and the search
    does not hide the dimension error."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Frobnicate", ["r"], ["y"], domain="com.example")]
    model = _model(nodes, [_vi("x", [1, "seq"])], [_vi("y", [1, "seq"])])
    model.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(model)
    assert info.value.fixes == (Fix("free_dims", "seq"),)
