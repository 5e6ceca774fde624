"""ONNX BatchNormalization vs onnxruntime (inference) and the ONNX definition (training mode)."""

from __future__ import annotations

import pytest

from tests.op_mappings.onnx.harness import check, rand


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3), (1, 3, 7)])
@pytest.mark.parametrize("opset", [9, 15])
@pytest.mark.parametrize("epsilon", [None, 1e-3])
def test_batch_normalization(shape: tuple[int, ...], opset: int, epsilon: float | None) -> None:
    c = shape[1]
    inputs = {"x": rand(*shape), "scale": rand(c, seed=1), "bias": rand(c, seed=2),
              "mean": rand(c, seed=3), "var": rand(c, low=0.5, high=2.0, seed=4)}
    attrs = {} if epsilon is None else {"epsilon": epsilon}
    check("BatchNormalization", inputs, attrs, opset=opset,
          constants=["scale", "bias", "mean", "var"])


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (4, 3), (2, 3, 7)])
@pytest.mark.parametrize("outputs", [("y", "rm", "rv"), ("y",)])
def test_training_mode(shape: tuple[int, ...], outputs: tuple[str, ...]) -> None:
    """training_mode = 1: batch statistics; running mean/var with momentum; against
    onnxruntime and the ONNX definition written in float64."""
    import numpy as np

    import converter
    from tests.op_mappings.onnx.harness import check_node, node_model

    c = shape[1]
    items = [("x", rand(*shape)), ("scale", rand(c, seed=1)), ("bias", rand(c, seed=2)),
             ("mean", rand(c, seed=3)), ("var", rand(c, low=0.5, high=2.0, seed=4))]
    model = node_model("BatchNormalization", items,
                       {"training_mode": 1, "momentum": 0.8, "epsilon": 1e-3}, opset=15,
                       outputs=outputs)
    if len(outputs) == 3:  # onnxruntime insists on the running statistics outputs
        check_node("BatchNormalization", items, {"training_mode": 1, "momentum": 0.8,
                                                 "epsilon": 1e-3}, opset=15, outputs=outputs)
    got = converter.convert(model).run(dict(items))
    v = {k: a.astype(np.float64) for k, a in items}
    axes = tuple(i for i in range(len(shape)) if i != 1)
    bshape = [1] * len(shape)
    bshape[1] = c
    mean, var = v["x"].mean(axis=axes), v["x"].var(axis=axes)
    y = ((v["x"] - mean.reshape(bshape)) / np.sqrt(var.reshape(bshape) + 1e-3)
         * v["scale"].reshape(bshape) + v["bias"].reshape(bshape))
    want = {"y": y, "rm": v["mean"] * 0.8 + mean * 0.2, "rv": v["var"] * 0.8 + var * 0.2}
    assert list(got) == list(outputs)
    for name in outputs:
        assert got[name].dtype == np.float32
        np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5, err_msg=name)
