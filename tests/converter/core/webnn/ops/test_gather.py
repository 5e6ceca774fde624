"""Validation of the gather family (gather, gatherElements, gatherND, scatterElements,
scatterND): every spec TypeError rule, output shapes, and the limit samples."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLOperand, MLTypeError
from tests.converter.core.webnn.limit_samples import Sample


def _in(b: MLGraphBuilder, name: str, shape: list[int], dtype: str) -> MLOperand:
    return b.input(name, shape, dtype)


SAMPLES: dict[str, Sample] = {
    "gather": Sample(lambda b, t: b.gather(_in(b, "x", [3, 4], t["input"]),
                                           _in(b, "i", [2], t["indices"]))),
    "gatherElements": Sample(lambda b, t: b.gather_elements(_in(b, "x", [3, 4], t["input"]),
                                                            _in(b, "i", [3, 2], t["indices"]),
                                                            axis=1)),
    "gatherND": Sample(lambda b, t: b.gather_nd(_in(b, "x", [3, 4], t["input"]),
                                                _in(b, "i", [2, 1], t["indices"]))),
    "scatterElements": Sample(
        lambda b, t: b.scatter_elements(_in(b, "x", [3, 4], t["input"]),
                                        _in(b, "i", [1, 4], t["indices"]),
                                        _in(b, "u", [1, 4], t["updates"])),
        groups=[("input", "updates")]),
    "scatterND": Sample(
        lambda b, t: b.scatter_nd(_in(b, "x", [3, 4], t["input"]),
                                  _in(b, "i", [2, 1], t["indices"]),
                                  _in(b, "u", [2, 4], t["updates"])),
        groups=[("input", "updates")]),
}


@pytest.fixture
def b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


Case = Callable[[MLGraphBuilder], Any]

ERRORS: dict[str, tuple[Case, str]] = {
    # gather
    "gather axis >= rank": (
        lambda b: b.gather(_in(b, "x", [3, 4], "float32"), _in(b, "i", [2], "int32"), axis=2),
        r"gather: axis \(2\) must be less than the input rank \(2\)"),
    "gather negative axis": (
        lambda b: b.gather(_in(b, "x", [3], "float32"), _in(b, "i", [2], "int32"), axis=-1),
        "gather: axis .* unsigned long range"),
    "gather float indices": (
        lambda b: b.gather(_in(b, "x", [3], "float32"), _in(b, "i", [2], "float32")),
        "gather: indices data type float32 is not one of"),
    "gather uint64 indices": (
        lambda b: b.gather(_in(b, "x", [3], "float32"), _in(b, "i", [2], "uint64")),
        "gather: indices data type uint64 is not one of"),
    "gather scalar input": (
        lambda b: b.gather(_in(b, "x", [], "float32"), _in(b, "i", [], "int32")),
        "gather: input rank 0 is outside"),
    "gather output rank too high": (
        lambda b: b.gather(_in(b, "x", [2] * 5, "float32"), _in(b, "i", [1] * 5, "int32")),
        "gather: output rank 9 is outside"),
    "gather indices from another builder": (
        lambda b: b.gather(_in(b, "x", [3], "float32"),
                           MLGraphBuilder(ML().create_context()).input("i", [1], "int32")),
        "gather: indices was created by another MLGraphBuilder"),
    # gatherElements
    "gatherElements rank differs": (
        lambda b: b.gather_elements(_in(b, "x", [3, 4], "float32"), _in(b, "i", [3], "int32")),
        "gatherElements: indices rank 1 must equal the input rank 2"),
    "gatherElements shape differs off axis": (
        lambda b: b.gather_elements(_in(b, "x", [3, 4], "float32"),
                                    _in(b, "i", [2, 4], "int32"), axis=1),
        r"gatherElements: indices shape \[2, 4\] must equal the input shape \[3, 4\] except "
        r"along axis 1"),
    "gatherElements axis >= rank": (
        lambda b: b.gather_elements(_in(b, "x", [3, 4], "float32"),
                                    _in(b, "i", [3, 4], "int32"), axis=2),
        r"gatherElements: axis \(2\) must be less than the input rank"),
    "gatherElements float16 indices": (
        lambda b: b.gather_elements(_in(b, "x", [3], "float32"), _in(b, "i", [3], "float16")),
        "gatherElements: indices data type float16 is not one of"),
    "gatherElements scalar indices": (
        lambda b: b.gather_elements(_in(b, "x", [3], "float32"), _in(b, "i", [], "int32")),
        "gatherElements: indices rank 0 is outside"),
    # gatherND
    "gatherND coordinates too long": (
        lambda b: b.gather_nd(_in(b, "x", [3, 4], "float32"), _in(b, "i", [2, 3], "int32")),
        r"gatherND: indices last dimension \(3\) must not exceed the input rank \(2\)"),
    "gatherND scalar indices": (
        lambda b: b.gather_nd(_in(b, "x", [3], "float32"), _in(b, "i", [], "int32")),
        "gatherND: indices rank 0 is outside"),
    "gatherND int8 indices": (
        lambda b: b.gather_nd(_in(b, "x", [3], "float32"), _in(b, "i", [1], "int8")),
        "gatherND: indices data type int8 is not one of"),
    "gatherND scalar input": (
        lambda b: b.gather_nd(_in(b, "x", [], "float32"), _in(b, "i", [1], "int32")),
        "gatherND: input rank 0 is outside"),
    # scatterElements
    "scatterElements updates type": (
        lambda b: b.scatter_elements(_in(b, "x", [3, 4], "float32"),
                                     _in(b, "i", [1, 4], "int32"),
                                     _in(b, "u", [1, 4], "float16")),
        "scatterElements: updates data type float16 must equal input data type float32"),
    "scatterElements axis >= rank": (
        lambda b: b.scatter_elements(_in(b, "x", [3, 4], "float32"),
                                     _in(b, "i", [1, 4], "int32"),
                                     _in(b, "u", [1, 4], "float32"), axis=2),
        r"scatterElements: axis \(2\) must be less than the input rank"),
    "scatterElements indices rank": (
        lambda b: b.scatter_elements(_in(b, "x", [3, 4], "float32"),
                                     _in(b, "i", [4], "int32"), _in(b, "u", [4], "float32")),
        "scatterElements: indices rank 1 must equal the input rank 2"),
    "scatterElements indices shape": (
        lambda b: b.scatter_elements(_in(b, "x", [3, 4], "float32"),
                                     _in(b, "i", [1, 3], "int32"),
                                     _in(b, "u", [1, 3], "float32")),
        r"scatterElements: indices shape \[1, 3\] must equal the input shape"),
    "scatterElements updates shape": (
        lambda b: b.scatter_elements(_in(b, "x", [3, 4], "float32"),
                                     _in(b, "i", [1, 4], "int32"),
                                     _in(b, "u", [2, 4], "float32")),
        r"scatterElements: updates shape \[2, 4\] must be \[1, 4\]"),
    "scatterElements float indices": (
        lambda b: b.scatter_elements(_in(b, "x", [3], "float32"), _in(b, "i", [1], "float32"),
                                     _in(b, "u", [1], "float32")),
        "scatterElements: indices data type float32 is not one of"),
    # scatterND
    "scatterND updates type": (
        lambda b: b.scatter_nd(_in(b, "x", [3, 4], "int32"), _in(b, "i", [2, 1], "int32"),
                               _in(b, "u", [2, 4], "uint32")),
        "scatterND: updates data type uint32 must equal input data type int32"),
    "scatterND coordinates too long": (
        lambda b: b.scatter_nd(_in(b, "x", [3, 4], "float32"), _in(b, "i", [2, 3], "int32"),
                               _in(b, "u", [2], "float32")),
        r"scatterND: indices last dimension \(3\) must not exceed the input rank \(2\)"),
    "scatterND updates shape": (
        lambda b: b.scatter_nd(_in(b, "x", [3, 4], "float32"), _in(b, "i", [2, 1], "int32"),
                               _in(b, "u", [2, 3], "float32")),
        r"scatterND: updates shape \[2, 3\] must be \[2, 4\]"),
    "scatterND scalar indices": (
        lambda b: b.scatter_nd(_in(b, "x", [3], "float32"), _in(b, "i", [], "int32"),
                               _in(b, "u", [], "float32")),
        "scatterND: indices rank 0 is outside"),
    "scatterND uint8 indices": (
        lambda b: b.scatter_nd(_in(b, "x", [3], "float32"), _in(b, "i", [1, 1], "uint8"),
                               _in(b, "u", [1], "float32")),
        "scatterND: indices data type uint8 is not one of"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(b: MLGraphBuilder, name: str) -> None:
    call, match = ERRORS[name]
    with pytest.raises(MLTypeError, match=match):
        call(b)


@pytest.mark.parametrize(("input_shape", "indices_shape", "axis", "expected"), [
    ([5], [], 0, ()),
    ([3, 4], [2, 2], 0, (2, 2, 4)),
    ([3, 4, 5], [6], 1, (3, 6, 5)),
    ([3, 4, 5], [], 2, (3, 4)),
])
def test_gather_shapes(b: MLGraphBuilder, input_shape: list[int], indices_shape: list[int],
                       axis: int, expected: tuple[int, ...]) -> None:
    out = b.gather(_in(b, "x", input_shape, "float16"), _in(b, "i", indices_shape, "int64"),
                   axis=axis)
    assert out.shape == expected and out.data_type == "float16"
    assert out.operator.options == {"axis": axis}


def test_gather_elements_output_has_indices_shape(b: MLGraphBuilder) -> None:
    out = b.gather_elements(_in(b, "x", [3, 3], "int8"), _in(b, "i", [3, 2], "uint32"), axis=1)
    assert out.shape == (3, 2) and out.data_type == "int8"


@pytest.mark.parametrize(("input_shape", "indices_shape", "expected"), [
    ([2, 3, 4], [5, 1], (5, 3, 4)),
    ([2, 3, 4], [5, 3], (5,)),
    ([2, 3], [2], ()),
    ([2, 3, 4], [6, 5, 2], (6, 5, 4)),
])
def test_gather_nd_shapes(b: MLGraphBuilder, input_shape: list[int], indices_shape: list[int],
                          expected: tuple[int, ...]) -> None:
    assert b.gather_nd(_in(b, "x", input_shape, "uint8"),
                       _in(b, "i", indices_shape, "int32")).shape == expected


def test_scatter_outputs_have_input_shape(b: MLGraphBuilder) -> None:
    x = _in(b, "x", [4, 3, 2], "float32")
    out = b.scatter_nd(x, _in(b, "i", [5, 2], "int64"), _in(b, "u", [5, 2], "float32"))
    assert out.shape == (4, 3, 2)
    full = b.scatter_nd(x, _in(b, "j", [3], "int32"), _in(b, "v", [], "float32"))
    assert full.shape == (4, 3, 2)
    elems = b.scatter_elements(x, _in(b, "k", [4, 3, 7], "uint32"),
                               _in(b, "w", [4, 3, 7], "float32"), axis=2)
    assert elems.shape == (4, 3, 2) and elems.operator.options == {"axis": 2}
