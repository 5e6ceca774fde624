"""Malformed TFLite operators (found by `tools/fuzz`): every one is refused with a one-line
`InvalidModel` naming the operator, never an internal error (a Python exception from inside a
handler or the importer). Covers the reader's structure checks (tensors read before anything
defines them, options of another op's type, option values no kernel accepts) and the
importer's (input/output counts from `op_mappings/tflite/_checks.py`, ranks, IF branch
arities). Oracle: the error's reason code and the words of its message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from converter.core.errors import ConversionError, ConversionFailed
from converter.frontends.tflite.frontend import convert as convert_tflite
from tests.op_mappings.tflite.tflite_builder import ModelBuilder, Quant, S, rand


def refused(model: bytes) -> str:
    """The message of the InvalidModel errors converting `model` raises (one line)."""
    with pytest.raises(ConversionError) as info:
        convert_tflite(model)
    err = info.value
    errors = err.errors if isinstance(err, ConversionFailed) else [err]
    assert [e.reason_code for e in errors] == ["invalid_model"] * len(errors), str(err)
    text = str(err)
    assert "\n" not in text
    return text


def _conv_options(**fields: Any) -> Any:
    opts = S.Conv2DOptionsT()
    opts.padding, opts.strideH, opts.strideW = S.Padding.SAME, 1, 1
    opts.dilationHFactor = opts.dilationWFactor = 1
    for key, value in fields.items():
        setattr(opts, key, value)
    return opts


def _conv(options: Any = None, *, weights: bool = True, x_shape: tuple[int, ...] = (1, 4, 4, 2),
          inputs: Callable[[int, int, int], list[int]] | None = None) -> bytes:
    """x -> CONV_2D 'y' with a 3x3 filter (stored unless `weights` is False) and bias."""
    mb = ModelBuilder()
    x = mb.input("x", list(x_shape))
    w = mb.const("w", rand(3, 3, 3, 2, seed=1)) if weights else mb.tensor("w", [3, 3, 3, 2])
    b = mb.const("b", rand(3, seed=2))
    y = mb.output(mb.tensor("y", [1, 4, 4, 3]))
    mb.op("CONV_2D", inputs(x, w, b) if inputs else [x, w, b], [y],
          options if options is not None else _conv_options())
    return mb.build()


# -- reader: values read before anything defines them ---------------------------------------


def test_operators_in_reverse_order() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    a = mb.tensor("a", [2, 3])
    y = mb.output(mb.tensor("y", [2, 3]))
    mb.op("RELU", [a], [y])  # reads 'a' before TANH writes it
    mb.op("TANH", [x], [a])
    text = refused(mb.build())
    assert "operator 0 (RELU) of subgraph 0 reads tensor 1 ('a'), which no earlier" in text


def test_an_operator_reading_its_own_output() -> None:
    mb = ModelBuilder()
    mb.input("x", [2, 3])
    y = mb.output(mb.tensor("y", [2, 3]))
    mb.op("TANH", [y], [y])
    assert "(TANH) of subgraph 0 reads tensor 1 ('y')" in refused(mb.build())


def test_a_weight_without_data() -> None:
    assert "(CONV_2D) of subgraph 0 reads tensor 1 ('w')" in refused(_conv(weights=False))


def test_an_output_nothing_defines() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    a = mb.output(mb.tensor("a", [2, 3]))
    mb.output(mb.tensor("never", [2, 3]))
    mb.op("TANH", [x], [a])
    assert "subgraph 0 output tensor 2 ('never') is not defined" in refused(mb.build())


def test_an_undefined_read_inside_a_control_flow_subgraph() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2])
    y = mb.output(mb.tensor("y", [2]))
    body = mb.subgraph("body")
    bx = mb.input("bx", [2])
    ghost = mb.tensor("ghost", [2])
    by = mb.output(mb.tensor("by", [2]))
    mb.op("ADD", [bx, ghost], [by], S.AddOptionsT())
    mb.use(0)
    opts = S.StableHLOCompositeOptionsT()
    opts.name, opts.decompositionSubgraphIndex = "c", body
    mb.op("STABLEHLO_COMPOSITE", [x], [y], opts)
    assert "operator 0 (ADD) of subgraph 1 reads tensor 1 ('ghost')" in refused(mb.build())


# -- reader: options ---------------------------------------------------------------------------


def test_options_of_another_op() -> None:
    text = refused(_conv(S.ReshapeOptionsT()))
    assert "operator 0 (CONV_2D) carries options ReshapeOptions, not Conv2DOptions" in text


@pytest.mark.parametrize(("field", "value", "words"), [
    ("strideH", 0, "option stride_h is 0, it must be at least 1"),
    ("strideW", -3, "option stride_w is -3"),
    ("dilationWFactor", 0, "option dilation_w_factor is 0"),
    ("padding", 7, "option padding is 7, neither SAME (0) nor VALID (1)"),
])
def test_conv_option_values(field: str, value: int, words: str) -> None:
    text = refused(_conv(_conv_options(**{field: value})))
    assert f"operator 0 (CONV_2D) of subgraph 0: {words}" in text


def _pool(op: str = "AVERAGE_POOL_2D", x_shape: tuple[int, ...] = (1, 4, 4, 2),
          options: Any = None) -> bytes:
    if options is None:
        options = S.Pool2DOptionsT()
        options.padding, options.strideH, options.strideW = S.Padding.VALID, 1, 1
        options.filterHeight = options.filterWidth = 2
    mb = ModelBuilder()
    x = mb.input("x", list(x_shape))
    y = mb.output(mb.tensor("y", [1, 3, 3, 2]))
    mb.op(op, [x], [y], options)
    return mb.build()


def test_pool_options() -> None:
    opts = S.Pool2DOptionsT()
    opts.padding, opts.strideH, opts.strideW, opts.filterHeight, opts.filterWidth = 1, 1, 1, 0, 2
    assert "option filter_height is 0" in refused(_pool(options=opts))
    assert "carries options RightShiftOptions, not Pool2DOptions" in refused(
        _pool(options=S.RightShiftOptionsT()))


def test_pool_without_options_uses_the_defaults() -> None:
    """An operator without an options table means the schema defaults: stride 0 here."""
    mb = ModelBuilder()
    x = mb.input("x", [1, 4, 4, 2])
    y = mb.output(mb.tensor("y", [1, 3, 3, 2]))
    mb.op("MAX_POOL_2D", [x], [y])
    assert "option stride_h is 0" in refused(mb.build())


def test_composite_without_options() -> None:
    """STABLEHLO_COMPOSITE's options are a BuiltinOptions2 table: without one, its defaults
    (decomposition subgraph 0, the main graph itself) are read, never a KeyError."""
    mb = ModelBuilder()
    x = mb.input("x", [2])
    y = mb.output(mb.tensor("y", [2]))
    mb.op("STABLEHLO_COMPOSITE", [x, x], [y])
    # the main graph inlining itself is refused before converting (converter.frontends.
    # tflite.sizing)
    assert "subgraph 0 inlines itself through control flow (subgraphs 0 -> 0)" in refused(
        mb.build())


# -- importer: counts, ranks -----------------------------------------------------------------


def test_conv_without_inputs() -> None:
    text = refused(_conv(inputs=lambda x, w, b: []))
    assert "CONV_2D 'y' (version 1): the operator lists 0 input(s), CONV_2D needs at " \
           "least 3" in text


# Found by tools/fuzz (seed 23, `tflite.op-io(inputs:drop)` on the int8 CNN): operators
# missing an input LiteRT's kernel reads were accepted, and LiteRT then refused them or
# crashed (SIGSEGV) running them. Oracle: LiteRT itself on the same bytes (a refusal in a
# forked child, or the child killed by a signal), and the importer's refusal naming the rule.


def _litert_fails(model: bytes) -> bool:
    """Whether LiteRT refuses or crashes running `model` on ones (in a forked child)."""
    import os
    import signal

    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            import faulthandler

            faulthandler.disable()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            from ai_edge_litert.interpreter import Interpreter

            interp = Interpreter(model_content=model)
            interp.allocate_tensors()
            for d in interp.get_input_details():
                interp.set_tensor(d["index"], np.ones(d["shape"], d["dtype"]))
            interp.invoke()
        except BaseException:  # noqa: BLE001 - a refusal
            code = 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        assert os.WTERMSIG(status) in (signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT)
        return True
    return os.WEXITSTATUS(status) != 0


def _depthwise(dtype: str, inputs: Callable[[int, int, int], list[int]]) -> bytes:
    mb = ModelBuilder()
    if dtype == "int8":
        x = mb.input("x", [1, 4, 4, 2], "int8", quant=Quant([0.05], [0]))
        w = mb.const("w", rand(1, 3, 3, 2, low=-100, high=100, seed=1, dtype="int8"),
                     quant=Quant([0.01, 0.02], [0, 0], 3))
        b = mb.const("b", rand(2, low=-50, high=50, seed=2, dtype="int32"),
                     quant=Quant([0.0005, 0.001], [0, 0]))
        y = mb.output(mb.tensor("y", [1, 4, 4, 2], "int8", quant=Quant([0.1], [0])))
    else:
        x = mb.input("x", [1, 4, 4, 2])
        w = mb.const("w", rand(1, 3, 3, 2, seed=1))
        b = mb.const("b", rand(2, seed=2))
        y = mb.output(mb.tensor("y", [1, 4, 4, 2]))
    opts = S.DepthwiseConv2DOptionsT()
    opts.padding, opts.strideH, opts.strideW, opts.depthMultiplier = S.Padding.SAME, 1, 1, 1
    opts.dilationHFactor = opts.dilationWFactor = 1
    mb.op("DEPTHWISE_CONV_2D", inputs(x, w, b), [y], opts, version=3)
    return mb.build()


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_depthwise_without_bias(dtype: str) -> None:
    model = _depthwise(dtype, lambda x, w, b: [x, w])
    assert _litert_fails(model)
    text = refused(model)
    assert "DEPTHWISE_CONV_2D 'y' (version 3): the operator lists 2 input(s), " \
           "DEPTHWISE_CONV_2D needs at least 3" in text


def test_depthwise_with_an_omitted_bias() -> None:
    model = _depthwise("int8", lambda x, w, b: [x, w, -1])
    assert _litert_fails(model)
    assert "required input(s) [2] of DEPTHWISE_CONV_2D are omitted (-1)" in refused(model)


def test_conv_without_bias() -> None:
    model = _conv(inputs=lambda x, w, b: [x, w])
    assert _litert_fails(model)
    assert "the operator lists 2 input(s), CONV_2D needs at least 3" in refused(model)


def _strided_slice(inputs: Callable[[int, int, int, int], list[int]]) -> bytes:
    mb = ModelBuilder()
    x = mb.input("x", [4, 6])
    begin = mb.const("begin", np.array([0, 1], np.int32))
    end = mb.const("end", np.array([4, 5], np.int32))
    strides = mb.const("strides", np.array([1, 2], np.int32))
    y = mb.output(mb.tensor("y", [4, 2]))
    mb.op("STRIDED_SLICE", inputs(x, begin, end, strides), [y], S.StridedSliceOptionsT())
    return mb.build()


@pytest.mark.parametrize("how", ["dropped", "omitted"])
def test_strided_slice_without_strides(how: str) -> None:
    model = _strided_slice(lambda x, b, e, s: [x, b, e] if how == "dropped" else [x, b, e, -1])
    assert _litert_fails(model)
    text = refused(model)
    assert ("needs at least 4" if how == "dropped" else
            "required input(s) [3] of STRIDED_SLICE are omitted (-1)") in text


def test_reshape_with_an_omitted_shape() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    y = mb.output(mb.tensor("y", [3, 2]))
    opts = S.ReshapeOptionsT()
    opts.newShape = [3, 2]
    mb.op("RESHAPE", [x, -1], [y], opts)
    model = mb.build()
    assert _litert_fails(model)
    assert "input(s) [1] of RESHAPE are listed but omitted (-1)" in refused(model)


def test_add_n_of_one_addend() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    y = mb.output(mb.tensor("y", [2, 3]))
    mb.op("ADD_N", [x], [y])
    model = mb.build()
    assert _litert_fails(model)
    assert "the operator lists 1 input(s), ADD_N needs at least 2" in refused(model)


def test_pack_with_another_values_count() -> None:
    mb = ModelBuilder()
    a = mb.input("a", [2, 3])
    b = mb.input("b", [2, 3])
    y = mb.output(mb.tensor("y", [3, 2, 3]))
    opts = S.PackOptionsT()
    opts.valuesCount, opts.axis = 3, 0
    mb.op("PACK", [a, b], [y], opts)
    model = mb.build()
    assert _litert_fails(model)
    assert "values_count is 3, the operator lists 2 input(s)" in refused(model)


def test_rnn_without_its_state_input() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [1, 3])
    w = mb.const("w", rand(4, 3, seed=1))
    r = mb.const("r", rand(4, 4, seed=2))
    bias = mb.const("bias", rand(4, seed=3))
    y = mb.output(mb.tensor("y", [1, 4]))
    opts = S.RNNOptionsT()
    mb.op("RNN", [x, w, r, bias], [y], opts)
    model = mb.build()
    assert _litert_fails(model)
    assert "the operator lists 4 input(s), RNN lists 5 (omitted ones as -1)" in refused(model)


def test_conv_with_an_omitted_filter() -> None:
    text = refused(_conv(inputs=lambda x, w, b: [x, -1, b]))
    assert "required input(s) [1] of CONV_2D are omitted (-1)" in text


def test_conv_of_a_rank_2_input() -> None:
    assert "input has rank 2, 4 expected" in refused(_conv(x_shape=(4, 2)))


def test_pool_of_a_rank_3_input() -> None:
    assert "input has rank 3, 4 expected" in refused(_pool(x_shape=(4, 4, 2)))
    assert "input has rank 3, 4 expected" in refused(_pool("MAX_POOL_2D", (4, 4, 2)))


def test_reshape_without_inputs() -> None:
    """Every input of a RESHAPE without inputs is constant: the fold must not run."""
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    t = mb.tensor("t", [6])
    y = mb.output(mb.tensor("y", [6]))
    mb.op("TANH", [x], [t])
    mb.op("RESHAPE", [], [y])
    assert "the operator lists 0 input(s), RESHAPE needs at least 1" in refused(mb.build())


def test_too_many_outputs() -> None:
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    y = mb.output(mb.tensor("y", [2, 3]))
    z = mb.output(mb.tensor("z", [2, 3]))
    mb.op("TANH", [x], [y, z])
    assert "the operator lists 2 output(s), TANH has 1" in refused(mb.build())


def test_outputs_the_op_does_not_compute() -> None:
    """Ops whose output count is open (UNPACK) are checked against what they compute."""
    opts = S.UnpackOptionsT()
    opts.num, opts.axis = 2, 0
    mb = ModelBuilder()
    x = mb.input("x", [2, 3])
    outs = [mb.output(mb.tensor(f"y{k}", [3])) for k in range(3)]
    mb.op("UNPACK", [x], outs, opts)
    assert "the operator lists 3 output(s), UNPACK computes 2" in refused(mb.build())


def test_if_branches_of_different_arities() -> None:
    mb = ModelBuilder()
    c = mb.input("c", [], "bool")
    x = mb.input("x", [2])
    y = mb.output(mb.tensor("y", [2]))
    then = mb.subgraph("then")
    tx = mb.input("tx", [2])
    mb.output(tx)
    other = mb.subgraph("else")
    mb.input("ex", [2])
    mb.use(0)
    opts = S.IfOptionsT()
    opts.thenSubgraphIndex, opts.elseSubgraphIndex = then, other
    mb.op("IF", [c, x], [y], opts)
    assert "IF branches 1 and 2 return 1 and 0 values, the op has 1 outputs" in refused(
        mb.build())


def test_well_formed_models_still_convert() -> None:
    result = convert_tflite(_conv())
    out = result.run({"x": np.ones((1, 4, 4, 2), np.float32)})
    assert out["y"].shape == (1, 4, 4, 3)


@pytest.mark.parametrize("w_shape", [[12], [3, 2, 2]])
def test_fully_connected_weights_not_n_by_k(w_shape: list[int]) -> None:
    """FULLY_CONNECTED whose weights are not 2-D [N, K] (LiteRT's kernel requires a 2-D
    filter; fuzz seed 30: an operator retargeted to FULLY_CONNECTED inside a WHILE body)."""
    mb = ModelBuilder()
    x = mb.input("x", [2, 4])
    w = mb.const("w", np.zeros(w_shape, np.float32))
    y = mb.output(mb.tensor("y", [2, 3]))
    o = S.FullyConnectedOptionsT()
    mb.op("FULLY_CONNECTED", [x, w, -1], [y], o)
    text = refused(mb.build())
    assert "FULLY_CONNECTED" in text and "weights (input 1)" in text


@pytest.mark.parametrize(("b_quant", "words"), [
    (Quant([0.01, 0.02, 0.03], [0, 0, 0]), "3 per-axis scales for dimension 0 of size 2"),
])
def test_per_axis_quantization_not_matching_the_tensor(b_quant: Quant, words: str) -> None:
    """A constant's per-axis scales that do not match the size of its quantized dimension
    (LiteRT refuses them when it prepares the kernel; fuzz seed 31, tflite.quantization)."""
    mb = ModelBuilder()
    x = mb.input("x", [1, 4, 4, 2], "int8", quant=Quant([0.05], [0]))
    w = mb.const("w", rand(1, 3, 3, 2, low=-100, high=100, seed=1, dtype="int8"),
                 quant=Quant([0.01, 0.02], [0, 0], 3))
    b = mb.const("b", rand(2, low=-50, high=50, seed=2, dtype="int32"), quant=b_quant)
    y = mb.output(mb.tensor("y", [1, 4, 4, 2], "int8", quant=Quant([0.1], [0])))
    opts = S.DepthwiseConv2DOptionsT()
    opts.padding, opts.strideH, opts.strideW, opts.depthMultiplier = S.Padding.SAME, 1, 1, 1
    opts.dilationHFactor = opts.dilationWFactor = 1
    mb.op("DEPTHWISE_CONV_2D", [x, w, b], [y], opts, version=3)
    text = refused(mb.build())
    assert f"tensor 'b': {words}" in text
