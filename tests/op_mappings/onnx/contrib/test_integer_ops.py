"""com.microsoft QLinearWhere (onnxruntime CPU kernel), and QLinearReduceMean, MulInteger
and ReduceSumInteger (no usable CPU kernel: checked against DequantizeLinear + ReduceMean +
QuantizeLinear, Cast + Sub + Mul and Cast + ReduceSum graphs in onnxruntime)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model


def _q(qtype: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    info = np.iinfo(qtype)
    return np.random.default_rng(seed).integers(info.min, info.max + 1, shape).astype(qtype)


def _params(qtype: str, scale: float, zp: int) -> tuple[np.ndarray, np.ndarray]:
    return np.array(scale, np.float32), np.array(zp if qtype == "uint8" else zp - 128, qtype)


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 3, 4), (2, 3, 4)),
                                    ((3, 1), (1, 4), (3, 4)), ((4,), (2, 3, 4), ()), ((), (), ())])
def test_qlinear_where(qtype: str, shapes: tuple[tuple[int, ...], ...]) -> None:
    cond = np.random.default_rng(1).random(shapes[0]) > 0.5
    xs, xz = _params(qtype, 0.05, 130)
    ys, yz = _params(qtype, 0.031, 100)
    zs, zz = _params(qtype, 0.07, 120)
    items = [("c", cond), ("x", _q(qtype, shapes[1], 2)), ("xs", xs), ("xz", xz),
             ("yq", _q(qtype, shapes[2], 3)), ("ys", ys), ("yz", yz), ("zs", zs), ("zz", zz)]
    check_ms("QLinearWhere", items, constants=("xs", "xz", "ys", "yz", "zs", "zz"),
             outputs=("out",), rtol=0, atol=0)


def _reduce_mean_reference(axes: list[int], keepdims: int) -> Any:
    def build(ins: list[str], outs: list[str]) -> list[Any]:
        x, xs, xz, ys, yz = ins
        axes_node = helper.make_node("Constant", [], ["ax"], value=helper.make_tensor(
            "ax", TensorProto.INT64, [len(axes)], axes))
        return [helper.make_node("DequantizeLinear", [x, xs, xz], ["f"]), axes_node,
                helper.make_node("ReduceMean", ["f", "ax"], ["m"], keepdims=keepdims),
                helper.make_node("QuantizeLinear", ["m", ys, yz], outs)]
    return build


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("axes,keepdims", [([1], 1), ([0, 2], 0), ([-1], 1)])
def test_qlinear_reduce_mean(qtype: str, axes: list[int], keepdims: int) -> None:
    xs, xz = _params(qtype, 0.05, 130)
    ys, yz = _params(qtype, 0.021, 110)
    items = [("x", _q(qtype, (3, 4, 5), 4)), ("xs", xs), ("xz", xz), ("ys", ys), ("yz", yz)]
    check_ms("QLinearReduceMean", items, {"axes": axes, "keepdims": keepdims},
             constants=("xs", "xz", "ys", "yz"),
             reference=_reduce_mean_reference(axes, keepdims), rtol=0, atol=1)


def _mul_reference(ins: list[str], outs: list[str]) -> list[Any]:
    a, az, b, bz = ins
    nodes = []
    names = []
    for v in (a, az, b, bz):
        if v:
            nodes.append(helper.make_node("Cast", [v], [v + "_i"], to=TensorProto.INT32))
        names.append(v + "_i" if v else "")
    da, db = names[0], names[2]
    if names[1]:
        nodes.append(helper.make_node("Sub", [names[0], names[1]], ["da"]))
        da = "da"
    if names[3]:
        nodes.append(helper.make_node("Sub", [names[2], names[3]], ["db"]))
        db = "db"
    return nodes + [helper.make_node("Mul", [da, db], outs)]


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("zero_points", [True, False])
def test_mul_integer(qtype: str, zero_points: bool) -> None:
    az, bz = (np.array(v if qtype == "uint8" else v - 128, qtype) for v in (255, 0))
    items = [("a", _q(qtype, (2, 3, 4), 5)), ("az", az if zero_points else None),
             ("b", _q(qtype, (3, 1), 6)), ("bz", bz if zero_points else None)]
    check_ms("MulInteger", items, constants=("az", "bz"), reference=_mul_reference,
             rtol=0, atol=0)


def _sum_reference(axes: list[int], keepdims: int) -> Any:
    def build(ins: list[str], outs: list[str]) -> list[Any]:
        axes_node = helper.make_node("Constant", [], ["ax"], value=helper.make_tensor(
            "ax", TensorProto.INT64, [len(axes)], axes))
        return [helper.make_node("Cast", ins, ["i"], to=TensorProto.INT32), axes_node,
                helper.make_node("ReduceSum", ["i", "ax"], outs, keepdims=keepdims)]
    return build


@pytest.mark.parametrize("qtype", ["uint8", "int8"])
@pytest.mark.parametrize("axes,keepdims", [([1], 1), ([0, 2], 0), ([-1, 0], 1)])
def test_reduce_sum_integer(qtype: str, axes: list[int], keepdims: int) -> None:
    """Against Cast + ReduceSum (onnxruntime's own node fails its type inference when the
    output type is not declared)."""
    x = _q(qtype, (3, 4, 5), 7)
    check_ms("ReduceSumInteger", [("x", x)], {"axes": axes, "keepdims": keepdims},
             reference=_sum_reference(axes, keepdims), rtol=0, atol=0)


def test_malformed_nodes() -> None:
    x = _q("int8", (3, 4), 9)
    expect_error(ms_model("ReduceSumInteger", [("x", x)], {"keepdims": 1}), "invalid_model",
                 "required attribute 'axes' is missing")
    expect_error(ms_model("MulInteger", [("a", x), ("az", None), ("b", x.astype(np.uint8))]),
                 "invalid_model", "B has data type uint8, A has int8")
