"""Validation of conv2d and convTranspose2d: every spec TypeError rule, the stored options, the
output shapes, plus the limit samples."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLInvalidStateError, MLOperand, MLTypeError
from tests.converter.core.webnn.limit_samples import Sample

SAMPLES: dict[str, Sample] = {
    "conv2d": Sample(lambda b, t: b.conv2d(b.input("x", [1, 2, 5, 5], t["input"]),
                                           b.input("w", [3, 2, 3, 3], t["filter"]),
                                           bias=b.input("bias", [3], t["bias"])),
                     groups=[("input", "filter", "bias")]),
    "convTranspose2d": Sample(lambda b, t: b.conv_transpose2d(
        b.input("x", [1, 2, 3, 3], t["input"]), b.input("w", [2, 3, 2, 2], t["filter"]),
        bias=b.input("bias", [3], t["bias"])), groups=[("input", "filter", "bias")]),
}


@pytest.fixture
def b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


def operands(b: MLGraphBuilder, x_shape: list[int], w_shape: list[int],
             dtype: str = "float32") -> tuple[MLOperand, MLOperand]:
    return b.input("x", x_shape, dtype), b.input("w", w_shape, dtype)


# -- conv2d ------------------------------------------------------------------------------------
def test_conv2d_defaults_are_stored_with_spec_names(b: MLGraphBuilder) -> None:
    x, w = operands(b, [1, 3, 8, 8], [4, 3, 3, 3])
    y = b.conv2d(x, w)
    assert y.shape == (1, 4, 6, 6) and y.data_type == "float32"
    assert y.operator.op == "conv2d"
    assert dict(y.operator.options) == {"padding": [0, 0, 0, 0], "strides": [1, 1],
                                        "dilations": [1, 1], "groups": 1,
                                        "inputLayout": "nchw", "filterLayout": "oihw"}
    bias = b.input("bias", [4], "float32")
    y = b.conv2d(x, w, bias=bias, label="c")
    assert y.operator.options["bias"] is bias and y.operator.options["label"] == "c"
    assert y.operator.args == (x, w)


@pytest.mark.parametrize(("x_shape", "w_shape", "options", "out_shape"), [
    ([1, 3, 8, 8], [4, 3, 3, 3], {"padding": [1, 1, 1, 1]}, (1, 4, 8, 8)),
    ([2, 3, 9, 7], [4, 3, 3, 2], {"strides": [2, 3], "padding": [1, 0, 0, 2]}, (2, 4, 4, 3)),
    ([1, 3, 9, 9], [4, 3, 3, 3], {"dilations": [2, 3]}, (1, 4, 5, 3)),
    ([1, 8, 8, 3], [4, 3, 3, 3], {"input_layout": "nhwc"}, (1, 6, 6, 4)),
    ([1, 3, 8, 8], [3, 3, 3, 4], {"filter_layout": "hwio"}, (1, 4, 6, 6)),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"filter_layout": "ohwi"}, (1, 4, 6, 6)),
    ([1, 3, 8, 8], [3, 3, 3, 4], {"filter_layout": "ihwo"}, (1, 4, 6, 6)),
    ([1, 6, 5, 5], [4, 3, 1, 1], {"groups": 2}, (1, 4, 5, 5)),
    ([1, 5, 5, 6], [3, 3, 1, 6], {"groups": 6, "input_layout": "nhwc",
                                  "filter_layout": "hwio"}, (1, 3, 3, 6)),
])
def test_conv2d_output_shape(b: MLGraphBuilder, x_shape: list[int], w_shape: list[int],
                             options: dict[str, Any], out_shape: tuple[int, ...]) -> None:
    x, w = operands(b, x_shape, w_shape)
    assert b.conv2d(x, w, **options).shape == out_shape


@pytest.mark.parametrize(("x_shape", "w_shape", "options", "match"), [
    ([1, 3, 8], [4, 3, 3, 3], {}, "input rank 3"),
    ([1, 3, 8, 8], [4, 3, 3], {}, "filter rank 3"),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"padding": [1, 1, 1]}, "padding must have 4 items"),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"padding": [1, -1, 1, 1]}, "padding item .* unsigned"),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"padding": 1}, "padding must be a sequence"),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"strides": [1]}, "strides must have 2 items"),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"strides": [1, 0]}, r"strides \[1, 0\] must not contain 0"),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"dilations": [1, 1, 1]}, "dilations must have 2 items"),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"dilations": [0, 1]}, "dilations .* must not contain 0"),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"groups": 0}, "groups must not be 0"),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"groups": -1}, r"groups \(-1\) is outside"),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"groups": 2.5}, "groups must be an unsigned integer"),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"input_layout": "chwn"}, "inputLayout 'chwn'"),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"filter_layout": "iohw"}, "filterLayout 'iohw'"),
    ([1, 3, 8, 8], [4, 3, 3, 3], {"groups": 2}, r"input channels \(3\) / groups \(2\) is not"),
    ([1, 4, 8, 8], [4, 4, 3, 3], {"groups": 2}, "must equal the filter input channels"),
    ([1, 4, 8, 8], [4, 3, 3, 3], {}, r"input channels \(4\) / groups \(1\) must equal"),
    ([1, 8, 8, 4], [4, 4, 3, 3], {"input_layout": "nhwc", "filter_layout": "ohwi"},
     r"filter input channels \(3\)"),
    ([1, 4, 8, 8], [3, 2, 3, 3], {"groups": 2}, r"output channels \(3\) / groups \(2\)"),
    ([1, 3, 4, 4], [4, 3, 5, 3], {}, r"output height \(0\) is not a valid dimension"),
    ([1, 3, 4, 4], [4, 3, 3, 3], {"dilations": [1, 2]}, r"output width \(0\)"),
    ([1, 3, 4, 4], [4, 3, 3, 3], {"padding": [0, 0, 2**32 - 1, 2**32 - 1]},
     "output width .* is not a valid dimension"),
])
def test_conv2d_type_errors(b: MLGraphBuilder, x_shape: list[int], w_shape: list[int],
                            options: dict[str, Any], match: str) -> None:
    x, w = operands(b, x_shape, w_shape)
    with pytest.raises(MLTypeError, match="^conv2d: .*" + match):
        b.conv2d(x, w, **options)


def test_conv2d_operand_rules(b: MLGraphBuilder) -> None:
    x, w = operands(b, [1, 3, 8, 8], [4, 3, 3, 3])
    with pytest.raises(MLTypeError, match="conv2d: input data type int32"):
        b.conv2d(b.input("xi", [1, 3, 8, 8], "int32"), b.input("wi", [4, 3, 3, 3], "int32"))
    with pytest.raises(MLTypeError, match="conv2d: filter data type float16 must equal input"):
        b.conv2d(x, b.input("w16", [4, 3, 3, 3], "float16"))
    with pytest.raises(MLTypeError, match=r"conv2d: bias shape \[3\] must be \[4\]"):
        b.conv2d(x, w, bias=b.input("b3", [3], "float32"))
    with pytest.raises(MLTypeError, match="conv2d: bias rank 2"):
        b.conv2d(x, w, bias=b.input("b2", [4, 1], "float32"))
    with pytest.raises(MLTypeError, match="conv2d: bias data type float16 must equal input"):
        b.conv2d(x, w, bias=b.input("b16", [4], "float16"))
    with pytest.raises(MLTypeError, match="conv2d: filter must be an MLOperand"):
        b.conv2d(x, np.ones((4, 3, 3, 3), np.float32))  # type: ignore[arg-type]
    other = MLGraphBuilder(ML().create_context())
    with pytest.raises(MLTypeError, match="conv2d: bias was created by another"):
        b.conv2d(x, w, bias=other.input("bias", [4], "float32"))


# -- convTranspose2d ---------------------------------------------------------------------------
def test_conv_transpose2d_defaults_are_stored_with_spec_names(b: MLGraphBuilder) -> None:
    x, w = operands(b, [1, 3, 4, 4], [3, 2, 3, 3])
    y = b.conv_transpose2d(x, w)
    assert y.shape == (1, 2, 6, 6)
    assert dict(y.operator.options) == {"padding": [0, 0, 0, 0], "strides": [1, 1],
                                        "dilations": [1, 1], "outputPadding": [0, 0],
                                        "groups": 1, "inputLayout": "nchw",
                                        "filterLayout": "iohw"}
    y = b.conv_transpose2d(x, w, strides=[2, 2], output_sizes=[10, 9])
    assert y.operator.options["outputSizes"] == [10, 9] and y.shape == (1, 2, 10, 9)


@pytest.mark.parametrize(("x_shape", "w_shape", "options", "out_shape"), [
    ([1, 3, 4, 4], [3, 2, 3, 3], {"strides": [2, 3], "padding": [1, 0, 2, 1]},
     (1, 2, 8, 9)),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"strides": [3, 2], "output_padding": [2, 1]},
     (1, 2, 14, 10)),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"dilations": [2, 1]}, (1, 2, 8, 6)),
    ([1, 4, 4, 3], [3, 3, 2, 3], {"input_layout": "nhwc", "filter_layout": "hwoi"},
     (1, 6, 6, 2)),
    ([1, 3, 4, 4], [2, 3, 3, 3], {"filter_layout": "ohwi"}, (1, 2, 6, 6)),
    ([1, 4, 4, 4], [4, 3, 2, 2], {"groups": 2}, (1, 6, 5, 5)),
    # outputSizes overrides outputPadding, which may then be >= strides.
    ([1, 3, 4, 4], [3, 2, 3, 3], {"strides": [2, 2], "output_padding": [5, 5],
                                  "output_sizes": [9, 10]}, (1, 2, 9, 10)),
])
def test_conv_transpose2d_output_shape(b: MLGraphBuilder, x_shape: list[int],
                                       w_shape: list[int], options: dict[str, Any],
                                       out_shape: tuple[int, ...]) -> None:
    x, w = operands(b, x_shape, w_shape)
    assert b.conv_transpose2d(x, w, **options).shape == out_shape


@pytest.mark.parametrize(("x_shape", "w_shape", "options", "match"), [
    ([1, 3, 4], [3, 2, 3, 3], {}, "input rank 3"),
    ([1, 3, 4, 4], [3, 2, 3, 3, 1], {}, "filter rank 5"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"padding": [0, 0]}, "padding must have 4 items"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"strides": [1, 2, 3]}, "strides must have 2 items"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"strides": [0, 2]}, "strides .* must not contain 0"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"dilations": [2]}, "dilations must have 2 items"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"dilations": [2, 0]}, "dilations .* must not contain 0"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"output_padding": [0]}, "outputPadding must have 2 items"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"output_padding": [1, 0]},
     r"outputPadding \[1, 0\] must be smaller than strides \[1, 1\]"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"strides": [2, 2], "output_padding": [1, 2]},
     "outputPadding .* must be smaller than strides"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"output_sizes": [6]}, "outputSizes must have 2 items"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"output_sizes": [6, -6]}, "outputSizes item"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"strides": [2, 2], "output_sizes": [8, 9]},
     r"outputSizes height \(8\) must lie in \[9, 11\)"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"strides": [2, 2], "output_sizes": [9, 11]},
     r"outputSizes width \(11\) must lie in \[9, 11\)"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"groups": 0}, "groups must not be 0"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"input_layout": "NCHW"}, "inputLayout 'NCHW'"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"filter_layout": "oihw"}, "filterLayout 'oihw'"),
    ([1, 3, 4, 4], [4, 2, 3, 3], {}, r"input channels \(3\) must equal the filter input"),
    ([1, 4, 4, 3], [2, 3, 3, 4], {"input_layout": "nhwc", "filter_layout": "ohwi"},
     r"input channels \(3\) must equal the filter input channels \(4\)"),
    ([1, 1, 4, 4], [1, 2, 3, 3], {"groups": 2**31},
     r"output channels \(2 \* groups 2147483648 = 4294967296\) is not a valid"),
    ([1, 3, 4, 4], [3, 2, 3, 3], {"groups": 2}, r"input channels \(3\) / groups \(2\)"),
    ([1, 3, 2, 2], [3, 2, 2, 2], {"padding": [2, 1, 0, 0]},
     r"output height \(0\) is not a valid dimension"),
])
def test_conv_transpose2d_type_errors(b: MLGraphBuilder, x_shape: list[int],
                                      w_shape: list[int], options: dict[str, Any],
                                      match: str) -> None:
    x, w = operands(b, x_shape, w_shape)
    with pytest.raises(MLTypeError, match="^convTranspose2d: .*" + match):
        b.conv_transpose2d(x, w, **options)


def test_conv_transpose2d_operand_rules(b: MLGraphBuilder) -> None:
    x, w = operands(b, [1, 3, 4, 4], [3, 2, 3, 3], "float16")
    with pytest.raises(MLTypeError, match="convTranspose2d: input data type uint8"):
        b.conv_transpose2d(b.input("xu", [1, 3, 4, 4], "uint8"), w)
    with pytest.raises(MLTypeError, match="convTranspose2d: filter data type float32 must"):
        b.conv_transpose2d(x, b.input("w32", [3, 2, 3, 3], "float32"))
    with pytest.raises(MLTypeError, match=r"convTranspose2d: bias shape \[3\] must be \[2\]"):
        b.conv_transpose2d(x, w, bias=b.input("b3", [3], "float16"))
    with pytest.raises(MLTypeError, match="convTranspose2d: bias data type float32 must"):
        b.conv_transpose2d(x, w, bias=b.input("b32", [2], "float32"))
    y = b.conv_transpose2d(x, w, groups=3, bias=b.input("b6", [6], "float16"))
    assert y.shape == (1, 6, 6, 6) and y.data_type == "float16"


def test_builder_state(b: MLGraphBuilder) -> None:
    x, w = operands(b, [1, 3, 4, 4], [3, 3, 1, 1])
    y = b.conv2d(x, w)
    b.build({"y": y})
    with pytest.raises(MLInvalidStateError):
        b.conv2d(x, w)
    with pytest.raises(MLInvalidStateError):
        b.conv_transpose2d(x, w)
