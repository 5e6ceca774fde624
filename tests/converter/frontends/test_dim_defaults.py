"""Free dimensions that need no flags (issue 24, point 2): batches default to 1 with a report
note naming the setting (ONNX `batch`, `N`, tf2onnx `unk__749`, torch dynamo `s0`; unnamed
first axes of image inputs), other free dimensions get the size the model implies in the
hint (ultralytics-style `imgsz` metadata, a metadata entry named as the dimension, a
`value_info` entry, another input's matching dimension), and a TFLite graph made invalid by
the stored size of a dynamic input (`[-1, -1]` stored as `[1, 1]`) names the `--dim` flags.
Converted graphs are compared with onnxruntime / LiteRT."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import converter
from converter.core.errors import ConversionFailed, UnresolvedDimensions
from converter.core.fixes import Fix
from converter.validate.inspect import inspect_model
from tests.converter.frontends.onnx.test_free_dims import _model, _vi
from tests.op_mappings.tflite.tflite_builder import ModelBuilder, S


def _ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> np.ndarray:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(sess.run(None, feeds)[0])


def _yolo_like(dims: list[int | str | None], metadata: dict[str, str] | None = None
               ) -> onnx.ModelProto:
    """images [dims] -> Conv 3x3 stride 2 (SAME) -> Sigmoid: YOLO's input signature."""
    w = numpy_helper.from_array(
        np.random.default_rng(0).normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["images", "w"], ["c"], strides=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["c"], ["output0"])]
    model = _model(nodes, [_vi("images", dims)], [_vi("output0", [dims[0], 4, None, None])],
                   [w])
    for key, value in (metadata or {}).items():
        model.metadata_props.add(key=key, value=value)
    return model


@pytest.mark.parametrize("name", ["batch", "batch_size", "N", "unk__749", "s0", "s77"])
def test_batch_names_default_to_one(name: str) -> None:
    model = _yolo_like([name, 3, 16, 16])
    result = converter.convert(model)
    assert result.inputs[0].shape == (1, 3, 16, 16)
    (note,) = [w for w in result.report.warnings if "batch dimension" in w]
    assert f"converted at 1: {name};" in note
    assert f"--dim {name}=N (command line)" in note
    assert f'free_dims={{"{name}": N}} (Python)' in note
    x = np.random.default_rng(1).normal(size=(1, 3, 16, 16)).astype(np.float32)
    np.testing.assert_allclose(result.run({"images": x})["output0"],
                               _ort(model, {"images": x}), rtol=1e-5, atol=1e-6)
    info = inspect_model(model.SerializeToString())
    assert info.fixes == () and info.defaults == (Fix("free_dims", name, value=1),)
    assert f"{name}=1 by default, taken as a batch; other sizes: --dim {name}=N" \
        in info.to_text("cli")


def test_generated_name_off_the_first_axis_is_not_a_batch() -> None:
    """torch dynamo names every dynamic axis `s<k>`: `s53` on the height axis is no batch
    (an image axis the model implies no size for: 224 is suggested, see
    tests/converter/conversion/test_size_search.py)."""
    model = _yolo_like(["s77", 3, "s53", 16])
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(model)
    assert info.value.fixes == (Fix("free_dims", "s53", value=224),)
    assert "--dim s53=224" in info.value.render("cli")


def test_yolo_image_size_from_metadata() -> None:
    """ultralytics writes `imgsz` (and `batch`) into metadata_props: the hint prints the
    sizes instead of N, and the suggested flags convert a graph equal to onnxruntime's."""
    dims: list[int | str | None] = ["batch", 3, "height", "width"]
    bare = _yolo_like(dims)
    with pytest.raises(UnresolvedDimensions) as before:
        converter.convert(bare)
    assert "fix them with --dim height=224 --dim width=224" in before.value.render("cli")
    model = _yolo_like(dims, {"imgsz": "[32, 48]", "batch": "1", "stride": "32"})
    with pytest.raises(UnresolvedDimensions) as after:
        converter.convert(model)
    assert after.value.fixes == (Fix("free_dims", "height", value=32),
                                 Fix("free_dims", "width", value=48))
    assert "fix them with --dim height=32 --dim width=48" in after.value.render("cli")
    assert 'free_dims={"height": 32, "width": 48}' in str(after.value)
    info = inspect_model(model.SerializeToString())
    assert "fix with --dim height=32 --dim width=48" in info.to_text("cli")
    result = converter.convert(model, free_dims={"height": 32, "width": 48})
    x = np.random.default_rng(2).normal(size=(1, 3, 32, 48)).astype(np.float32)
    np.testing.assert_allclose(result.run({"images": x})["output0"],
                               _ort(model, {"images": x}), rtol=1e-5, atol=1e-6)


def test_unnamed_image_axes_from_metadata_and_named_entries() -> None:
    model = _yolo_like([None, 3, None, None], {"img_size": "64"})
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(model)
    assert "--dim images:2=64 --dim images:3=64" in info.value.render("cli")
    named = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [1, "frames", 40])],
                   [_vi("y", [1, "frames", 40])])
    named.metadata_props.add(key="frames", value="98")
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(named)
    assert info.value.fixes == (Fix("free_dims", "frames", value=98),)


def test_value_info_and_matching_input_imply_sizes() -> None:
    nodes = [helper.make_node("Add", ["a", "b"], ["y"])]
    model = _model(nodes, [_vi("a", [1, 3, 16, None]), _vi("b", [1, 3, 16, 16])],
                   [_vi("y", [1, 3, 16, 16])])
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(model)
    assert info.value.fixes == (Fix("input_dims", "a", axis=3, value=16),)
    seq = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [1, "seq", 4])],
                 [_vi("y", [1, "seq", 4])])
    seq.graph.value_info.append(helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                              [1, 8, 4]))
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(seq)
    assert "--dim seq=8" in info.value.render("cli")


def audio_frontend() -> bytes:
    """audio [-1, -1] stored as [1, 1] (a streaming audio front end) -> RESHAPE to
    [1, 1, -1, 1] -> CONV_2D 1x5 VALID: at the stored size the convolution's output width
    is -3."""
    rng = np.random.default_rng(0)
    mb = ModelBuilder()
    x = mb.input("audio", [1, 1], shape_signature=[-1, -1])
    r = mb.tensor("r", [1, 1, 1, 1], shape_signature=[-1, 1, -1, 1])
    ro = S.ReshapeOptionsT()
    ro.newShape = [1, 1, -1, 1]
    mb.op("RESHAPE", [x, mb.const("shape", np.array([1, 1, -1, 1], np.int32))], [r], ro)
    w = mb.const("w", rng.normal(0, 0.3, (4, 1, 5, 1)).astype(np.float32))
    b = mb.const("b", np.zeros(4, np.float32))
    y = mb.output(mb.tensor("y", [1, 1, 1, 4], shape_signature=[-1, 1, -1, 4]))
    o = S.Conv2DOptionsT()
    o.padding = S.Padding.VALID
    o.strideW = o.strideH = 1
    o.dilationWFactor = o.dilationHFactor = 1
    mb.op("CONV_2D", [r, w, b], [y], o)
    return mb.build()


def test_tflite_stored_size_too_small_names_the_dim_flag() -> None:
    model = audio_frontend()
    with pytest.raises(ConversionFailed) as info:
        converter.convert(model)
    (err,) = info.value.errors
    assert err.reason_code == "spec_violation"
    # the 1x5 VALID convolution needs a width >= 5: 8 is the smallest power of two
    assert err.fixes == (Fix("input_dims", "audio", axis=1, value=8),)
    cli = info.value.render("cli")
    assert "output width (-3)" in cli
    assert "converted at their stored sizes (audio[0]=1, audio[1]=1)" in cli
    assert "8 is the smallest power of two at which it converts" in cli
    assert "try --dim audio:1=8" in cli
    assert 'input_dims={"audio": {1: 8}}' in str(info.value)
    converter.convert(model, input_dims={"audio": {1: 8}})  # the suggestion converts
    inspected = inspect_model(model)  # the trial's failure is the guessed size's, not CONV_2D's
    assert all(o.status == "supported" for o in inspected.ops)
    assert "--dim audio:1=N" in inspected.to_text("cli")
    interpreter = pytest.importorskip("ai_edge_litert.interpreter")
    result = converter.convert(model, input_dims={"audio": {1: 16}})
    x = np.random.default_rng(1).normal(size=(1, 16)).astype(np.float32)
    interp = interpreter.Interpreter(model_content=model)
    interp.resize_tensor_input(interp.get_input_details()[0]["index"], [1, 16])
    interp.allocate_tensors()
    interp.set_tensor(interp.get_input_details()[0]["index"], x)
    interp.invoke()
    want = interp.get_tensor(interp.get_output_details()[0]["index"])
    np.testing.assert_allclose(result.run({"audio": x})["y"], want, rtol=1e-5, atol=1e-6)


def test_tflite_size_search_is_bounded_by_the_operator_count(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Over `MAX_SEARCHED_NODES` operators no size is searched: the placeholder stays."""
    from converter.frontends.tflite import frontend

    monkeypatch.setattr(frontend, "MAX_SEARCHED_NODES", 0)
    with pytest.raises(ConversionFailed) as info:
        converter.convert(audio_frontend())
    (err,) = info.value.errors
    assert err.fixes == (Fix("input_dims", "audio", axis=1),)
    assert "try --dim audio:1=N" in info.value.render("cli")
