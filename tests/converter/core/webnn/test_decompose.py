"""converter.core.webnn.decompose: each decomposition is checked against an independent oracle.

- gru/lstm with activations WebNN cannot express natively (HardSigmoid, LeakyRelu, Elu,
  Affine, ...): onnxruntime one-node GRU/LSTM models.
- gru/lstm/cells with native activations: the native op on the reference backend (itself
  checked against onnxruntime in tests/converter/runtimes/reference/kernels), including the
  output-gate peephole ONNX cannot express.
- layerNormalization, gelu, quantize/dequantize: float64 numpy formulas written here.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from converter.core.webnn import ML, MLGraphBuilder, MLTypeError
from converter.core.webnn import decompose as dc
from converter.core.webnn import decompose_recurrent as dcr

ONNX_DIR = {"forward": "forward", "backward": "reverse", "both": "bidirectional"}
ATOL, RTOL = 1e-5, 1e-4


def _run(build: Any, feeds: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], set[str]]:
    """build(b) -> {name: operand}; returns the outputs and the op names in the graph."""
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    inputs = {k: b.input(k, list(v.shape), v.dtype.name) for k, v in feeds.items()}
    outs = build(b, inputs)
    graph = b.build(outs)
    return ctx.compute(graph, feeds), {op.op for op in graph.operations}


def _ort(op: str, feeds: dict[str, np.ndarray | None], outputs: list[str],
         **attrs: Any) -> list[np.ndarray]:
    names = [k if v is not None else "" for k, v in feeds.items()]
    while names and not names[-1]:
        names.pop()
    present = {k: v.astype(np.float32) for k, v in feeds.items() if v is not None}
    node = helper.make_node(op, names, outputs, **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape))
         for k, v in present.items()],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(outputs, present)


def _rand(rng: np.random.Generator, shape: tuple[int, ...], scale: float = 0.5,
          dtype: str = "float32") -> np.ndarray:
    return rng.uniform(-scale, scale, shape).astype(dtype)


# -- gru -----------------------------------------------------------------------------------
def _gru_data(seed: int, d: int, steps: int = 3, batch: int = 2, inp: int = 3, h: int = 4,
              dtype: str = "float32") -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": _rand(rng, (steps, batch, inp), 1.0, dtype),
            "w": _rand(rng, (d, 3 * h, inp), dtype=dtype),
            "r": _rand(rng, (d, 3 * h, h), dtype=dtype),
            "b": _rand(rng, (d, 3 * h), dtype=dtype), "rb": _rand(rng, (d, 3 * h), dtype=dtype),
            "h0": _rand(rng, (d, batch, h), 1.0, dtype)}


@pytest.mark.parametrize(("acts", "onnx_acts", "alphas", "betas"), [
    ((dc.hard_sigmoid_fn(0.3, 0.4), dc.tanh_fn), ["HardSigmoid", "Tanh"], [0.3], [0.4]),
    ((dc.sigmoid_fn, dc.leaky_relu_fn(0.1)), ["Sigmoid", "LeakyRelu"], [0.1], []),
    (("sigmoid", dc.linear_fn(0.7, 0.2)), ["Sigmoid", "Affine"], [0.7], [0.2]),
    ((dc.sigmoid_fn, dc.softsign_fn), ["Sigmoid", "Softsign"], [], []),
])
@pytest.mark.parametrize(("direction", "reset_after"), [("forward", True), ("backward", False),
                                                        ("both", True), ("both", False)])
def test_gru_custom_activations_match_onnxruntime(acts: tuple[Any, Any], onnx_acts: list[str],
                                                  alphas: list[float], betas: list[float],
                                                  direction: str, reset_after: bool) -> None:
    d = 2 if direction == "both" else 1
    data = _gru_data(21, d)
    h = 4
    bias = np.concatenate([data["b"], data["rb"]], 1)
    attrs: dict[str, Any] = {"activation_alpha": alphas * d} if alphas else {}
    if betas:
        attrs["activation_beta"] = betas * d
    y, y_h = _ort("GRU", {"X": data["x"], "W": data["w"], "R": data["r"], "B": bias,
                          "sequence_lens": None, "initial_h": data["h0"]}, ["Y", "Y_h"],
                  hidden_size=h, direction=ONNX_DIR[direction],
                  linear_before_reset=int(reset_after), activations=onnx_acts * d, **attrs)

    def build(b: MLGraphBuilder, i: dict[str, Any]) -> dict[str, Any]:
        outs = dcr.gru(b, i["x"], i["w"], i["r"], 3, h, bias=i["b"], recurrent_bias=i["rb"],
                      initial_hidden_state=i["h0"], reset_after=reset_after,
                      return_sequence=True, direction=direction, activations=acts)
        return {"h": outs[0], "seq": outs[1]}

    res, ops = _run(build, data)
    assert "gru" not in ops and "gruCell" not in ops
    np.testing.assert_allclose(res["h"], y_h, atol=ATOL, rtol=RTOL)
    np.testing.assert_allclose(res["seq"], y, atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize(("direction", "layout", "reset_after", "optional"), [
    ("forward", "zrn", True, True), ("forward", "rzn", False, False),
    ("backward", "rzn", True, True), ("both", "zrn", False, True), ("both", "rzn", True, False),
])
@pytest.mark.parametrize("return_sequence", [True, False])
def test_gru_matches_native(direction: str, layout: str, reset_after: bool, optional: bool,
                            return_sequence: bool) -> None:
    d = 2 if direction == "both" else 1
    data = _gru_data(22, d)
    if not optional:
        data = {k: v for k, v in data.items() if k in ("x", "w", "r")}

    def build(b: MLGraphBuilder, i: dict[str, Any]) -> dict[str, Any]:
        kw = dict(bias=i.get("b"), recurrent_bias=i.get("rb"),
                  initial_hidden_state=i.get("h0"), reset_after=reset_after,
                  return_sequence=return_sequence, direction=direction, layout=layout)
        native = b.gru(i["x"], i["w"], i["r"], 3, 4, **kw)
        decomposed = dcr.gru(b, i["x"], i["w"], i["r"], 3, 4, **kw)
        assert [o.shape for o in native] == [o.shape for o in decomposed]
        return {f"n{k}": o for k, o in enumerate(native)} | {
            f"d{k}": o for k, o in enumerate(decomposed)}

    res, _ = _run(build, data)
    for k in range(2 if return_sequence else 1):
        np.testing.assert_allclose(res[f"d{k}"], res[f"n{k}"], atol=ATOL, rtol=RTOL)


def test_gru_float16_end_to_end() -> None:
    data = _gru_data(23, 2, dtype="float16")

    def build(b: MLGraphBuilder, i: dict[str, Any]) -> dict[str, Any]:
        kw = dict(bias=i["b"], recurrent_bias=i["rb"], initial_hidden_state=i["h0"],
                  return_sequence=True, direction="both")
        native = b.gru(i["x"], i["w"], i["r"], 3, 4, **kw)
        decomposed = dcr.gru(b, i["x"], i["w"], i["r"], 3, 4, **kw)
        return {"n": native[1], "d": decomposed[1]}

    res, _ = _run(build, data)
    assert res["d"].dtype == np.float16
    # each primitive rounds to float16 on the way: a few float16 ulps apart
    np.testing.assert_allclose(res["d"], res["n"], atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize(("layout", "reset_after"), [("zrn", True), ("rzn", False)])
def test_gru_cell_matches_native(layout: str, reset_after: bool) -> None:
    rng = np.random.default_rng(24)
    data = {"x": _rand(rng, (2, 3), 1.0), "w": _rand(rng, (12, 3)), "r": _rand(rng, (12, 4)),
            "h": _rand(rng, (2, 4), 1.0), "b": _rand(rng, (12,)), "rb": _rand(rng, (12,))}

    def build(b: MLGraphBuilder, i: dict[str, Any]) -> dict[str, Any]:
        kw = dict(bias=i["b"], recurrent_bias=i["rb"], reset_after=reset_after,
                  layout=layout, activations=["sigmoid", "relu"])
        return {"n": b.gru_cell(i["x"], i["w"], i["r"], i["h"], 4, **kw),
                "d": dcr.gru_cell(b, i["x"], i["w"], i["r"], i["h"], 4, **kw)}

    res, _ = _run(build, data)
    np.testing.assert_allclose(res["d"], res["n"], atol=ATOL, rtol=RTOL)


# -- lstm ----------------------------------------------------------------------------------
def _lstm_data(seed: int, d: int, steps: int = 3, batch: int = 2, inp: int = 3,
               h: int = 4) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"x": _rand(rng, (steps, batch, inp), 1.0), "w": _rand(rng, (d, 4 * h, inp)),
            "r": _rand(rng, (d, 4 * h, h)), "b": _rand(rng, (d, 4 * h)),
            "rb": _rand(rng, (d, 4 * h)), "p": _rand(rng, (d, 3 * h)),
            "h0": _rand(rng, (d, batch, h), 1.0), "c0": _rand(rng, (d, batch, h), 1.0)}


@pytest.mark.parametrize(("acts", "onnx_acts", "alphas", "betas"), [
    ((dc.hard_sigmoid_fn(0.2, 0.5), dc.tanh_fn, dc.tanh_fn),
     ["HardSigmoid", "Tanh", "Tanh"], [0.2], [0.5]),
    ((dc.sigmoid_fn, dc.elu_fn(0.8), dc.scaled_tanh_fn(1.5, 0.5)),
     ["Sigmoid", "Elu", "ScaledTanh"], [0.8, 1.5], [0.5]),
    ((dc.sigmoid_fn, dc.softplus_fn, dc.thresholded_relu_fn(0.1)),
     ["Sigmoid", "Softplus", "ThresholdedRelu"], [0.1], []),
])
@pytest.mark.parametrize("direction", ["forward", "both"])
def test_lstm_custom_activations_match_onnxruntime(acts: tuple[Any, ...], onnx_acts: list[str],
                                                   alphas: list[float], betas: list[float],
                                                   direction: str) -> None:
    d = 2 if direction == "both" else 1
    data = _lstm_data(31, d)
    data["p"][:, 4:8] = 0.0  # ONNX's output-gate peephole reads the new cell state
    bias = np.concatenate([data["b"], data["rb"]], 1)
    attrs: dict[str, Any] = {"activation_alpha": alphas * d} if alphas else {}
    if betas:
        attrs["activation_beta"] = betas * d
    y, y_h, y_c = _ort("LSTM", {"X": data["x"], "W": data["w"], "R": data["r"], "B": bias,
                                "sequence_lens": None, "initial_h": data["h0"],
                                "initial_c": data["c0"], "P": data["p"]},
                       ["Y", "Y_h", "Y_c"], hidden_size=4, direction=ONNX_DIR[direction],
                       activations=onnx_acts * d, **attrs)

    def build(b: MLGraphBuilder, i: dict[str, Any]) -> dict[str, Any]:
        outs = dcr.lstm(b, i["x"], i["w"], i["r"], 3, 4, bias=i["b"], recurrent_bias=i["rb"],
                       peephole_weight=i["p"], initial_hidden_state=i["h0"],
                       initial_cell_state=i["c0"], return_sequence=True, direction=direction,
                       activations=acts)
        return {"h": outs[0], "c": outs[1], "seq": outs[2]}

    res, ops = _run(build, data)
    assert "lstm" not in ops and "lstmCell" not in ops
    np.testing.assert_allclose(res["h"], y_h, atol=ATOL, rtol=RTOL)
    np.testing.assert_allclose(res["c"], y_c, atol=ATOL, rtol=RTOL)
    np.testing.assert_allclose(res["seq"], y, atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize(("direction", "layout", "optional"), [
    ("forward", "iofg", True), ("forward", "ifgo", False), ("backward", "ifgo", True),
    ("both", "iofg", True), ("both", "ifgo", False)])
@pytest.mark.parametrize("return_sequence", [True, False])
def test_lstm_matches_native_including_output_peephole(direction: str, layout: str,
                                                       optional: bool,
                                                       return_sequence: bool) -> None:
    d = 2 if direction == "both" else 1
    data = _lstm_data(32, d)
    if not optional:
        data = {k: v for k, v in data.items() if k in ("x", "w", "r")}

    def build(b: MLGraphBuilder, i: dict[str, Any]) -> dict[str, Any]:
        kw = dict(bias=i.get("b"), recurrent_bias=i.get("rb"), peephole_weight=i.get("p"),
                  initial_hidden_state=i.get("h0"), initial_cell_state=i.get("c0"),
                  return_sequence=return_sequence, direction=direction, layout=layout,
                  activations=["sigmoid", "tanh", "relu"])
        native = b.lstm(i["x"], i["w"], i["r"], 3, 4, **kw)
        decomposed = dcr.lstm(b, i["x"], i["w"], i["r"], 3, 4, **kw)
        assert [o.shape for o in native] == [o.shape for o in decomposed]
        return {f"n{k}": o for k, o in enumerate(native)} | {
            f"d{k}": o for k, o in enumerate(decomposed)}

    res, _ = _run(build, data)
    for k in range(3 if return_sequence else 2):
        np.testing.assert_allclose(res[f"d{k}"], res[f"n{k}"], atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("layout", ["iofg", "ifgo"])
def test_lstm_cell_matches_native(layout: str) -> None:
    rng = np.random.default_rng(33)
    data = {"x": _rand(rng, (2, 3), 1.0), "w": _rand(rng, (16, 3)), "r": _rand(rng, (16, 4)),
            "h": _rand(rng, (2, 4), 1.0), "c": _rand(rng, (2, 4), 1.0),
            "b": _rand(rng, (16,)), "rb": _rand(rng, (16,)), "p": _rand(rng, (12,))}

    def build(b: MLGraphBuilder, i: dict[str, Any]) -> dict[str, Any]:
        kw = dict(bias=i["b"], recurrent_bias=i["rb"], peephole_weight=i["p"], layout=layout)
        n = b.lstm_cell(i["x"], i["w"], i["r"], i["h"], i["c"], 4, **kw)
        dd = dcr.lstm_cell(b, i["x"], i["w"], i["r"], i["h"], i["c"], 4, **kw)
        return {"nh": n[0], "nc": n[1], "dh": dd[0], "dc": dd[1]}

    res, _ = _run(build, data)
    np.testing.assert_allclose(res["dh"], res["nh"], atol=ATOL, rtol=RTOL)
    np.testing.assert_allclose(res["dc"], res["nc"], atol=ATOL, rtol=RTOL)


def test_recurrent_decompositions_validate_like_native() -> None:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [3, 2, 3], "float32")
    w = b.input("w", [1, 12, 3], "float32")
    r = b.input("r", [1, 12, 4], "float32")
    with pytest.raises(MLTypeError, match="gru: input.shape"):
        dcr.gru(b, x, w, r, 2, 4)
    with pytest.raises(MLTypeError, match="gru: activations must have 2 items"):
        dcr.gru(b, x, w, r, 3, 4, activations=(dc.sigmoid_fn,))
    with pytest.raises(MLTypeError, match="gru: activation 'gelu' is not one of"):
        dcr.gru(b, x, w, r, 3, 4, activations=("sigmoid", "gelu"))
    with pytest.raises(MLTypeError, match="lstm: activation 'elu' is not one of"):
        dcr.lstm(b, x, b.input("w4", [1, 16, 3], "float32"),
                b.input("r4", [1, 16, 4], "float32"), 3, 4,
                activations=(dc.sigmoid_fn, "elu", dc.tanh_fn))
    with pytest.raises(MLTypeError, match="neither a name nor a callable"):
        dcr.gru(b, x, w, r, 3, 4, activations=(dc.sigmoid_fn, 3))
    with pytest.raises(MLTypeError, match="lstm: weight shape"):
        dcr.lstm(b, x, w, r, 3, 4)
    with pytest.raises(MLTypeError, match="gruCell: input rank 3"):
        dcr.gru_cell(b, x, w, r, x, 4)
    with pytest.raises(MLTypeError, match="lstmCell: input rank 3"):
        dcr.lstm_cell(b, x, w, r, x, x, 4)


# -- normalisation, activations, shape helpers ---------------------------------------------
@pytest.mark.parametrize(("shape", "axes"), [((2, 3, 4), None), ((2, 3, 4), [2, 0]),
                                             ((2, 3, 4), [1]), ((5,), []), ((3, 4), [1, 0])])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_normalization_matches_formula(shape: tuple[int, ...], axes: list[int] | None,
                                             affine: bool) -> None:
    rng = np.random.default_rng(41)
    ax = list(range(1, len(shape))) if axes is None else axes
    pshape = tuple(shape[a] for a in ax)
    data = {"x": rng.normal(size=shape).astype(np.float32)}
    if affine:
        data |= {"s": rng.normal(size=pshape).astype(np.float32),
                 "b": rng.normal(size=pshape).astype(np.float32)}

    def build(b: MLGraphBuilder, i: dict[str, Any]) -> dict[str, Any]:
        return {"y": dc.layer_normalization(b, i["x"], scale=i.get("s"), bias=i.get("b"),
                                            axes=axes, epsilon=1e-3)}

    res, ops = _run(build, data)
    assert "layerNormalization" not in ops
    x = data["x"].astype(np.float64)
    mean = x.mean(axis=tuple(ax), keepdims=True)
    var = ((x - mean) ** 2).mean(axis=tuple(ax), keepdims=True)
    want = (x - mean) / np.sqrt(var + 1e-3)
    if affine:
        # parameter dims follow `axes` order; move them to the input's axis order
        order = np.argsort(ax)
        bshape = [shape[a] if a in ax else 1 for a in range(len(shape))]
        s = data["s"].astype(np.float64).transpose(order).reshape(bshape)
        bb = data["b"].astype(np.float64).transpose(order).reshape(bshape)
        want = want * s + bb
    np.testing.assert_allclose(res["y"], want, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_gelu_matches_formula(dtype: str) -> None:
    x = np.linspace(-6, 6, 49).astype(dtype)
    res, _ = _run(lambda b, i: {"y": dc.gelu(b, i["x"])}, {"x": x})
    erf = np.vectorize(math.erf)
    xd = x.astype(np.float64)
    want = 0.5 * xd * (1.0 + erf(xd / math.sqrt(2.0)))
    tol = 2e-6 if dtype == "float32" else 4e-3
    assert res["y"].dtype == np.dtype(dtype)
    np.testing.assert_allclose(res["y"], want, atol=tol, rtol=tol)


def test_shape_helpers() -> None:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", [2, 1, 3, 1], "float32")
    assert dc.squeeze(b, x).shape == (2, 3)
    assert dc.squeeze(b, x, [1]).shape == (2, 3, 1)
    assert dc.squeeze(b, x, [-1]).shape == (2, 1, 3)
    with pytest.raises(ValueError, match="is not 1"):
        dc.squeeze(b, x, [0])
    assert dc.unsqueeze(b, x, [0, -1]).shape == (1, 2, 1, 3, 1, 1)
    assert dc.unsqueeze(b, b.input("s", [], "float32"), [0]).shape == (1,)
    assert dc.flatten(b, x).shape == (2, 3)
    assert dc.flatten(b, x, 0).shape == (1, 6)
    assert dc.flatten(b, x, 3).shape == (6, 1)
    assert dc.flatten(b, x, 4).shape == (6, 1)
    with pytest.raises(ValueError, match="flatten: axis 5"):
        dc.flatten(b, x, 5)
    parts = [b.input(f"p{i}", [1, 2], "float32") for i in range(3)]
    assert dc.concat(b, parts[:1], 0) is parts[0]
    assert dc.concat(b, parts, 0).shape == (3, 2)


def test_flatten_and_squeeze_values() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 1, 4)

    def build(b: MLGraphBuilder, i: dict[str, Any]) -> dict[str, Any]:
        return {"f": dc.flatten(b, i["x"], 2), "s": dc.squeeze(b, i["x"], [2]),
                "u": dc.unsqueeze(b, i["x"], [1])}

    res, _ = _run(build, {"x": x})
    np.testing.assert_array_equal(res["f"], x.reshape(6, 4))
    np.testing.assert_array_equal(res["s"], x.reshape(2, 3, 4))
    np.testing.assert_array_equal(res["u"], x.reshape(2, 1, 3, 1, 4))


# -- quantization --------------------------------------------------------------------------
def _expand(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    idx = np.indices(shape)
    return a[tuple(idx[k] // (shape[k] // a.shape[k]) for k in range(len(shape)))]


@pytest.mark.parametrize(("shape", "scale_shape"), [((2, 6, 4), (1, 3, 1)), ((4, 6), (2, 3)),
                                                    ((5,), (1,))])
@pytest.mark.parametrize("zp_dtype", ["uint8", "int8", "int32"])
def test_quantize_dequantize_match_formula(shape: tuple[int, ...],
                                           scale_shape: tuple[int, ...], zp_dtype: str) -> None:
    rng = np.random.default_rng(51)
    scale = rng.uniform(0.02, 0.5, scale_shape).astype(np.float32)
    zp = rng.integers(-5 if zp_dtype != "uint8" else 0, 20, scale_shape).astype(zp_dtype)
    x = rng.uniform(-80, 80, shape).astype(np.float32)
    q_in = rng.integers(0 if zp_dtype == "uint8" else -100, 100, shape).astype(zp_dtype)

    def build(b: MLGraphBuilder, i: dict[str, Any]) -> dict[str, Any]:
        s, z = b.constant(scale), b.constant(zp)
        return {"q": dc.quantize_linear(b, i["x"], s, z),
                "dq": dc.dequantize_linear(b, i["q"], s, z)}

    res, ops = _run(build, {"x": x, "q": q_in})
    assert not ops & {"quantizeLinear", "dequantizeLinear"}
    s64, z64 = _expand(scale.astype(np.float64), shape), _expand(zp.astype(np.float64), shape)
    info = np.iinfo(zp_dtype)
    want_q = np.clip(np.rint(x.astype(np.float64) / s64) + z64, info.min, info.max)
    np.testing.assert_array_equal(res["q"], want_q.astype(zp_dtype))
    want_dq = (q_in.astype(np.float64) - z64) * s64
    np.testing.assert_allclose(res["dq"], want_dq, rtol=1e-6)


def test_blockwise_expand_is_contiguous() -> None:
    a = np.array([[1, 2], [3, 4]], np.float32)
    res, _ = _run(lambda b, i: {"y": dc.blockwise_expand(b, i["a"], [4, 6])}, {"a": a})
    np.testing.assert_array_equal(res["y"], np.repeat(np.repeat(a, 2, 0), 3, 1))


def test_single_step_sequences_match_native() -> None:
    g, ls = _gru_data(61, 2, steps=1), _lstm_data(62, 2, steps=1)
    data = {"gx": g["x"], "gw": g["w"], "gr": g["r"], "lx": ls["x"], "lw": ls["w"],
            "lr": ls["r"]}

    def build(b: MLGraphBuilder, i: dict[str, Any]) -> dict[str, Any]:
        kw = dict(return_sequence=True, direction="both")
        ng = b.gru(i["gx"], i["gw"], i["gr"], 1, 4, **kw)
        dg = dcr.gru(b, i["gx"], i["gw"], i["gr"], 1, 4, **kw)
        nl = b.lstm(i["lx"], i["lw"], i["lr"], 1, 4, **kw)
        dl = dcr.lstm(b, i["lx"], i["lw"], i["lr"], 1, 4, **kw)
        return {"ng": ng[1], "dg": dg[1], "nl": nl[2], "dl": dl[2], "nc": nl[1], "dc": dl[1]}

    res, _ = _run(build, data)
    for k in ("g", "l", "c"):
        np.testing.assert_allclose(res[f"d{k}"], res[f"n{k}"], atol=ATOL, rtol=RTOL)
