"""Reference kernel of resample2d (no WPT file exists for it), run through MLGraphBuilder and
the reference backend and compared with

- onnxruntime Resize (opset 19, coordinate_transformation_mode "half_pixel", explicit
  `sizes`): mode "nearest" with nearest_mode "round_prefer_floor" is WebNN's
  ceil(src - 0.5) (ties round down). ONNX rounds the unclamped coordinate and clamps the
  index afterwards while WebNN clamps first; both give the same index because the clamp
  bounds are integers. Mode "linear" clamps the same way (edge padding). onnxruntime
  computes linear in float32, and for uint8/int8 in fixed point, so it is compared within a
  tolerance (one unit for the integer types);
- an exact rational evaluation of the spec's formulas (`fractions.Fraction`), rounded once
  to the output type (half to even, saturating for integers), which the kernel must match
  bit for bit;
- the worked example in the spec's resample2d note.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from converter.core.webnn import ML, MLGraphBuilder

RNG = np.random.default_rng(20260622)
DTYPES = ("float32", "float16", "uint8", "int8")

# (input shape, axes, output sizes along the axes): up, down, mixed and identity.
CASES = [
    ((1, 2, 4, 6), (2, 3), (8, 9)),
    ((1, 2, 7, 5), (2, 3), (3, 2)),
    ((2, 3, 5, 5), (2, 3), (5, 13)),
    ((1, 3, 8, 8), (2, 3), (4, 4)),
    ((2, 4, 6, 3), (1, 2), (7, 3)),
    ((1, 6, 4, 2), (1, 2), (3, 9)),
]


def sample(shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        return RNG.uniform(-3.0, 3.0, shape).astype(dtype)
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def full_sizes(shape: tuple[int, ...], axes: tuple[int, int], sizes: tuple[int, int]
               ) -> list[int]:
    out = list(shape)
    for a, s in zip(axes, sizes, strict=True):
        out[a] = s
    return out


def onnx_resize(x: np.ndarray, out_shape: list[int], mode: str) -> np.ndarray:
    xi = helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(x.dtype),
                                       list(x.shape))
    yi = helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(x.dtype), None)
    sizes = helper.make_tensor("sizes", TensorProto.INT64, [len(out_shape)], out_shape)
    attrs = {"mode": mode, "coordinate_transformation_mode": "half_pixel"}
    if mode == "nearest":
        attrs["nearest_mode"] = "round_prefer_floor"
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], **attrs)
    graph = helper.make_graph([node], "g", [xi], [yi], initializer=[sizes])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(["y"], {"x": x})[0]


def webnn_resample(x: np.ndarray, **options: object) -> np.ndarray:
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    y = b.resample2d(b.input("x", list(x.shape), x.dtype.name), **options)
    return ctx.compute(b.build({"y": y}), {"x": x})["y"]


def _coordinate(dst: int, in_size: int, out_size: int) -> Fraction:
    scale = Fraction(out_size, in_size)
    src = (dst + Fraction(1, 2)) / scale - Fraction(1, 2)
    return min(max(src, Fraction(0)), Fraction(in_size - 1))


def spec_linear(x: np.ndarray, axes: tuple[int, int], out_shape: list[int]) -> np.ndarray:
    """The spec's bilinear formula evaluated exactly, rounded once to x's dtype."""
    ay, ax = axes
    values = []
    for idx in itertools.product(*map(range, out_shape)):
        cy = _coordinate(idx[ay], x.shape[ay], out_shape[ay])
        cx = _coordinate(idx[ax], x.shape[ax], out_shape[ax])
        y0, y1, x0, x1 = cy.__floor__(), cy.__ceil__(), cx.__floor__(), cx.__ceil__()

        def at(yy: int, xx: int, idx: tuple[int, ...] = idx) -> Fraction:
            pos = list(idx)
            pos[ay], pos[ax] = yy, xx
            return Fraction(x[tuple(pos)].item())

        tx, ty = cx - x0, cy - y0
        vy0 = at(y0, x0) * (1 - tx) + at(y0, x1) * tx
        vy1 = at(y1, x0) * (1 - tx) + at(y1, x1) * tx
        values.append(vy0 * (1 - ty) + vy1 * ty)
    if x.dtype.kind == "f":
        out = np.array([float(v) for v in values]).astype(x.dtype)
    else:
        info = np.iinfo(x.dtype)
        out = np.array([min(max(round(v), info.min), info.max) for v in values]).astype(x.dtype)
    return out.reshape(out_shape)


def spec_nearest(x: np.ndarray, axes: tuple[int, int], out_shape: list[int]) -> np.ndarray:
    """The spec's nearest-neighbor rule ceil(src - 0.5), evaluated exactly."""
    index = [np.arange(n) for n in out_shape]
    for a in axes:
        index[a] = np.array([(_coordinate(d, x.shape[a], out_shape[a]) - Fraction(1, 2))
                             .__ceil__() for d in range(out_shape[a])])
    return x[np.ix_(*index)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "axes", "sizes"), CASES)
def test_nearest_matches_onnxruntime_and_spec(dtype: str, shape: tuple[int, ...],
                                              axes: tuple[int, int], sizes: tuple[int, int]
                                              ) -> None:
    x = sample(shape, dtype)
    out_shape = full_sizes(shape, axes, sizes)
    got = webnn_resample(x, sizes=list(sizes), axes=list(axes))
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, onnx_resize(x, out_shape, "nearest"))
    np.testing.assert_array_equal(got, spec_nearest(x, axes, out_shape))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "axes", "sizes"), CASES)
def test_linear_matches_exact_spec_formula(dtype: str, shape: tuple[int, ...],
                                           axes: tuple[int, int], sizes: tuple[int, int]
                                           ) -> None:
    x = sample(shape, dtype)
    got = webnn_resample(x, mode="linear", sizes=list(sizes), axes=list(axes))
    assert got.dtype == x.dtype
    np.testing.assert_array_equal(got, spec_linear(x, axes, full_sizes(shape, axes, sizes)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("shape", "axes", "sizes"), CASES)
def test_linear_close_to_onnxruntime(dtype: str, shape: tuple[int, ...],
                                     axes: tuple[int, int], sizes: tuple[int, int]) -> None:
    x = sample(shape, dtype)
    out_shape = full_sizes(shape, axes, sizes)
    got = webnn_resample(x, mode="linear", sizes=list(sizes), axes=list(axes))
    if dtype == "float16":
        # onnxruntime on the exactly widened input, its float32 result rounded to float16.
        ref = onnx_resize(x.astype(np.float32), out_shape, "linear").astype(np.float16)
        np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64),
                                   rtol=2**-10, atol=2**-14)
    elif dtype == "float32":
        ref = onnx_resize(x, out_shape, "linear")
        np.testing.assert_allclose(got, ref, rtol=4e-7, atol=1e-6)
    else:
        ref = onnx_resize(x, out_shape, "linear")
        assert np.abs(got.astype(np.int64) - ref.astype(np.int64)).max() <= 1


def test_linear_spec_example() -> None:
    """The [4, 4] -> [8, 8] example of the spec's resample2d note."""
    row = [0, 1, 2, 3]
    x = np.array([row, row, [12, 13, 14, 15], [12, 13, 14, 15]], np.float32).reshape(1, 1, 4, 4)
    first = [0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3]
    expected = np.array([first] * 3 + [[v + 3 for v in first], [v + 9 for v in first]]
                        + [[v + 12 for v in first]] * 3, np.float32)
    got = webnn_resample(x, mode="linear", sizes=[8, 8])
    np.testing.assert_array_equal(got[0, 0], expected)


@pytest.mark.parametrize("mode", ["nearest-neighbor", "linear"])
def test_scales_match_sizes(mode: str) -> None:
    """With integral in*scale, scales give the same result as the equivalent sizes."""
    x = sample((1, 2, 4, 6), "float32")
    by_scale = webnn_resample(x, mode=mode, scales=[2.0, 0.5])
    by_size = webnn_resample(x, mode=mode, sizes=[8, 3])
    np.testing.assert_array_equal(by_scale, by_size)
    onnx_mode = "nearest" if mode == "nearest-neighbor" else "linear"
    np.testing.assert_allclose(by_scale, onnx_resize(x, [1, 2, 8, 3], onnx_mode),
                               rtol=4e-7, atol=1e-6)


def test_non_integral_scale_uses_output_over_input() -> None:
    """The spec maps coordinates with scale = outputSize / inputSize, not the given scale."""
    x = sample((1, 1, 5, 7), "float32")
    got = webnn_resample(x, mode="linear", scales=[1.5, 1.3])  # output 7 x 9
    np.testing.assert_array_equal(got, spec_linear(x, (2, 3), [1, 1, 7, 9]))


def test_integer_ties_round_half_to_even() -> None:
    """Integer linear results that are exact halves round to the even neighbour."""
    x = np.array([[0, 1], [1, 2]], np.uint8).reshape(1, 1, 2, 2)
    got = webnn_resample(x, mode="linear", sizes=[3, 3])
    # Coordinates 0, 0.5, 1 per axis: the centre value (0 + 1 + 1 + 2) / 4 = 1, the edge
    # midpoints 0.5 -> 0 and 1.5 -> 2 (ties to even).
    np.testing.assert_array_equal(got[0, 0], [[0, 0, 1], [0, 1, 2], [1, 2, 2]])
    y = np.array([[250, 255]], np.uint8).reshape(1, 1, 1, 2)
    np.testing.assert_array_equal(webnn_resample(y, mode="linear", sizes=[1, 3])[0, 0],
                                  [[250, 252, 255]])
