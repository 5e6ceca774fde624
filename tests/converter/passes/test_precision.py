"""`converter.passes.precision` (`convert(precision="float16")`): float16 weights and
compute with the float32 interface kept. Oracles: onnxruntime on the float32 original (under
float16 tolerances), numpy float16 arithmetic step by step (each operation rounded to
float16, as the spec's float16 operands are), and the float32 graph's own bytes halved."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from converter.api import InvalidModel, convert, export, load, validate
from converter.io.serialize.plan import plan
from converter.passes.precision import FLOAT16_MAX, overflow_note, to_precision
from converter.validate import make_inputs
from converter.validate.core import TOLERANCES
from tests.cli.models import tiny_cnn
from tests.converter.io.export.node_harness import (
    _replay,
    _run_page,
    _write,
    needs_node,
)


def _model(path: Path, nodes: list[onnx.NodeProto], inits: list[np.ndarray],
           shape: tuple[int, ...] = (2, 8)) -> Path:
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(a.astype(np.float32), f"c{i}") for i, a in enumerate(inits)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    return path


@pytest.fixture
def cnn(tmp_path: Path) -> Path:
    return tiny_cnn(tmp_path / "cnn.onnx")


def _image(seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(1, 3, 16, 16)).astype(np.float32)


def test_cnn_float16_is_float16_inside_float32_outside(cnn: Path) -> None:
    plain = convert(cnn, free_dims={"batch": 1})
    half = convert(cnn, free_dims={"batch": 1}, precision="float16")
    g = half.graph
    assert {n: o.data_type for n, o in g.inputs.items()} == {"image": "float32"}
    assert {n: o.data_type for n, o in g.outputs.items()} == {"probs": "float32"}
    assert all(c.data_type == "float16" for c in g.constants)
    wide = [o for o in g.operations
            if any(x.data_type == "float32" for x in (*o.operand_inputs(), *o.outputs))]
    # the only float32 operations: the boundary casts
    assert [(o.op, o.options.get("label", ""), o.args[1]) for o in wide] == [
        ("cast", "", "float16"), ("cast", "", "float32")]
    assert wide[0] is g.operations[0] and wide[1] is g.operations[-1]
    assert [o.op for o in g.operations[1:-1]] == [o.op for o in plain.graph.operations]
    # weights: the same values rounded to float16, half the bytes
    before = sum(c.descriptor.byte_length for c in plain.graph.constants)
    after = sum(c.descriptor.byte_length for c in g.constants)
    assert after * 2 == before
    for old, new in zip(plain.graph.constants, g.constants, strict=True):
        assert new.value is not None and old.value is not None
        np.testing.assert_array_equal(new.value, old.value.astype(np.float16))
    assert any("15.5 KiB -> 7.7 KiB" in w for w in half.report.warnings)
    assert any("inputs 'image' cast to float16; outputs 'probs' cast back to float32" in w
               for w in half.report.warnings)
    # against onnxruntime on the float32 original, under the float16 tolerance
    x = _image()
    (ref,) = ort.InferenceSession(str(cnn)).run(None, {"image": x})
    got = half.run({"image": x})["probs"]
    assert got.dtype == np.float32
    rtol, atol = TOLERANCES["float16"]
    err = float(np.max(np.abs(got - ref)))
    assert err <= atol + rtol * float(np.max(np.abs(ref)))
    assert err > float(np.max(np.abs(plain.run({"image": x})["probs"] - ref)))


def test_reference_rounds_every_operation_to_float16(tmp_path: Path) -> None:
    """The float16 graph's reference output equals numpy float16 arithmetic step by step
    (inputs and weights rounded to float16, each operation's result rounded to float16),
    and differs from the float32 graph's output, which equals the float32 steps."""
    rng = np.random.default_rng(3)
    w, b, d = (rng.normal(size=(2, 8)).astype(np.float32) for _ in range(3))
    d = np.abs(d) + np.float32(0.5)
    nodes = [helper.make_node("Mul", ["x", "c0"], ["m"]),
             helper.make_node("Add", ["m", "c1"], ["a"]),
             helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("Div", ["r", "c2"], ["q"]),
             helper.make_node("Sub", ["q", "x"], ["y"])]
    path = _model(tmp_path / "steps.onnx", nodes, [w, b, d])
    x = (rng.normal(size=(2, 8)) * 3).astype(np.float32)

    def steps(dtype: type[np.floating]) -> np.ndarray:
        xs, ws, bs, ds = (v.astype(dtype) for v in (x, w, b, d))
        r = np.maximum(xs * ws + bs, dtype(0))
        return np.asarray(((r / ds) - xs).astype(np.float32))

    half = convert(path, precision="float16").run({"x": x})["y"]
    full = convert(path).run({"x": x})["y"]
    np.testing.assert_array_equal(half, steps(np.float16))
    np.testing.assert_array_equal(full, steps(np.float32))
    assert not np.array_equal(half, full)


def test_constant_beyond_float16_range_is_kept_float32(tmp_path: Path) -> None:
    """A mask constant of -1e30 is not saturated: it stays float32, the add reading it
    computes in float32 (its result rounded to float16: -inf where masked), the note says
    so."""
    mask = np.zeros((2, 8), np.float32)
    mask[:, 4:] = -1e30
    path = _model(tmp_path / "mask.onnx", [
        helper.make_node("Add", ["x", "c0"], ["s"]),
        helper.make_node("Softmax", ["s"], ["y"], axis=-1)], [mask])
    result = convert(path, precision="float16")
    kept = [c for c in result.graph.constants if c.data_type == "float32"]
    assert len(kept) == 1 and kept[0].value is not None and kept[0].value.min() == -1e30
    adds = [o for o in result.graph.operations if o.op == "add"]
    assert [o.outputs[0].data_type for o in adds] == ["float32"]
    soft = next(o for o in result.graph.operations if o.op == "softmax")
    assert soft.outputs[0].data_type == "float16"
    assert any("kept in float32" in w and "1e+30" in w for w in result.report.warnings)
    assert any("computed in float32" in w and "add #" in w for w in result.report.warnings)
    x = np.random.default_rng(0).normal(size=(2, 8)).astype(np.float32)
    e = np.exp(x[:, :4].astype(np.float64) - x[:, :4].max(axis=1, keepdims=True))
    want = np.zeros((2, 8))
    want[:, :4] = e / e.sum(axis=1, keepdims=True)
    got = result.run({"x": x})["y"]
    np.testing.assert_allclose(got, want, atol=2e-3)
    assert np.all(got[:, 4:] == 0)


def test_integer_arithmetic_stays_exact_in_float32(tmp_path: Path) -> None:
    """MatMulInteger accumulates uint8 products to about 3.3e6 (float16 holds whole numbers
    to 2048, and overflows at 65504): the integer path stays float32 and exact, the scale
    multiplication computes in float32 and rounds to float16."""
    rng = np.random.default_rng(0)
    w = rng.integers(200, 256, (64, 4)).astype(np.uint8)
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["x", "w"], ["acc"]),
         helper.make_node("Cast", ["acc"], ["f"], to=TensorProto.FLOAT),
         helper.make_node("Mul", ["f", "s"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 64])],
        [helper.make_tensor_value_info("acc", TensorProto.INT32, [1, 4]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(w, "w"),
         numpy_helper.from_array(np.array([1e-3], np.float32), "s")])
    path = tmp_path / "mmi.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                                ir_version=8), path)
    result = convert(path, precision="float16")
    x = rng.integers(200, 256, (1, 64)).astype(np.uint8)
    got = result.run({"x": x})
    acc, y = ort.InferenceSession(str(path)).run(None, {"x": x})
    assert int(acc.max()) > 1 << 21
    np.testing.assert_array_equal(got["acc"], acc)
    np.testing.assert_array_equal(got["y"], y.astype(np.float16).astype(np.float32))
    assert [o.op for o in result.graph.operations if o.outputs[0].data_type == "float16"] == [
        "cast"]  # the scaled value to float16, then back at the boundary
    assert any("integer arithmetic carried in float32" in w and "mul #" in w
               for w in result.report.warnings)


def test_overflow_fails_validation_with_a_clear_note(tmp_path: Path) -> None:
    """x * 300 * 300 overflows float16 (65504) for |x| > 0.73: validate fails, the note
    says float16 overflow, the divergence search (on the float16 graph) names the node."""
    k = np.full((2, 8), 300, np.float32)
    path = _model(tmp_path / "big.onnx", [
        helper.make_node("Mul", ["x", "c0"], ["m"], name="first"),
        helper.make_node("Mul", ["m", "c1"], ["y"], name="second")], [k, k])
    assert validate(path).passed
    report = validate(path, precision="float16")
    assert not report.passed
    assert report.tolerance_basis == "default for float16 compute"
    assert (report.rtol, report.atol) == TOLERANCES["float16"]
    text = report.to_text()
    assert "float16 overflow: output 'y' has" in text and "numerically unsuited" in text
    assert report.divergence is not None and report.divergence.node_name == "second"
    feeds = make_inputs(convert(path).source, seed=report.seed)
    peak = float(np.max(np.abs(feeds["x"].astype(np.float64) * 300 * 300)))
    assert (f"float16 overflow first at Mul 'second': the original's value there peaks at "
            f"about {peak:.3g} (> 65504)") in text


def test_overflow_note_only_for_new_non_finite_values() -> None:
    ref = np.array([1.0, np.inf, 7e4], np.float32)
    assert overflow_note("y", np.array([1.0, np.inf, 7e4], np.float32), ref) is None
    note = overflow_note("y", np.array([1.0, np.inf, np.inf], np.float32), ref)
    assert note is not None and "1 of 3 values" in note and f"{FLOAT16_MAX:g}" in note


def test_validate_float16_passes_against_onnxruntime(cnn: Path) -> None:
    report = validate(cnn, free_dims={"batch": 1}, precision="float16")
    assert report.passed, report.to_text()
    assert report.tolerance_basis == "default for float16 compute"
    assert 0 < report.max_abs <= 1e-2
    assert any(n.startswith("float16: float32 weights stored as float16") for n in report.notes)


def test_float32_is_unchanged_and_bad_precision_is_refused(cnn: Path) -> None:
    plain = convert(cnn, free_dims={"batch": 1})
    same = convert(cnn, free_dims={"batch": 1}, precision="float32")
    assert [o.op for o in same.graph.operations] == [o.op for o in plain.graph.operations]
    assert to_precision(plain.graph, "float32").graph is plain.graph
    with pytest.raises(InvalidModel, match="unknown precision 'float8': give one of "
                                           "float32, float16"):
        convert(cnn, free_dims={"batch": 1}, precision="float8")


def test_float16_graph_is_left_alone(cnn: Path) -> None:
    half = convert(cnn, free_dims={"batch": 1}, precision="float16").graph
    again = to_precision(half, "float16")
    assert not [o for o in again.graph.operations if o.op == "cast" and
                o.outputs[0].data_type == "float16" and o.args[0].kind == "output"]
    assert [o.op for o in again.graph.operations] == [o.op for o in half.operations]


def test_exports_hold_float16_weights(cnn: Path, tmp_path: Path) -> None:
    """.webnn weights half the bytes (reloaded: the same graph); the ONNX export is smaller
    and runs in onnxruntime with float32 inputs."""
    plain = convert(cnn, free_dims={"batch": 1})
    half = convert(cnn, free_dims={"batch": 1}, precision="float16")
    export(plain, tmp_path / "f32", format="all", stem="m")
    export(half, tmp_path / "f16", format="all", stem="m")
    w32 = (tmp_path / "f32" / "m.weights").stat().st_size
    w16 = (tmp_path / "f16" / "m.weights").stat().st_size
    assert w16 < 0.52 * w32
    loaded = load(tmp_path / "f16" / "m.webnn")
    x = _image(2)
    want = half.graph.context.compute(half.graph, {"image": x})["probs"]
    got = loaded.context.compute(loaded, {"image": x})["probs"]
    np.testing.assert_array_equal(got, want)
    # the ONNX lowering lifts float16 convolutions to float32 for onnxruntime (their weights
    # too); the other weights stay float16
    model = onnx.load(str(tmp_path / "f16" / "m.onnx"))
    assert TensorProto.FLOAT16 in {i.data_type for i in model.graph.initializer}
    assert (tmp_path / "f16" / "m.onnx").stat().st_size < \
        (tmp_path / "f32" / "m.onnx").stat().st_size
    (out,) = ort.InferenceSession(str(tmp_path / "f16" / "m.onnx")).run(None, {"image": x})
    (ref,) = ort.InferenceSession(str(cnn)).run(None, {"image": x})
    assert out.dtype == np.float32
    rtol, atol = TOLERANCES["float16"]
    assert float(np.max(np.abs(out - ref))) <= atol + rtol * float(np.max(np.abs(ref)))


@needs_node
def test_javascript_passes_float32_inputs_and_float16_weights(cnn: Path, tmp_path: Path
                                                              ) -> None:
    """The generated module replayed in node: a float32 input, float16 constants (the
    rounded weights' bytes), a cast first; the page writes a Float32Array input."""
    graph = convert(cnn, free_dims={"batch": 1}, precision="float16").graph
    js, _, weights = _write(graph, tmp_path)
    calls = _replay(graph, js, weights, tmp_path)["calls"]
    assert calls[0]["op"] == "input"
    assert calls[0]["args"][1] == {"dataType": "float32", "shape": [1, 3, 16, 16]}
    constants = [c for c in calls if c["op"] == "constant"]
    want = [c.operand for c in plan(graph).constants]
    assert [c["args"][0]["dataType"] for c in constants] == ["float16"] * len(want)
    for got, operand in zip(constants, want, strict=True):
        assert operand.value is not None
        assert got["args"][1]["typed"] == "Uint8Array"  # a view into the weights blob
        assert got["args"][1]["hex"] == operand.value.astype("<f2").tobytes().hex()
    ops = [c for c in calls if c["op"] not in ("input", "constant", "build")]
    assert ops[0]["op"] == "cast" and ops[0]["args"][1] == "float16"
    assert ops[-1]["op"] == "cast" and ops[-1]["args"][1] == "float32"
    (tmp_path / "page").mkdir()
    page = _run_page(tmp_path / "page", graph)
    assert page["status"] == "Done.", page["status"]
    assert page["written"][0]["type"] == "Float32Array"
