"""ONNX Cast/CastLike vs onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto

from tests.op_mappings.onnx.harness import check

FLOATS = np.array([[-2.7, -0.0, 0.0, 1.2], [3.9, 100.0, -100.0, 0.5]], np.float32)


@pytest.mark.parametrize("to", [TensorProto.INT32, TensorProto.INT64, TensorProto.FLOAT16,
                                TensorProto.BOOL, TensorProto.INT8, TensorProto.FLOAT])
@pytest.mark.parametrize("opset", [6, 13, 19])
def test_from_float(to: int, opset: int) -> None:
    check("Cast", {"x": FLOATS}, {"to": to}, opset=opset)


@pytest.mark.parametrize("to", [TensorProto.FLOAT, TensorProto.INT32, TensorProto.UINT8])
def test_from_bool(to: int) -> None:
    check("Cast", {"x": np.array([True, False, True])}, {"to": to}, opset=13)


def test_int64_to_float() -> None:
    check("Cast", {"x": np.array([-3, 0, 7], np.int64)}, {"to": TensorProto.FLOAT}, opset=13)


def test_to_double_warns() -> None:
    result = check("Cast", {"x": FLOATS}, {"to": TensorProto.DOUBLE}, opset=13)
    assert any("float64" in w for w in result.report.warnings)


def test_cast_like() -> None:
    check("CastLike", {"x": FLOATS, "t": np.array([1], np.int32)}, opset=15, constants=["t"])


# -- folding a constant Cast with numpy (fold_cast) vs the reference backend's cast --------

def _values(dtype: str) -> np.ndarray:
    """Values of `dtype` that test every rule: NaN, infinities, signed zeros, fractions,
    each integer type's bounds and one past them (as floats), wrapping integers."""
    if dtype in ("float32", "float16"):
        big = [3.0e38, -3.0e38] if dtype == "float32" else [65504.0, -65504.0]
        bounds = [float(b) + d for t in ("int8", "uint8", "int32", "uint32", "int64", "uint64")
                  for b in (np.iinfo(t).min, np.iinfo(t).max) for d in (-1.0, 0.0, 1.0)]
        vals = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 2.7, -2.7, 1e-8,
                70000.0, *big, *bounds]
        with np.errstate(over="ignore"):
            return np.array(vals, np.float64).astype(dtype)
    info = np.iinfo(dtype)
    vals = [info.min, info.max, 0, 1, -1 if info.min else 2, 127, 128, 255, 256, 2049,
            16777217, 65505, info.max - 1, info.min + 1]
    return np.array([v for v in vals if info.min <= v <= info.max], dtype)


def _reference_cast(x: np.ndarray, target: str) -> np.ndarray:
    from converter.core.webnn import ML, MLGraphBuilder

    context = ML().create_context()
    builder = MLGraphBuilder(context)
    y = builder.cast(builder.input("x", list(x.shape), str(x.dtype)), target)
    out: np.ndarray = context.compute(builder.build({"y": y}), {"x": x})["y"]
    return out


def _fold(x: np.ndarray, target: str) -> object:
    from converter.core.ir import Node
    from converter.core.webnn import ML, MLGraphBuilder
    from converter.frontends.onnx.tensors import onnx_elem_type
    from converter.importer import ImportContext
    from op_mappings.onnx.cast import fold_cast

    ctx = ImportContext(MLGraphBuilder(ML().create_context()), {}, {})
    node = Node("Cast", "", 21, "c", ("x",), ("y",), {"to": onnx_elem_type(target)})
    return fold_cast(ctx, node, [x])


WEBNN_TYPES = ("float32", "float16", "int32", "uint32", "int64", "uint64", "int8", "uint8")


@pytest.mark.parametrize("source", WEBNN_TYPES)
@pytest.mark.parametrize("target", WEBNN_TYPES)
def test_fold_cast_is_the_reference_cast_bit_for_bit(source: str, target: str) -> None:
    """Oracle: the reference backend's cast kernel (the spec's cast, tested against WPT).
    Where fold_cast declines (float -> int with NaN, infinities or out-of-range values) the
    importer replays the handler on that backend; the in-range values of those pairs fold."""
    x = _values(source)
    expected = _reference_cast(x, target)
    folded = _fold(x, target)
    if folded is NotImplemented:
        assert x.dtype.kind == "f" and np.dtype(target).kind in "iu"
        t = np.trunc(x.astype(np.float64))
        info = np.iinfo(target)
        keep = np.isfinite(t) & (t >= float(info.min)) & (t <= float(info.max))
        keep &= t < 2.0 ** (8 * np.dtype(target).itemsize - (target[0] == "i"))
        x, expected = x[keep], expected[keep]
        assert x.size and not np.all(keep)
        folded = _fold(x, target)
    assert isinstance(folded, list)
    [got] = folded
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert got.tobytes() == expected.tobytes(), (source, target, x, got, expected)


@pytest.mark.parametrize("to", [TensorProto.INT64, TensorProto.INT32, TensorProto.FLOAT16,
                                TensorProto.INT8, TensorProto.BOOL, TensorProto.DOUBLE])
def test_folded_constant_cast_vs_onnxruntime(to: int) -> None:
    """In range (out-of-range float -> int is undefined in ONNX); BOOL and DOUBLE replay."""
    result = check("Cast", {"x": FLOATS}, {"to": to}, opset=19, constants=["x"])
    assert [r.status for r in result.report.nodes] == ["folded"]
