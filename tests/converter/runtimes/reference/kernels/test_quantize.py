"""Reference kernels quantizeLinear / dequantizeLinear against onnxruntime one-node
QuantizeLinear / DequantizeLinear models (opset 21: per-tensor, per-axis, blocked), and
against a float64 numpy formula written from the spec where ONNX has no equivalent
(int32/uint32 zero points, blocks along several axes).

WebNN scale shapes map to ONNX as: all 1s -> scalar scale; the input dimension on one axis
and 1 elsewhere -> 1-D scale with `axis`; a divisor of the input dimension on one axis ->
same-rank scale with `axis` and `block_size`.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

from converter.core.webnn import ML, MLGraphBuilder

ONNX_TYPE = {"float32": onnx.TensorProto.FLOAT, "float16": onnx.TensorProto.FLOAT16,
             "uint8": onnx.TensorProto.UINT8, "int8": onnx.TensorProto.INT8,
             "int32": onnx.TensorProto.INT32}


def _onnx_node(op: str, x: np.ndarray, scale: np.ndarray, zp: np.ndarray, out_dtype: str
               ) -> np.ndarray:
    """Run ONNX QuantizeLinear/DequantizeLinear with the WebNN scale shape mapped to the
    ONNX per-tensor / per-axis / blocked form."""
    rank = x.ndim
    varying = [i for i in range(rank) if scale.shape[i] != 1]
    attrs: dict[str, int] = {}
    if not varying:
        scale, zp = scale.reshape(()), zp.reshape(())
    elif len(varying) == 1 and scale.shape[varying[0]] == x.shape[varying[0]]:
        attrs["axis"] = varying[0]
        scale, zp = scale.reshape(-1), zp.reshape(-1)
    else:
        # Blocked: ONNX wants the scale to match x on every other axis.
        blocked = [i for i in range(rank) if scale.shape[i] not in (1, x.shape[i])]
        assert len(blocked) <= 1, "ONNX supports blocks along one axis"
        axis = blocked[0] if blocked else varying[0]
        for i in range(rank):
            if i != axis:
                scale = np.repeat(scale, x.shape[i] // scale.shape[i], axis=i)
                zp = np.repeat(zp, x.shape[i] // zp.shape[i], axis=i)
        attrs["axis"] = axis
        attrs["block_size"] = x.shape[axis] // scale.shape[axis]
    node = helper.make_node(op, ["x", "s", "zp"], ["y"], **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", ONNX_TYPE[x.dtype.name], list(x.shape)),
         helper.make_tensor_value_info("s", ONNX_TYPE[scale.dtype.name], list(scale.shape)),
         helper.make_tensor_value_info("zp", ONNX_TYPE[zp.dtype.name], list(zp.shape))],
        [helper.make_tensor_value_info("y", ONNX_TYPE[out_dtype], None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(["y"], {"x": x, "s": scale, "zp": zp})[0]


def _webnn(op: str, x: np.ndarray, scale: np.ndarray, zp: np.ndarray) -> np.ndarray:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    xi = b.input("x", list(x.shape), x.dtype.name)
    method = b.quantize_linear if op == "quantizeLinear" else b.dequantize_linear
    out = method(xi, b.constant(scale), b.constant(zp))
    return ctx.compute(b.build({"y": out}), {"x": x})["y"]


def _expand(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Blockwise expansion written with index arithmetic: element [i...] of the result is
    a[i // block ...]."""
    idx = np.indices(shape)
    blocks = [n // s for n, s in zip(shape, a.shape, strict=True)]
    return a[tuple(idx[k] // blocks[k] for k in range(len(shape)))]


def _quant_inputs(rng: np.random.Generator, shape: tuple[int, ...], scale: np.ndarray,
                  zp: np.ndarray, dtype: str) -> np.ndarray:
    """x = (q + u) * scale with u in [-0.45, 0.45] (no float32/float64 rounding ties), a few
    exact ties (q + 0.5 with power-of-two scales) and values beyond the saturation range."""
    s = _expand(scale.astype(np.float64), shape)
    info = np.iinfo(zp.dtype)
    q = rng.integers(int(info.min) - 40, int(info.max) + 40, shape).astype(np.float64)
    q -= _expand(zp.astype(np.float64), shape)
    u = rng.uniform(-0.45, 0.45, shape)
    ties = rng.random(shape) < 0.2
    u = np.where(ties & (np.log2(s) == np.round(np.log2(s))), 0.5, u)
    return ((q + u) * s).astype(dtype)


SHAPES = [
    # (input shape, scale shape): per-tensor, per-axis, blocked
    ((2, 3, 4), (1, 1, 1)),
    ((2, 3, 4), (1, 3, 1)),
    ((2, 3, 4), (2, 1, 1)),
    ((4, 6), (1, 3)),
    ((6, 4), (2, 1)),
    ((4, 6), (4, 3)),
    ((2, 3, 4), (2, 3, 2)),
    ((8,), (8,)),
    ((8,), (2,)),
]


@pytest.mark.parametrize(("shape", "scale_shape"), SHAPES)
@pytest.mark.parametrize("zp_dtype", ["uint8", "int8"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_quantize_matches_onnxruntime(shape: tuple[int, ...], scale_shape: tuple[int, ...],
                                      zp_dtype: str, dtype: str) -> None:
    rng = np.random.default_rng(11)
    scale = np.exp2(rng.integers(-4, 2, scale_shape)).astype(dtype)
    scale.flat[::2] *= np.asarray(1.3, dtype)  # some non-powers of two
    info = np.iinfo(zp_dtype)
    zp = rng.integers(int(info.min), int(info.max) + 1, scale_shape).astype(zp_dtype)
    x = _quant_inputs(rng, shape, scale, zp, dtype)
    got = _webnn("quantizeLinear", x, scale, zp)
    want = _onnx_node("QuantizeLinear", x, scale, zp, zp_dtype)
    assert got.dtype == np.dtype(zp_dtype) and got.shape == shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(("shape", "scale_shape"), SHAPES)
@pytest.mark.parametrize("in_dtype", ["uint8", "int8"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_dequantize_matches_onnxruntime(shape: tuple[int, ...], scale_shape: tuple[int, ...],
                                        in_dtype: str, dtype: str) -> None:
    rng = np.random.default_rng(12)
    info = np.iinfo(in_dtype)
    x = rng.integers(int(info.min), int(info.max) + 1, shape).astype(in_dtype)
    zp = rng.integers(int(info.min), int(info.max) + 1, scale_shape).astype(in_dtype)
    scale = rng.uniform(0.01, 2.0, scale_shape).astype(dtype)
    got = _webnn("dequantizeLinear", x, scale, zp)
    want = _onnx_node("DequantizeLinear", x, scale, zp, dtype)
    assert got.dtype == np.dtype(dtype) and got.shape == shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("zp_dtype", ["int32", "uint32", "int8", "uint8"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_quantize_spec_formula_wide_types_and_multi_axis_blocks(zp_dtype: str,
                                                                dtype: str) -> None:
    """saturate(roundEven(x / scale) + zeroPoint), blocks along two axes."""
    rng = np.random.default_rng(13)
    shape, scale_shape = (4, 6, 2), (2, 3, 1)
    scale = rng.uniform(0.05, 3.0, scale_shape).astype(dtype)
    info = np.iinfo(zp_dtype)
    lo, hi = max(int(info.min), -1000), min(int(info.max), 1000)
    zp = rng.integers(lo, hi, scale_shape).astype(zp_dtype)
    x = rng.uniform(-5000, 5000, shape).astype(dtype)
    x.flat[:3] = np.array([np.nan, np.inf, -np.inf], dtype)
    s = _expand(scale.astype(np.float64), shape)
    z = _expand(zp.astype(np.float64), shape)
    with np.errstate(invalid="ignore"):
        q = np.rint(x.astype(np.float64) / s) + z
    want = np.clip(np.where(np.isnan(q), 0.0, q), float(info.min), float(info.max))
    got = _webnn("quantizeLinear", x, scale, zp)
    assert got.dtype == np.dtype(zp_dtype)
    np.testing.assert_array_equal(got, want.astype(zp_dtype))
    assert got.flat[0] == 0  # NaN -> 0 (the spec's integer cast)
    assert got.flat[1] == info.max and got.flat[2] == info.min  # +-Infinity saturate


def test_quantize_saturates_and_rounds_half_to_even() -> None:
    x = np.array([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1000.0, -1000.0]], np.float32)
    one = np.ones((1, 1), np.float32)
    got_u8 = _webnn("quantizeLinear", x, one, np.zeros((1, 1), np.uint8))
    np.testing.assert_array_equal(got_u8, [[0, 0, 0, 0, 2, 2, 255, 0]])
    got_i8 = _webnn("quantizeLinear", x, one, np.full((1, 1), 3, np.int8))
    np.testing.assert_array_equal(got_i8, [[1, 1, 3, 3, 5, 5, 127, -128]])
    got_i32 = _webnn("quantizeLinear", x * np.float32(1e7), one, np.zeros((1, 1), np.int32))
    np.testing.assert_array_equal(got_i32[0, 6:], [2**31 - 1, -2**31])


@pytest.mark.parametrize("in_dtype", ["int32", "uint32"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_dequantize_spec_formula_wide_types(in_dtype: str, dtype: str) -> None:
    """(input - zeroPoint) * scale, computed once in float64 and rounded to scale's type."""
    rng = np.random.default_rng(14)
    shape, scale_shape = (3, 4, 6), (1, 2, 3)
    info = np.iinfo(in_dtype)
    x = rng.integers(int(info.min), int(info.max), shape, dtype=np.int64).astype(in_dtype)
    zp = rng.integers(0, 100, scale_shape).astype(in_dtype)
    scale = rng.uniform(1e-6, 1e-3, scale_shape).astype(dtype)
    want = (x.astype(np.float64) - _expand(zp.astype(np.float64), shape)) \
        * _expand(scale.astype(np.float64), shape)
    got = _webnn("dequantizeLinear", x, scale, zp)
    assert got.dtype == np.dtype(dtype)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, want.astype(dtype))


def test_scalar_input_rank_zero() -> None:
    x = np.array(7.4, np.float32)
    got = _webnn("quantizeLinear", x, np.array(2.0, np.float32), np.array(1, np.int8))
    assert got.shape == () and got == 5
    back = _webnn("dequantizeLinear", np.array(5, np.int8), np.array(2.0, np.float32),
                  np.array(1, np.int8))
    assert back.shape == () and back == 8.0


# -- 4-bit operands (int4 / uint4: constants and quantizeLinear outputs) ----------------------
def _onnx_4bit(op: str, x: np.ndarray, x_type: int, scale: np.ndarray, zp: np.ndarray,
               zp_type: int, axis: int, block_size: int, out_type: int) -> np.ndarray:
    """ONNX (opset 21) QuantizeLinear / DequantizeLinear with 4-bit initializers: `x` (for
    DequantizeLinear) and the zero point are INT4/UINT4 tensors (onnx.helper packs them)."""
    inits = [helper.make_tensor("zp", zp_type, list(zp.shape), zp.reshape(-1).tolist()),
             helper.make_tensor("s", ONNX_TYPE[scale.dtype.name], list(scale.shape),
                                scale.reshape(-1).tolist())]
    graph_inputs = []
    if op == "DequantizeLinear":
        inits.append(helper.make_tensor("x", x_type, list(x.shape), x.reshape(-1).tolist()))
    else:
        graph_inputs.append(helper.make_tensor_value_info("x", x_type, list(x.shape)))
    attrs = {"axis": axis} | ({"block_size": block_size} if block_size else {})
    y = "y" if op == "DequantizeLinear" else "q"
    nodes = [helper.make_node(op, ["x", "s", "zp"], [y], **attrs)]
    if op == "QuantizeLinear":  # read the 4-bit result back as int8 (exact)
        nodes.append(helper.make_node("Cast", ["q"], ["y"], to=onnx.TensorProto.INT8))
    graph = helper.make_graph(nodes, "g", graph_inputs,
                              [helper.make_tensor_value_info("y", out_type, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(["y"], {} if op == "DequantizeLinear" else {"x": x})[0]


FOUR_BIT = {"int4": (onnx.TensorProto.INT4, np.int8, -8, 7),
            "uint4": (onnx.TensorProto.UINT4, np.uint8, 0, 15)}
# (input shape, scale shape, ONNX axis, block size)
FOUR_BIT_SHAPES = [((4, 6), (1, 1), 0, 0), ((4, 6), (4, 1), 0, 0), ((4, 32), (4, 2), 1, 16),
                   ((32, 3), (2, 3), 0, 16), ((2, 3, 8), (2, 3, 4), 2, 2)]


def _onnx_params(scale: np.ndarray, zp: np.ndarray, axis: int, block: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The WebNN-shaped scale / zero point as ONNX wants them (scalar, 1-D or blocked)."""
    if block:
        return scale, zp
    if scale.size == 1:
        return scale.reshape(()), zp.reshape(())
    return scale.reshape(-1), zp.reshape(-1)


@pytest.mark.parametrize(("shape", "scale_shape", "axis", "block"), FOUR_BIT_SHAPES)
@pytest.mark.parametrize("qtype", ["int4", "uint4"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_dequantize_4bit_constant_matches_onnxruntime(shape: tuple[int, ...],
                                                      scale_shape: tuple[int, ...], axis: int,
                                                      block: int, qtype: str, dtype: str) -> None:
    rng = np.random.default_rng(21)
    onnx_type, storage, lo, hi = FOUR_BIT[qtype]
    x = rng.integers(lo, hi + 1, shape).astype(storage)
    zp = rng.integers(lo, hi + 1, scale_shape).astype(storage)
    scale = rng.uniform(0.01, 2.0, scale_shape).astype(dtype)
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    xc = b.constant(x, qtype)
    assert xc.data_type == qtype and xc.descriptor.byte_length == (x.size + 1) // 2
    y = b.dequantize_linear(xc, b.constant(scale), b.constant(zp, qtype))
    got = ctx.compute(b.build({"y": y}), {})["y"]
    s_onnx, z_onnx = _onnx_params(scale, zp, axis, block)
    want = _onnx_4bit("DequantizeLinear", x, onnx_type, s_onnx, z_onnx, onnx_type, axis, block,
                      ONNX_TYPE[dtype])
    assert got.dtype == np.dtype(dtype) and got.shape == shape
    np.testing.assert_array_equal(got, want)
    formula = (x.astype(np.float64) - _expand(zp.astype(np.float64), shape)) \
        * _expand(scale.astype(np.float64), shape)
    np.testing.assert_array_equal(got, formula.astype(dtype))


@pytest.mark.parametrize(("shape", "scale_shape", "axis", "block"), FOUR_BIT_SHAPES)
@pytest.mark.parametrize("qtype", ["int4", "uint4"])
def test_quantize_to_4bit_matches_onnxruntime(shape: tuple[int, ...],
                                              scale_shape: tuple[int, ...], axis: int,
                                              block: int, qtype: str) -> None:
    """saturate(roundEven(x / scale) + zeroPoint) to [-8, 7] / [0, 15]; the 4-bit result
    is read back through dequantizeLinear with scale 1 and zero point 0."""
    rng = np.random.default_rng(22)
    onnx_type, storage, lo, hi = FOUR_BIT[qtype]
    zp = rng.integers(lo, hi + 1, scale_shape).astype(storage)
    scale = np.exp2(rng.integers(-3, 2, scale_shape)).astype(np.float32)
    x = rng.uniform(-12, 12, shape).astype(np.float32) * _expand(scale, shape)
    x.flat[:4] = [0.5, -0.5, 100.0, -100.0]
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    q = b.quantize_linear(b.input("x", list(shape), "float32"), b.constant(scale),
                          b.constant(zp, qtype))
    assert q.data_type == qtype
    ones = b.constant(np.ones([1] * len(shape), np.float32))
    y = b.dequantize_linear(q, ones, b.constant(np.zeros([1] * len(shape), storage), qtype))
    got = ctx.compute(b.build({"y": y}), {"x": x})["y"]
    s_onnx, z_onnx = _onnx_params(scale, zp, axis, block)
    want = _onnx_4bit("QuantizeLinear", x, onnx.TensorProto.FLOAT, s_onnx, z_onnx, onnx_type,
                      axis, block, onnx.TensorProto.INT8)
    np.testing.assert_array_equal(got, want.astype(np.float32))
    formula = np.clip(np.rint(x.astype(np.float64) / _expand(scale, shape))
                      + _expand(zp.astype(np.float64), shape), lo, hi)
    np.testing.assert_array_equal(got, formula)
