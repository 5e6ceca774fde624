"""ONNX LayerNormalization (with Mean/InvStdDev), RMSNormalization, InstanceNormalization,
GroupNormalization (18/21), MeanVarianceNormalization, LpNormalization, LRN vs
onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.harness import check_node, rand, statuses

X = rand(2, 4, 3, 5, seed=1)


@pytest.mark.parametrize("axis", [-1, 1, 2])
@pytest.mark.parametrize("outputs", [("y",), ("y", "mean", "inv")])
@pytest.mark.parametrize("bias", [True, False])
def test_layer_normalization(axis: int, outputs: tuple[str, ...], bias: bool) -> None:
    shape = X.shape[axis:] if axis != -1 else X.shape[-1:]
    items = [("x", X), ("s", rand(*shape, seed=2)), ("b", rand(*shape, seed=3) if bias else None)]
    res = check_node("LayerNormalization", items, {"axis": axis, "epsilon": 1e-3}, opset=17,
                     outputs=outputs, constants=("s", "b"), rtol=1e-4, atol=1e-5)
    assert statuses(res)["LayerNormalization"] == (
        ["native"] if len(outputs) == 1 else ["decomposed"])


def test_layer_normalization_broadcast_scale_float16() -> None:
    items = [("x", X.astype(np.float16)), ("s", rand(1, 5, seed=2).astype(np.float16))]
    check_node("LayerNormalization", items, {"axis": 2}, opset=17)


@pytest.mark.parametrize("axis", [-1, 1])
def test_rms_normalization(axis: int) -> None:
    shape = X.shape[axis:] if axis != -1 else X.shape[-1:]
    try:
        check_node("RMSNormalization", [("x", X), ("s", rand(*shape, seed=2))],
                   {"axis": axis}, opset=23, rtol=1e-4, atol=1e-5)
    except Exception as exc:  # onnxruntime without opset 23 RMSNormalization
        if "NOT_IMPLEMENTED" in str(exc) or "not supported" in str(exc).lower():
            pytest.skip(f"onnxruntime: {exc}")
        raise


@pytest.mark.parametrize("shape", [(2, 4, 6), (2, 4, 3, 5), (1, 3, 2, 2, 3)])
def test_instance_normalization(shape: tuple[int, ...]) -> None:
    x = rand(*shape, seed=4)
    items = [("x", x), ("s", rand(shape[1], seed=5)), ("b", rand(shape[1], seed=6))]
    check_node("InstanceNormalization", items, {"epsilon": 1e-4}, opset=6, rtol=1e-4,
               atol=1e-5)


@pytest.mark.parametrize("opset", [18, 21])
@pytest.mark.parametrize("const", [True, False])
def test_group_normalization(opset: int, const: bool) -> None:
    n = 2 if opset == 18 else 4
    items = [("x", X), ("s", rand(n, seed=5)), ("b", rand(n, seed=6))]
    check_node("GroupNormalization", items, {"num_groups": 2, "epsilon": 1e-4}, opset=opset,
               constants=("s", "b") if const else (), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axes", [None, [1], [0, 1, 2, 3]])
def test_mvn(axes: list[int] | None) -> None:
    attrs = {} if axes is None else {"axes": axes}
    check_node("MeanVarianceNormalization", [("x", X)], attrs, opset=13, rtol=1e-4,
               atol=1e-5)


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("axis", [-1, 1])
def test_lp_normalization(p: int, axis: int) -> None:
    x = X.copy()
    x[0, 0] = 0
    check_node("LpNormalization", [("x", x)], {"p": p, "axis": axis}, opset=1)


@pytest.mark.parametrize("size", [1, 3, 5, 7])  # onnxruntime: odd sizes only
def test_lrn(size: int) -> None:
    check_node("LRN", [("x", X)], {"size": size, "alpha": 0.3, "beta": 0.6, "bias": 1.5},
               opset=13, rtol=1e-5, atol=1e-6)
