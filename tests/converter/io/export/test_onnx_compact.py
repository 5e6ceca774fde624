"""Compact ONNX export (converter.runtimes.onnxruntime.lowering.compact): splat constants become
ConstantOfShape, broadcasts of a smaller array become that array + Expand, unused
initializers disappear, and nothing else changes.

Oracles: numpy (`np.broadcast_to` of the stored source must give the original bits; `x + c`
in the constant's dtype), onnxruntime on the original ONNX model (zoo tolerance
1e-3 + 1e-3·max|ref|), and onnxruntime on the uncompacted export (`compact=False`, every
constant stored verbatim), which must give bit-identical outputs: onnxruntime folds
ConstantOfShape / Expand of initializers at session creation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import converter
from converter.core.webnn import ML, MLGraph, MLGraphBuilder
from converter.runtimes.onnxruntime.backend import OnnxRuntimeBackend
from converter.runtimes.onnxruntime.lowering import Emitter
from converter.runtimes.onnxruntime.lowering.compact import compact_constants
from converter.runtimes.onnxruntime.lowering.compact_forms import (
    COMPACT_MIN_BYTES,
    band_form,
    broadcast_source,
    compact_form,
)
from converter.runtimes.onnxruntime.to_onnx import to_onnx
from converter.zoo import default_manifests, read_manifests
from converter.zoo.sources import convert_options, load_model

RNG = np.random.default_rng(20240613)
TOL = 1e-3
DTYPES = ["float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8"]


def _session(model: onnx.ModelProto | bytes | str) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.log_severity_level = 3
    data = model.SerializeToString() if isinstance(model, onnx.ModelProto) else model
    return ort.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def _run(model: onnx.ModelProto | bytes | str, feeds: dict[str, np.ndarray]
         ) -> list[np.ndarray]:
    session = _session(model)
    return session.run(None, {i.name: feeds[i.name] for i in session.get_inputs()})


def _ops(model: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in model.graph.node]


def _within_tolerance(got: np.ndarray, ref: np.ndarray) -> None:
    ref64 = ref.astype(np.float64)
    err = float(np.max(np.abs(got.astype(np.float64) - ref64)))
    assert err <= TOL + TOL * float(np.max(np.abs(ref64))), err


# -- broadcast_source: the stored source broadcasts back to the original bits ----------------
@pytest.mark.parametrize(("shape", "source_shape"), [
    ((4, 5, 6), (1, 1, 1)),          # splat
    ((1, 8, 5, 5), (1, 8, 1, 1)),    # a [C] vector expanded over H and W
    ((3, 7, 2), (1, 7, 1)),          # one row repeated along two axes
    ((6, 4), (6, 1)),
    ((6, 4), (6, 4)),                # no structure
])
def test_broadcast_source_is_the_smallest_exact_source(shape: tuple[int, ...],
                                                       source_shape: tuple[int, ...]) -> None:
    small = RNG.standard_normal(source_shape).astype(np.float32)
    arr = np.ascontiguousarray(np.broadcast_to(small, shape))
    got = broadcast_source(arr)
    assert got.shape == source_shape and got.dtype == arr.dtype
    np.testing.assert_array_equal(np.broadcast_to(got, shape), arr)


def test_broadcast_source_compares_bits() -> None:
    """-0.0 and 0.0 are different values for the export (1/x differs); NaNs of one payload
    are one value."""
    signed = np.zeros((64,), np.float32)
    signed[17] = -0.0
    assert broadcast_source(signed).shape == (64,)
    nans = np.full((2, 64), np.nan, np.float32)
    assert broadcast_source(nans).shape == (1, 1)
    late = np.ones((50, 50), np.float32)
    late[49, 49] = 2.0  # equal at the origin probe, different further on
    assert broadcast_source(late).shape == (50, 50)


def test_compact_form_keeps_no_reference_to_the_array() -> None:
    """Forms are noted when initializers are created and kept until the end of the export:
    they must not keep the (large) original array alive."""
    arr = np.ascontiguousarray(np.broadcast_to(
        RNG.standard_normal((64, 1)).astype(np.float32), (64, 32)))
    form = compact_form(arr)
    assert form is not None and form.source is not None
    assert not np.shares_memory(form.source, arr)
    assert compact_form(arr[:1, :1].copy()) is None  # at most COMPACT_MIN_BYTES bytes


def test_initializers_added_directly_are_compacted_too() -> None:
    """compact_constants detects the form of initializers the emitter did not note (a
    lowering appending a TensorProto itself, or an emitter without compact_min_bytes)."""
    e = Emitter(21)
    e.initializers.append(numpy_helper.from_array(np.full((8, 64), 3, np.int32), "c"))
    e.nodes.append(helper.make_node("Identity", ["c"], ["y"]))
    compact_constants(e)
    assert [n.op_type for n in e.nodes] == ["ConstantOfShape", "Identity"]
    graph = helper.make_graph(e.nodes, "g", [], [helper.make_tensor_value_info(
        "y", TensorProto.INT32, [8, 64])], e.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    np.testing.assert_array_equal(_run(model, {})[0], np.full((8, 64), 3, np.int32))


def test_packed_four_bit_initializers_are_left_alone() -> None:
    """An INT4 initializer reads back unpacked (int8): rewriting it would change its type."""
    e = Emitter(21)
    packed = TensorProto(name="q", data_type=TensorProto.INT4, dims=[8, 128],
                         raw_data=bytes([0x33]) * 512)
    e.initializers.append(packed)
    e.nodes.append(helper.make_node("Identity", ["q"], ["y"]))
    compact_constants(e)
    assert [n.op_type for n in e.nodes] == ["Identity"] and list(e.initializers) == [packed]


# -- band matrices: the LRN decomposition's 0/1 channel windows -------------------------------
def _numpy_band(n: int, m: int, lo: int, hi: int, value: float = 1.0) -> np.ndarray:
    """value on the diagonals lo <= j - i <= hi (np.triu / np.tril), +0.0 elsewhere."""
    ones = np.ones((n, m), np.float32)
    return (np.triu(ones, lo) * np.tril(ones, hi) * np.float32(value)).astype(np.float32)


@pytest.mark.parametrize(("n", "m", "lo", "hi"), [
    (96, 96, -2, 2), (64, 64, 0, 0), (20, 30, -3, 5), (30, 20, 1, 4), (16, 16, -15, 0),
])
def test_band_form_finds_bands(n: int, m: int, lo: int, hi: int) -> None:
    band = _numpy_band(n, m, lo, hi, 0.25)
    got = band_form(band[None])
    assert got is not None
    value, got_lo, got_hi = got
    assert (got_lo, got_hi) == (lo, hi) and value.tolist() == [0.25]


def test_band_form_rejects_near_bands() -> None:
    band = _numpy_band(32, 32, -2, 2)
    assert band_form(RNG.standard_normal((32, 32)).astype(np.float32)) is None
    changed = band.copy()
    changed[5, 5] = 2.0
    assert band_form(changed) is None
    negative_zero = band.copy()
    negative_zero[20, 0] = -0.0
    assert band_form(negative_zero) is None
    assert band_form(band.astype(np.float16)) is None  # float32 only


@pytest.mark.parametrize("leading", [(), (3,)])
def test_band_matrix_exports_as_trilu(leading: tuple[int, ...]) -> None:
    band = np.ascontiguousarray(np.broadcast_to(_numpy_band(200, 200, -2, 2), (*leading, 200,
                                                                                 200)))
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[*leading, 4, 200], data_type="float32")
    graph = b.build({"y": b.matmul(x, b.constant(band))})
    model = to_onnx(graph)
    onnx.checker.check_model(model, full_check=True)
    assert _ops(model).count("Trilu") == 2 and ("Expand" in _ops(model)) == bool(leading)
    assert sum(len(t.raw_data) for t in model.graph.initializer) < 200
    feeds = {"x": RNG.standard_normal((*leading, 4, 200)).astype(np.float32)}
    got = _run(model, feeds)[0]
    np.testing.assert_allclose(got, feeds["x"] @ band, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got, _run(to_onnx(graph, compact=False), feeds)[0])


def test_lrn_model_exports_without_its_window_matrix(tmp_path: Path) -> None:
    """ONNX LRN (256 channels) is imported with a [256, 256] 0/1 window matrix, exported as
    two Trilu of a ConstantOfShape."""
    c = 256
    graph = helper.make_graph(
        [helper.make_node("LRN", ["x"], ["y"], size=5, alpha=1e-4, beta=0.75, bias=1.0)],
        "lrn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c, 6, 6])])
    source = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    source.ir_version = 8
    original = tmp_path / "lrn.onnx"
    onnx.save_model(source, str(original))
    paths = converter.export(converter.convert(str(original)), tmp_path / "out",
                             format="onnx")
    exported = next(p for p in paths if p.suffix == ".onnx")
    # The source is one node (151 bytes); verbatim, the window matrix alone is 262144 bytes.
    assert exported.stat().st_size < 4096
    assert _ops(onnx.load(str(exported))).count("Trilu") == 2
    feeds = {"x": RNG.standard_normal((1, c, 6, 6)).astype(np.float32) * 10}
    _within_tolerance(_run(str(exported), feeds)[0], _run(source, feeds)[0])


# -- dtypes: every WebNN type round trips through ConstantOfShape / Expand --------------------
def _splat_and_broadcast(dtype: str) -> tuple[MLGraph, dict[str, np.ndarray], np.ndarray,
                                               np.ndarray]:
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    value = np.asarray(info.max - 3 if info else -1.25e-3, dtype)
    splat = np.full((4, 128), value, dtype)
    row = (np.arange(128) % 100).astype(dtype) if info else RNG.standard_normal(128).astype(
        dtype)
    wide = np.ascontiguousarray(np.broadcast_to(row, (4, 128)))
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[4, 128], data_type=dtype)
    graph = b.build({"s": b.add(x, b.constant(splat)), "w": b.add(x, b.constant(wide))})
    feeds = {"x": (np.arange(512).reshape(4, 128) % 3).astype(dtype)}
    return graph, feeds, splat, wide


@pytest.mark.parametrize("dtype", DTYPES)
def test_splat_and_broadcast_constants_of_every_type(dtype: str) -> None:
    graph, feeds, splat, wide = _splat_and_broadcast(dtype)
    model = to_onnx(graph)
    onnx.checker.check_model(model, full_check=True)
    ops = _ops(model)
    assert ops.count("ConstantOfShape") == 1 and ops.count("Expand") == 1, ops
    stored = sum(len(t.raw_data) for t in model.graph.initializer)
    assert stored <= 2 * 128 * np.dtype(dtype).itemsize  # never the [4, 128] tensors
    s, w = _run(model, feeds)
    x = feeds["x"]
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(s, (x + splat).astype(dtype))
        np.testing.assert_array_equal(w, (x + wide).astype(dtype))
    verbatim = _run(to_onnx(graph, compact=False), feeds)
    np.testing.assert_array_equal(s, verbatim[0])
    np.testing.assert_array_equal(w, verbatim[1])


def test_small_and_unstructured_constants_stay_verbatim() -> None:
    """Constants of at most COMPACT_MIN_BYTES bytes and constants without broadcast
    structure are initializers holding exactly their values."""
    tiny = np.full((COMPACT_MIN_BYTES // 4,), 0.5, np.float32)
    dense = RNG.standard_normal((16, 64)).astype(np.float32)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[16, 64], data_type="float32")
    v = b.input("v", shape=[COMPACT_MIN_BYTES // 4], data_type="float32")
    graph = b.build({"a": b.mul(x, b.constant(dense)), "b": b.sub(v, b.constant(tiny))})
    model = to_onnx(graph)
    assert "ConstantOfShape" not in _ops(model) and "Expand" not in _ops(model)
    stored = [numpy_helper.to_array(t) for t in model.graph.initializer]
    assert any(a.shape == dense.shape and np.array_equal(a, dense) for a in stored)
    assert any(a.shape == tiny.shape and np.array_equal(a, tiny) for a in stored)


def test_unused_constants_are_not_written() -> None:
    """Constants a lowering consumes at export time (batchNormalization parameters folded
    into one factor) are not written; the output still matches the spec formula."""
    c = 300
    mean = RNG.standard_normal(c).astype(np.float32)
    var = RNG.uniform(0.5, 2, c).astype(np.float32)
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[1, c, 2, 2], data_type="float32")
    graph = b.build({"y": b.batch_normalization(x, b.constant(mean), b.constant(var),
                                                epsilon=1e-5)})
    model = to_onnx(graph)
    stored = [numpy_helper.to_array(t) for t in model.graph.initializer]
    assert not any(a.size == c and np.array_equal(a.reshape(-1), var) for a in stored)
    feeds = {"x": RNG.standard_normal((1, c, 2, 2)).astype(np.float32)}
    want = (feeds["x"] - mean.reshape(c, 1, 1)) / np.sqrt(var.reshape(c, 1, 1) + 1e-5)
    np.testing.assert_allclose(_run(model, feeds)[0], want, rtol=1e-5, atol=1e-5)


# -- a generated splat + BatchNormalization model ---------------------------------------------
def _splat_bn_model(weight: str, c_in: int = 32, c_out: int = 64) -> onnx.ModelProto:
    """Conv (3x3, weight all 0.02: a ConstantOfShape output or a splat initializer, bias a
    splat initializer) → BatchNormalization (random per-channel parameters) → Relu →
    Add of a [1, C, H, W] initializer that is a [C, 1, 1] vector broadcast."""
    hw = 8
    nodes, inits = [], []
    w_shape = [c_out, c_in, 3, 3]
    if weight == "constant_of_shape":
        inits.append(numpy_helper.from_array(np.array(w_shape, np.int64), "w_shape"))
        nodes.append(helper.make_node("ConstantOfShape", ["w_shape"], ["w"],
                                      value=numpy_helper.from_array(
                                          np.array([0.02], np.float32))))
    else:
        inits.append(numpy_helper.from_array(np.full(w_shape, 0.02, np.float32), "w"))
    inits.append(numpy_helper.from_array(np.full([c_out], 0.1, np.float32), "bias"))
    for name, lo, hi in [("scale", 0.5, 1.5), ("shift", -1, 1), ("mean", -1, 1),
                         ("var", 0.5, 2)]:
        inits.append(numpy_helper.from_array(RNG.uniform(lo, hi, c_out).astype(np.float32),
                                             name))
    per_channel = RNG.standard_normal((c_out, 1, 1)).astype(np.float32)
    inits.append(numpy_helper.from_array(np.ascontiguousarray(
        np.broadcast_to(per_channel, (1, c_out, hw, hw))), "offset"))
    nodes += [
        helper.make_node("Conv", ["x", "w", "bias"], ["conv"], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["conv", "scale", "shift", "mean", "var"],
                         ["bn"], epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["relu"]),
        helper.make_node("Add", ["relu", "offset"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "splat_bn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c_in, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c_out, hw, hw])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model, full_check=True)
    return model


@pytest.mark.parametrize("weight", ["constant_of_shape", "splat_initializer"])
def test_splat_batch_norm_model_exports_at_most_its_size(weight: str, tmp_path: Path) -> None:
    source = _splat_bn_model(weight)
    original = tmp_path / "model.onnx"
    onnx.save_model(source, str(original))
    result = converter.convert(str(original))
    paths = converter.export(result, tmp_path / "out", format="onnx")
    exported = next(p for p in paths if p.suffix == ".onnx")
    assert exported.stat().st_size <= 1.1 * original.stat().st_size, (
        exported.stat().st_size, original.stat().st_size)
    model = onnx.load(str(exported))
    onnx.checker.check_model(model, full_check=True)
    assert "ConstantOfShape" in _ops(model) and "Expand" in _ops(model)
    feeds = {"x": RNG.standard_normal((1, 32, 8, 8)).astype(np.float32)}
    _within_tolerance(_run(model, feeds)[0], _run(source, feeds)[0])


# -- light_resnet50 from the onnx package's test data -----------------------------------------
def _zoo_entry(name: str) -> object:
    entry = {e.name: e for e in read_manifests(default_manifests())}[name]
    if entry.path is None:
        pytest.skip(entry.missing)
    return entry


def test_light_resnet50_exports_at_most_its_size(tmp_path: Path) -> None:
    """197 MB before compaction: every weight is a ConstantOfShape splat in the source."""
    entry = _zoo_entry("light_resnet50")
    result = converter.convert(load_model(entry), **convert_options(entry))
    onnx_path = next(p for p in converter.export(result, tmp_path / "onnx", format="onnx")
                     if p.suffix == ".onnx")
    weights = next(p for p in converter.export(result, tmp_path / "webnn", format="webnn")
                   if p.suffix == ".weights")
    size = onnx_path.stat().st_size
    assert size <= 1.1 * Path(entry.path).stat().st_size
    assert size <= weights.stat().st_size + 1_000_000
    (name, shape), = entry.input_shapes.items()
    feeds = {name: RNG.standard_normal(shape).astype(np.float32)}
    want = _run(str(entry.path), feeds)
    got = _run(str(onnx_path), feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape
        _within_tolerance(g, w)


def test_runtime_backend_results_are_unchanged() -> None:
    """The onnxruntime backend runs the compacted lowering: outputs bit-identical to a
    session on the verbatim (uncompacted) lowering."""
    entry = _zoo_entry("light_resnet50")
    result = converter.convert(load_model(entry), **convert_options(entry))
    graph = result.graph
    assert "ConstantOfShape" in _ops(to_onnx(graph))
    feeds = {n: RNG.standard_normal(op.shape).astype(np.float32)
             for n, op in graph.inputs.items()}
    got = OnnxRuntimeBackend("cpu", threads=1).compile(graph).run(feeds)
    verbatim = _run(to_onnx(graph, compact=False), feeds)
    for (key, g), v in zip(got.items(), verbatim, strict=True):
        np.testing.assert_array_equal(g, v, err_msg=key)
