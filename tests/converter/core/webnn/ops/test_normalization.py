"""Validation of batchNormalization, instanceNormalization and layerNormalization: every spec
TypeError rule, the output descriptors, the options stored in the graph, plus the limit
samples."""

from __future__ import annotations

import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLTypeError
from tests.converter.core.webnn.limit_samples import Sample


def _batch_norm_sample(b: MLGraphBuilder, t: dict[str, str]) -> object:
    x = b.input("x", [2, 3, 4], t["input"])
    return b.batch_normalization(x, b.input("m", [3], t["mean"]), b.input("v", [3], t["variance"]),
                                 scale=b.input("s", [3], t["scale"]),
                                 bias=b.input("b", [3], t["bias"]))


SAMPLES: dict[str, Sample] = {
    "batchNormalization": Sample(_batch_norm_sample,
                                 groups=[("input", "mean", "variance", "scale", "bias")]),
    "instanceNormalization": Sample(
        lambda b, t: b.instance_normalization(b.input("x", [1, 2, 3, 3], t["input"]),
                                              scale=b.input("s", [2], t["scale"]),
                                              bias=b.input("b", [2], t["bias"])),
        groups=[("input", "scale", "bias")]),
    "layerNormalization": Sample(
        lambda b, t: b.layer_normalization(b.input("x", [2, 3, 4], t["input"]),
                                           scale=b.input("s", [3, 4], t["scale"]),
                                           bias=b.input("b", [3, 4], t["bias"])),
        groups=[("input", "scale", "bias")]),
}


@pytest.fixture
def b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


# -- batchNormalization ------------------------------------------------------------------------
def test_batch_normalization_descriptor_and_options(b: MLGraphBuilder) -> None:
    x = b.input("x", [2, 3, 4], "float16")
    m, v = b.input("m", [3], "float16"), b.input("v", [3], "float16")
    y = b.batch_normalization(x, m, v)
    assert (y.shape, y.data_type) == ((2, 3, 4), "float16")
    assert y.operator is not None
    assert dict(y.operator.options) == {"axis": 1, "epsilon": 1e-5}
    assert y.operator.args == (x, m, v)
    s, c = b.input("s", [4], "float16"), b.input("c", [4], "float16")
    m4, v4 = b.input("m4", [4], "float16"), b.input("v4", [4], "float16")
    z = b.batch_normalization(x, m4, v4, scale=s, bias=c, axis=2, epsilon=0.5, label="bn")
    assert dict(z.operator.options) == {"scale": s, "bias": c, "axis": 2,  # type: ignore[union-attr]
                                        "epsilon": 0.5, "label": "bn"}
    # Rank 1 with axis 0 is allowed.
    assert b.batch_normalization(b.input("r", [3], "float16"), m, v, axis=0).shape == (3,)


def test_batch_normalization_rules(b: MLGraphBuilder) -> None:
    op = "batchNormalization"
    x = b.input("x", [2, 3, 4], "float32")
    m, v = b.input("m", [3], "float32"), b.input("v", [3], "float32")
    bn = b.batch_normalization
    with pytest.raises(MLTypeError, match=rf"{op}: axis \(3\) must be less than the input rank \(3\)"):
        bn(x, m, v, axis=3)
    with pytest.raises(MLTypeError, match=rf"{op}: axis \(1\) must be less than the input rank \(1\)"):
        bn(b.input("r", [3], "float32"), m, v)  # default axis 1 needs rank >= 2
    with pytest.raises(MLTypeError, match=rf"{op}: axis .* outside the unsigned long range"):
        bn(x, m, v, axis=-1)
    with pytest.raises(MLTypeError, match=rf"{op}: mean shape \[4\] must be \[3\]"):
        bn(x, b.input("m4", [4], "float32"), v)
    with pytest.raises(MLTypeError, match=rf"{op}: variance shape \[4\] must be \[3\]"):
        bn(x, m, b.input("v4", [4], "float32"))
    with pytest.raises(MLTypeError, match=rf"{op}: scale shape \[2\] must be \[3\]"):
        bn(x, m, v, scale=b.input("s2", [2], "float32"))
    with pytest.raises(MLTypeError, match=rf"{op}: bias shape \[1\] must be \[3\]"):
        bn(x, m, v, bias=b.input("b1", [1], "float32"))
    with pytest.raises(MLTypeError, match=rf"{op}: mean shape \[3\] must be \[4\]"):
        bn(x, m, v, axis=2)
    with pytest.raises(MLTypeError, match=rf"{op}: mean rank 2 is outside the supported range"):
        bn(x, b.input("m2", [1, 3], "float32"), v)
    with pytest.raises(MLTypeError, match=rf"{op}: variance rank 0 is outside the supported range"):
        bn(x, m, b.input("v0", [], "float32"))
    with pytest.raises(MLTypeError, match=rf"{op}: scale rank 2 is outside the supported range"):
        bn(x, m, v, scale=b.input("s23", [3, 1], "float32"))
    for role, kwargs in (("mean", {}), ("variance", {}), ("scale", {}), ("bias", {})):
        h = b.input(f"h_{role}", [3], "float16")
        args = [x, h if role == "mean" else m, h if role == "variance" else v]
        if role in ("scale", "bias"):
            kwargs = {role: h}
        with pytest.raises(MLTypeError, match=rf"{op}: {role} data type float16 must equal "
                                              "input data type float32"):
            bn(*args, **kwargs)
    with pytest.raises(MLTypeError, match=rf"{op}: input data type int32 is not one of"):
        bn(b.input("i", [2, 3], "int32"), b.input("mi", [3], "int32"), b.input("vi", [3], "int32"))
    with pytest.raises(MLTypeError, match=rf"{op}: input rank 0 is outside the supported range"):
        bn(b.input("s0", [], "float32"), m, v, axis=0)
    for eps in (float("nan"), float("inf")):
        with pytest.raises(MLTypeError, match=rf"{op}: epsilon must be a finite number"):
            bn(x, m, v, epsilon=eps)
    with pytest.raises(MLTypeError, match=rf"{op}: epsilon must be a number"):
        bn(x, m, v, epsilon="1e-5")
    with pytest.raises(MLTypeError, match=rf"{op}: mean must be an MLOperand"):
        bn(x, [0.0, 0.0, 0.0], v)
    other = MLGraphBuilder(ML().create_context())
    with pytest.raises(MLTypeError, match=rf"{op}: scale was created by another MLGraphBuilder"):
        bn(x, m, v, scale=other.input("s", [3], "float32"))


# -- instanceNormalization ---------------------------------------------------------------------
def test_instance_normalization_descriptor_and_options(b: MLGraphBuilder) -> None:
    x = b.input("x", [1, 2, 3, 5], "float32")
    y = b.instance_normalization(x)
    assert (y.shape, y.data_type) == ((1, 2, 3, 5), "float32")
    assert dict(y.operator.options) == {"epsilon": 1e-5, "layout": "nchw"}  # type: ignore[union-attr]
    s, c = b.input("s", [5], "float32"), b.input("c", [5], "float32")
    z = b.instance_normalization(x, scale=s, bias=c, layout="nhwc", epsilon=1e-3)
    assert dict(z.operator.options) == {"scale": s, "bias": c, "epsilon": 1e-3,  # type: ignore[union-attr]
                                        "layout": "nhwc"}


def test_instance_normalization_rules(b: MLGraphBuilder) -> None:
    op = "instanceNormalization"
    x = b.input("x", [1, 2, 3, 5], "float32")
    inorm = b.instance_normalization
    with pytest.raises(MLTypeError, match=rf"{op}: input rank 3 is outside the supported range"):
        inorm(b.input("r3", [1, 2, 3], "float32"))
    with pytest.raises(MLTypeError, match=rf"{op}: input rank 5 is outside the supported range"):
        inorm(b.input("r5", [1, 2, 3, 4, 5], "float32"))
    with pytest.raises(MLTypeError, match=rf"{op}: input data type int32 is not one of"):
        inorm(b.input("i", [1, 2, 3, 5], "int32"))
    with pytest.raises(MLTypeError, match=rf"{op}: layout 'ncwh' is not one of"):
        inorm(x, layout="ncwh")
    with pytest.raises(MLTypeError, match=rf"{op}: scale shape \[5\] must be \[2\]"):
        inorm(x, scale=b.input("s5", [5], "float32"))
    with pytest.raises(MLTypeError, match=rf"{op}: bias shape \[2\] must be \[5\]"):
        inorm(x, bias=b.input("b2", [2], "float32"), layout="nhwc")
    with pytest.raises(MLTypeError, match=rf"{op}: scale rank 2 is outside the supported range"):
        inorm(x, scale=b.input("s12", [1, 2], "float32"))
    with pytest.raises(MLTypeError, match=rf"{op}: bias data type float16 must equal input"):
        inorm(x, bias=b.input("h", [2], "float16"))
    with pytest.raises(MLTypeError, match=rf"{op}: scale data type float16 must equal input"):
        inorm(x, scale=b.input("h2", [2], "float16"))
    with pytest.raises(MLTypeError, match=rf"{op}: epsilon must be a finite number"):
        inorm(x, epsilon=float("-inf"))


# -- layerNormalization ------------------------------------------------------------------------
def test_layer_normalization_descriptor_and_options(b: MLGraphBuilder) -> None:
    x = b.input("x", [2, 3, 4], "float16")
    y = b.layer_normalization(x)
    assert (y.shape, y.data_type) == ((2, 3, 4), "float16")
    assert dict(y.operator.options) == {"axes": [1, 2], "epsilon": 1e-5}  # type: ignore[union-attr]
    # scale/bias follow the order of the given axes.
    s = b.input("s", [4, 2], "float16")
    z = b.layer_normalization(x, scale=s, axes=[2, 0], epsilon=0.25)
    assert dict(z.operator.options) == {"scale": s, "axes": [2, 0], "epsilon": 0.25}  # type: ignore[union-attr]
    # Default axes for rank <= 1 are [] and scale/bias are then scalars.
    for shape in ([5], []):
        r = b.layer_normalization(b.input(f"r{len(shape)}", shape, "float16"),
                                  bias=b.input(f"b{len(shape)}", [], "float16"))
        assert r.shape == tuple(shape)
        assert r.operator.options["axes"] == []  # type: ignore[union-attr]
    assert b.layer_normalization(x, axes=[]).shape == (2, 3, 4)


def test_layer_normalization_rules(b: MLGraphBuilder) -> None:
    op = "layerNormalization"
    x = b.input("x", [2, 3, 4], "float32")
    ln = b.layer_normalization
    with pytest.raises(MLTypeError, match=rf"{op}: axes item 3 must be less than the input rank \(3\)"):
        ln(x, axes=[3])
    with pytest.raises(MLTypeError, match=rf"{op}: axes \[2, 2\] contains duplicate axes"):
        ln(x, axes=[2, 2])
    with pytest.raises(MLTypeError, match=rf"{op}: axes item .* outside the unsigned long range"):
        ln(x, axes=[-1])
    with pytest.raises(MLTypeError, match=rf"{op}: scale shape \[4, 3\] must be \[3, 4\]"):
        ln(x, scale=b.input("s43", [4, 3], "float32"))
    with pytest.raises(MLTypeError, match=rf"{op}: bias shape \[3, 4\] must be \[4, 3\]"):
        ln(x, bias=b.input("b34", [3, 4], "float32"), axes=[2, 1])
    with pytest.raises(MLTypeError, match=rf"{op}: scale shape \[12\] must be \[3, 4\]"):
        ln(x, scale=b.input("s12", [12], "float32"))
    with pytest.raises(MLTypeError, match=rf"{op}: bias shape \[1\] must be \[\]"):
        ln(b.input("r1", [3], "float32"), bias=b.input("b1", [1], "float32"))
    with pytest.raises(MLTypeError, match=rf"{op}: scale data type float16 must equal input"):
        ln(x, scale=b.input("h", [3, 4], "float16"))
    with pytest.raises(MLTypeError, match=rf"{op}: bias data type float16 must equal input"):
        ln(x, bias=b.input("h2", [3, 4], "float16"))
    with pytest.raises(MLTypeError, match=rf"{op}: input data type int32 is not one of"):
        ln(b.input("i", [2, 3], "int32"))
    with pytest.raises(MLTypeError, match=rf"{op}: epsilon must be a finite number"):
        ln(x, epsilon=float("nan"))
