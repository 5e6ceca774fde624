"""converter.passes.targets.rules_int4 (`dequantize-nibbles`): on a target whose limits take
neither int4 nor uint4, 4-bit weights ship as their packed bytes (a uint8 constant) and the
graph splits the nibbles. Oracles: (q - z) * scale in float64 numpy from the spec, rounded
once to the scale's type (bit-exact), and onnxruntime on the original MatMulNBits model;
bytes: the exported weights file against the packed 4-bit bytes."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from converter import convert
from converter.core.webnn import ML, MLGraphBuilder
from converter.core.webnn.dtypes import pack_4bit
from converter.core.webnn.ops.quantize import blocked_views
from converter.io.export.exporter import export
from converter.passes.targets import TARGETS_DIR, load_target
from converter.passes.targets.passes import lower
from converter.passes.targets.rules_int4 import uniform_value

RNG = np.random.default_rng(25)


def _without(limits: Any, types: tuple[str, ...]) -> Any:
    if isinstance(limits, dict):
        return {k: _without(v, types) for k, v in limits.items()}
    if isinstance(limits, list):
        return [v for v in limits if v not in types]
    return limits


def limits_file(folder: Path, drop: tuple[str, ...] = ("int4", "uint4"),
                ops: tuple[str, ...] = (), base: str = "chromium-tflite") -> Path:
    """`base`'s limits without the `drop` data types and the `ops` operators."""
    limits = json.loads((TARGETS_DIR / base / "limits.json").read_text())
    limits = {k: v for k, v in _without(limits, drop).items() if k not in ops}
    path = folder / "no_4bit.json"
    path.write_text(json.dumps(limits))
    return path


@pytest.fixture(scope="module")
def no_4bit(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return load_target(limits_file(tmp_path_factory.mktemp("limits")))


def _spec(q: np.ndarray, z: np.ndarray, s: np.ndarray) -> np.ndarray:
    """dequantizeLinear from the spec: (q - z) * scale, blockwise, in float64, rounded once
    to the scale's type."""
    reps = [d // p for d, p in zip(q.shape, s.shape, strict=True)]
    zz = np.kron(z.astype(np.float64), np.ones(reps))
    ss = np.kron(s.astype(np.float64), np.ones(reps))
    return ((q.astype(np.float64) - zz) * ss).astype(s.dtype)


CASES = [  # (data type, shape, scale shape, uniform zero point)
    ("uint4", (12, 64), (12, 2), False),  # MatMulNBits: [N, K], blocks of 32 along K
    ("uint4", (12, 64), (12, 2), True),  # the default zero point 8
    ("int4", (12, 64), (12, 2), False),
    ("int4", (7, 5), (1, 1), False),  # per tensor, odd element count (padding nibble)
    ("uint4", (6, 9), (6, 1), False),  # per row
    ("int4", (4, 6, 8), (2, 3, 8), False),  # blocks along two axes
]


def _values(data_type: str, shape: tuple[int, ...], scale_shape: tuple[int, ...],
            uniform: bool, float_type: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, zero point, scale) of a dequantizeLinear: random values of the type's range."""
    lo, hi = (-8, 8) if data_type == "int4" else (0, 16)
    storage = np.int8 if data_type == "int4" else np.uint8
    q = RNG.integers(lo, hi, shape).astype(storage)
    z = (np.full(scale_shape, 8 if data_type == "uint4" else -3) if uniform else
         RNG.integers(lo, hi, scale_shape)).astype(storage)
    return q, z, RNG.uniform(0.01, 0.2, scale_shape).astype(float_type)


def _dequantize_graph(q: np.ndarray, z: np.ndarray, s: np.ndarray, data_type: str,
                      backend: str = "reference") -> Any:
    """y = dequantizeLinear(q, s, z) * x (x an input of ones), q given packed."""
    b = MLGraphBuilder(ML().create_context(backend=backend))
    qc = b.packed_constant(np.frombuffer(pack_4bit(q), np.uint8), data_type, list(q.shape))
    w = b.dequantize_linear(qc, b.constant(s), b.constant(z, data_type))
    x = b.input("x", [1] * q.ndim, s.dtype.name)
    return b.build({"y": b.mul(w, x)})


@pytest.mark.parametrize("float_type", ["float32", "float16"])
@pytest.mark.parametrize(("data_type", "shape", "scale_shape", "uniform"), CASES)
def test_split_nibbles_equal_the_spec(no_4bit: Any, data_type: str, shape: tuple[int, ...],
                                      scale_shape: tuple[int, ...], uniform: bool,
                                      float_type: str) -> None:
    q, z, s = _values(data_type, shape, scale_shape, uniform, float_type)
    want = _spec(q, z, s)
    x = {"x": np.ones([1] * len(shape), float_type)}
    for backend in ("reference", "onnxruntime"):
        lowered = lower(_dequantize_graph(q, z, s, data_type, backend), no_4bit)
        assert lowered.applied == {"dequantize-nibbles": 1}
        constants = lowered.graph.constants
        assert not [c for c in constants if c.data_type in ("int4", "uint4")]
        packed = sorted(math.prod(c.shape) for c in constants if c.data_type == "uint8")
        half = [-(-int(np.prod(p)) // 2) for p in (scale_shape, shape)]
        one = uniform or int(np.prod(scale_shape)) == 1  # a zero point folded to a number
        assert packed == (half[1:] if one else half)  # the weight's (zero point's) bytes
        got = lowered.graph.context.compute(lowered.graph, x)["y"]
        if backend == "reference":
            np.testing.assert_array_equal(got, want)
        else:  # its lowering turns (q - z) * s, z constant, into q * s + (-z * s) (one
            # affine map, `fuse`): a rounding of terms up to 15 * s
            bound = 32 * float(np.finfo(want.dtype).eps) * float(s.max())
            np.testing.assert_allclose(got, want, rtol=0, atol=bound)


def test_rule_leaves_targets_with_4bit_types_alone(tmp_path: Path) -> None:
    """chromium-tflite and portable take int4: the weight stays int4 (dequantize-uint4); a
    target with uint4 only keeps uint4 as it is; without floor the split does not fit and
    the weight is widened to uint8 (dequantize-uint4's fallback)."""
    graph = _dequantize_graph(*_values("uint4", (12, 64), (12, 2), False, "float32"), "uint4")
    for name in ("chromium-tflite", "portable"):
        assert lower(graph, load_target(name)).applied == {"dequantize-uint4": 1}, name
    uint4_only = load_target(limits_file(tmp_path, drop=("int4",), base="chromium-dml"))
    assert lower(graph, uint4_only).applied == {}
    no_floor = load_target(limits_file(tmp_path, ops=("floor",)))
    assert lower(graph, no_floor).applied == {"dequantize-uint4": 1}


def test_helpers() -> None:
    assert blocked_views([12, 64], [12, 2]) == ([12, 2, 32], [12, 2, 1])
    assert blocked_views([4, 6, 8], [2, 3, 8]) == ([2, 2, 3, 2, 8], [2, 1, 3, 1, 8])
    assert blocked_views([7, 5], [1, 1]) == ([7, 5], [1, 1])
    assert uniform_value(np.array([0x88, 0x88, 0x08], np.uint8), 5) == 8
    assert uniform_value(np.array([0x88, 0x88, 0x08], np.uint8), 6) is None
    assert uniform_value(np.array([0x78], np.uint8), 2) is None


# -- a MatMulNBits model: bytes on the wire and onnxruntime ----------------------------------
N, K, BLOCK = 96, 128, 32


def matmul_nbits_model(path: Path, zero_points: bool, seed: int = 0) -> tuple[Path, int]:
    """A one-node MatMulNBits (4 bits, block 32, accuracy level 0) with A [2, 3, K]; returns
    the path and the bytes of its 4-bit initializers (B and packed zero points)."""
    rng = np.random.default_rng(seed)
    kb = K // BLOCK
    b = rng.integers(0, 256, (N, kb, BLOCK // 2), dtype=np.uint8)
    inits = [helper.make_tensor("B", TensorProto.UINT8, list(b.shape), b.tobytes(), raw=True),
             helper.make_tensor("S", TensorProto.FLOAT, [N * kb],
                                rng.uniform(0.01, 0.1, N * kb).astype(np.float32))]
    inputs = ["A", "B", "S"]
    four_bit = b.nbytes
    if zero_points:
        zp = rng.integers(0, 256, (N, kb // 2), dtype=np.uint8)
        inits.append(helper.make_tensor("Z", TensorProto.UINT8, list(zp.shape), zp.tobytes(),
                                        raw=True))
        inputs.append("Z")
        four_bit += zp.nbytes
    node = helper.make_node("MatMulNBits", inputs, ["Y"], domain="com.microsoft", K=K, N=N,
                            bits=4, block_size=BLOCK)
    graph = helper.make_graph(
        [node], "mmnb", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 3, K])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3, N])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)],
                              ir_version=8)
    onnx.save(model, path)
    return path, four_bit


def weights_bytes(folder: Path) -> dict[str, int]:
    """Bytes per data type in an export's weights manifest."""
    (manifest,) = folder.glob("*.manifest.json")
    out: dict[str, int] = {}
    for entry in json.loads(manifest.read_text())["tensors"].values():
        out[entry["dataType"]] = out.get(entry["dataType"], 0) + entry["byteLength"]
    return out


@pytest.mark.parametrize("zero_points", [False, True])
def test_matmul_nbits_ships_packed_and_matches_onnxruntime(no_4bit: Any, tmp_path: Path,
                                                           zero_points: bool) -> None:
    model, four_bit = matmul_nbits_model(tmp_path / "m.onnx", zero_points)
    a = RNG.standard_normal((2, 3, K)).astype(np.float32)
    (want,) = ort.InferenceSession(str(model)).run(None, {"A": a})
    unpacked = convert(str(model), target=no_4bit)
    assert any("rule dequantize-nibbles" in w for w in unpacked.report.warnings)
    kept = convert(str(model), target="chromium-tflite")  # int4 in the graph
    got = unpacked.run({"A": a})["Y"]
    np.testing.assert_array_equal(got, kept.run({"A": a})["Y"])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(unpacked.run({"A": a}, backend="onnxruntime")["Y"], want,
                               rtol=1e-5, atol=1e-5)
    export(unpacked, tmp_path / "js", format="js")
    sizes = weights_bytes(tmp_path / "js")
    assert sizes["uint8"] == four_bit  # the 4-bit bytes as they were
    scales = N * K // BLOCK * 4
    assert sum(sizes.values()) <= four_bit + scales + 64


def test_precision_float16_splits_in_float16(no_4bit: Any, tmp_path: Path) -> None:
    model, four_bit = matmul_nbits_model(tmp_path / "m.onnx", True)
    a = RNG.standard_normal((2, 3, K)).astype(np.float32)
    (want,) = ort.InferenceSession(str(model)).run(None, {"A": a})
    half = convert(str(model), target=no_4bit, precision="float16")
    casts = [op for op in half.graph.operations if op.op == "cast" and
             op.args[0].data_type == "uint8"]
    assert casts and all(op.outputs[0].data_type == "float16" for op in casts)
    kept = convert(str(model), target="chromium-tflite", precision="float16")
    got = half.run({"A": a})["Y"]
    np.testing.assert_array_equal(got, kept.run({"A": a})["Y"])
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-2)
    export(half, tmp_path / "js", format="js")
    sizes = weights_bytes(tmp_path / "js")
    assert sizes["uint8"] == four_bit and sizes.get("float32", 0) == 0
