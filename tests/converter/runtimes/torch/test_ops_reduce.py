"""Torch reductions, argMin/argMax, cumulativeSum and softmax vs the reference backend: every
data type (integer wrap-around, uint64 order), empty axes, ties and NaN for argMin/argMax."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from converter.core.webnn import MLGraphBuilder, MLOperand  # noqa: E402
from tests.converter.runtimes.torch.common import compare, rand  # noqa: E402

Ops = dict[str, MLOperand]

REDUCE_TYPES = {
    "reduce_sum": ["float32", "float16", "int32", "uint32", "int64", "uint64"],
    "reduce_l1": ["float32", "float16", "int32", "uint32", "int64", "uint64"],
    "reduce_sum_square": ["float32", "float16", "int32", "uint32", "int64", "uint64"],
    "reduce_product": ["float32", "float16", "int32", "uint32", "int64", "uint64"],
    "reduce_max": ["float32", "float16", "int8", "uint8", "int32", "uint32", "int64", "uint64"],
    "reduce_min": ["float32", "float16", "int8", "uint8", "int32", "uint32", "int64", "uint64"],
    "reduce_l2": ["float32", "float16"],
    "reduce_mean": ["float32", "float16"],
    "reduce_log_sum": ["float32", "float16"],
    "reduce_log_sum_exp": ["float32", "float16"],
}
CASES = [(op, dt) for op, types in REDUCE_TYPES.items() for dt in types]


def _data(dtype: str, shape: tuple[int, ...], op: str) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        lo = 0.1 if op == "reduce_log_sum" else -2.0
        return rand(shape, dtype, lo, 2.0)
    info = np.iinfo(dtype)
    x = rand(shape, dtype, max(int(info.min), -1000), min(int(info.max), 1000))
    flat = x.reshape(-1)
    flat[:3] = [info.max, info.min, info.max - 5]  # wrap-around and unsigned order
    return x


@pytest.mark.parametrize(("op", "dtype"), CASES, ids=[f"{o}-{d}" for o, d in CASES])
def test_reduce(op: str, dtype: str) -> None:
    x = _data(dtype, (3, 4, 5), op)

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        fn = getattr(b, op)
        return {"all": fn(o["x"]), "keep": fn(o["x"], axes=[0, 2], keep_dimensions=True),
                "one": fn(o["x"], axes=[1]), "none": fn(o["x"], axes=[]),
                "scalar": fn(b.reduce_max(o["x"]), axes=[])}

    compare({"x": x}, build, f16_ulp=4, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "uint8", "int32", "uint32",
                                   "int64", "uint64"])
@pytest.mark.parametrize("op", ["arg_min", "arg_max"])
def test_arg_min_max_ties_first_index(op: str, dtype: str) -> None:
    if np.dtype(dtype).kind == "f":
        x = rand((4, 6), dtype, -3, 3).round()
    else:
        info = np.iinfo(dtype)
        x = rand((4, 6), dtype, 0, 3)
        x[1, 2] = info.max
        x[2, 4] = info.min
    x[3, :] = x[3, 0]  # a row of ties

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        fn = getattr(b, op)
        return {"a0": fn(o["x"], 0), "a1": fn(o["x"], 1, keep_dimensions=True),
                "i64": fn(o["x"], 1, output_data_type="int64")}

    compare({"x": x}, build)


def test_arg_min_max_nan_wins() -> None:
    x = np.array([[1.0, np.nan, 5.0, np.nan], [np.inf, -np.inf, 2.0, 0.0]], np.float32)

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {"min": b.arg_min(o["x"], 1), "max": b.arg_max(o["x"], 1)}

    out = compare({"x": x}, build)
    np.testing.assert_array_equal(out["max"], [1, 0])


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "uint32", "int64", "uint64"])
def test_cumulative_sum(dtype: str) -> None:
    x = _data(dtype, (3, 5), "reduce_sum")

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {f"{axis}{int(e)}{int(r)}": b.cumulative_sum(o["x"], axis, exclusive=e,
                                                            reversed=r)
                for axis in (0, 1) for e in (False, True) for r in (False, True)}

    compare({"x": x}, build, f16_ulp=2)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_softmax(dtype: str) -> None:
    x = rand((2, 3, 7), dtype, -20, 20)

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        return {f"s{a}": b.softmax(o["x"], a) for a in range(3)}

    compare({"x": x}, build, f16_ulp=2)
