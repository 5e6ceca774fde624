"""Validation of reductions, argMin/argMax, cumulativeSum and softmax: every spec TypeError
rule, the output descriptors, the options stored in the graph, plus the limit samples."""

from __future__ import annotations

import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLTypeError
from tests.converter.core.webnn.limit_samples import Sample

REDUCE = {"reduceL1": "reduce_l1", "reduceL2": "reduce_l2", "reduceLogSum": "reduce_log_sum",
          "reduceLogSumExp": "reduce_log_sum_exp", "reduceMax": "reduce_max",
          "reduceMean": "reduce_mean", "reduceMin": "reduce_min",
          "reduceProduct": "reduce_product", "reduceSum": "reduce_sum",
          "reduceSumSquare": "reduce_sum_square"}
FLOAT_ONLY = {"reduceL2", "reduceLogSum", "reduceLogSumExp", "reduceMean"}

SAMPLES: dict[str, Sample] = {
    op: Sample(lambda b, t, m=m: getattr(b, m)(b.input("x", [2, 3], t["input"])))
    for op, m in REDUCE.items()}
SAMPLES["argMin"] = Sample(lambda b, t: b.arg_min(b.input("x", [2, 3], t["input"]), 1))
SAMPLES["argMax"] = Sample(lambda b, t: b.arg_max(b.input("x", [2, 3], t["input"]), 0,
                                                  output_data_type="int64"))
SAMPLES["cumulativeSum"] = Sample(
    lambda b, t: b.cumulative_sum(b.input("x", [2, 3], t["input"]), 1))
SAMPLES["softmax"] = Sample(lambda b, t: b.softmax(b.input("x", [2, 3], t["input"]), 1))


@pytest.fixture
def b() -> MLGraphBuilder:
    return MLGraphBuilder(ML().create_context())


# -- reductions --------------------------------------------------------------------------------
@pytest.mark.parametrize("op", list(REDUCE))
def test_reduce_output_shapes_and_stored_options(b: MLGraphBuilder, op: str) -> None:
    method = getattr(b, REDUCE[op])
    x = b.input("x", [2, 3, 4], "float32")
    y = method(x)
    assert (y.shape, y.data_type) == ((), "float32")
    assert y.operator is not None
    assert dict(y.operator.options) == {"axes": [0, 1, 2], "keepDimensions": False}
    assert method(x, keep_dimensions=True).shape == (1, 1, 1)
    assert method(x, axes=[2, 0]).shape == (3,)
    kept = method(x, axes=[2, 0], keep_dimensions=True, label="r")
    assert kept.shape == (1, 3, 1)
    assert dict(kept.operator.options) == {"axes": [2, 0], "keepDimensions": True,  # type: ignore[union-attr]
                                           "label": "r"}
    # axes=[] reduces nothing (the per-element function still applies): same shape.
    assert method(x, axes=[]).shape == (2, 3, 4)
    assert method(x, axes=[], keep_dimensions=True).shape == (2, 3, 4)
    # A scalar input gives a scalar output.
    s = method(b.input("s", [], "float32"))
    assert s.shape == () and s.operator.options["axes"] == []  # type: ignore[union-attr]


@pytest.mark.parametrize("op", list(REDUCE))
def test_reduce_rejects_bad_axes(b: MLGraphBuilder, op: str) -> None:
    method = getattr(b, REDUCE[op])
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(MLTypeError, match=rf"{op}: axes item 2 must be less than the input rank \(2\)"):
        method(x, axes=[2])
    with pytest.raises(MLTypeError, match=rf"{op}: axes \[1, 1\] contains duplicate axes"):
        method(x, axes=[1, 1])
    with pytest.raises(MLTypeError, match=rf"{op}: axes item .* outside the unsigned long range"):
        method(x, axes=[-1])
    with pytest.raises(MLTypeError, match=rf"{op}: axes item must be an unsigned integer"):
        method(x, axes=[0.5])
    with pytest.raises(MLTypeError, match=rf"{op}: axes must be a sequence"):
        method(x, axes=1)
    with pytest.raises(MLTypeError, match=rf"{op}: axes item 0 must be less than the input rank \(0\)"):
        method(b.input("s", [], "float32"), axes=[0])
    with pytest.raises(MLTypeError, match=rf"{op}: keepDimensions must be a boolean"):
        method(x, keep_dimensions=1)


@pytest.mark.parametrize("op", list(REDUCE))
def test_reduce_data_types(b: MLGraphBuilder, op: str) -> None:
    method = getattr(b, REDUCE[op])
    if op in FLOAT_ONLY:
        with pytest.raises(MLTypeError, match=rf"{op}: input data type int32 is not one of"):
            method(b.input("i", [2], "int32"))
    else:
        assert method(b.input("i", [2], "int32")).data_type == "int32"
    assert method(b.input("h", [2], "float16")).data_type == "float16"
    if op not in ("reduceMax", "reduceMin"):
        with pytest.raises(MLTypeError, match=rf"{op}: input data type int8 is not one of"):
            method(b.input("c", [2], "int8"))


@pytest.mark.parametrize("op", list(REDUCE))
def test_reduce_operand_checks(b: MLGraphBuilder, op: str) -> None:
    other = MLGraphBuilder(ML().create_context())
    with pytest.raises(MLTypeError, match=rf"{op}: input was created by another MLGraphBuilder"):
        getattr(b, REDUCE[op])(other.input("x", [2], "float32"))
    with pytest.raises(MLTypeError, match=rf"{op}: input must be an MLOperand"):
        getattr(b, REDUCE[op])([1.0, 2.0])


# -- argMin / argMax ---------------------------------------------------------------------------
@pytest.mark.parametrize(("op", "method"), [("argMin", "arg_min"), ("argMax", "arg_max")])
def test_arg_min_max_descriptors(b: MLGraphBuilder, op: str, method: str) -> None:
    fn = getattr(b, method)
    x = b.input("x", [2, 3, 4], "float16")
    y = fn(x, 1)
    assert (y.shape, y.data_type) == ((2, 4), "int32")
    assert y.operator is not None and y.operator.op == op
    assert y.operator.args[1] == 1
    assert dict(y.operator.options) == {"keepDimensions": False, "outputDataType": "int32"}
    z = fn(x, 2, keep_dimensions=True, output_data_type="int64")
    assert (z.shape, z.data_type) == ((2, 3, 1), "int64")
    assert fn(b.input("v", [5], "int8"), 0).shape == ()
    assert fn(b.input("u", [5], "uint64"), 0, keep_dimensions=True).shape == (1,)


@pytest.mark.parametrize(("op", "method"), [("argMin", "arg_min"), ("argMax", "arg_max")])
def test_arg_min_max_rules(b: MLGraphBuilder, op: str, method: str) -> None:
    fn = getattr(b, method)
    x = b.input("x", [2, 3], "float32")
    with pytest.raises(MLTypeError, match=rf"{op}: axis \(2\) must be less than the input rank \(2\)"):
        fn(x, 2)
    with pytest.raises(MLTypeError, match=rf"{op}: axis .* outside the unsigned long range"):
        fn(x, -1)
    with pytest.raises(MLTypeError, match=rf"{op}: axis must be an unsigned integer"):
        fn(x, 1.0)
    with pytest.raises(MLTypeError, match=rf"{op}: input rank 0 is outside the supported range"):
        fn(b.input("s", [], "float32"), 0)
    with pytest.raises(MLTypeError, match=rf"{op}: outputDataType float32 is not one of int32, int64"):
        fn(x, 0, output_data_type="float32")
    with pytest.raises(MLTypeError, match=rf"{op}: outputDataType uint32 is not one of int32, int64"):
        fn(x, 0, output_data_type="uint32")
    with pytest.raises(MLTypeError, match=rf"{op}: outputDataType 'int16' is not one of"):
        fn(x, 0, output_data_type="int16")
    with pytest.raises(MLTypeError, match=rf"{op}: keepDimensions must be a boolean"):
        fn(x, 0, keep_dimensions="yes")


def test_arg_max_index_range_boundary(b: MLGraphBuilder) -> None:
    # shape[axis] must be indexable by the output type; the largest valid dimension (2^31-1)
    # still fits int32, so the rule can only reject impossible shapes and this is accepted.
    x = b.input("x", [2**31 - 1], "uint8")
    assert b.arg_max(x, 0).data_type == "int32"


# -- cumulativeSum -----------------------------------------------------------------------------
def test_cumulative_sum_rules(b: MLGraphBuilder) -> None:
    x = b.input("x", [2, 3], "int32")
    y = b.cumulative_sum(x, 1, reversed=True)
    assert (y.shape, y.data_type) == ((2, 3), "int32")
    assert y.operator is not None and y.operator.args[1] == 1
    assert dict(y.operator.options) == {"exclusive": False, "reversed": True}
    with pytest.raises(MLTypeError, match=r"cumulativeSum: axis \(2\) must be less than the input rank \(2\)"):
        b.cumulative_sum(x, 2)
    with pytest.raises(MLTypeError, match=r"cumulativeSum: axis .* outside the unsigned long range"):
        b.cumulative_sum(x, -1)
    with pytest.raises(MLTypeError, match=r"cumulativeSum: input rank 0 is outside the supported range"):
        b.cumulative_sum(b.input("s", [], "float32"), 0)
    with pytest.raises(MLTypeError, match=r"cumulativeSum: input data type int8 is not one of"):
        b.cumulative_sum(b.input("c", [2], "int8"), 0)
    with pytest.raises(MLTypeError, match=r"cumulativeSum: exclusive must be a boolean"):
        b.cumulative_sum(x, 0, exclusive=None)
    with pytest.raises(MLTypeError, match=r"cumulativeSum: reversed must be a boolean"):
        b.cumulative_sum(x, 0, reversed=0)


# -- softmax -----------------------------------------------------------------------------------
def test_softmax_rules(b: MLGraphBuilder) -> None:
    x = b.input("x", [2, 3, 4], "float16")
    y = b.softmax(x, 2)
    assert (y.shape, y.data_type) == ((2, 3, 4), "float16")
    assert y.operator is not None and y.operator.args[1] == 2 and dict(y.operator.options) == {}
    with pytest.raises(TypeError):
        b.softmax(x)  # type: ignore[call-arg]  # axis is required since #649
    with pytest.raises(MLTypeError, match=r"softmax: axis \(3\) must be less than the input rank \(3\)"):
        b.softmax(x, 3)
    with pytest.raises(MLTypeError, match=r"softmax: axis .* outside the unsigned long range"):
        b.softmax(x, -1)
    with pytest.raises(MLTypeError, match=r"softmax: input rank 0 is outside the supported range"):
        b.softmax(b.input("s", [], "float32"), 0)
    with pytest.raises(MLTypeError, match=r"softmax: input data type int32 is not one of"):
        b.softmax(b.input("i", [2], "int32"), 0)
