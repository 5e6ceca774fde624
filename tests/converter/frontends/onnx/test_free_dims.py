"""ONNX free dimensions and shape/control inputs through `converter.convert()`: negative
`dim_value` (paddle2onnx) and dims with neither value nor param are free, `input_dims` fixes
them (results compared with onnxruntime), its validation, the fixes errors carry (Python and
command-line renderings), and the shape/control input analysis (silero-vad's `sr`)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import converter
from converter.conversion import size_search
from converter.core.errors import ConversionFailed, InvalidModel, UnresolvedDimensions
from converter.core.fixes import Fix
from converter.frontends.onnx.inspect import proto_view
from converter.validate.inspect import inspect_model


def _vi(name: str, dims: list[int | str | None], elem: int = TensorProto.FLOAT
        ) -> onnx.ValueInfoProto:
    """A value info whose ints are written as dim_value even when negative (as paddle2onnx
    does), strings as dim_param, None as a dim with neither."""
    vi = helper.make_tensor_value_info(name, elem, [1] * len(dims))
    for d, want in zip(vi.type.tensor_type.shape.dim, dims, strict=True):
        d.Clear()
        if isinstance(want, int):
            d.dim_value = want
        elif isinstance(want, str):
            d.dim_param = want
    return vi


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[onnx.ValueInfoProto], inits: list[onnx.TensorProto] = ()
           ) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _conv_model(x_dims: list[int | str | None]) -> onnx.ModelProto:
    """x [N, 3, 8, 8] -> Conv(4x3x3x3) -> Relu -> y, with x's dims as given."""
    w = numpy_helper.from_array(
        np.random.default_rng(0).normal(size=(4, 3, 3, 3)).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    return _model(nodes, [_vi("x", x_dims)], [_vi("y", [x_dims[0], 4, 6, 6])], [w])


def _ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


@pytest.mark.parametrize("first", [-1, None], ids=["dim_value-1", "unnamed"])
def test_negative_and_unnamed_dims_are_free(first: int | None) -> None:
    """The free first axis of an image input is a batch: converted at 1 with a report note
    naming both spellings of the setting; `input_dims` sets another size."""
    model = _conv_model([first, 3, 8, 8])
    result = converter.convert(model)
    assert result.inputs[0].shape == (1, 3, 8, 8)
    (note,) = [w for w in result.report.warnings if "batch dimension" in w]
    assert "x[0]" in note and "--dim x:0=N" in note and 'input_dims={"x": {0: N}}' in note
    x1 = np.random.default_rng(2).normal(size=(1, 3, 8, 8)).astype(np.float32)
    np.testing.assert_allclose(result.run({"x": x1})["y"], _ort(model, {"x": x1})[0],
                               rtol=1e-5, atol=1e-5)
    x = np.random.default_rng(1).normal(size=(2, 3, 8, 8)).astype(np.float32)
    result = converter.convert(model, input_dims={"x": {0: 2}})
    assert result.inputs[0].shape == (2, 3, 8, 8)
    assert result.inputs[0].declared_shape == (None, 3, 8, 8)
    assert not [w for w in result.report.warnings if "batch dimension" in w]
    ours = result.run({"x": x})["y"]
    np.testing.assert_allclose(ours, _ort(model, {"x": x})[0], rtol=1e-5, atol=1e-5)
    same = converter.convert(model, input_dims={"x": {-4: 2}})  # negative axes count back
    assert same.inputs[0].shape == (2, 3, 8, 8)


def test_unnamed_first_axis_of_a_matrix_is_suggested_not_defaulted() -> None:
    model = _model([helper.make_node("Relu", ["x"], ["y"])], [_vi("x", [None, 6])],
                   [_vi("y", [None, 6])])
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(model)
    err = info.value
    assert err.fixes == (Fix("input_dims", "x", axis=0, value=1),)
    assert 'input_dims={"x": {0: 1}}' in str(err)
    cli = err.render("cli")
    assert "--dim x:0=1" in cli and "input_dims" not in cli and "free_dims" not in cli


def test_zero_dim_value_stays_a_real_empty_dimension() -> None:
    model = _model([helper.make_node("Identity", ["x"], ["y"])], [_vi("x", [2, 0])],
                   [_vi("y", [2, 0])])
    info = inspect_model(model.SerializeToString())
    assert info.inputs[0].shape == (2, 0) and info.free_dims == ()


def test_free_dim_zero_specialises_the_empty_inputs() -> None:
    """free_dims value 0 (an empty KV cache: past length 0): the inputs it appears in are
    empty, so they become constants and the graph is specialised (WebNN has no zero-size
    operands); run() still takes them (and leaves them out of the graph's feeds). Negative
    and non-integer sizes are refused."""
    nodes = [helper.make_node("Concat", ["past", "x"], ["c"], axis=1),
             helper.make_node("Relu", ["c"], ["y"])]
    model = _model(nodes, [_vi("past", [1, "past_len", 4]), _vi("x", [1, "seq", 4])],
                   [_vi("y", [1, "total", 4])])
    result = converter.convert(model, free_dims={"past_len": 0, "seq": 3})
    assert list(result.graph.inputs) == ["x"]
    assert result.input_names == ["past", "x"]
    feeds = {"past": np.zeros((1, 0, 4), np.float32),
             "x": np.random.default_rng(0).standard_normal((1, 3, 4)).astype(np.float32)}
    np.testing.assert_array_equal(result.run(feeds)["y"], _ort(model, feeds)[0])
    for bad in (-1, 1.5, True):
        with pytest.raises(InvalidModel, match="past_len.*positive integer or 0"):
            converter.convert(model, free_dims={"past_len": bad, "seq": 3})


@pytest.mark.parametrize("dims, words", [
    ({"nope": {0: 1}}, ["nope", "not graph inputs"]),
    ({"x": {4: 1}}, ["axis 4", "out of range", "rank 4"]),
    ({"x": {-5: 1}}, ["axis -5", "out of range"]),
    ({"x": {0: 0}}, ["x:0", "positive integer"]),
    ({"x": {0: True}}, ["positive integer"]),
    ({"x": {1: 2}}, ["contradicts", "fixed dimension 3"]),
    ({"x": {0: 1, -4: 2}}, ["given twice"]),
    ({"x": [1]}, ["must map axes to sizes"]),
])
def test_input_dims_validation(dims: dict, words: list[str]) -> None:
    with pytest.raises(InvalidModel) as info:
        converter.convert(_conv_model([-1, 3, 8, 8]), input_dims=dims)
    text = str(info.value)
    assert "\n" not in text
    for w in words:
        assert w in text


def test_input_dims_and_shapes_for_one_input_conflict() -> None:
    with pytest.raises(InvalidModel, match="both a whole shape and single dimensions"):
        converter.convert(_conv_model([-1, 3, 8, 8]), input_dims={"x": {0: 1}},
                          input_shapes={"x": [1, 3, 8, 8]})


def test_named_dims_suggest_batch_one_and_placeholders(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """`batch` and tf2onnx's `unk__7` (first axis everywhere) default to 1; `seq` and the
    unnamed second axis of `mask` must be set, with placeholders where no size is searched
    (`tests/converter/conversion/test_size_search.py` has the searched ones)."""
    monkeypatch.setattr(size_search, "MAX_SEARCHED_NODES", -1)
    x = _vi("x", ["batch", "seq", 4])
    mask = _vi("mask", ["unk__7", None])
    nodes = [helper.make_node("Identity", ["x"], ["y"]),
             helper.make_node("Identity", ["mask"], ["m"])]
    model = _model(nodes, [x, mask], [_vi("y", ["batch", "seq", 4]), _vi("m", ["unk__7", None])])
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(model)
    assert info.value.fixes == (Fix("free_dims", "seq"), Fix("input_dims", "mask", axis=1))
    assert 'free_dims={"seq": N}, input_dims={"mask": {1: N}}' in str(info.value)
    assert "--dim seq=N --dim mask:1=N" in info.value.render("cli")
    result = converter.convert(model, free_dims={"seq": 3}, input_dims={"mask": {1: 5}})
    assert [vi.shape for vi in result.inputs] == [(1, 3, 4), (1, 5)]
    (note,) = [w for w in result.report.warnings if "batch dimension" in w]
    assert "batch, unk__7" in note and "--dim batch=N --dim unk__7=N" in note
    # input_dims is more specific than free_dims: it wins for its axis
    result = converter.convert(model, free_dims={"batch": 2, "seq": 3, "unk__7": 2},
                               input_dims={"mask": {1: 5}, "x": {0: 1}})
    assert [vi.shape for vi in result.inputs] == [(1, 3, 4), (2, 5)]


def test_dim_name_of_input_axis_form_needs_the_explicit_flag() -> None:
    model = _model([helper.make_node("Identity", ["x"], ["y"])], [_vi("x", ["a:1", 2])],
                   [_vi("y", ["a:1", 2])])
    with pytest.raises(UnresolvedDimensions) as info:
        converter.convert(model)
    assert "--free-dim a:1=1" in info.value.render("cli")
    assert converter.convert(model, free_dims={"a:1": 3}).inputs[0].shape == (3, 2)


# -- shape/control inputs ---------------------------------------------------------------


def _shape_input_model() -> onnx.ModelProto:
    """x [2, 6] float; `shape` int64 [2] -> Reshape's shape; `n` int64 [] -> Cast -> Range
    limit; `k` int64 [] used as data (Add) and as Range delta -> not control-only; `flag` bool
    [] -> Not -> If condition (branches return x or -x)."""
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [],
                               [_vi("t", [2, 6])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [_vi("e", [2, 6])])
    nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
             helper.make_node("Cast", ["n"], ["n64"], to=TensorProto.INT64),
             helper.make_node("Range", ["zero", "n64", "k"], ["seq"], name="range"),
             helper.make_node("Add", ["k", "one"], ["k1"]),
             helper.make_node("Not", ["flag"], ["nflag"]),
             helper.make_node("If", ["nflag"], ["sel"], name="if", then_branch=then_g,
                              else_branch=else_g)]
    inits = [numpy_helper.from_array(np.array(0, np.int64), "zero"),
             numpy_helper.from_array(np.array(1, np.int64), "one")]
    return _model(nodes, [_vi("x", [2, 6]), _vi("shape", [2], TensorProto.INT64),
                          _vi("n", [], TensorProto.INT32), _vi("k", [], TensorProto.INT64),
                          _vi("flag", [], TensorProto.BOOL)],
                  [_vi("r", [None, None]), _vi("seq", [None], TensorProto.INT64),
                   _vi("k1", [], TensorProto.INT64), _vi("sel", [2, 6])], inits)


def test_control_inputs_found_by_backward_analysis() -> None:
    found = {c.name: c for c in proto_view(_shape_input_model()).control_inputs()}
    assert sorted(found) == ["flag", "n", "shape"]
    assert found["shape"].reaches == ("Reshape",)
    assert found["n"].reaches == ("Range",)
    assert found["flag"].reaches == ("If",)
    assert found["shape"].fix == Fix("pin_inputs", "shape")


def test_conversion_error_suggests_pins() -> None:
    model = _shape_input_model()
    with pytest.raises(ConversionFailed) as info:
        converter.convert(model)
    by_node = {e.node_name: e for e in info.value.errors}
    assert by_node["reshape"].fixes == (Fix("pin_inputs", "shape"),)
    assert by_node["range"].fixes == (Fix("pin_inputs", "n"), Fix("pin_inputs", "k"))
    assert 'pin_inputs={"shape": VALUE}' in str(info.value)
    cli = info.value.render("cli")
    assert "--pin shape=VALUE" in cli and "--pin n=VALUE --pin k=VALUE" in cli
    assert "pin_inputs" not in cli
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    pins = {"shape": np.array([3, 4], np.int64), "n": np.array(5, np.int32),
            "k": np.array(2, np.int64), "flag": np.array(True)}
    result = converter.convert(model, pin_inputs=pins)
    ours = result.run({"x": x})
    expected = _ort(model, {"x": x, **pins})
    for got, want in zip(ours.values(), expected, strict=True):
        np.testing.assert_array_equal(got, want)


def _silero() -> Path:
    """silero-vad's ONNX file, found without importing the package (its import needs
    torch)."""
    spec = importlib.util.find_spec("silero_vad")
    if spec is None or spec.origin is None:
        pytest.skip("silero-vad is not installed")
    return Path(spec.origin).parent / "data" / "silero_vad.onnx"


def test_silero_sr_is_a_control_input() -> None:
    info = inspect_model(_silero())
    (sr,) = info.control_inputs
    assert (sr.name, sr.reaches, sr.compared_with) == ("sr", ("If",), (16000,))
    assert sr.fix == Fix("pin_inputs", "sr", value=16000)
    assert 'pin_inputs={"sr": 16000}' in info.to_text()
    assert "--pin sr=16000" in info.to_text("cli")
    assert info.to_dict()["control_inputs"][0]["fix"]["cli"] == "--pin sr=16000"
    with pytest.raises(UnresolvedDimensions) as err:
        converter.convert(_silero())
    assert Fix("pin_inputs", "sr", value=16000) in err.value.fixes


def test_option_names_in_hints_follow_the_interface() -> None:
    from converter.core.errors import RequiresConstantInput

    err = RequiresConstantInput("the shape depends on graph inputs")
    assert "pin_inputs" in str(err) and "input_dims" in str(err)
    cli = err.render("cli")
    assert "--pin INPUT=VALUE" in cli and "--dim INPUT:AXIS=N" in cli
    assert not any(k in cli for k in ("free_dims", "input_dims", "input_shapes", "pin_inputs"))
    assert err.to_dict("cli")["hint"] in cli
