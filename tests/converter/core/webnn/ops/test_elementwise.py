"""Validation of the element-wise family: every spec TypeError rule, plus the limit samples."""

from __future__ import annotations

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLTypeError
from tests.converter.core.webnn.limit_samples import Sample

BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "max", "min": "min",
          "pow": "pow", "equal": "equal", "notEqual": "not_equal", "greater": "greater",
          "greaterOrEqual": "greater_or_equal", "lesser": "lesser",
          "lesserOrEqual": "lesser_or_equal", "logicalAnd": "logical_and",
          "logicalOr": "logical_or", "logicalXor": "logical_xor"}
UNARY_A = {"logicalNot": "logical_not", "isNaN": "is_nan", "isInfinite": "is_infinite"}
UNARY = {"abs": "abs", "ceil": "ceil", "cos": "cos", "erf": "erf", "exp": "exp",
         "floor": "floor", "identity": "identity", "log": "log", "neg": "neg",
         "reciprocal": "reciprocal", "roundEven": "round_even", "sin": "sin", "sign": "sign",
         "sqrt": "sqrt", "tan": "tan", "elu": "elu", "gelu": "gelu",
         "hardSigmoid": "hard_sigmoid", "hardSwish": "hard_swish", "leakyRelu": "leaky_relu",
         "linear": "linear", "relu": "relu", "sigmoid": "sigmoid", "softplus": "softplus",
         "softsign": "softsign", "tanh": "tanh", "clamp": "clamp"}


def _binary_sample(method: str) -> Sample:
    return Sample(lambda b, t: getattr(b, method)(b.input("a", [2, 3], t["a"]),
                                                  b.input("b", [3], t["b"])),
                  groups=[("a", "b")])


SAMPLES: dict[str, Sample] = {op: _binary_sample(m) for op, m in BINARY.items()}
SAMPLES |= {op: Sample(lambda b, t, m=m: getattr(b, m)(b.input("a", [2], t["a"])))
            for op, m in UNARY_A.items()}
SAMPLES |= {op: Sample(lambda b, t, m=m: getattr(b, m)(b.input("x", [2], t["input"])))
            for op, m in UNARY.items()}
SAMPLES["prelu"] = Sample(lambda b, t: b.prelu(b.input("x", [2, 3], t["input"]),
                                               b.input("s", [3], t["slope"])),
                          groups=[("input", "slope")])
SAMPLES["cast"] = Sample(lambda b, t: b.cast(b.input("x", [2], t["input"]), "int8"))
SAMPLES["where"] = Sample(lambda b, t: b.where(b.input("c", [2, 1], t["condition"]),
                                               b.input("t", [3], t["trueValue"]),
                                               b.input("f", [1], t["falseValue"])),
                          groups=[("trueValue", "falseValue")])


@pytest.fixture
def b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


@pytest.mark.parametrize("method", list(BINARY.values()))
def test_binary_rejects_mismatched_types_and_shapes(b: MLGraphBuilder, method: str) -> None:
    dtype = "uint8" if method.startswith("logical") else "float32"
    other = "int8" if dtype == "uint8" else "float16"
    x = b.input("x", [2, 3], dtype)
    with pytest.raises(MLTypeError, match="data type"):
        getattr(b, method)(x, b.input("y", [2, 3], other))
    with pytest.raises(MLTypeError, match="not broadcastable"):
        getattr(b, method)(x, b.input("z", [4, 3], dtype))
    out = getattr(b, method)(x, b.input("w", [5, 1, 1], dtype))
    assert out.shape == (5, 2, 3)


def test_comparisons_output_uint8(b: MLGraphBuilder) -> None:
    x = b.input("x", [2], "int32")
    assert b.greater(x, x).data_type == "uint8"
    assert b.is_nan(b.input("f", [2], "float16")).data_type == "uint8"


def test_operand_must_come_from_this_builder(b: MLGraphBuilder) -> None:
    other = MLGraphBuilder(ML().create_context())
    with pytest.raises(MLTypeError, match="add: b was created by another MLGraphBuilder"):
        b.add(b.input("x", [1], "float32"), other.input("y", [1], "float32"))
    with pytest.raises(MLTypeError, match="relu: input must be an MLOperand"):
        b.relu(np.zeros(2, np.float32))  # type: ignore[arg-type]


@pytest.mark.parametrize(("method", "option"), [("elu", "alpha"), ("leaky_relu", "alpha"),
                                                ("hard_sigmoid", "beta"), ("linear", "alpha")])
def test_double_options_must_be_finite_numbers(b: MLGraphBuilder, method: str,
                                               option: str) -> None:
    x = b.input("x", [2], "float32")
    with pytest.raises(MLTypeError, match="must be a finite number"):
        getattr(b, method)(x, **{option: float("nan")})
    with pytest.raises(MLTypeError, match="must be a number"):
        getattr(b, method)(x, **{option: "1"})


def test_clamp_rules(b: MLGraphBuilder) -> None:
    x = b.input("x", [2], "float32")
    with pytest.raises(MLTypeError, match="clamp: minValue .* must not be greater"):
        b.clamp(x, min_value=2, max_value=1)
    assert b.clamp(x, min_value=1, max_value=1).shape == (2,)
    # Bounds are cast to the input type before comparing: 1.4 and 1.2 both become 1 in int8.
    assert b.clamp(b.input("i", [2], "int8"), min_value=1.4, max_value=1.2).shape == (2,)
    op = b.clamp(b.input("u", [1], "uint8"), min_value=-5, max_value=300).operator
    assert op is not None and op.options["minValue"] == 0 and op.options["maxValue"] == 255
    assert "minValue" not in b.clamp(x).operator.options  # type: ignore[union-attr]


def test_cast_rejects_unknown_type(b: MLGraphBuilder) -> None:
    with pytest.raises(MLTypeError, match="cast: data type 'float64'"):
        b.cast(b.input("x", [2], "float32"), "float64")


def test_where_rules(b: MLGraphBuilder) -> None:
    c = b.input("c", [2, 1], "uint8")
    t = b.input("t", [3], "float32")
    with pytest.raises(MLTypeError, match="where: falseValue data type"):
        b.where(c, t, b.input("f", [3], "float16"))
    with pytest.raises(MLTypeError, match="where: condition data type"):
        b.where(b.input("c2", [3], "int32"), t, t)
    with pytest.raises(MLTypeError, match="where: condition and values shapes"):
        b.where(b.input("c3", [4], "uint8"), t, t)
    assert b.where(c, t, t).shape == (2, 3)


def test_prelu_rules(b: MLGraphBuilder) -> None:
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(MLTypeError, match="prelu: slope data type"):
        b.prelu(x, b.input("s", [3], "float16"))
    with pytest.raises(MLTypeError, match="prelu: input and slope shapes"):
        b.prelu(x, b.input("s2", [2], "float32"))
    assert b.prelu(x, b.input("s3", [4, 1, 1], "float32")).shape == (4, 2, 3)


def test_unary_limits_reject_integers(b: MLGraphBuilder) -> None:
    with pytest.raises(MLTypeError, match="sqrt: input data type int32 is not one of"):
        b.sqrt(b.input("x", [2], "int32"))
    with pytest.raises(MLTypeError, match="logicalNot: a data type float32"):
        b.logical_not(b.input("y", [2], "float32"))
