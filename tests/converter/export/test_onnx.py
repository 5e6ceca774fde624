"""converter.export.onnx.to_onnx: the lowered model is valid ONNX (checker with full shape
inference), keeps the WebNN input/output names (also hostile ones) and dtypes/shapes, and
computes what the reference backend computes (onnxruntime run directly on the exported
bytes), for graphs mixing every op family. Per-op numerics are covered by
tests/converter/runtime/test_onnxruntime.py (every WPT case and random comparisons)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from converter.export.onnx import onnx_output_names, to_onnx
from converter.export.onnx_lowering import LOWERINGS
from converter.webnn import ML, MLGraphBuilder
from converter.webnn.errors import MLOperationError
from converter.webnn.limits import OP_LIMITS
from tests.converter.export.graphs import FAMILIES, HOSTILE_NAMES, Example

ONNX_ELEM = {"float32": 1, "uint8": 2, "int8": 3, "int32": 6, "int64": 7, "float16": 10,
             "uint32": 12, "uint64": 13}


def _session(model: onnx.ModelProto) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


def _check_io(model: onnx.ModelProto, example: Example) -> None:
    graph = example.graph
    assert [i.name for i in model.graph.input] == list(graph.inputs)
    assert [o.name for o in model.graph.output] == onnx_output_names(graph)
    assert json.loads({p.key: p.value for p in model.metadata_props}[
        "webnn_output_names"]) == list(graph.outputs)
    for vi, operand in [*zip(model.graph.input, graph.inputs.values(), strict=True),
                        *zip(model.graph.output, graph.outputs.values(), strict=True)]:
        t = vi.type.tensor_type
        assert t.elem_type == ONNX_ELEM[operand.data_type], vi.name
        assert [d.dim_value for d in t.shape.dim] == list(operand.shape), vi.name


def test_every_op_has_a_lowering() -> None:
    assert sorted(set(OP_LIMITS) - set(LOWERINGS)) == []


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_family_model_is_valid_and_matches_reference(family: str) -> None:
    example = FAMILIES[family]()
    model = to_onnx(example.graph)
    onnx.checker.check_model(model, full_check=True)
    _check_io(model, example)
    assert {o.domain for o in model.opset_import} == {""}
    assert model.opset_import[0].version == 21
    got = dict(zip(list(example.graph.outputs),
                   _session(model).run(None, example.feeds), strict=True))
    want = example.context.compute(example.graph, example.feeds)
    for name, ref in want.items():
        have = got[name]
        assert have.dtype == ref.dtype and have.shape == ref.shape, name
        if ref.dtype.kind == "f":
            tol = 1e-5 if ref.dtype == np.float32 else 4e-3
            np.testing.assert_allclose(have.astype(np.float64), ref.astype(np.float64),
                                       rtol=tol, atol=tol, err_msg=name)
        else:
            np.testing.assert_array_equal(have, ref, err_msg=name)


def test_hostile_names_survive_verbatim() -> None:
    example = FAMILIES["hostile"]()
    model = to_onnx(example.graph)
    inputs = [i.name for i in model.graph.input]
    outputs = [o.name for o in model.graph.output]
    assert inputs == HOSTILE_NAMES
    # The outputs reuse the input names, which ONNX forbids: they get a suffix.
    assert outputs == [f"{n}__output" for n in HOSTILE_NAMES] + ["repeat of first"]
    names = set(inputs) | set(outputs)
    internal = {v for node in model.graph.node for v in node.output} - names
    internal |= {init.name for init in model.graph.initializer}
    assert all(v.replace("_", "a").isalnum() and v.isascii() for v in internal)
    assert not internal & names


def test_internal_names_never_collide_with_webnn_names() -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    # Names that look exactly like generated ones.
    x = b.input("constant_1", shape=[2], data_type="float32")
    y = b.input("relu0_Relu_2", shape=[2], data_type="float32")
    r = b.relu(b.add(x, b.constant(np.ones(2, np.float32))))
    graph = b.build({"add1_Add_3": r, "relu0_Relu_1": b.relu(y)})
    model = to_onnx(graph)
    onnx.checker.check_model(model, full_check=True)
    out = _session(model).run(None, {"constant_1": np.array([-3, 1], np.float32),
                                     "relu0_Relu_2": np.array([-1, 2], np.float32)})
    np.testing.assert_array_equal(out[0], [0, 2])
    np.testing.assert_array_equal(out[1], [0, 2])


def test_constants_become_initializers() -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = b.input("x", shape=[3, 2], data_type="float32")
    graph = b.build({"y": b.matmul(b.constant(w), x)})
    model = to_onnx(graph)
    stored = [onnx.numpy_helper.to_array(t) for t in model.graph.initializer]
    assert any(a.shape == w.shape and np.array_equal(a, w) for a in stored)


def test_opset_range_and_unknown_op(monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    x = b.input("x", shape=[2], data_type="float32")
    graph = b.build({"y": b.softsign(x)})
    with pytest.raises(ValueError, match="opset"):
        to_onnx(graph, opset=17)
    newest = onnx.defs.onnx_opset_version()
    assert to_onnx(graph, opset=newest).opset_import[0].version == newest
    monkeypatch.delitem(LOWERINGS, "softsign")
    with pytest.raises(MLOperationError, match="softsign"):
        to_onnx(graph)
