"""com.microsoft BiasAdd and BiasSoftmax (CUDA/ROCm kernels only): checked in onnxruntime
against the standard-op graphs they fuse (Add + Add; Add with numpy broadcasting + Softmax
over the flattened trailing axes)."""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from tests.op_mappings.onnx.contrib.oracle import (
    ReferenceFn,
    check_ms,
    expect_error,
    ms_model,
    rng_array,
)


def _bias_add_ref(ins: list[str], outs: list[str]) -> list[onnx.NodeProto]:
    return [helper.make_node("Add", [ins[0], ins[1]], ["xb"]),
            helper.make_node("Add", ["xb", ins[2]], [outs[0]])]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("const_bias", [True, False])
def test_bias_add(dtype: str, const_bias: bool) -> None:
    items = [("x", rng_array(2, 6, 8, seed=1).astype(dtype)),
             ("bias", rng_array(8, seed=2).astype(dtype)),
             ("skip", rng_array(2, 6, 8, seed=3).astype(dtype))]
    check_ms("BiasAdd", items, constants=("bias",) if const_bias else (),
             reference=_bias_add_ref)


def _bias_softmax_ref(shape: tuple[int, ...], bias_shape: tuple[int, ...],
                      axis: int) -> ReferenceFn:
    """data + bias (numpy broadcasting of the model-level shapes), softmax over the
    flattened axes [axis, rank)."""
    batch, elems = math.prod(shape[:axis]), math.prod(shape[axis:])

    def build(ins: list[str], outs: list[str]) -> list[onnx.NodeProto]:
        def shape_const(name: str, dims: list[int]) -> onnx.NodeProto:
            return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(
                np.array(dims, np.int64), name))

        return [shape_const("bshape", list(bias_shape)), shape_const("flat", [batch, elems]),
                shape_const("full", list(shape)),
                helper.make_node("Reshape", [ins[1], "bshape"], ["b4"]),
                helper.make_node("Add", [ins[0], "b4"], ["s"]),
                helper.make_node("Reshape", ["s", "flat"], ["s2"]),
                helper.make_node("Softmax", ["s2"], ["p"], axis=1),
                helper.make_node("Reshape", ["p", "full"], [outs[0]])]

    return build


# (data shape, bias shape as the model states it, broadcast shape the fusion means, axis,
#  is_inner_broadcast)
CASES = [
    ((2, 3, 4, 5), (2, 1, 1, 5), (2, 1, 1, 5), 3, 1),   # additive mask [B, 1, 1, S]
    ((2, 3, 4, 5), (2, 5), (2, 1, 1, 5), 3, 1),          # the same mask stored 2-D
    ((2, 3, 4, 5), (1, 3, 4, 5), (1, 3, 4, 5), 3, 0),    # bias shared by the batch
    ((2, 3, 4, 5), (4, 5), (1, 1, 4, 5), 3, 0),          # relative bias [S, S]
    ((2, 3, 4, 5), (2, 1, 4, 5), (2, 1, 4, 5), 2, 1),    # mask [B, 1, S, S], last two axes
    ((2, 3, 4, 5), (3, 4, 5), (1, 3, 4, 5), 1, 0),       # axis 1, one bias row
    ((6, 5), (6, 5), (6, 5), 1, 1),                      # no broadcast
]


@pytest.mark.parametrize("shape,bias_shape,meant,axis,inner", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_bias_softmax(shape: tuple[int, ...], bias_shape: tuple[int, ...],
                      meant: tuple[int, ...], axis: int, inner: int, dtype: str) -> None:
    items = [("x", rng_array(*shape, seed=1, low=-4, high=4).astype(dtype)),
             ("bias", rng_array(*bias_shape, seed=2, low=-4, high=4).astype(dtype))]
    check_ms("BiasSoftmax", items, {"axis": axis, "is_inner_broadcast": inner},
             reference=_bias_softmax_ref(shape, meant, axis), rtol=1e-5, atol=1e-6)


def test_bias_softmax_default_axis() -> None:
    shape = (2, 3, 4)
    items = [("x", rng_array(*shape, seed=3)), ("bias", rng_array(1, 3, 4, seed=4))]
    check_ms("BiasSoftmax", items, {"is_inner_broadcast": 0},
             reference=_bias_softmax_ref(shape, (1, 3, 4), 1), constants=("bias",))


def test_malformed_nodes() -> None:
    x = rng_array(2, 3, 4, 5)
    expect_error(ms_model("BiasSoftmax", [("x", x), ("b", rng_array(2, 1, 1, 5))]),
                 "invalid_model", "required attribute 'is_inner_broadcast'")
    expect_error(ms_model("BiasSoftmax", [("x", x), ("b", rng_array(7, 5))],
                          {"axis": 3, "is_inner_broadcast": 0}),
                 "invalid_model", "bias of shape [7, 5] does not broadcast")
    expect_error(ms_model("BiasSoftmax", [("x", x), ("b", rng_array(7))],
                          {"axis": 3, "is_inner_broadcast": 1}),
                 "invalid_model", "does not broadcast")
    expect_error(ms_model("BiasSoftmax", [("x", x), ("b", rng_array(2, 5))],
                          {"axis": 5, "is_inner_broadcast": 1}),
                 "invalid_model", "axis 5 is out of range for rank 4")
    expect_error(ms_model("BiasAdd", [("x", rng_array(2, 6, 8)), ("bias", rng_array(6)),
                                      ("skip", rng_array(2, 6, 8))]),
                 "invalid_model", "bias has shape [6], expected [8]")
    expect_error(ms_model("BiasAdd", [("x", rng_array(6, 8)), ("bias", rng_array(8)),
                                      ("skip", rng_array(6, 8))]),
                 "invalid_model", "must be 3-D")
