"""com.microsoft QuantizeWithOrder, DequantizeWithOrder, QOrderedMatMul, QOrderedGelu and
QOrderedLayerNormalization in the row-major orders the transformers optimizer writes (CUDA
only) vs onnxruntime running DequantizeLinear -> the float op -> QuantizeLinear."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array

ROW = {"order_X": 1, "order_Y": 1}


def _q(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(-128, 128, shape).astype(np.int8)


def _f(value: float) -> np.ndarray:
    return np.array(value, np.float32)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_quantize_with_order(dtype: str) -> None:
    items = [("x", rng_array(2, 3, 8, seed=1, low=-4, high=4).astype(dtype)), ("s", _f(0.03))]
    check_ms("QuantizeWithOrder", items, {"order_input": 1, "order_output": 1},
             constants=("s",), reference=lambda i, o: [
                 helper.make_node("Cast", [i[0]], ["xf"], to=TensorProto.FLOAT),
                 helper.make_node("QuantizeLinear", ["xf", i[1], "zp"], o),
                 helper.make_node("Constant", [], ["zp"], value=helper.make_tensor(
                     "zp", TensorProto.INT8, [], [0]))], rtol=0, atol=0)


@pytest.mark.parametrize("to", [1, 10])
def test_dequantize_with_order(to: int) -> None:
    items = [("x", _q((2, 3, 8), 2)), ("s", _f(0.05))]
    check_ms("DequantizeWithOrder", items, {"order_input": 1, "order_output": 1, "to": to},
             constants=("s",), reference=lambda i, o: [
                 helper.make_node("DequantizeLinear", i, ["d"]),
                 helper.make_node("Cast", ["d"], o, to=to)], rtol=1e-3, atol=1e-6)


def _matmul_reference(k: int, n: int, bias: bool, residual: bool) -> Any:
    def build(ins: list[str], outs: list[str]) -> list[Any]:
        a, sa, w, sw, sy, bb, c, sc = (ins + [""] * 8)[:8]
        shape = helper.make_node("Constant", [], ["nk"], value=helper.make_tensor(
            "nk", TensorProto.INT64, [2], [n, k]))
        nodes = [shape, helper.make_node("DequantizeLinear", [a, sa], ["af"]),
                 helper.make_node("Reshape", [w, "nk"], ["wnk"]),
                 helper.make_node("Transpose", ["wnk"], ["wkn"], perm=[1, 0]),
                 helper.make_node("DequantizeLinear", ["wkn", sw], ["wf"], axis=1),
                 helper.make_node("MatMul", ["af", "wf"], ["y0"])]
        last = "y0"
        if bias:
            nodes.append(helper.make_node("Add", [last, bb], ["y1"]))
            last = "y1"
        if residual:
            nodes += [helper.make_node("DequantizeLinear", [c, sc], ["cf"]),
                      helper.make_node("Add", [last, "cf"], ["y2"])]
            last = "y2"
        zp = helper.make_node("Constant", [], ["zp"], value=helper.make_tensor(
            "zp", TensorProto.INT8, [], [0]))
        return nodes + [zp, helper.make_node("QuantizeLinear", [last, sy, "zp"], outs)]
    return build


@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("bias,residual", [(True, False), (True, True), (False, False)])
def test_qordered_matmul(per_column: bool, bias: bool, residual: bool) -> None:
    k, n = 16, 6
    weight = _q((k, n), 3)
    col_data = np.ascontiguousarray(weight.T).reshape(k, n)  # the fusion's ORDER_COL bytes
    sw = (np.random.default_rng(4).uniform(0.01, 0.05, n) if per_column
          else np.array(0.02)).astype(np.float32)
    items = [("a", _q((2, 3, k), 5)), ("sa", _f(0.04)), ("w", col_data), ("sw", sw),
             ("sy", _f(1.5)), ("bb", rng_array(n, seed=6) if bias else None),
             ("c", _q((2, 3, n), 7) if residual else None),
             ("sc", _f(0.1) if residual else None)]
    check_ms("QOrderedMatMul", items, {"order_A": 1, "order_B": 0, "order_Y": 1},
             constants=("sa", "w", "sw", "sy", "bb", "sc"),
             reference=_matmul_reference(k, n, bias, residual), rtol=0, atol=1)


def test_qordered_gelu() -> None:
    zp = helper.make_node("Constant", [], ["zp"], value=helper.make_tensor(
        "zp", TensorProto.INT8, [], [0]))
    check_ms("QOrderedGelu", [("x", _q((2, 3, 8), 8)), ("sx", _f(0.03)), ("sy", _f(0.02))],
             ROW, constants=("sx", "sy"), reference=lambda i, o: [
                 zp, helper.make_node("DequantizeLinear", i[:2], ["xf"]),
                 helper.make_node("Gelu", ["xf"], ["g"]),
                 helper.make_node("QuantizeLinear", ["g", i[2], "zp"], o)], rtol=0, atol=1)


@pytest.mark.parametrize("bias", [True, False])
def test_qordered_layer_normalization(bias: bool) -> None:
    zp = helper.make_node("Constant", [], ["zp"], value=helper.make_tensor(
        "zp", TensorProto.INT8, [], [0]))
    items = [("x", _q((2, 3, 8), 9)), ("sx", _f(0.05)), ("g", rng_array(8, seed=10)),
             ("b", rng_array(8, seed=11) if bias else None), ("sy", _f(0.03))]
    check_ms("QOrderedLayerNormalization", items, ROW | {"epsilon": 1e-5},
             constants=("sx", "g", "b", "sy"), reference=lambda i, o: [
                 zp, helper.make_node("DequantizeLinear", i[:2], ["xf"]),
                 helper.make_node("LayerNormalization", ["xf", i[2], i[3]], ["ln"], axis=-1,
                                  epsilon=1e-5),
                 helper.make_node("QuantizeLinear", ["ln", i[4], "zp"], o)], rtol=0, atol=1)


def test_malformed_nodes() -> None:
    expect_error(ms_model("QuantizeWithOrder", [("x", rng_array(2, 32)), ("s", _f(0.1))],
                          {"order_input": 1, "order_output": 2}, constants=("s",)),
                 "unsupported_attribute", "order_output=2 is not supported")
