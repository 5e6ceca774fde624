"""converter.runtimes.onnxruntime.to_onnx.to_onnx: the lowered model is valid ONNX (checker with full shape
inference), keeps the WebNN input/output names (also hostile ones) and dtypes/shapes, and
computes what the reference backend computes (onnxruntime run directly on the exported
bytes), for graphs mixing every op family. Per-op numerics are covered by
tests/converter/runtimes/onnxruntime/test_backend.py (every WPT case and random comparisons)."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from converter.core.webnn import ML, MLGraphBuilder
from converter.core.webnn.errors import MLOperationError
from converter.runtimes.onnxruntime.lowering import LOWERINGS
from converter.runtimes.onnxruntime.to_onnx import onnx_output_names, to_onnx
from tests.converter.io.export.graphs import FAMILIES, HOSTILE_NAMES, Example

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


# -- fusion of constant affine chains -------------------------------------------------------
def _node_types(model: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in model.graph.node]


def _bn_chain(rng: np.random.Generator, b: MLGraphBuilder, x: object, c: int) -> object:
    def const(*shape: int, lo: float = -1.0, hi: float = 1.0) -> object:
        return b.constant(rng.uniform(lo, hi, shape).astype(np.float32))

    y = b.batch_normalization(x, const(c), const(c, lo=0.5, hi=2.0), scale=const(c),
                              bias=const(c), epsilon=1e-3)
    y = b.mul(y, const(c, 1, 1))
    return b.add(y, const(c, 1, 1))


def test_affine_chain_becomes_one_batch_normalization() -> None:
    """batchNormalization → mul → add with constants (Caffe2 DenseNet): one ONNX
    BatchNormalization, values as the float64 spec formula."""
    rng = np.random.default_rng(0)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[2, 4, 3, 5], data_type="float32")
    graph = b.build({"y": b.relu(_bn_chain(rng, b, x, 4))})
    model = to_onnx(graph)
    onnx.checker.check_model(model, full_check=True)
    assert _node_types(model) == ["BatchNormalization", "Relu"]
    ops = graph.operations
    mean, var = (np.asarray(o.value, np.float64).reshape(4, 1, 1) for o in ops[0].args[1:])
    scale, bias = (np.asarray(ops[0].options[k].value, np.float64).reshape(4, 1, 1)
                   for k in ("scale", "bias"))
    mul, add = (np.asarray(op.args[1].value, np.float64) for op in ops[1:3])
    xv = rng.standard_normal((2, 4, 3, 5)).astype(np.float32)
    eps = float(np.float32(1e-3))
    want = np.maximum(((xv - mean) / np.sqrt(var + eps) * scale + bias) * mul + add, 0)
    got = _session(model).run(None, {"x": xv})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # Without fusion the operations are lowered one by one.
    assert "BatchNormalization" not in _node_types(to_onnx(graph, fuse=False))


def test_affine_chain_off_axis_1_becomes_mul_add() -> None:
    """sub → div → linear along the last axis (NHWC normalisation): one Mul and one Add."""
    rng = np.random.default_rng(1)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[1, 3, 4, 3], data_type="float32")
    mean = rng.uniform(0, 1, 3).astype(np.float32)
    std = rng.uniform(0.5, 2, 3).astype(np.float32)
    y = b.linear(b.div(b.sub(x, b.constant(mean)), b.constant(std)), alpha=2.0, beta=-1.0)
    model = to_onnx(b.build({"y": y}))
    assert sorted(_node_types(model)) == ["Add", "Mul"]
    xv = rng.uniform(0, 1, (1, 3, 4, 3)).astype(np.float32)
    want = (xv.astype(np.float64) - mean) / std * 2.0 - 1.0
    np.testing.assert_allclose(_session(model).run(None, {"x": xv})[0], want, rtol=1e-5,
                               atol=1e-6)


def test_affine_chains_not_fused() -> None:
    """No fusion for a single operation (exact lowering), across an intermediate that is a
    graph output or read twice, for non-constant parameters or float16, or when the
    constant widens the operand."""
    rng = np.random.default_rng(2)
    ctx = ML().create_context()

    def count_fused(build: object) -> int:
        b = MLGraphBuilder(ctx)
        graph = build(b)  # type: ignore[operator]
        return _node_types(to_onnx(graph)).count("BatchNormalization")

    def single(b: MLGraphBuilder) -> object:
        x = b.input("x", shape=[1, 2, 2, 2], data_type="float32")
        return b.build({"y": b.batch_normalization(
            x, b.constant(np.zeros(2, np.float32)), b.constant(np.ones(2, np.float32)))})

    def output_between(b: MLGraphBuilder) -> object:
        x = b.input("x", shape=[1, 4, 2, 2], data_type="float32")
        y = b.mul(x, b.constant(np.full((4, 1, 1), 2, np.float32)))
        return b.build({"y": y, "z": b.add(y, b.constant(np.ones((4, 1, 1), np.float32)))})

    def read_twice(b: MLGraphBuilder) -> object:
        x = b.input("x", shape=[1, 4, 2, 2], data_type="float32")
        y = b.mul(x, b.constant(np.full((4, 1, 1), 2, np.float32)))
        z = b.add(y, b.constant(np.ones((4, 1, 1), np.float32)))
        return b.build({"z": b.add(z, y)})

    def input_param(b: MLGraphBuilder) -> object:
        x = b.input("x", shape=[1, 4, 2, 2], data_type="float32")
        s = b.input("s", shape=[4, 1, 1], data_type="float32")
        return b.build({"y": b.add(b.mul(x, s), b.constant(np.ones((4, 1, 1), np.float32)))})

    def half(b: MLGraphBuilder) -> object:
        x = b.input("x", shape=[1, 4, 2, 2], data_type="float16")
        y = b.mul(x, b.constant(np.full((4, 1, 1), 2, np.float16)))
        return b.build({"y": b.add(y, b.constant(np.ones((4, 1, 1), np.float16)))})

    def widening(b: MLGraphBuilder) -> object:
        x = b.input("x", shape=[4, 1, 1], data_type="float32")
        y = b.mul(x, b.constant(rng.uniform(size=(1, 4, 2, 2)).astype(np.float32)))
        return b.build({"y": b.add(y, b.constant(np.ones((4, 1, 1), np.float32)))})

    for build in (single, output_between, read_twice, input_param, half, widening):
        assert count_fused(build) == 0, build.__name__


# -- 1-D convolutions and Reshape round trips ---------------------------------------------
def _conv1d_graph(layout: str) -> tuple[object, dict[str, np.ndarray]]:
    """x [1, 4, 9] → (Conv1d → relu) × 2 as a converted Conv1d has it: reshape to rank 4,
    conv2d with a unit spatial axis, reshape back, then the activation."""
    rng = np.random.default_rng(3)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[1, 4, 9], data_type="float32")
    y = x
    for cin, cout in ((4, 6), (6, 5)):
        w = rng.standard_normal((cout, cin, 3, 1)).astype(np.float32)
        if layout == "nhwc":
            v = b.transpose(b.reshape(y, [1, cin, y.shape[2], 1]), permutation=[0, 2, 3, 1])
            c = b.conv2d(v, b.constant(w.transpose(0, 2, 3, 1).copy()), padding=[1, 1, 0, 0],
                         input_layout="nhwc", filter_layout="ohwi")
            c = b.transpose(c, permutation=[0, 3, 1, 2])
        else:
            c = b.conv2d(b.reshape(y, [1, cin, y.shape[2], 1]), b.constant(w),
                         padding=[1, 1, 0, 0], bias=b.constant(rng.standard_normal(
                             cout).astype(np.float32)))
        y = b.relu(b.reshape(c, [1, cout, y.shape[2]]))
    graph = b.build({"y": y})
    return graph, {"x": rng.standard_normal((1, 4, 9)).astype(np.float32)}


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
def test_conv1d_is_a_1d_conv_without_reshapes(layout: str) -> None:
    graph, feeds = _conv1d_graph(layout)
    model = to_onnx(graph)
    onnx.checker.check_model(model, full_check=True)
    convs = [n for n in model.graph.node if n.op_type == "Conv"]
    assert len(convs) == 2
    for n in convs:
        assert [list(a.ints) for a in n.attribute if a.name == "pads"] == [[1, 1]]
    if layout == "nchw":  # the Reshape round trips are gone: Conv → Relu → Conv → Relu
        assert _node_types(model) == ["Conv", "Relu", "Conv", "Relu"]
    want = graph.context.compute(graph, feeds)["y"]
    got = _session(model).run(None, feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    unfused = _session(to_onnx(graph, fuse=False)).run(None, feeds)[0]
    np.testing.assert_array_equal(got, unfused)


def test_reshape_simplification_keeps_graph_outputs() -> None:
    """A reshaped value that is also a graph output keeps its Reshape and name; a Reshape
    back to the input's shape disappears."""
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[2, 6], data_type="float32")
    r = b.reshape(x, [3, 4])
    back = b.sigmoid(b.reshape(b.relu(r), [2, 6]))
    graph = b.build({"r": r, "back": back})
    model = to_onnx(graph)
    assert sorted(_node_types(model)) == ["Relu", "Reshape", "Reshape", "Sigmoid"]
    xv = np.linspace(-3, 3, 12, dtype=np.float32).reshape(2, 6)
    got = dict(zip(["r", "back"], _session(model).run(None, {"x": xv}), strict=True))
    np.testing.assert_array_equal(got["r"], xv.reshape(3, 4))
    np.testing.assert_allclose(got["back"], 1 / (1 + np.exp(-np.maximum(xv, 0))), rtol=1e-6)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[2, 6], data_type="float32")
    graph = b.build({"y": b.tanh(b.reshape(b.relu(b.reshape(x, [12])), [2, 6]))})
    assert _node_types(to_onnx(graph)) == ["Relu", "Tanh"]


def test_reshape_simplification_is_linear() -> None:
    """1500 reshape → relu → reshape round trips simplify quickly (in-place rewrites): a
    few CPU seconds, where a quadratic rewrite took minutes."""
    from tests.timing import cpu_seconds

    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[4, 8], data_type="float32")
    y = x
    for _ in range(1500):
        y = b.add(b.reshape(b.relu(b.reshape(y, [32])), [4, 8]), x)
    graph = b.build({"y": y})
    with cpu_seconds() as spent:
        model = to_onnx(graph)
    assert spent.seconds < 20
    assert sorted(set(_node_types(model))) == ["Add", "Relu"]
    assert len(model.graph.node) == 3000
