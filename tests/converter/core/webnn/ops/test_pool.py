"""Validation of averagePool2d, l2Pool2d and maxPool2d: every spec TypeError rule, the stored
options and output shapes (including the deliberate deviations of webnn-spec.md 7.1), plus
the limit samples."""

from __future__ import annotations

from typing import Any

import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLInvalidStateError, MLTypeError
from tests.converter.core.webnn.limit_samples import Sample

METHODS = {"averagePool2d": "average_pool2d", "l2Pool2d": "l2_pool2d",
           "maxPool2d": "max_pool2d"}

SAMPLES: dict[str, Sample] = {
    op: Sample(lambda b, t, m=m: getattr(b, m)(b.input("x", [1, 2, 4, 4], t["input"]),
                                                window_dimensions=[2, 2]))
    for op, m in METHODS.items()}


@pytest.fixture
def b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


@pytest.mark.parametrize("op", list(METHODS))
def test_defaults_are_stored_with_spec_names(b: MLGraphBuilder, op: str) -> None:
    x = b.input("x", [1, 3, 5, 7], "float32")
    y = getattr(b, METHODS[op])(x)
    assert y.shape == (1, 3, 1, 1) and y.operator.op == op
    assert dict(y.operator.options) == {"windowDimensions": [5, 7], "padding": [0, 0, 0, 0],
                                        "strides": [1, 1], "dilations": [1, 1],
                                        "layout": "nchw", "outputShapeRounding": "floor"}
    y = getattr(b, METHODS[op])(b.input("n", [1, 5, 7, 3], "float16"), layout="nhwc",
                                output_sizes=[1, 1], label="p")
    assert y.shape == (1, 1, 1, 3) and y.data_type == "float16"
    assert y.operator.options["windowDimensions"] == [5, 7]
    assert y.operator.options["outputSizes"] == [1, 1]
    assert y.operator.options["label"] == "p"


@pytest.mark.parametrize(("shape", "options", "out_shape"), [
    ([1, 2, 5, 5], {"window_dimensions": [3, 3]}, (1, 2, 3, 3)),
    ([1, 2, 5, 5], {"window_dimensions": [3, 3], "padding": [1, 1, 1, 1]}, (1, 2, 5, 5)),
    ([1, 2, 7, 8], {"window_dimensions": [2, 3], "strides": [2, 2]}, (1, 2, 3, 3)),
    ([1, 2, 7, 8], {"window_dimensions": [2, 3], "strides": [2, 2],
                    "output_shape_rounding": "ceil"}, (1, 2, 4, 4)),
    ([1, 2, 9, 9], {"window_dimensions": [3, 2], "dilations": [2, 3]}, (1, 2, 5, 6)),
    ([2, 9, 9, 4], {"window_dimensions": [3, 3], "strides": [2, 2], "layout": "nhwc"},
     (2, 4, 4, 4)),
    # The window may be wider than the input when ceil rounding still yields one output.
    ([1, 1, 2, 2], {"window_dimensions": [3, 3], "strides": [2, 2],
                    "output_shape_rounding": "ceil"}, (1, 1, 1, 1)),
    # outputSizes picks the floor or the ceil result, whatever outputShapeRounding says...
    ([1, 2, 7, 8], {"window_dimensions": [2, 3], "strides": [2, 2], "output_sizes": [4, 4]},
     (1, 2, 4, 4)),
    ([1, 2, 7, 8], {"window_dimensions": [2, 3], "strides": [2, 2], "output_sizes": [3, 3],
                    "output_shape_rounding": "ceil"}, (1, 2, 3, 3)),
    # ... keeps the padding (the spec text would reset it to zeros) ...
    ([1, 2, 6, 6], {"window_dimensions": [3, 3], "strides": [2, 2], "padding": [2, 2, 2, 2],
                    "output_sizes": [5, 5]}, (1, 2, 5, 5)),
    # ... and may exceed the strides (the editorial "smaller than strides" check is skipped).
    ([1, 2, 8, 8], {"window_dimensions": [2, 2], "strides": [2, 2], "output_sizes": [4, 4]},
     (1, 2, 4, 4)),
])
@pytest.mark.parametrize("op", list(METHODS))
def test_output_shape(b: MLGraphBuilder, op: str, shape: list[int], options: dict[str, Any],
                      out_shape: tuple[int, ...]) -> None:
    x = b.input("x", shape, "float32")
    assert getattr(b, METHODS[op])(x, **options).shape == out_shape


@pytest.mark.parametrize(("shape", "options", "match"), [
    ([1, 2, 5], {}, "input rank 3"),
    ([1, 2, 5, 5, 1], {}, "input rank 5"),
    ([1, 2, 5, 5], {"layout": "nchwc"}, "layout 'nchwc' is not one of"),
    ([1, 2, 5, 5], {"output_shape_rounding": "round"}, "outputShapeRounding 'round'"),
    ([1, 2, 5, 5], {"window_dimensions": [2]}, "windowDimensions must have 2 items"),
    ([1, 2, 5, 5], {"window_dimensions": [2, 0]}, r"windowDimensions \[2, 0\] must not"),
    ([1, 2, 5, 5], {"window_dimensions": [2, -2]}, "windowDimensions item"),
    ([1, 2, 5, 5], {"padding": [1, 1]}, "padding must have 4 items"),
    ([1, 2, 5, 5], {"padding": [1, 1, 1, 1.5]}, "padding item must be an unsigned integer"),
    ([1, 2, 5, 5], {"strides": [2, 2, 2]}, "strides must have 2 items"),
    ([1, 2, 5, 5], {"strides": [0, 2]}, r"strides \[0, 2\] must not contain 0"),
    ([1, 2, 5, 5], {"dilations": [1]}, "dilations must have 2 items"),
    ([1, 2, 5, 5], {"dilations": [1, 0]}, r"dilations \[1, 0\] must not contain 0"),
    ([1, 2, 5, 5], {"output_sizes": [1]}, "outputSizes must have 2 items"),
    ([1, 2, 7, 8], {"window_dimensions": [2, 3], "strides": [2, 2], "output_sizes": [5, 4]},
     r"outputSizes \[5, 4\] must equal the floor-rounded \[3, 3\] or the ceil-rounded "
     r"\[4, 4\]"),
    ([1, 2, 7, 8], {"window_dimensions": [2, 3], "strides": [2, 2], "output_sizes": [3, 4]},
     r"outputSizes \[3, 4\] must equal"),
    ([1, 2, 5, 5], {"window_dimensions": [6, 2]}, r"output height \(0\) is not a valid"),
    ([1, 2, 5, 5], {"window_dimensions": [2, 3], "dilations": [1, 3]},
     r"output width \(-1\) is not a valid"),
    ([1, 2, 5, 5], {"window_dimensions": [3, 3], "padding": [0, 0, 0, 2**32 - 1]},
     "output width .* is not a valid dimension"),
])
@pytest.mark.parametrize("op", list(METHODS))
def test_type_errors(b: MLGraphBuilder, op: str, shape: list[int], options: dict[str, Any],
                     match: str) -> None:
    x = b.input("x", shape, "float32")
    with pytest.raises(MLTypeError, match=f"^{op}: .*" + match):
        getattr(b, METHODS[op])(x, **options)


@pytest.mark.parametrize("op", ["averagePool2d", "l2Pool2d"])
@pytest.mark.parametrize("dtype", ["int32", "uint8", "int64"])
def test_average_and_l2_take_floats_only(b: MLGraphBuilder, op: str, dtype: str) -> None:
    with pytest.raises(MLTypeError, match=f"{op}: input data type {dtype}"):
        getattr(b, METHODS[op])(b.input("x", [1, 1, 2, 2], dtype))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "int64", "uint64",
                                   "float16"])
def test_max_pool2d_takes_any_type(b: MLGraphBuilder, dtype: str) -> None:
    assert b.max_pool2d(b.input("x", [1, 1, 2, 2], dtype)).data_type == dtype


def test_operand_rules_and_state(b: MLGraphBuilder) -> None:
    with pytest.raises(MLTypeError, match="maxPool2d: input must be an MLOperand"):
        b.max_pool2d([[1.0]])  # type: ignore[arg-type]
    other = MLGraphBuilder(ML().create_context())
    with pytest.raises(MLTypeError, match="l2Pool2d: input was created by another"):
        b.l2_pool2d(other.input("x", [1, 1, 2, 2], "float32"))
    x = b.input("x", [1, 1, 2, 2], "float32")
    b.build({"y": b.average_pool2d(x)})
    with pytest.raises(MLInvalidStateError):
        b.average_pool2d(x)
