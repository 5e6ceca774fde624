"""SkipLayerNormalization, SkipSimplifiedLayerNormalization (com.microsoft),
SimplifiedLayerNormalization and LayerNormalization opsets 1-16 (onnxruntime's default-domain
contrib schemas; their com.microsoft aliases are compared with the default-domain node) vs
onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from tests.op_mappings.onnx.contrib.oracle import check_ms, expect_error, ms_model, rng_array
from tests.op_mappings.onnx.harness import statuses

B, S, H = 2, 3, 16
X = rng_array(B, S, H, seed=1)
SKIP = rng_array(B, S, H, seed=2)
GAMMA = rng_array(H, seed=3)
BETA = rng_array(H, seed=4)
BIAS = rng_array(H, seed=5)
ALL = ("y", "mean", "inv", "sum")


@pytest.mark.parametrize("outputs", [("y",), ALL, ("y", "", "", "sum"), ("y", "mean")])
@pytest.mark.parametrize("beta,bias", [(True, True), (False, False), (True, False),
                                       (False, True)])
def test_skip_layer_norm(outputs: tuple[str, ...], beta: bool, bias: bool) -> None:
    items = [("x", X), ("skip", SKIP), ("gamma", GAMMA), ("beta", BETA if beta else None),
             ("bias", BIAS if bias else None)]
    res = check_ms("SkipLayerNormalization", items, {"epsilon": 1e-3}, outputs=outputs,
                   constants=("gamma", "beta", "bias"), rtol=1e-4, atol=1e-5)
    if outputs == ("y",):
        # add(s), layerNormalization: no statistics decomposition
        assert "reduceMean" not in str(res.report.to_dict())


@pytest.mark.parametrize("skip_shape", [(1, S, H), (S, H)])
def test_skip_layer_norm_broadcast_skip(skip_shape: tuple[int, ...]) -> None:
    items = [("x", X), ("skip", rng_array(*skip_shape, seed=6)), ("gamma", GAMMA),
             ("beta", BETA), ("bias", BIAS)]
    check_ms("SkipLayerNormalization", items, outputs=ALL, rtol=1e-4, atol=1e-5)


def test_skip_layer_norm_2d_default_epsilon() -> None:
    items = [("x", X[0]), ("skip", SKIP[0]), ("gamma", GAMMA), ("beta", BETA)]
    check_ms("SkipLayerNormalization", items, outputs=("y", "mean", "inv"), rtol=1e-4,
             atol=1e-5)


@pytest.mark.parametrize("outputs", [("y",), ALL])
def test_skip_layer_norm_float16(outputs: tuple[str, ...]) -> None:
    items = [(n, v.astype(np.float16)) for n, v in
             [("x", X), ("skip", SKIP), ("gamma", GAMMA), ("beta", BETA), ("bias", BIAS)]]
    check_ms("SkipLayerNormalization", items, outputs=outputs, constants=("gamma",))


@pytest.mark.parametrize("outputs", [("y",), ALL, ("y", "", "inv")])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_skip_simplified_layer_norm(outputs: tuple[str, ...], bias: bool, dtype: str) -> None:
    items = [("x", X.astype(dtype)), ("skip", SKIP.astype(dtype)),
             ("gamma", GAMMA.astype(dtype)), ("bias", BIAS.astype(dtype) if bias else None)]
    check_ms("SkipSimplifiedLayerNormalization", items, {"epsilon": 1e-4}, outputs=outputs,
             rtol=1e-4, atol=1e-5)


def test_skip_simplified_layer_norm_broadcast_skip() -> None:
    items = [("x", X), ("skip", rng_array(S, H, seed=7)), ("gamma", GAMMA)]
    check_ms("SkipSimplifiedLayerNormalization", items, outputs=ALL, rtol=1e-4, atol=1e-5)


X4 = rng_array(2, 3, 4, 5, seed=8)


@pytest.mark.parametrize("axis", [-1, 1, 2, 0])
@pytest.mark.parametrize("outputs", [("y",), ("y", "inv")])
@pytest.mark.parametrize("domain", ["", "com.microsoft"])
def test_simplified_layer_norm(axis: int, outputs: tuple[str, ...], domain: str) -> None:
    shape = X4.shape[axis:] if axis != -1 else X4.shape[-1:]
    items = [("x", X4), ("s", rng_array(*shape, seed=9))]
    check_ms("SimplifiedLayerNormalization", items, {"axis": axis, "epsilon": 1e-3},
             outputs=outputs, constants=("s",), domain=domain, oracle_domain="", opset=13,
             rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("x_type,s_type", [("float16", "float16"), ("float16", "float32"),
                                           ("float32", "float16")])
def test_simplified_layer_norm_types(x_type: str, s_type: str) -> None:
    items = [("x", X4.astype(x_type)), ("s", rng_array(5, seed=9).astype(s_type))]
    check_ms("SimplifiedLayerNormalization", items, outputs=("y", "inv"), domain="",
             opset=13, rtol=1e-3, atol=1e-3)


def test_simplified_layer_norm_broadcast_scale() -> None:
    items = [("x", X4), ("s", rng_array(1, 5, seed=9))]
    check_ms("SimplifiedLayerNormalization", items, {"axis": 2}, domain="", opset=13,
             rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("axis", [-1, 1, 3])
@pytest.mark.parametrize("outputs", [("y",), ("y", "mean", "inv"), ("y", "", "inv")])
@pytest.mark.parametrize("bias", [True, False])
def test_layer_norm_opset13(axis: int, outputs: tuple[str, ...], bias: bool) -> None:
    shape = X4.shape[axis:] if axis != -1 else X4.shape[-1:]
    items = [("x", X4), ("s", rng_array(*shape, seed=10)),
             ("b", rng_array(*shape, seed=11) if bias else None)]
    res = check_ms("LayerNormalization", items, {"axis": axis, "epsilon": 1e-3},
                   outputs=outputs, constants=("s", "b"), domain="", opset=13, rtol=1e-4,
                   atol=1e-5)
    assert statuses(res)["LayerNormalization"] == (
        ["native"] if outputs == ("y",) else ["decomposed"])


@pytest.mark.parametrize("opset", [1, 16])
def test_layer_norm_defaults_and_alias(opset: int) -> None:
    items = [("x", X4), ("s", rng_array(5, seed=10)), ("b", rng_array(5, seed=11))]
    check_ms("LayerNormalization", items, outputs=("y", "mean", "inv"), domain="",
             opset=opset, rtol=1e-4, atol=1e-5)
    check_ms("LayerNormalization", items, outputs=("y", "mean", "inv"),
             domain="com.microsoft", oracle_domain="", opset=opset, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("x_type,s_type", [("float16", "float16"), ("float16", "float32"),
                                           ("float32", "float16")])
@pytest.mark.parametrize("outputs", [("y",), ("y", "mean", "inv")])
def test_layer_norm_opset13_types(x_type: str, s_type: str, outputs: tuple[str, ...]) -> None:
    items = [("x", X4.astype(x_type)), ("s", rng_array(5, seed=10).astype(s_type)),
             ("b", rng_array(5, seed=11).astype(s_type))]
    check_ms("LayerNormalization", items, outputs=outputs, domain="", opset=13, rtol=1e-3,
             atol=1e-3)


def test_malformed_nodes() -> None:
    sln = "SkipLayerNormalization"
    expect_error(ms_model(sln, [("x", X), ("skip", rng_array(B, 2, H)), ("gamma", GAMMA)]),
                 "invalid_model", "skip of shape [2, 2, 16] does not broadcast")
    expect_error(ms_model(sln, [("x", X[0]), ("skip", rng_array(1, H)), ("gamma", GAMMA)]),
                 "invalid_model", "skip of shape [1, 16] does not broadcast")
    expect_error(ms_model(sln, [("x", X), ("skip", SKIP), ("gamma", rng_array(8))]),
                 "invalid_model", "gamma has shape [8], expected [16]")
    expect_error(ms_model(sln, [("x", X[None]), ("skip", SKIP[None]), ("gamma", GAMMA)]),
                 "invalid_model", "input must be 2-D or 3-D")
    expect_error(ms_model(sln, [("x", X), ("skip", SKIP)]), "invalid_model",
                 "takes 3 to 5 inputs, the node has 2")
    expect_error(ms_model(sln, [("x", X), ("skip", SKIP), ("gamma", GAMMA)],
                          outputs=("y", "m", "v", "s", "t")),
                 "invalid_model", "has 1 to 4 outputs, the node has 5")
    expect_error(ms_model(sln, [("x", X), ("skip", SKIP), ("gamma", GAMMA)],
                          {"epsilon": "tiny"}), "invalid_model", "'epsilon' must be a float")
    expect_error(ms_model(sln, [("x", X), ("skip", SKIP), ("gamma", GAMMA)],
                          {"epsilon": -1e-5}), "invalid_model", "epsilon must be >= 0")
    expect_error(ms_model("SkipSimplifiedLayerNormalization",
                          [("x", X), ("skip", SKIP), ("gamma", GAMMA), ("b", BIAS),
                           ("e", BIAS)]), "invalid_model", "takes 3 to 4 inputs")
    expect_error(ms_model(sln, [("x", X), ("skip", SKIP.astype(np.float16)),
                                ("gamma", GAMMA)]),
                 "invalid_model", "skip has data type float16, input has float32")
    expect_error(ms_model("SimplifiedLayerNormalization", [("x", X4), ("s", rng_array(4))],
                          domain="", opset=13),
                 "invalid_model", "scale of shape [4] does not broadcast")
    expect_error(ms_model("LayerNormalization", [("x", X4), ("s", rng_array(5))],
                          {"axis": 4}, domain="", opset=13),
                 "invalid_model", "axis 4 is out of range for rank 4")
    expect_error(ms_model("LayerNormalization", [("x", X4), ("s", rng_array(5))],
                          {"stash_type": 0}, domain="", opset=13),
                 "unsupported_attribute", "stash_type=0")
