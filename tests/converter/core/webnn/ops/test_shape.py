"""Validation of the shape family (concat, expand, pad, reshape, reverse, slice, split, tile,
transpose, triangular): every spec TypeError rule, output shapes, stored options, and the
limit samples."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLOperand, MLTypeError
from tests.converter.core.webnn.limit_samples import Sample


def _in(b: MLGraphBuilder, shape: list[int], dtype: str, name: str = "x") -> MLOperand:
    return b.input(name, shape, dtype)


SAMPLES: dict[str, Sample] = {
    "concat": Sample(lambda b, t: b.concat([_in(b, [2, 3], t["inputs"], "a"),
                                            _in(b, [2, 1], t["inputs"], "b")], 1)),
    "expand": Sample(lambda b, t: b.expand(_in(b, [3, 1], t["input"]), [2, 3, 4])),
    "pad": Sample(lambda b, t: b.pad(_in(b, [2, 3], t["input"]), [1, 0], [0, 2])),
    "reshape": Sample(lambda b, t: b.reshape(_in(b, [2, 3], t["input"]), [3, 2])),
    "reverse": Sample(lambda b, t: b.reverse(_in(b, [2, 3], t["input"]))),
    "slice": Sample(lambda b, t: b.slice(_in(b, [4, 3], t["input"]), [1, 0], [2, 3])),
    "split": Sample(lambda b, t: b.split(_in(b, [4, 3], t["input"]), [1, 3])),
    "tile": Sample(lambda b, t: b.tile(_in(b, [2, 3], t["input"]), [2, 1])),
    "transpose": Sample(lambda b, t: b.transpose(_in(b, [2, 3], t["input"]))),
    "triangular": Sample(lambda b, t: b.triangular(_in(b, [3, 3], t["input"]))),
}


@pytest.fixture
def b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


Case = Callable[[MLGraphBuilder], Any]


def _check(b: MLGraphBuilder, call: Case, match: str) -> None:
    with pytest.raises(MLTypeError, match=match):
        call(b)


# -- concat ------------------------------------------------------------------------------
CONCAT_ERRORS: dict[str, tuple[Case, str]] = {
    "not a sequence": (lambda b: b.concat(_in(b, [2], "float32"), 0),
                       "concat: inputs must be a sequence"),
    "no inputs": (lambda b: b.concat([], 0), r"concat: inputs count \(0\)"),
    "too many inputs": (lambda b: b.concat([_in(b, [1], "float32")] * 8193, 0),
                        r"concat: inputs count \(8193\)"),
    "not an operand": (lambda b: b.concat([np.zeros(2, np.float32)], 0),
                       "concat: inputs must be an MLOperand"),
    "other builder": (lambda b: b.concat(
        [MLGraphBuilder(ML().create_context()).input("y", [2], "float32")], 0),
        "concat: inputs was created by another MLGraphBuilder"),
    "axis >= rank": (lambda b: b.concat([_in(b, [2, 3], "float32")], 2),
                     r"concat: axis \(2\) must be less than the input rank \(2\)"),
    "negative axis": (lambda b: b.concat([_in(b, [2, 3], "float32")], -1),
                      "concat: axis .* unsigned long range"),
    "scalar input": (lambda b: b.concat([_in(b, [], "float32")], 0),
                     r"concat: inputs rank 0 is outside"),
    "data types differ": (lambda b: b.concat([_in(b, [2], "float32", "a"),
                                              _in(b, [2], "float16", "b")], 0),
                          r"concat: inputs\[1\] data type float16 must equal"),
    "ranks differ": (lambda b: b.concat([_in(b, [2, 1], "float32", "a"),
                                         _in(b, [2], "float32", "b")], 0),
                     r"concat: inputs\[1\] rank 1 must equal"),
    "other dims differ": (lambda b: b.concat([_in(b, [2, 3], "float32", "a"),
                                              _in(b, [2, 4], "float32", "b")], 0),
                          r"concat: inputs\[1\] shape \[2, 4\] differs"),
    "joined dim too large": (lambda b: b.concat([_in(b, [2**30], "uint8", "a"),
                                                 _in(b, [2**30], "uint8", "b")], 0),
                             "concat: output dimension .* is not a valid dimension"),
}


@pytest.mark.parametrize("name", list(CONCAT_ERRORS))
def test_concat_errors(b: MLGraphBuilder, name: str) -> None:
    _check(b, *CONCAT_ERRORS[name])


def test_concat_shape_and_args(b: MLGraphBuilder) -> None:
    x, y = _in(b, [2, 3, 4], "int32", "a"), _in(b, [2, 5, 4], "int32", "b")
    out = b.concat((x, y, x), 1)
    assert out.shape == (2, 11, 4) and out.data_type == "int32"
    assert out.operator.args == ([x, y, x], 1)


# -- expand ------------------------------------------------------------------------------
EXPAND_ERRORS: dict[str, tuple[Case, str]] = {
    "not broadcastable": (lambda b: b.expand(_in(b, [2, 3], "float32"), [2, 4]),
                          "expand: input shape .* is not broadcastable to"),
    "lower target rank": (lambda b: b.expand(_in(b, [2, 3], "float32"), [3]),
                          "expand: input shape .* has higher rank"),
    "zero dimension": (lambda b: b.expand(_in(b, [1], "float32"), [0]),
                       r"expand: newShape item \(0\) is not a valid dimension"),
    "negative dimension": (lambda b: b.expand(_in(b, [1], "float32"), [-1]),
                           "expand: newShape item .* unsigned long range"),
    "output rank too high": (lambda b: b.expand(_in(b, [1], "float32"), [1] * 9),
                             "expand: output rank 9 is outside"),
}


@pytest.mark.parametrize("name", list(EXPAND_ERRORS))
def test_expand_errors(b: MLGraphBuilder, name: str) -> None:
    _check(b, *EXPAND_ERRORS[name])


def test_expand_shape(b: MLGraphBuilder) -> None:
    out = b.expand(_in(b, [3, 1], "uint64"), [2, 3, 5])
    assert out.shape == (2, 3, 5) and out.data_type == "uint64"
    assert b.expand(_in(b, [], "int8", "s"), [4]).shape == (4,)


# -- pad ---------------------------------------------------------------------------------
PAD_ERRORS: dict[str, tuple[Case, str]] = {
    "beginning length": (lambda b: b.pad(_in(b, [2, 3], "float32"), [1], [1, 1]),
                         "pad: beginningPadding length 1 must equal the input rank 2"),
    "ending length": (lambda b: b.pad(_in(b, [2, 3], "float32"), [1, 1], [1, 1, 1]),
                      "pad: endingPadding length 3 must equal the input rank 2"),
    "negative padding": (lambda b: b.pad(_in(b, [2], "float32"), [-1], [0]),
                         "pad: beginningPadding item .* unsigned long range"),
    "bad mode": (lambda b: b.pad(_in(b, [2], "float32"), [1], [1], mode="wrap"),
                 "pad: mode 'wrap' is not one of"),
    "symmetric removed": (lambda b: b.pad(_in(b, [2], "float32"), [1], [1], mode="symmetric"),
                          "pad: mode 'symmetric' is not one of"),
    "reflection beginning too large": (
        lambda b: b.pad(_in(b, [3, 2], "float32"), [1, 2], [0, 0], mode="reflection"),
        r"pad: reflection padding \(2, 0\) of dimension 1 must be less than its size 2"),
    "reflection ending too large": (
        lambda b: b.pad(_in(b, [3, 2], "float32"), [0, 0], [3, 0], mode="reflection"),
        r"pad: reflection padding \(0, 3\) of dimension 0 must be less than its size 3"),
    "value not a number": (lambda b: b.pad(_in(b, [2], "float32"), [1], [1], value=None),
                           "pad: value must be a number"),
    "value bad string": (lambda b: b.pad(_in(b, [2], "float32"), [1], [1], value="one"),
                         "pad: value must be a number"),
    "value boolean": (lambda b: b.pad(_in(b, [2], "float32"), [1], [1], value=True),
                      "pad: value must be a number"),
    "output dimension too large": (
        lambda b: b.pad(_in(b, [2], "uint8"), [2**31 - 2], [1]),
        "pad: output dimension .* is not a valid dimension"),
}


@pytest.mark.parametrize("name", list(PAD_ERRORS))
def test_pad_errors(b: MLGraphBuilder, name: str) -> None:
    _check(b, *PAD_ERRORS[name])


def test_pad_shape_and_options(b: MLGraphBuilder) -> None:
    out = b.pad(_in(b, [2, 3], "int8"), [1, 0], [2, 4], value=300)
    assert out.shape == (5, 7)
    assert out.operator.options == {"mode": "constant", "value": 127}
    edge = b.pad(_in(b, [2, 3], "float16", "y"), [1, 1], [1, 2], mode="edge", value=1e6)
    assert edge.operator.options == {"mode": "edge", "value": float("inf")}
    refl = b.pad(_in(b, [3, 3], "float32", "z"), [2, 2], [2, 2], mode="reflection")
    assert refl.shape == (7, 7)
    assert np.isnan(b.pad(_in(b, [1], "float32", "w"), [1], [1], value=float("nan"))
                    .operator.options["value"])
    with pytest.raises(MLTypeError, match="pad: value must be a number"):
        b.pad(_in(b, [1], "float32", "s"), [1], [1], value="1")


# -- reshape -----------------------------------------------------------------------------
RESHAPE_ERRORS: dict[str, tuple[Case, str]] = {
    "count differs": (lambda b: b.reshape(_in(b, [2, 3], "float32"), [4, 2]),
                      r"reshape: newShape \[4, 2\] has 8 elements, the input shape \[2, 3\]"),
    "zero dimension": (lambda b: b.reshape(_in(b, [2, 3], "float32"), [0, 6]),
                       r"reshape: newShape item \(0\) is not a valid dimension"),
    "minus one": (lambda b: b.reshape(_in(b, [2, 3], "float32"), [-1, 3]),
                  "reshape: newShape item .* unsigned long range"),
    "scalar of many": (lambda b: b.reshape(_in(b, [2], "float32"), []),
                       "reshape: newShape .* has 1 elements"),
    "not a sequence": (lambda b: b.reshape(_in(b, [2], "float32"), 2),
                       "reshape: newShape must be a sequence"),
    "rank too high": (lambda b: b.reshape(_in(b, [1], "float32"), [1] * 9),
                      "reshape: output rank 9 is outside"),
}


@pytest.mark.parametrize("name", list(RESHAPE_ERRORS))
def test_reshape_errors(b: MLGraphBuilder, name: str) -> None:
    _check(b, *RESHAPE_ERRORS[name])


def test_reshape_shapes(b: MLGraphBuilder) -> None:
    assert b.reshape(_in(b, [2, 3, 4], "uint32"), [4, 6]).shape == (4, 6)
    scalar = b.reshape(_in(b, [1, 1], "float32", "s"), [])
    assert scalar.shape == () and scalar.operator.args[1] == []


# -- reverse -----------------------------------------------------------------------------
REVERSE_ERRORS: dict[str, tuple[Case, str]] = {
    "axis out of range": (lambda b: b.reverse(_in(b, [2, 3], "float32"), axes=[2]),
                          "reverse: axes item 2 must be less than the input rank"),
    "duplicate axes": (lambda b: b.reverse(_in(b, [2, 3], "float32"), axes=[1, 1]),
                       "reverse: axes .* contains duplicate axes"),
    "negative axis": (lambda b: b.reverse(_in(b, [2, 3], "float32"), axes=[-1]),
                      "reverse: axes item .* unsigned long range"),
    "scalar with axis": (lambda b: b.reverse(_in(b, [], "float32"), axes=[0]),
                         "reverse: axes item 0 must be less than the input rank"),
}


@pytest.mark.parametrize("name", list(REVERSE_ERRORS))
def test_reverse_errors(b: MLGraphBuilder, name: str) -> None:
    _check(b, *REVERSE_ERRORS[name])


def test_reverse_default_axes(b: MLGraphBuilder) -> None:
    assert b.reverse(_in(b, [2, 3, 4], "float32")).operator.options == {"axes": [0, 1, 2]}
    assert b.reverse(_in(b, [2], "float32", "y"), axes=[]).operator.options == {"axes": []}
    assert b.reverse(_in(b, [], "int64", "s")).shape == ()


# -- slice -------------------------------------------------------------------------------
SLICE_ERRORS: dict[str, tuple[Case, str]] = {
    "starts length": (lambda b: b.slice(_in(b, [4, 4], "float32"), [0], [1, 1]),
                      "slice: starts length 1 must equal the input rank 2"),
    "sizes length": (lambda b: b.slice(_in(b, [4, 4], "float32"), [0, 0], [1, 1, 1]),
                     "slice: sizes length 3 must equal the input rank 2"),
    "strides length": (lambda b: b.slice(_in(b, [4, 4], "float32"), [0, 0], [1, 1],
                                         strides=[1]),
                       "slice: strides length 1 must equal the input rank 2"),
    "zero size": (lambda b: b.slice(_in(b, [4, 4], "float32"), [0, 0], [1, 0]),
                  r"slice: sizes\[1\] must not be 0"),
    "zero stride": (lambda b: b.slice(_in(b, [4, 4], "float32"), [0, 0], [1, 1],
                                      strides=[1, 0]),
                    r"slice: strides\[1\] \(0\) must be at least 1"),
    "negative stride": (lambda b: b.slice(_in(b, [4], "float32"), [0], [1], strides=[-1]),
                        "slice: strides item .* unsigned long range"),
    "negative start": (lambda b: b.slice(_in(b, [4], "float32"), [-1], [1]),
                       "slice: starts item .* unsigned long range"),
    "past the end": (lambda b: b.slice(_in(b, [4, 4], "float32"), [0, 2], [4, 3]),
                     r"slice: starts\[1\] \+ sizes\[1\] \(2 \+ 3\) exceeds the input "
                     r"dimension 4"),
    "start past the end": (lambda b: b.slice(_in(b, [4], "float32"), [5], [1]),
                           r"slice: starts\[0\] \+ sizes\[0\] \(5 \+ 1\) exceeds"),
}


@pytest.mark.parametrize("name", list(SLICE_ERRORS))
def test_slice_errors(b: MLGraphBuilder, name: str) -> None:
    _check(b, *SLICE_ERRORS[name])


def test_slice_shapes_and_options(b: MLGraphBuilder) -> None:
    x = _in(b, [7, 8, 9], "float16")
    out = b.slice(x, [1, 0, 2], [6, 8, 7], strides=[2, 3, 7])
    assert out.shape == (3, 3, 1)
    assert out.operator.options == {"strides": [2, 3, 7]}
    plain = b.slice(x, [0, 0, 0], [7, 8, 9])
    assert plain.shape == (7, 8, 9) and plain.operator.options == {"strides": [1, 1, 1]}
    assert b.slice(_in(b, [], "float32", "s"), [], []).shape == ()


# -- split -------------------------------------------------------------------------------
SPLIT_ERRORS: dict[str, tuple[Case, str]] = {
    "count does not divide": (lambda b: b.split(_in(b, [5, 2], "float32"), 2),
                              r"split: splits \(2\) does not divide the input dimension 5"),
    "zero count": (lambda b: b.split(_in(b, [4], "float32"), 0),
                   "split: splits must not be 0"),
    "negative count": (lambda b: b.split(_in(b, [4], "float32"), -2),
                       "split: splits .* unsigned long range"),
    "boolean splits": (lambda b: b.split(_in(b, [4], "float32"), True),
                       "split: splits must be a sequence"),
    "zero in list": (lambda b: b.split(_in(b, [4], "float32"), [4, 0]),
                     r"split: splits \[4, 0\] must not contain 0"),
    "wrong sum": (lambda b: b.split(_in(b, [4], "float32"), [1, 2]),
                  r"split: splits \[1, 2\] sum to 3, not the input dimension 4"),
    "empty list": (lambda b: b.split(_in(b, [4], "float32"), []),
                   r"split: splits count \(0\)"),
    "axis out of range": (lambda b: b.split(_in(b, [4, 2], "float32"), 2, axis=2),
                          r"split: axis \(2\) must be less than the input rank \(2\)"),
    "scalar input": (lambda b: b.split(_in(b, [], "float32"), 1),
                     "split: input rank 0 is outside"),
    "too many outputs": (lambda b: b.split(_in(b, [8193], "float32"), 8193),
                         r"split: splits count \(8193\)"),
    "too many listed outputs": (lambda b: b.split(_in(b, [8193], "float32"), [1] * 8193),
                                r"split: splits count \(8193\)"),
}


@pytest.mark.parametrize("name", list(SPLIT_ERRORS))
def test_split_errors(b: MLGraphBuilder, name: str) -> None:
    _check(b, *SPLIT_ERRORS[name])


def test_split_outputs(b: MLGraphBuilder) -> None:
    x = _in(b, [2, 6], "int32")
    equal = b.split(x, 3, axis=1)
    assert [o.shape for o in equal] == [(2, 2)] * 3
    assert equal[0].operator.args[1] == 3 and equal[0].operator.options == {"axis": 1}
    assert [o.index for o in equal] == [0, 1, 2]
    listed = b.split(x, [1, 5], axis=1)
    assert [o.shape for o in listed] == [(2, 1), (2, 5)]
    assert [o.shape for o in b.split(x, np.int64(2))] == [(1, 6), (1, 6)]


# -- tile --------------------------------------------------------------------------------
TILE_ERRORS: dict[str, tuple[Case, str]] = {
    "length": (lambda b: b.tile(_in(b, [2, 3], "float32"), [2]),
               "tile: repetitions length 1 must equal the input rank 2"),
    "zero": (lambda b: b.tile(_in(b, [2, 3], "float32"), [2, 0]),
             r"tile: repetitions \[2, 0\] must not contain 0"),
    "negative": (lambda b: b.tile(_in(b, [2], "float32"), [-1]),
                 "tile: repetitions item .* unsigned long range"),
    "too large": (lambda b: b.tile(_in(b, [2], "uint8"), [2**30]),
                  "tile: output dimension .* is not a valid dimension"),
}


@pytest.mark.parametrize("name", list(TILE_ERRORS))
def test_tile_errors(b: MLGraphBuilder, name: str) -> None:
    _check(b, *TILE_ERRORS[name])


def test_tile_shape(b: MLGraphBuilder) -> None:
    assert b.tile(_in(b, [2, 3], "uint32"), [3, 2]).shape == (6, 6)


# -- transpose ---------------------------------------------------------------------------
TRANSPOSE_ERRORS: dict[str, tuple[Case, str]] = {
    "length": (lambda b: b.transpose(_in(b, [2, 3], "float32"), permutation=[0]),
               "transpose: permutation length 1 must equal the input rank 2"),
    "duplicates": (lambda b: b.transpose(_in(b, [2, 3], "float32"), permutation=[1, 1]),
                   r"transpose: permutation \[1, 1\] is not a permutation"),
    "out of range": (lambda b: b.transpose(_in(b, [2, 3], "float32"), permutation=[0, 2]),
                     r"transpose: permutation \[0, 2\] is not a permutation"),
    "negative": (lambda b: b.transpose(_in(b, [2, 3], "float32"), permutation=[-1, 0]),
                 "transpose: permutation item .* unsigned long range"),
}


@pytest.mark.parametrize("name", list(TRANSPOSE_ERRORS))
def test_transpose_errors(b: MLGraphBuilder, name: str) -> None:
    _check(b, *TRANSPOSE_ERRORS[name])


def test_transpose_shapes(b: MLGraphBuilder) -> None:
    x = _in(b, [2, 3, 4], "int64")
    default = b.transpose(x)
    assert default.shape == (4, 3, 2) and default.operator.options == {"permutation": [2, 1, 0]}
    assert b.transpose(x, permutation=[1, 2, 0]).shape == (3, 4, 2)
    assert b.transpose(_in(b, [], "float32", "s")).shape == ()


# -- triangular --------------------------------------------------------------------------
TRIANGULAR_ERRORS: dict[str, tuple[Case, str]] = {
    "rank 1": (lambda b: b.triangular(_in(b, [3], "float32")),
               "triangular: input rank 1 is outside"),
    "upper not boolean": (lambda b: b.triangular(_in(b, [3, 3], "float32"), upper=1),
                          "triangular: upper must be a boolean"),
    "diagonal not integer": (lambda b: b.triangular(_in(b, [3, 3], "float32"), diagonal=1.5),
                             "triangular: diagonal must be an integer"),
    "diagonal out of range": (lambda b: b.triangular(_in(b, [3, 3], "float32"),
                                                     diagonal=2**31),
                              "triangular: diagonal .* outside the long range"),
}


@pytest.mark.parametrize("name", list(TRIANGULAR_ERRORS))
def test_triangular_errors(b: MLGraphBuilder, name: str) -> None:
    _check(b, *TRIANGULAR_ERRORS[name])


def test_triangular_options(b: MLGraphBuilder) -> None:
    out = b.triangular(_in(b, [2, 3, 4], "uint8"), upper=False, diagonal=-2)
    assert out.shape == (2, 3, 4)
    assert out.operator.options == {"upper": False, "diagonal": -2}
    assert b.triangular(_in(b, [2, 2], "float32", "y")).operator.options == {
        "upper": True, "diagonal": 0}


def test_labels_are_stored(b: MLGraphBuilder) -> None:
    out = b.reshape(_in(b, [2, 3], "float32"), [6], label="flat")
    assert out.operator.options == {"label": "flat"}
