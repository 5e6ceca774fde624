"""TFLite dynamic (-1) input dimensions through `converter.convert()`: a -1 in
`shape_signature` runs at the stored `shape` as LiteRT does (checked against LiteRT's own
`get_input_details()` and its outputs), with a report note; `input_dims` / `input_shapes`
set other sizes (compared with LiteRT resized the same way); validation errors; `inspect`."""

from __future__ import annotations

import numpy as np
import pytest

import converter
from converter.core.errors import InvalidModel, UnresolvedDimensions
from converter.core.fixes import Fix
from converter.validate.inspect import inspect_model
from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S, rand, run_litert


def mobilenet_like() -> bytes:
    """x [-1, 8, 8, 3] (stored [1, 8, 8, 3]) -> CONV_2D 3x3 SAME + RELU6 -> MEAN over H, W
    -> y [-1, 4] (stored [1, 4]): the shape_signature hub MobileNets carry."""
    rng = np.random.default_rng(0)
    mb = ModelBuilder()
    x = mb.input("x", [1, 8, 8, 3], shape_signature=[-1, 8, 8, 3])
    w = mb.const("w", rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32))
    b = mb.const("b", rng.normal(0, 0.1, (4,)).astype(np.float32))
    conv = mb.tensor("conv", [1, 8, 8, 4], shape_signature=[-1, 8, 8, 4])
    opts = S.Conv2DOptionsT()
    opts.padding = S.Padding.SAME
    opts.strideW = opts.strideH = 1
    opts.dilationWFactor = opts.dilationHFactor = 1
    opts.fusedActivationFunction = S.ActivationFunctionType.RELU6
    mb.op("CONV_2D", [x, w, b], [conv], opts)
    axes = mb.const("axes", np.array([1, 2], np.int32))
    y = mb.output(mb.tensor("y", [1, 4], shape_signature=[-1, 4]))
    mean = S.ReducerOptionsT()
    mean.keepDims = False
    mb.op("MEAN", [conv, axes], [y], mean)
    return mb.build()


def _litert_input_shape(model: bytes) -> list[int]:
    from ai_edge_litert.interpreter import Interpreter

    return [int(d) for d in Interpreter(model_content=model).get_input_details()[0]["shape"]]


def test_minus_one_runs_at_the_stored_shape_like_litert() -> None:
    model = mobilenet_like()
    assert _litert_input_shape(model) == [1, 8, 8, 3]  # what LiteRT allocates and runs
    result = converter.convert(model)
    assert result.inputs[0].shape == (1, 8, 8, 3)
    assert result.inputs[0].declared_shape == (None, 8, 8, 3)
    (note,) = [w for w in result.report.warnings if "dynamic (-1)" in w]
    assert "x[0]=1" in note and "--dim x:0=N" in note and 'input_dims={"x": {0: N}}' in note
    x = rand(1, 8, 8, 3, seed=3)
    np.testing.assert_allclose(result.run({"x": x})["y"], run_litert(model, [x])[0],
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kwargs", [{"input_dims": {"x": {0: 3}}},
                                    {"input_shapes": {"x": [3, 8, 8, 3]}}])
def test_other_sizes_override_the_stored_one(kwargs: dict) -> None:
    model = mobilenet_like()
    result = converter.convert(model, **kwargs)
    assert result.inputs[0].shape == (3, 8, 8, 3)
    assert not [w for w in result.report.warnings if "dynamic (-1)" in w]
    x = rand(3, 8, 8, 3, seed=4)
    np.testing.assert_allclose(result.run({"x": x})["y"], run_litert(model, [x])[0],
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kwargs, words", [
    ({"input_dims": {"nope": {0: 1}}}, ["nope", "not graph inputs"]),
    ({"input_dims": {"x": {4: 1}}}, ["axis 4", "out of range", "rank 4"]),
    ({"input_dims": {"x": {0: 0}}}, ["x:0", "positive integer"]),
    ({"input_dims": {"x": {1: 9}}}, ["contradicts", "fixed dimension 8"]),
    ({"input_dims": {"x": {0: 1}}, "input_shapes": {"x": [1, 8, 8, 3]}}, ["both"]),
    ({"free_dims": {"batch": 1}}, ["no named free dimensions", "input_dims"]),
])
def test_option_errors_are_one_line(kwargs: dict, words: list[str]) -> None:
    with pytest.raises(InvalidModel) as info:
        converter.convert(mobilenet_like(), **kwargs)
    text = str(info.value)
    assert "\n" not in text
    for w in words:
        assert w in text


def test_free_dims_error_on_the_command_line_names_flags() -> None:
    with pytest.raises(InvalidModel) as info:
        converter.convert(mobilenet_like(), free_dims={"batch": 1})
    cli = info.value.render("cli")
    assert "--dim INPUT:AXIS=N" in cli and "--shape INPUT=" in cli and "input_dims" not in cli


def test_unknown_rank_still_needs_a_shape() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [], has_rank=False)
    y = mb.output(mb.tensor("y", [], has_rank=False))
    mb.op("RELU", [x], [y])
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(mb.build())
    assert info.value.fixes == (Fix("input_shapes", "x"),)
    assert "--shape x=D1,D2,..." in info.value.render("cli")
    assert 'input_shapes={"x": [D1, D2, ...]}' in str(info.value)


def test_inspect_shows_the_default_and_how_to_change_it() -> None:
    info = inspect_model(mobilenet_like())
    assert info.free_dims == ("x[0]",)
    assert info.defaults == (Fix("input_dims", "x", axis=0, value=1),)
    assert info.fixes == ()
    text = info.to_text("cli")
    assert "x[0]=1 by default, the size LiteRT runs" in text and "--dim x:0=N" in text
    assert 'input_dims={"x": {0: N}}' in info.to_text()
    assert info.to_dict()["defaults"][0]["cli"] == "--dim x:0=1"
