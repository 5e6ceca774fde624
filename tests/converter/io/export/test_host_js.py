"""The JavaScript host runtime's arithmetic, comparison, reduction, shape, indexing and scatter
operators against onnxruntime (issue 24, point 1): each case a one-node ONNX model on random
inputs (several shapes and attribute settings, broadcasting, opset forms), run by
onnxruntime and by the emitted JavaScript in node (all cases in one node process; exact for
integer and bool outputs, float within 1e-6 relative)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.converter.io.export.host_js_harness import Case, check, run_cases
from tests.converter.io.export.node_harness import needs_node

rng = np.random.default_rng(24)
f32 = np.float32
i64 = np.int64


def _f(*shape: int, low: float = -3, high: float = 3) -> np.ndarray:
    return rng.uniform(low, high, shape).astype(f32)


def _i(*shape: int, low: int = -9, high: int = 10, dtype: Any = i64) -> np.ndarray:
    return rng.integers(low, high, shape).astype(dtype)


def _ints(*values: int) -> np.ndarray:
    return np.array(values, i64)


def _cases() -> list[Case]:
    cases: list[Case] = []
    add = cases.append
    for op in ("Add", "Sub", "Mul", "Div"):
        add(Case(f"{op}-f32-broadcast", op, {"a": _f(2, 3, 4), "b": _f(3, 1)}))
        add(Case(f"{op}-i64", op, {"a": _i(5), "b": _i(5, low=1)}, narrow=op == "Add"))
        add(Case(f"{op}-i32-scalar", op, {"a": _i(2, 3, dtype=np.int32),
                                          "b": np.array(-4, np.int32)}))
    add(Case("Mul-i32-wraps", "Mul", {"a": np.array([70000, -3], np.int32),
                                     "b": np.array([70000, 5], np.int32)}))
    add(Case("Div-i64-negative", "Div", {"a": _ints(-7, 7, -7, 9), "b": _ints(2, -2, -2, 3)}))
    add(Case("Mod-i64", "Mod", {"a": _ints(-7, 7, -7, 5), "b": _ints(3, -3, -3, 5)}))
    add(Case("Mod-i32-fmod", "Mod", {"a": np.array([-7, 7, -7], np.int32),
                                     "b": np.array([3, -3, -3], np.int32)}, attributes={"fmod": 1}))
    add(Case("Mod-f32-fmod", "Mod", {"a": _f(6), "b": _f(6, low=0.5)}, attributes={"fmod": 1}))
    add(Case("Pow-f32", "Pow", {"a": _f(3, 4, low=0.1), "b": _f(4)}))
    add(Case("Pow-i64", "Pow", {"a": _ints(2, 3, -2), "b": _ints(3, 2, 3)}))
    for op in ("Equal", "Greater", "GreaterOrEqual", "Less", "LessOrEqual"):
        add(Case(f"{op}-i64", op, {"a": _i(3, 4, low=0, high=3), "b": _i(4, low=0, high=3)}))
        add(Case(f"{op}-f32", op, {"a": _f(2, 5), "b": np.array(0.5, f32)}))
    bools = {n: rng.integers(0, 2, (2, 3)).astype(bool) for n in "ab"}
    for op in ("And", "Or", "Xor"):
        add(Case(op, op, {"a": bools["a"], "b": bools["b"][:1]}))
    add(Case("Not", "Not", {"x": bools["a"]}))
    for op in ("Neg", "Abs", "Exp", "Sigmoid", "Relu", "Floor", "Ceil"):
        add(Case(op, op, {"x": _f(3, 5)}))
    add(Case("Neg-i64", "Neg", {"x": _i(4)}))
    add(Case("Abs-i32", "Abs", {"x": _i(4, dtype=np.int32)}))
    for op in ("Log", "Sqrt", "Reciprocal"):
        add(Case(op, op, {"x": _f(3, 5, low=0.1, high=9)}))
    for op in ("Sin", "Cos", "Atan", "Softplus", "Erf", "Gelu", "Elu"):
        add(Case(op, op, {"x": _f(4, 6, low=-5, high=5)}, opset=20 if op == "Gelu" else 17))
    add(Case("Erf-small-and-large", "Erf", {"x": np.array([0, 1e-6, -3e-3, 0.5, -1.7, 2.9, 3.9,
                                                          4.5, -7], f32)}))
    add(Case("Gelu-tanh", "Gelu", {"x": _f(9)}, attributes={"approximate": "tanh"}, opset=20))
    add(Case("Elu-alpha", "Elu", {"x": _f(7)}, attributes={"alpha": 0.3}))
    add(Case("PRelu", "PRelu", {"x": _f(2, 3, 4), "slope": _f(3, 1, low=0, high=1)}))
    special = np.array([1.0, np.nan, np.inf, -np.inf, 0.0, -2.5], f32)
    add(Case("IsNaN", "IsNaN", {"x": special}))
    add(Case("IsInf", "IsInf", {"x": special}))
    add(Case("IsInf-positive-only", "IsInf", {"x": special}, attributes={"detect_negative": 0}))
    add(Case("LogSoftmax-13", "LogSoftmax", {"x": _f(2, 3, 5, low=-30, high=30)},
             attributes={"axis": 1}))
    add(Case("LogSoftmax-11-coerced", "LogSoftmax", {"x": _f(2, 3, 4)}, opset=11))
    for op in ("Tanh", "HardSigmoid", "HardSwish", "LeakyRelu"):
        add(Case(op, op, {"x": _f(3, 5, low=-6, high=6)}))
    add(Case("HardSigmoid-alpha", "HardSigmoid", {"x": _f(7)}, attributes={"alpha": 0.5,
                                                                        "beta": 0.25}))
    add(Case("LeakyRelu-alpha", "LeakyRelu", {"x": _f(7)}, attributes={"alpha": 0.3}))
    add(Case("MatMul-2d", "MatMul", {"a": _f(3, 4), "b": _f(4, 5)}))
    add(Case("MatMul-batch-broadcast", "MatMul", {"a": _f(2, 1, 3, 4), "b": _f(3, 4, 2)}))
    add(Case("MatMul-1d-2d", "MatMul", {"a": _f(4), "b": _f(4, 3)}))
    add(Case("MatMul-2d-1d", "MatMul", {"a": _f(2, 3, 4), "b": _f(4)}))
    add(Case("Gemm", "Gemm", {"a": _f(3, 4), "b": _f(4, 5), "c": _f(5)}))
    add(Case("Gemm-trans-alpha-beta", "Gemm", {"a": _f(4, 3), "b": _f(5, 4), "c": _f(3, 1)},
             attributes={"transA": 1, "transB": 1, "alpha": 0.5, "beta": 2.0}))
    add(Case("Gemm-no-c", "Gemm", {"a": _f(2, 6), "b": _f(6, 3)}))
    add(Case("Gemm-tiles-and-tails", "Gemm", {"a": _f(9, 300), "b": _f(7, 300), "c": _f(7)},
             attributes={"transB": 1}))
    add(Case("MatMul-tiles-and-tails", "MatMul", {"a": _f(2, 6, 257), "b": _f(257, 5)}))
    add(Case("Sign", "Sign", {"x": np.array([-2, 0, 3.5], f32)}))
    add(Case("Round-half-even", "Round",
             {"x": np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.4, -2.6, 3.7], f32)}))
    add(Case("Identity", "Identity", {"x": _i(2, 2)}))
    add(Case("Where", "Where", {"c": bools["a"], "x": _f(2, 3), "y": _f(3)}))
    add(Case("Where-i64", "Where", {"c": bools["a"][:, :1], "x": _i(2, 3), "y": _i(1)}))
    add(Case("Clip-inputs", "Clip", {"x": _f(4, 4), "lo": np.array(-1, f32),
                                     "hi": np.array(0.5, f32)}))
    add(Case("Clip-min-only", "Clip", {"x": _f(6), "lo": np.array(0, f32)}))
    add(Case("Clip-i64", "Clip", {"x": _i(6), "lo": np.array(-2, i64), "hi": np.array(3, i64)}))
    add(Case("Clip-attributes-opset6", "Clip", {"x": _f(5)}, opset=6,
             attributes={"min": -0.5, "max": 1.0}))
    for op in ("Min", "Max", "Sum", "Mean"):
        add(Case(f"{op}-3-inputs", op, {"a": _f(2, 3), "b": _f(3), "c": _f(2, 1)}))
    add(Case("Max-i64", "Max", {"a": _i(4), "b": _i(4)}))
    add(Case("Softmax-13", "Softmax", {"x": _f(2, 3, 4)}, attributes={"axis": 1}))
    add(Case("Softmax-last", "Softmax", {"x": _f(3, 7)}))
    add(Case("Softmax-11-coerced", "Softmax", {"x": _f(2, 3, 4)}, opset=11))
    for op in ("ReduceMax", "ReduceMin", "ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1",
               "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"):
        x = _f(2, 3, 4, low=0.5, high=1.5)
        add(Case(f"{op}-18-axes", op, {"x": x, "axes": _ints(0, -1)}, opset=18,
                 constants=("axes",)))
        add(Case(f"{op}-18-all-nokeep", op, {"x": x}, opset=18, attributes={"keepdims": 0}))
        add(Case(f"{op}-13-attr", op, {"x": x}, opset=11, attributes={"axes": [1]}))
    add(Case("ReduceSum-13-input", "ReduceSum", {"x": _f(3, 4), "axes": _ints(1)},
             attributes={"keepdims": 0}, opset=13))
    add(Case("ReduceSum-noop", "ReduceSum", {"x": _f(3, 4), "axes": np.zeros(0, i64)},
             attributes={"noop_with_empty_axes": 1}, opset=13))
    add(Case("ReduceLogSumExp-large", "ReduceLogSumExp", {"x": _f(3, 4, low=80, high=120)},
             opset=18))
    add(Case("ReduceMax-i64", "ReduceMax", {"x": _i(3, 4)}, opset=18,
             attributes={"keepdims": 0}))
    ties = np.array([[1, 3, 3, 0], [2, 2, 1, 2]], f32)
    for op in ("ArgMax", "ArgMin"):
        add(Case(f"{op}-ties", op, {"x": ties}, attributes={"axis": 1}))
        add(Case(f"{op}-last-nokeep", op, {"x": ties}, attributes={
            "axis": -1, "keepdims": 0, "select_last_index": 1}))
        add(Case(f"{op}-axis0", op, {"x": _f(3, 4)}))
    add(Case("CumSum", "CumSum", {"x": _f(3, 4), "axis": np.array(1, i64)}))
    add(Case("CumSum-exclusive-reverse", "CumSum", {"x": _i(3, 4), "axis": np.array(0, i64)},
             attributes={"exclusive": 1, "reverse": 1}))
    cases.extend(_shape_cases())
    return cases


def _shape_cases() -> list[Case]:
    cases: list[Case] = []
    add = cases.append
    x = _f(2, 3, 4)
    add(Case("Shape", "Shape", {"x": x}))
    add(Case("Shape-start-end", "Shape", {"x": x}, attributes={"start": 1, "end": -1}))
    add(Case("Size", "Size", {"x": x}))
    add(Case("Reshape-0-and-minus1", "Reshape", {"x": x, "s": _ints(0, -1)}))
    add(Case("Reshape-narrowed", "Reshape", {"x": _i(2, 6), "s": _ints(3, 2, 2)}, narrow=True))
    add(Case("Reshape-allowzero", "Reshape", {"x": np.zeros((0, 3), f32), "s": _ints(3, 0)},
             attributes={"allowzero": 1}, opset=14))
    add(Case("Flatten", "Flatten", {"x": x}, attributes={"axis": 2}))
    add(Case("Squeeze-input", "Squeeze", {"x": _f(1, 3, 1), "axes": _ints(-1)}))
    add(Case("Squeeze-all", "Squeeze", {"x": _f(1, 3, 1)}))
    add(Case("Squeeze-attr-11", "Squeeze", {"x": _f(1, 3, 1)}, attributes={"axes": [0]},
             opset=11))
    add(Case("Unsqueeze", "Unsqueeze", {"x": _f(3, 4), "axes": _ints(0, -1)},
             constants=("axes",)))
    add(Case("Unsqueeze-attr-11", "Unsqueeze", {"x": _f(3)}, attributes={"axes": [1]},
             opset=11))
    add(Case("Concat", "Concat", {"a": _f(2, 3), "b": _f(2, 1), "c": np.zeros((2, 0), f32)},
             attributes={"axis": -1}))
    add(Case("Concat-i64-axis0", "Concat", {"a": _i(1, 3), "b": _i(2, 3)},
             attributes={"axis": 0}))
    add(Case("Split-input", "Split", {"x": _f(2, 6), "s": _ints(1, 2, 3)}, outputs=3,
             attributes={"axis": 1}))
    add(Case("Split-equal", "Split", {"x": _f(6, 2)}, outputs=3))
    add(Case("Split-num-outputs-18", "Split", {"x": _f(7)}, outputs=3,
             attributes={"num_outputs": 3}, opset=18))
    add(Case("Split-attr-11", "Split", {"x": _f(5)}, outputs=2, attributes={"split": [2, 3]},
             opset=11))
    add(Case("Transpose", "Transpose", {"x": x}, attributes={"perm": [1, 2, 0]}))
    add(Case("Transpose-default", "Transpose", {"x": x}))
    for to in (1, 2, 3, 6, 7, 9, 11):
        add(Case(f"Cast-f32-to-{to}", "Cast", {"x": _f(7, low=-100, high=200)},
                 attributes={"to": to}))
    add(Case("Cast-i64-to-f32", "Cast", {"x": _i(5)}, attributes={"to": 1}))
    add(Case("Cast-bool-to-i64", "Cast", {"x": np.array([True, False])}, attributes={"to": 7}))
    add(Case("Cast-f32-to-f16", "Cast", {"x": _f(6)}, attributes={"to": 10}))
    add(Case("Constant-tensor", "Constant", {},
             attributes={"value": np.array([[1, 2], [3, 4]], np.int64)}))
    add(Case("Constant-floats", "Constant", {}, attributes={"value_floats": [0.5, -1.25]}))
    add(Case("Constant-int", "Constant", {}, attributes={"value_int": 7}))
    add(Case("ConstantOfShape", "ConstantOfShape", {"s": _ints(2, 3)},
             attributes={"value": np.array([5], np.int64)}))
    add(Case("ConstantOfShape-default", "ConstantOfShape", {"s": _ints(3)}))
    add(Case("ConstantOfShape-empty", "ConstantOfShape", {"s": _ints(0, 2)}))
    add(Case("Range-i64", "Range", {"a": np.array(2, i64), "b": np.array(11, i64),
                                    "d": np.array(3, i64)}))
    add(Case("Range-f32", "Range", {"a": np.array(0.1, f32), "b": np.array(2.0, f32),
                                    "d": np.array(0.3, f32)}))
    add(Case("Range-empty", "Range", {"a": np.array(5, i64), "b": np.array(1, i64),
                                      "d": np.array(1, i64)}))
    add(Case("Expand", "Expand", {"x": _f(3, 1), "s": _ints(2, 1, 4)}))
    add(Case("Expand-smaller-shape", "Expand", {"x": _f(2, 3), "s": _ints(3)}))
    add(Case("Tile", "Tile", {"x": _f(2, 3), "r": _ints(2, 3)}))
    slice_x = _f(5, 6)
    add(Case("Slice", "Slice", {"x": slice_x, "s": _ints(1, -4), "e": _ints(4, 100)}))
    add(Case("Slice-axes-steps", "Slice", {"x": slice_x, "s": _ints(-1), "e": _ints(-100),
                                           "a": _ints(1), "t": _ints(-2)}))
    add(Case("Slice-int64-max", "Slice", {"x": slice_x, "s": _ints(2),
                                          "e": _ints(2**63 - 1), "a": _ints(0)},
             constants=("s", "e", "a")))
    add(Case("Slice-empty", "Slice", {"x": slice_x, "s": _ints(4), "e": _ints(2),
                                      "a": _ints(0)}))
    add(Case("Slice-attr-9", "Slice", {"x": slice_x}, opset=9,
             attributes={"starts": [1, 0], "ends": [3, 5], "axes": [0, 1]}))
    data = _f(4, 3, 2)
    add(Case("Gather-axis1", "Gather", {"x": data, "i": _ints(2, -1, 0)},
             attributes={"axis": 1}))
    add(Case("Gather-2d-indices", "Gather", {"x": data, "i": _ints(3, 0, 1, 1).reshape(2, 2)}))
    add(Case("Gather-scalar-index", "Gather", {"x": data, "i": np.array(-1, i64)},
             narrow=True))
    add(Case("GatherElements", "GatherElements", {"x": _f(3, 4), "i": _i(3, 2, low=-4,
                                                                         high=4)},
             attributes={"axis": 1}))
    add(Case("GatherND", "GatherND", {"x": data, "i": _ints(1, 2, 3, 0).reshape(2, 2)}))
    add(Case("GatherND-batch", "GatherND", {"x": data, "i": _ints(2, 0, 1, 1).reshape(4, 1)},
             attributes={"batch_dims": 1}))
    add(Case("ScatterND", "ScatterND", {"x": _f(4, 3), "i": _ints(2, 0).reshape(2, 1),
                                        "u": _f(2, 3)}))
    add(Case("ScatterND-add", "ScatterND", {"x": _f(4, 3), "i": _ints(1, 1).reshape(2, 1),
                                            "u": _f(2, 3)},
             attributes={"reduction": "add"}, opset=16))
    add(Case("ScatterElements", "ScatterElements", {
        "x": _f(3, 4), "i": _ints(0, 2, 1, 3, 0, 1).reshape(3, 2), "u": _f(3, 2)},
        attributes={"axis": 1}))
    add(Case("ScatterElements-max", "ScatterElements", {
        "x": _f(3, 2), "i": _ints(0, 0, 2, 2).reshape(2, 2), "u": _f(2, 2)},
        attributes={"reduction": "max"}, opset=18))
    add(Case("OneHot", "OneHot", {"i": _ints(0, 2, -1, 5), "d": np.array(4, i64),
                                  "v": np.array([0, 1], f32)}))
    add(Case("OneHot-axis0", "OneHot", {"i": _ints(1, 0, 2).reshape(3, 1),
                                        "d": np.array(3, i64), "v": np.array([-1, 7], f32)},
             attributes={"axis": 0}))
    pad_x = _f(2, 3)
    add(Case("Pad-constant", "Pad", {"x": pad_x, "p": _ints(1, 0, 0, 2),
                                     "v": np.array(9.5, f32)}))
    add(Case("Pad-crop", "Pad", {"x": pad_x, "p": _ints(0, -1, 1, 0)}))
    for mode in ("edge", "reflect"):
        add(Case(f"Pad-{mode}", "Pad", {"x": pad_x, "p": _ints(1, 2, 1, 2)},
                 attributes={"mode": mode}))
    add(Case("Pad-axes-18", "Pad", {"x": pad_x, "p": _ints(2, 1), "v": None,
                                    "a": _ints(-1)}, opset=18))
    add(Case("Pad-attr-2", "Pad", {"x": pad_x}, opset=2,
             attributes={"pads": [0, 1, 0, 1], "value": -2.0}))
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    folder: Path = tmp_path_factory.mktemp("host_js")
    return dict(zip((c.id for c in CASES), run_cases(CASES, folder), strict=True))


@needs_node
@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_matches_onnxruntime(case: Case, results: dict[str, dict[str, Any]]) -> None:
    check(case, results[case.id])


def test_case_ids_are_unique() -> None:
    assert len({c.id for c in CASES}) == len(CASES)
