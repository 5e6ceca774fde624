"""op_mappings/_common/checks: the input validation handlers of both formats share. Each
check passes what the ONNX/TFLite specifications allow and raises a one-line
`InvalidModel` (`UnsupportedDataType` for types) saying what is wrong otherwise."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

from converter.core.errors import InvalidModel, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import ML, MLGraphBuilder
from converter.importer import ImportContext
from op_mappings._common.checks import (
    attr_in_range,
    check_dtype,
    check_indices,
    check_rank,
    finite_scalar,
    int_list,
    one_value,
    require_attrs,
    static_shape,
)


def _node(inputs: tuple[str, ...] = ("a",), outputs: tuple[str, ...] = ("y",),
          **attrs: Any) -> Node:
    return Node("Op", "", 1, "n", inputs, outputs, MappingProxyType(attrs))


def _ctx(**consts: Any) -> ImportContext:
    builder = MLGraphBuilder(ML().create_context())
    return ImportContext(builder, {k: np.asarray(v) for k, v in consts.items()}, {})


def test_check_rank_and_dtype() -> None:
    x = _ctx().builder.input("x", [2, 3], "float32")
    assert check_rank(x, 2, "x") == 2
    assert check_rank(np.zeros((1, 1, 1)), range(1, 5), "x") == 3
    with pytest.raises(InvalidModel, match="x has rank 2, 3 or 4 expected"):
        check_rank(x, (3, 4), "x")
    with pytest.raises(InvalidModel, match="x has rank 0, 1 to 4 expected"):
        check_rank(np.float32(1), range(1, 5), "x")
    assert check_dtype(x, {"float32", "float16"}, "x") == "float32"
    with pytest.raises(UnsupportedDataType, match="indices has data type float32; int32, int64"):
        check_dtype(x, {"int64", "int32"}, "indices")


def test_attr_in_range() -> None:
    assert attr_in_range(_node(k=3), "k", 1, 4) == 3
    for value, pattern in [(0, r"is 0, it must be in \[1, 4\]"), (5.5, "is 5.5"),
                           (float("nan"), "is nan"), ("a", "must be a number")]:
        with pytest.raises(InvalidModel, match=pattern):
            attr_in_range(_node(k=value), "k", 1, 4)
    with pytest.raises(InvalidModel, match=r"it must be >= 0"):
        attr_in_range(_node(k=-1), "k", 0)
    with pytest.raises(InvalidModel, match="required attribute 'k' of Op is missing"):
        attr_in_range(_node(), "k")


def test_finite_scalar_and_one_value() -> None:
    ctx = _ctx(a=np.array([2.5]), b=np.array(np.inf), c=np.zeros(2), d=np.array("s"))
    assert float(finite_scalar(ctx, _node(("a",)), 0, "delta")) == 2.5
    assert finite_scalar(ctx, _node(("a",)), 0, "delta").shape == ()
    for name, pattern in [("b", r"delta \(input 0\) is inf, it must be finite"),
                          ("c", r"must hold one value, it has 2 \(shape \[2\]\)"),
                          ("d", "must be a number, it is <U1")]:
        with pytest.raises(InvalidModel, match=pattern):
            finite_scalar(ctx, _node((name,)), 0, "delta")
    assert one_value(np.array([[7]]), "v") == 7
    with pytest.raises(InvalidModel, match="v must hold one value, it has 0"):
        one_value(np.zeros(0), "v")


def test_static_shape() -> None:
    ctx = _ctx(a=np.array([2, 0, 3]), b=np.array([2, -1]), c=np.zeros((1, 2), np.int64),
               d=np.array([1.5]), e=np.zeros(0))
    assert static_shape(ctx, _node(("a",)), 0) == [2, 0, 3]
    assert static_shape(ctx, _node(("e",)), 0) == []
    with pytest.raises(InvalidModel, match=r"shape \(input 0\) \[2, 0, 3\] has a size below 1"):
        static_shape(ctx, _node(("a",)), 0, minimum=1)
    for name, pattern in [("b", "has a size below 0"), ("c", "must be 1-D"),
                          ("d", "must hold integers, it is float64")]:
        with pytest.raises(InvalidModel, match=pattern):
            static_shape(ctx, _node((name,)), 0)


def test_check_indices() -> None:
    assert check_indices(np.array([[0, -3], [2, 1]], np.int32), 3).dtype == np.int64
    assert check_indices(np.zeros(0, np.float32), 0).size == 0
    with pytest.raises(InvalidModel, match=r"indices hold 3, outside \[-3, 3\)"):
        check_indices(np.array([0, 3]), 3)
    with pytest.raises(InvalidModel, match=r"hold -4"):
        check_indices(np.array([-4]), 3)
    with pytest.raises(InvalidModel, match="must be integers, they are float32"):
        check_indices(np.array([0.5], np.float32), 3)


def test_int_list_and_require_attrs() -> None:
    assert int_list((2, 3), "kernel_shape", 2, 1) == [2, 3]
    assert int_list(np.array([[0], [4]]), "pads") == [0, 4]
    with pytest.raises(InvalidModel, match=r"kernel_shape \[2\] has 1 entries, 2 expected"):
        int_list([2], "kernel_shape", 2, 1)
    with pytest.raises(InvalidModel, match=r"strides \[1, 0\] has an entry below 1"):
        int_list([1, 0], "strides", 2, 1)
    with pytest.raises(InvalidModel, match="pads must be integers, it holds nan"):
        int_list([1.0, float("nan")], "pads")
    require_attrs(_node(a=1, b=2), "a", "b")
    with pytest.raises(InvalidModel, match=r"required attribute\(s\) \['b', 'c'\] of Op"):
        require_attrs(_node(a=1), "a", "b", "c")
