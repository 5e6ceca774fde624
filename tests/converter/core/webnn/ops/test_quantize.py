"""Validation of quantizeLinear and dequantizeLinear: every spec TypeError rule, output
descriptors, plus the limit samples."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLInvalidStateError, MLTypeError
from tests.converter.core.webnn.limit_samples import Sample

SAMPLES: dict[str, Sample] = {
    "dequantizeLinear": Sample(
        lambda b, t: b.dequantize_linear(b.input("x", [2, 4], t["input"]),
                                         b.input("s", [2, 1], t["scale"]),
                                         b.input("z", [2, 1], t["zeroPoint"])),
        groups=[("input", "zeroPoint")]),
    "quantizeLinear": Sample(
        lambda b, t: b.quantize_linear(b.input("x", [2, 4], t["input"]),
                                       b.input("s", [2, 1], t["scale"]),
                                       b.input("z", [2, 1], t["zeroPoint"])),
        groups=[("input", "scale")]),
}

METHODS = {"quantizeLinear": "quantize_linear", "dequantizeLinear": "dequantize_linear"}
# (input type, scale type, zero point type) of a valid call
VALID = {"quantizeLinear": ("float32", "float32", "int8"),
         "dequantizeLinear": ("uint8", "float16", "uint8")}


@pytest.fixture
def b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


def _call(b: MLGraphBuilder, op: str, x_shape: list[int], s_shape: list[int],
          z_shape: list[int] | None = None, types: tuple[str, str, str] | None = None) -> object:
    tx, ts, tz = types or VALID[op]
    return getattr(b, METHODS[op])(b.input("x", x_shape, tx), b.input("s", s_shape, ts),
                                   b.input("z", s_shape if z_shape is None else z_shape, tz))


@pytest.mark.parametrize(("x_shape", "s_shape"), [
    ([2, 3, 4], [1, 1, 1]),   # per-tensor
    ([2, 3, 4], [1, 3, 1]),   # per-axis
    ([2, 3, 4], [2, 3, 2]),   # blocked along the last axis
    ([6, 4], [3, 2]),         # blocked along both axes
    ([5], [5]),
    ([], []),                 # scalar
])
@pytest.mark.parametrize("op", list(METHODS))
def test_valid_blockwise_shapes(b: MLGraphBuilder, op: str, x_shape: list[int],
                                s_shape: list[int]) -> None:
    out = _call(b, op, x_shape, s_shape)
    assert out.shape == tuple(x_shape)
    _, ts, tz = VALID[op]
    assert out.data_type == (tz if op == "quantizeLinear" else ts)
    assert out.operator.op == op and len(out.operator.args) == 3
    assert dict(out.operator.options) == {}


@pytest.mark.parametrize(("types", "out_type"), [
    (("float16", "float16", "uint8"), "uint8"), (("float32", "float32", "int32"), "int32"),
    (("float32", "float32", "uint32"), "uint32")])
def test_quantize_output_type_is_zero_point_type(b: MLGraphBuilder, types: tuple[str, str, str],
                                                 out_type: str) -> None:
    assert _call(b, "quantizeLinear", [4], [2], types=types).data_type == out_type


@pytest.mark.parametrize(("types", "out_type"), [
    (("int8", "float32", "int8"), "float32"), (("int32", "float16", "int32"), "float16"),
    (("uint32", "float32", "uint32"), "float32")])
def test_dequantize_output_type_is_scale_type(b: MLGraphBuilder, types: tuple[str, str, str],
                                              out_type: str) -> None:
    assert _call(b, "dequantizeLinear", [4], [2], types=types).data_type == out_type


@pytest.mark.parametrize("op", list(METHODS))
def test_rank_mismatch(b: MLGraphBuilder, op: str) -> None:
    with pytest.raises(MLTypeError, match=re.escape(
            f"{op}: scale rank (1) and zeroPoint rank (1) must equal the input rank (2)")):
        _call(b, op, [2, 4], [4])
    b2 = MLGraphBuilder(ML().create_context())
    with pytest.raises(MLTypeError, match=re.escape(
            f"{op}: scale rank (2) and zeroPoint rank (1) must equal the input rank (2)")):
        _call(b2, op, [2, 4], [1, 4], [4])


@pytest.mark.parametrize("op", list(METHODS))
def test_scale_and_zero_point_shapes_must_match(b: MLGraphBuilder, op: str) -> None:
    with pytest.raises(MLTypeError, match=re.escape(
            f"{op}: scale shape [1, 4] must equal zeroPoint shape [1, 2]")):
        _call(b, op, [2, 4], [1, 4], [1, 2])


@pytest.mark.parametrize(("x_shape", "s_shape"), [([2, 4], [1, 3]), ([2, 4], [4, 1]),
                                                   ([6], [4]), ([3, 3], [2, 3])])
@pytest.mark.parametrize("op", list(METHODS))
def test_not_blockwise_broadcastable(b: MLGraphBuilder, op: str, x_shape: list[int],
                                     s_shape: list[int]) -> None:
    with pytest.raises(MLTypeError, match=re.escape(
            f"{op}: scale shape {s_shape} is not blockwise broadcastable to the input "
            f"shape {x_shape}")):
        _call(b, op, x_shape, s_shape)


@pytest.mark.parametrize(("op", "types", "match"), [
    ("quantizeLinear", ("int8", "float32", "int8"), "input data type int8 is not one of"),
    ("quantizeLinear", ("float32", "int32", "int8"), "scale data type int32 is not one of"),
    ("quantizeLinear", ("float32", "float16", "int8"),
     "scale data type float16 must equal input data type float32"),
    ("quantizeLinear", ("float32", "float32", "float32"),
     "zeroPoint data type float32 is not one of"),
    ("quantizeLinear", ("float32", "float32", "int64"), "zeroPoint data type int64 is not one"),
    ("dequantizeLinear", ("float32", "float32", "float32"),
     "input data type float32 is not one of"),
    ("dequantizeLinear", ("int64", "float32", "int64"), "input data type int64 is not one of"),
    ("dequantizeLinear", ("int8", "int32", "int8"), "scale data type int32 is not one of"),
    ("dequantizeLinear", ("int8", "float32", "uint8"),
     "zeroPoint data type uint8 must equal input data type int8"),
    ("dequantizeLinear", ("int32", "float32", "uint32"),
     "zeroPoint data type uint32 must equal input data type int32"),
])
def test_data_type_rules(b: MLGraphBuilder, op: str, types: tuple[str, str, str],
                         match: str) -> None:
    with pytest.raises(MLTypeError, match=f"{op}: {match}"):
        _call(b, op, [2, 4], [1, 4], types=types)


@pytest.mark.parametrize("op", list(METHODS))
def test_operand_validity_and_state(b: MLGraphBuilder, op: str) -> None:
    other = MLGraphBuilder(ML().create_context())
    tx, ts, tz = VALID[op]
    x, s = b.input("x", [4], tx), b.input("s", [1], ts)
    with pytest.raises(MLTypeError, match=f"{op}: zeroPoint was created by another"):
        getattr(b, METHODS[op])(x, s, other.input("z", [1], tz))
    with pytest.raises(MLTypeError, match=f"{op}: scale must be an MLOperand"):
        getattr(b, METHODS[op])(x, np.ones(1, np.float32), b.input("z", [1], tz))
    out = getattr(b, METHODS[op])(x, s, b.input("z2", [1], tz), label="q")
    assert out.operator.options == {"label": "q"}
    b.build({"y": out})
    with pytest.raises(MLInvalidStateError):
        getattr(b, METHODS[op])(x, s, x)


# -- 4-bit operands ---------------------------------------------------------------------------
FOUR_BIT_STORAGE = {"int4": np.int8, "uint4": np.uint8}


@pytest.mark.parametrize("qtype", ["int4", "uint4"])
def test_dequantize_4bit_constant(b: MLGraphBuilder, qtype: str) -> None:
    """int4/uint4 constants (never inputs) feed dequantizeLinear; the output has the scale's
    type; a blocked scale is blockwise broadcast like any other."""
    w = b.constant(np.zeros((8, 32), FOUR_BIT_STORAGE[qtype]), qtype)
    assert w.data_type == qtype and w.value is not None and w.value.dtype == \
        FOUR_BIT_STORAGE[qtype] and w.descriptor.byte_length == 128
    zp = b.constant(np.ones((8, 2), FOUR_BIT_STORAGE[qtype]), qtype)
    y = b.dequantize_linear(w, b.constant(np.ones((8, 2), np.float16)), zp)
    assert (y.data_type, y.shape) == ("float16", (8, 32))
    with pytest.raises(MLTypeError, match="zeroPoint data type int8 must equal input"):
        b.dequantize_linear(b.constant(np.zeros(4, np.int8), "int4"),
                            b.constant(np.ones(1, np.float32)),
                            b.constant(np.zeros(1, np.int8)))


@pytest.mark.parametrize("qtype", ["int4", "uint4"])
def test_quantize_to_4bit(b: MLGraphBuilder, qtype: str) -> None:
    """A 4-bit graph output builds where the context lists it (the reference backend, which
    returns the int8/uint8 storage array, saturated to the 4-bit range) and is refused where
    it does not (onnxruntime)."""
    x = b.input("x", [2, 4], "float32")
    q = b.quantize_linear(x, b.constant(np.ones((1, 4), np.float32)),
                          b.constant(np.zeros((1, 4), FOUR_BIT_STORAGE[qtype]), qtype))
    assert (q.data_type, q.shape) == (qtype, (2, 4))
    assert qtype in b.context.op_support_limits()["output"]["dataTypes"]
    graph = b.build({"q": q})
    feed = np.array([[-9.0, -8.5, -0.5, 1.5], [2.5, 7.4, 15.5, 99.0]], np.float32)
    got = b.context.compute(graph, {"x": feed})["q"]
    lo, hi = (-8, 7) if qtype == "int4" else (0, 15)
    assert got.dtype == FOUR_BIT_STORAGE[qtype]
    np.testing.assert_array_equal(got, np.clip(np.rint(feed), lo, hi))  # half to even
    ort = MLGraphBuilder(ML().create_context(backend="onnxruntime"))
    q = ort.quantize_linear(ort.input("x", [2, 4], "float32"),
                            ort.constant(np.ones((1, 4), np.float32)),
                            ort.constant(np.zeros((1, 4), FOUR_BIT_STORAGE[qtype]), qtype))
    with pytest.raises(MLTypeError, match="build: output 'q'"):
        ort.build({"q": q})


@pytest.mark.parametrize(("call", "match"), [
    (lambda b: b.input("x", [2], "int4"), "input: data type 'int4' is not one of"),
    (lambda b: b.constant(np.array([8], np.int8), "int4"), r"int4 values must lie in \[-8, 7\]"),
    (lambda b: b.constant(np.array([-1], np.int8), "uint4"), r"must lie in \[0, 15\]"),
    (lambda b: b.cast(b.constant(np.zeros(2, np.int8), "int4"), "float32"),
     "cast: input data type int4 is not one of"),
    (lambda b: b.cast(b.input("x", [2], "float32"), "int4"), "cast: data type 'int4'"),
    (lambda b: b.add(*[b.constant(np.zeros(2, np.uint8), "uint4")] * 2),
     "add: a data type uint4 is not one of"),
])
def test_4bit_types_are_limited(b: MLGraphBuilder, call: Callable[[MLGraphBuilder], object],
                                match: str) -> None:
    with pytest.raises(MLTypeError, match=match):
        call(b)


def test_4bit_constant_forms(b: MLGraphBuilder) -> None:
    """ml_dtypes 4-bit arrays (what onnx reads INT4 tensors as), Python lists and floats (the
    spec's cast: round half to even, saturate) all give int8/uint8 storage."""
    import ml_dtypes

    c = b.constant(np.array([[-8, 7], [0, 1]], ml_dtypes.int4))
    assert c.data_type == "int4" and c.value is not None
    np.testing.assert_array_equal(c.value, [[-8, 7], [0, 1]])
    assert c.value.dtype == np.int8
    u = b.constant([0, 15, 3], "uint4")
    assert u.value is not None and u.value.dtype == np.uint8
    f = b.constant(np.array([2.5, 40.0, -3.0]), "uint4")
    assert f.value is not None and f.value.tolist() == [2, 15, 0]
    s = b.constant(3, "int4", shape=[2, 2])
    assert s.value is not None and s.value.tolist() == [[3, 3], [3, 3]]
