"""Validation of resample2d: every spec TypeError rule, output shapes, stored options, and
the limit sample."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLOperand, MLTypeError
from tests.converter.core.webnn.limit_samples import Sample


def _x(b: MLGraphBuilder, shape: list[int] | None = None, dtype: str = "float32"
       ) -> MLOperand:
    return b.input("x", shape or [1, 2, 4, 6], dtype)


SAMPLES: dict[str, Sample] = {
    "resample2d": Sample(lambda b, t: b.resample2d(b.input("x", [1, 1, 2, 2], t["input"]),
                                                   sizes=[3, 3])),
}


@pytest.fixture
def b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


Case = Callable[[MLGraphBuilder], Any]

ERRORS: dict[str, tuple[Case, str]] = {
    "rank 3": (lambda b: b.resample2d(_x(b, [2, 4, 6])), "resample2d: input rank 3 is outside"),
    "rank 5": (lambda b: b.resample2d(_x(b, [1, 1, 2, 4, 6])),
               "resample2d: input rank 5 is outside"),
    "int32 input": (lambda b: b.resample2d(_x(b, dtype="int32")),
                    "resample2d: input data type int32 is not one of"),
    "bad mode": (lambda b: b.resample2d(_x(b), mode="cubic"),
                 "resample2d: mode 'cubic' is not one of"),
    "scales length 1": (lambda b: b.resample2d(_x(b), scales=[2.0]),
                        "resample2d: scales must have 2 items, got 1"),
    "scales length 3": (lambda b: b.resample2d(_x(b), scales=[2.0, 2.0, 2.0]),
                        "resample2d: scales must have 2 items, got 3"),
    "zero scale": (lambda b: b.resample2d(_x(b), scales=[2.0, 0.0]),
                   "resample2d: scales .* must be greater than 0"),
    "negative scale": (lambda b: b.resample2d(_x(b), scales=[-2.0, 2.0]),
                       "resample2d: scales .* must be greater than 0"),
    "NaN scale": (lambda b: b.resample2d(_x(b), scales=[float("nan"), 2.0]),
                  "resample2d: scales item must be finite"),
    "infinite scale": (lambda b: b.resample2d(_x(b), scales=[2.0, float("inf")]),
                       "resample2d: scales item must be finite"),
    "scale beyond float32": (lambda b: b.resample2d(_x(b), scales=[2.0, 1e39]),
                             "resample2d: scales item .* out of the float range"),
    "scales not numbers": (lambda b: b.resample2d(_x(b), scales=["2", "2"]),
                           "resample2d: scales item must be a number"),
    "scales not a sequence": (lambda b: b.resample2d(_x(b), scales=2.0),
                              "resample2d: scales must be a sequence"),
    "sizes length": (lambda b: b.resample2d(_x(b), sizes=[4]),
                     "resample2d: sizes must have 2 items, got 1"),
    "zero size": (lambda b: b.resample2d(_x(b), sizes=[4, 0]),
                  r"resample2d: sizes \[4, 0\] must not contain 0"),
    "negative size": (lambda b: b.resample2d(_x(b), sizes=[4, -1]),
                      "resample2d: sizes item .* unsigned long range"),
    "size too large": (lambda b: b.resample2d(_x(b), sizes=[4, 2**31]),
                       "resample2d: output size along axis 3 .* is not a valid dimension"),
    "axes length 1": (lambda b: b.resample2d(_x(b), axes=[2]),
                      "resample2d: axes must have 2 items, got 1"),
    "axes length 3": (lambda b: b.resample2d(_x(b), axes=[1, 2, 3]),
                      "resample2d: axes must have 2 items, got 3"),
    "duplicate axes": (lambda b: b.resample2d(_x(b), axes=[2, 2]),
                       "resample2d: axes .* contains duplicate axes"),
    "axis out of range": (lambda b: b.resample2d(_x(b), axes=[2, 4]),
                          "resample2d: axes item 4 must be less than the input rank"),
    "scaled size is zero": (lambda b: b.resample2d(_x(b), scales=[0.2, 1.0]),
                            r"resample2d: output size along axis 2 \(0\) is not a valid"),
    "scaled size too large": (lambda b: b.resample2d(_x(b), scales=[1.0, 3.0e9]),
                              "resample2d: output size along axis 3 .* is not a valid"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(b: MLGraphBuilder, name: str) -> None:
    call, match = ERRORS[name]
    with pytest.raises(MLTypeError, match=match):
        call(b)


def test_defaults_are_stored(b: MLGraphBuilder) -> None:
    out = b.resample2d(_x(b))
    assert out.shape == (1, 2, 4, 6)
    assert out.operator.options == {"mode": "nearest-neighbor", "scales": [1.0, 1.0],
                                    "axes": [2, 3]}


def test_scales_give_floor_of_scaled_size(b: MLGraphBuilder) -> None:
    out = b.resample2d(_x(b), mode="linear", scales=[1.5, 0.5])
    assert out.shape == (1, 2, 6, 3)
    assert out.operator.options == {"mode": "linear", "scales": [1.5, 0.5], "axes": [2, 3]}
    # scales are IDL floats: 0.1 becomes float32(0.1), slightly above 0.1.
    tiny = b.resample2d(b.input("y", [1, 1, 10, 30], "float16"), scales=[0.1, 0.1])
    assert tiny.shape == (1, 1, 1, 3)
    assert tiny.operator.options["scales"] == [float(np.float32(0.1))] * 2


def test_sizes_override_scales_and_axes_pick_dimensions(b: MLGraphBuilder) -> None:
    out = b.resample2d(_x(b, dtype="uint8"), scales=[9.0, 9.0], sizes=[3, 5], axes=[1, 2])
    assert out.shape == (1, 3, 5, 6) and out.data_type == "uint8"
    assert out.operator.options == {"mode": "nearest-neighbor", "scales": [9.0, 9.0],
                                    "axes": [1, 2], "sizes": [3, 5]}
    reversed_axes = b.resample2d(b.input("z", [1, 2, 4, 6], "int8"), sizes=[7, 8],
                                 axes=[3, 0])
    assert reversed_axes.shape == (8, 2, 4, 7)
