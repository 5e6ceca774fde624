"""Models with data-dependent tails convert to one WebNN graph plus host steps
(converter/conversion/host_split.py) and run as a whole on the reference and onnxruntime
backends, matching onnxruntime on the original model (the real reference)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import converter
from converter.core.errors import ConversionFailed
from tests.converter.conversion.host_models import (
    MODELS,
    make_detection,
    make_nonzero_gather,
    make_streaming_tail,
)


def _onnxruntime(model: onnx.ModelProto, inputs: dict[str, np.ndarray]
                 ) -> dict[str, np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, inputs), strict=True))


def _same(got: dict[str, np.ndarray], want: dict[str, np.ndarray]) -> None:
    assert list(got) == list(want)
    for name, expected in want.items():
        value = got[name]
        assert value.dtype == expected.dtype and value.shape == expected.shape, name
        np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.mark.parametrize("backend", ["reference", "onnxruntime"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_pipeline_matches_onnxruntime(name: str, backend: str) -> None:
    for seed in (0, 1):
        model, inputs = MODELS[name](seed)
        result = converter.convert(model)
        assert result.host is not None and result.report.target == "portable"
        assert result.report.outside_target == []
        assert result.output_names == [o.name for o in model.graph.output]
        _same(result.run(inputs, backend), _onnxruntime(model, inputs))
        session = result.compile(backend)
        _same(session.run(inputs), _onnxruntime(model, inputs))


def test_detection_splits_after_the_scores() -> None:
    model, inputs = make_detection()
    result = converter.convert(model)
    host = result.host
    assert host is not None
    # the WebNN graph computes the sigmoid, best score, labels and threshold; everything from
    # NonZero on runs on the host
    assert set(result.graph.outputs) == {"mask", "best", "labels_all"}
    ops = {n.op for n in host.nodes}
    assert {"NonZero", "TopK", "NonMaxSuppression", "Min", "Shape"} <= ops
    assert "Sigmoid" not in ops and "ArgMax" not in ops
    assert host.outputs == ("det_boxes", "det_scores", "det_labels")
    assert host.model_inputs == ("boxes",) and set(host.graph_inputs) == set(result.graph.outputs)
    # bool and the int64 the portable target narrows to int32 get Casts back to source types
    casts = {n.inputs[0]: n.attributes["to"] for n in host.nodes if n.op == "Cast"}
    assert casts == {"mask": TensorProto.BOOL, "labels_all": TensorProto.INT64}
    assert [vi.shape for vi in result.outputs] == [None, None, None]
    out = result.run(inputs)
    assert 0 < len(out["det_scores"]) <= 10  # max_output_boxes_per_class


def test_report_names_the_host_steps() -> None:
    model, _ = make_nonzero_gather()
    report = converter.convert(model).report
    line = ("host steps: 4 node(s) run on the host after the WebNN graph "
            "(Cast x1, Gather x1, NonZero x1, Squeeze x1)")
    assert report.host_steps == line
    assert line in report.to_text().splitlines()
    assert report.to_dict()["host_steps"] == line
    assert "NonZero" not in report.to_dict()["ops"]  # the report's nodes are the graph's


def test_folded_boundary_value_is_a_host_constant() -> None:
    n = helper.make_node
    nodes = [n("Add", ["c", "c"], ["c2"], name="fold"),  # folded at conversion time
             n("Greater", ["x", "c2"], ["mask"], name="greater"),
             n("NonZero", ["mask"], ["idx"], name="nonzero"),
             n("Cast", ["c2"], ["c2i"], name="cast", to=TensorProto.INT64),
             n("Add", ["idx", "c2i"], ["out"], name="add")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6])],
        [helper.make_tensor_value_info("out", TensorProto.INT64, [1, "n"])],
        [onnx.numpy_helper.from_array(np.array(0.0, np.float32), "c")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    result = converter.convert(model)
    assert result.host is not None and "c2i" in result.host.constants
    assert "c2i" not in result.graph.outputs
    x = np.array([1, -1, 2, -2, 3, 0], np.float32)
    _same(result.run({"x": x}), _onnxruntime(model, {"x": x}))


def test_other_failures_still_fail_in_one_error() -> None:
    n = helper.make_node
    nodes = [n("Greater", ["x", "x"], ["mask"], name="greater"),
             n("NonZero", ["mask"], ["idx"], name="nonzero"),
             n("NoSuchOp", ["x"], ["y"], name="unknown", domain="custom.domain")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("idx", TensorProto.INT64, [1, "n"]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("custom.domain", 1)])
    with pytest.raises(ConversionFailed) as info:
        converter.convert(model)
    # the error of the conversion without host steps, listing every failure
    assert [e.node_name for e in info.value.errors] == ["nonzero", "unknown"]
    assert "\n" not in str(info.value)


def test_host_step_in_another_domain_is_refused() -> None:
    n = helper.make_node
    nodes = [n("Greater", ["x", "x"], ["mask"], name="greater"),
             n("NonZero", ["mask"], ["idx"], name="nonzero"),
             n("Cast", ["idx"], ["idx_f"], name="cast", to=TensorProto.FLOAT),
             n("Gelu", ["idx_f"], ["y"], name="gelu", domain="com.microsoft")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    with pytest.raises(ConversionFailed, match="cannot run as a host step") as info:
        converter.convert(model)
    assert [e.node_name for e in info.value.errors] == ["gelu"]
    assert "\n" not in str(info.value)


def test_carried_state_with_host_steps() -> None:
    model = make_streaming_tail()
    result = converter.convert(model)
    assert result.state and result.host is not None
    x = np.array([0.5, 1.0, 0.0, 2.0, 0.25], np.float32)
    state = np.zeros(5, np.float32)
    for _ in range(4):
        got = result.run({"x": x})
        want = _onnxruntime(model, {"x": x, "state": state})
        _same(got, want)
        state = want["stateN"]
