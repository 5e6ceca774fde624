"""4-bit constants in the ONNX lowering (`converter.runtimes.onnxruntime.lowering`): int4/uint4
constants become packed INT4/UINT4 initializers (two values per byte, low nibble first), a
dequantizeLinear of one becomes a single ONNX DequantizeLinear (opset 21 `axis` /
`block_size`) where ONNX has the scale's form, and everything matches the reference backend
bit for bit on onnxruntime (the "onnxruntime" backend runs this lowering)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper

from converter.core.webnn import ML, MLGraphBuilder, MLOperand
from converter.core.webnn.dtypes import pack_4bit
from converter.runtimes.onnxruntime.to_onnx import to_onnx

RNG = np.random.default_rng(5)
RANGE = {"int4": (-8, 7, np.int8), "uint4": (0, 15, np.uint8)}

Build = Callable[[MLGraphBuilder], dict[str, MLOperand]]


def _values(qtype: str, shape: tuple[int, ...]) -> np.ndarray:
    lo, hi, storage = RANGE[qtype]
    return RNG.integers(lo, hi + 1, shape).astype(storage)


def _both(build: Build) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], onnx.ModelProto]:
    """(reference outputs, onnxruntime-backend outputs, the lowered model)."""
    outs = []
    for backend in ("reference", "onnxruntime"):
        ctx = ML().create_context(backend=backend)
        b = MLGraphBuilder(ctx)
        graph = b.build(build(b))
        outs.append(ctx.compute(graph, {}))
    return outs[0], outs[1], to_onnx(graph)


# (weight shape, scale shape, native ONNX DequantizeLinear attributes or None)
CASES = [
    ((6, 8), (1, 1), {}),
    ((6, 8), (1, 8), {"axis": 1}),
    ((6, 8), (6, 1), {"axis": 0}),
    ((64, 6), (2, 6), {"axis": 0, "block_size": 32}),
    ((6, 64), (6, 4), {"axis": 1, "block_size": 16}),
    ((2, 3, 32), (2, 3, 2), {"axis": 2, "block_size": 16}),
    ((4, 32), (2, 2), None),  # blocks on two axes: no ONNX form, decomposed
    ((4, 32), (1, 2), None),  # a block on one axis, broadcast on the other
]


@pytest.mark.parametrize(("shape", "scale_shape", "attrs"), CASES)
@pytest.mark.parametrize("qtype", ["int4", "uint4"])
@pytest.mark.parametrize("ftype", ["float32", "float16"])
def test_dequantize_4bit_constant(shape: tuple[int, ...], scale_shape: tuple[int, ...],
                                  attrs: dict[str, int] | None, qtype: str, ftype: str) -> None:
    w = _values(qtype, shape)
    zp = _values(qtype, scale_shape)
    scale = RNG.uniform(0.01, 0.5, scale_shape).astype(ftype)

    def build(b: MLGraphBuilder) -> dict[str, MLOperand]:
        y = b.dequantize_linear(b.constant(w, qtype), b.constant(scale), b.constant(zp, qtype))
        return {"y": b.relu(y)}

    want, got, model = _both(build)
    np.testing.assert_array_equal(got["y"], want["y"])
    assert got["y"].dtype == np.dtype(ftype)
    onnx.checker.check_model(model, full_check=True)
    code = TensorProto.INT4 if qtype == "int4" else TensorProto.UINT4
    packed = [t for t in model.graph.initializer if t.data_type == code and list(t.dims) ==
              list(shape)]
    assert len(packed) == 1 and packed[0].raw_data == pack_4bit(w)
    np.testing.assert_array_equal(numpy_helper.to_array(packed[0]).astype(np.int16), w)
    dq = [n for n in model.graph.node if n.op_type == "DequantizeLinear"]
    if attrs is None:
        assert not dq
    else:
        assert len(dq) == 1
        assert {a.name: a.i for a in dq[0].attribute} == attrs
        assert dq[0].input[0] == packed[0].name


@pytest.mark.parametrize("qtype", ["int4", "uint4"])
def test_quantize_to_4bit_on_onnxruntime(qtype: str) -> None:
    """quantizeLinear to 4 bits (a Cast of the saturated float64 value to INT4/UINT4), read
    back by dequantizeLinear with a computed (not constant) 4-bit input."""
    x = RNG.uniform(-10, 10, (4, 32)).astype(np.float32)
    x.flat[:4] = [0.5, 1.5, 1000.0, -1000.0]
    scale = np.exp2(RNG.integers(-2, 2, (4, 2))).astype(np.float32)
    zp = _values(qtype, (4, 2))

    def build(b: MLGraphBuilder) -> dict[str, MLOperand]:
        q = b.quantize_linear(b.constant(x), b.constant(scale), b.constant(zp, qtype))
        return {"y": b.dequantize_linear(q, b.constant(scale), b.constant(zp, qtype))}

    want, got, _ = _both(build)
    np.testing.assert_array_equal(got["y"], want["y"])


@pytest.mark.parametrize("qtype", ["int4", "uint4"])
def test_transposed_4bit_weight_becomes_matmul_nbits(qtype: str, tmp_path: object) -> None:
    """matmul(x, transpose(dequantizeLinear(w [N, K] blocked along K))) (the MatMulNBits
    import) lowers the dequantization of the transposed constants ([K, N], blocked along axis
    0), which onnxruntime fuses into MatMulNBits; results match a float64 oracle."""
    import onnxruntime as ort

    n, k, block = 8, 64, 32
    w = _values(qtype, (n, k))
    zp = _values(qtype, (n, k // block))
    scale = RNG.uniform(0.01, 0.5, (n, k // block)).astype(np.float32)
    x = RNG.uniform(-1, 1, (3, k)).astype(np.float32)

    def build(b: MLGraphBuilder) -> dict[str, MLOperand]:
        dq = b.dequantize_linear(b.constant(w, qtype), b.constant(scale),
                                 b.constant(zp, qtype))
        return {"y": b.matmul(b.constant(x), b.transpose(dq, permutation=[1, 0]))}

    want_w = (w.astype(np.float64) - np.repeat(zp, block, axis=1)) * np.repeat(scale, block, 1)
    _, got, model = _both(build)
    np.testing.assert_allclose(got["y"], x.astype(np.float64) @ want_w.T, rtol=1e-5, atol=1e-5)
    dq = [node for node in model.graph.node if node.op_type == "DequantizeLinear"]
    assert len(dq) == 1 and "Transpose" not in {node.op_type for node in model.graph.node}
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.qdq_matmulnbits_accuracy_level", "0")
    path = f"{tmp_path}/optimized.onnx"
    options.optimized_model_filepath = path
    ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    assert "MatMulNBits" in {node.op_type for node in onnx.load(path).graph.node}
