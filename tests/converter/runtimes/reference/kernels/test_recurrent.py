"""Reference kernels gru, gruCell, lstm, lstmCell against onnxruntime one-node ONNX GRU/LSTM
models (opset 14), plus a float64 numpy LSTM written from the spec formula for the one place
ONNX differs (the output-gate peephole reads the incoming cell state in WebNN).

Mapping WebNN -> ONNX: GRU weights zrn == ONNX zrh (rzn is permuted), B = concat(bias,
recurrentBias); resetAfter <-> linear_before_reset; LSTM iofg == ONNX iofc (ifgo permuted),
peephole packed i, o, f in both; direction backward <-> reverse, both <-> bidirectional.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from converter.core.webnn import ML, MLGraphBuilder

ONNX_ACT = {"sigmoid": "Sigmoid", "tanh": "Tanh", "relu": "Relu"}
ONNX_DIR = {"forward": "forward", "backward": "reverse", "both": "bidirectional"}
ATOL, RTOL = 2e-6, 2e-5          # float32 vs onnxruntime float32
ATOL16, RTOL16 = 2e-3, 2e-3      # float16 result vs float32 oracle on the same inputs


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _ort(node: onnx.NodeProto, inputs: dict[str, np.ndarray | None],
         outputs: list[str]) -> list[np.ndarray]:
    """Run one float32 ONNX node; inputs mapped to None are omitted (empty name)."""
    node_inputs = [name if value is not None else "" for name, value in inputs.items()]
    while node_inputs and node_inputs[-1] == "":
        node_inputs.pop()
    del node.input[:]
    node.input.extend(node_inputs)
    feeds = {k: val.astype(np.float32) for k, val in inputs.items() if val is not None}
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(val.shape))
         for k, val in feeds.items()],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(outputs, feeds)


def _permute(a: np.ndarray, order: list[int], h: int, axis: int) -> np.ndarray:
    """Reorder the gate blocks (each h wide) of `a` along `axis`."""
    blocks = np.split(a, a.shape[axis] // h, axis=axis)
    return np.concatenate([blocks[i] for i in order], axis=axis)


# -- GRU -----------------------------------------------------------------------------------
def _onnx_gru(x: np.ndarray, w: np.ndarray, r: np.ndarray, b: np.ndarray | None,
              rb: np.ndarray | None, h0: np.ndarray | None, h: int, *, reset_after: bool,
              direction: str, layout: str, activations: list[str]
              ) -> tuple[np.ndarray, np.ndarray]:
    d = w.shape[0]
    if layout == "rzn":  # WebNN rzn -> ONNX zrh
        w, r = _permute(w, [1, 0, 2], h, 1), _permute(r, [1, 0, 2], h, 1)
        b = None if b is None else _permute(b, [1, 0, 2], h, 1)
        rb = None if rb is None else _permute(rb, [1, 0, 2], h, 1)
    bias = None
    if b is not None or rb is not None:
        zeros = np.zeros((d, 3 * h), np.float32)
        bias = np.concatenate([zeros if b is None else b, zeros if rb is None else rb], 1)
    node = helper.make_node("GRU", [], ["Y", "Y_h"], hidden_size=h,
                            direction=ONNX_DIR[direction],
                            linear_before_reset=int(reset_after),
                            activations=[ONNX_ACT[a] for a in activations] * d)
    y, y_h = _ort(node, {"X": x, "W": w, "R": r, "B": bias, "sequence_lens": None,
                         "initial_h": h0}, ["Y", "Y_h"])
    return y, y_h


def _webnn_gru(dtype: str, x: np.ndarray, w: np.ndarray, r: np.ndarray,
               b: np.ndarray | None, rb: np.ndarray | None, h0: np.ndarray | None, h: int,
               **options: Any) -> list[np.ndarray]:
    ctx = ML().create_context()
    bld = MLGraphBuilder(ctx)
    xi = bld.input("x", list(x.shape), dtype)

    def const(a: np.ndarray | None) -> Any:
        return None if a is None else bld.constant(a.astype(dtype))

    outs = bld.gru(xi, const(w), const(r), x.shape[0], h, bias=const(b),
                   recurrent_bias=const(rb), initial_hidden_state=const(h0), **options)
    graph = bld.build({f"o{i}": o for i, o in enumerate(outs)})
    res = ctx.compute(graph, {"x": x.astype(dtype)})
    return [res[f"o{i}"] for i in range(len(outs))]


GRU_CASES = [
    # (direction, layout, reset_after, activations, with_bias, with_h0)
    ("forward", "zrn", True, ["sigmoid", "tanh"], True, True),
    ("forward", "zrn", False, ["sigmoid", "tanh"], True, False),
    ("backward", "zrn", True, ["sigmoid", "tanh"], True, True),
    ("both", "zrn", False, ["sigmoid", "tanh"], True, True),
    ("both", "rzn", True, ["sigmoid", "tanh"], True, True),
    ("forward", "rzn", False, ["sigmoid", "tanh"], False, False),
    ("forward", "zrn", True, ["sigmoid", "relu"], True, True),
    ("backward", "zrn", False, ["tanh", "sigmoid"], True, False),
    ("both", "zrn", True, ["relu", "tanh"], False, True),
]


@pytest.mark.parametrize(("direction", "layout", "reset_after", "acts", "with_bias", "with_h0"),
                         GRU_CASES)
@pytest.mark.parametrize("return_sequence", [True, False])
def test_gru_matches_onnxruntime(direction: str, layout: str, reset_after: bool,
                                 acts: list[str], with_bias: bool, with_h0: bool,
                                 return_sequence: bool) -> None:
    rng = _rng(1)
    steps, batch, inp, h = 4, 3, 5, 6
    d = 2 if direction == "both" else 1
    x = rng.uniform(-1, 1, (steps, batch, inp)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, (d, 3 * h, inp)).astype(np.float32)
    r = rng.uniform(-0.5, 0.5, (d, 3 * h, h)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, (d, 3 * h)).astype(np.float32) if with_bias else None
    rb = rng.uniform(-0.5, 0.5, (d, 3 * h)).astype(np.float32) if with_bias else None
    h0 = rng.uniform(-1, 1, (d, batch, h)).astype(np.float32) if with_h0 else None
    y, y_h = _onnx_gru(x, w, r, b, rb, h0, h, reset_after=reset_after, direction=direction,
                       layout=layout, activations=acts)
    outs = _webnn_gru("float32", x, w, r, b, rb, h0, h, reset_after=reset_after,
                      direction=direction, layout=layout, activations=acts,
                      return_sequence=return_sequence)
    assert len(outs) == (2 if return_sequence else 1)
    assert outs[0].dtype == np.float32 and outs[0].shape == (d, batch, h)
    np.testing.assert_allclose(outs[0], y_h, atol=ATOL, rtol=RTOL)
    if return_sequence:
        assert outs[1].shape == (steps, d, batch, h)
        np.testing.assert_allclose(outs[1], y, atol=ATOL, rtol=RTOL)


def test_gru_only_recurrent_bias_and_float16() -> None:
    rng = _rng(2)
    steps, batch, inp, h = 3, 2, 4, 5
    x = rng.uniform(-1, 1, (steps, batch, inp)).astype(np.float16)
    w = rng.uniform(-0.5, 0.5, (2, 3 * h, inp)).astype(np.float16)
    r = rng.uniform(-0.5, 0.5, (2, 3 * h, h)).astype(np.float16)
    rb = rng.uniform(-0.5, 0.5, (2, 3 * h)).astype(np.float16)
    y, y_h = _onnx_gru(x, w, r, None, rb, None, h, reset_after=False, direction="both",
                       layout="zrn", activations=["sigmoid", "tanh"])
    outs = _webnn_gru("float16", x, w, r, None, rb, None, h, reset_after=False,
                      direction="both", return_sequence=True)
    assert outs[0].dtype == np.float16 and outs[1].dtype == np.float16
    np.testing.assert_allclose(outs[0], y_h, atol=ATOL16, rtol=RTOL16)
    np.testing.assert_allclose(outs[1], y, atol=ATOL16, rtol=RTOL16)


@pytest.mark.parametrize(("layout", "reset_after", "acts"),
                         [("zrn", True, ["sigmoid", "tanh"]), ("rzn", False, ["sigmoid", "tanh"]),
                          ("zrn", False, ["relu", "sigmoid"])])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_gru_cell_matches_one_onnx_step(layout: str, reset_after: bool, acts: list[str],
                                        dtype: str) -> None:
    rng = _rng(3)
    batch, inp, h = 3, 4, 5
    x = rng.uniform(-1, 1, (batch, inp)).astype(dtype)
    w = rng.uniform(-0.5, 0.5, (3 * h, inp)).astype(dtype)
    r = rng.uniform(-0.5, 0.5, (3 * h, h)).astype(dtype)
    hs = rng.uniform(-1, 1, (batch, h)).astype(dtype)
    b = rng.uniform(-0.5, 0.5, (3 * h,)).astype(dtype)
    rb = rng.uniform(-0.5, 0.5, (3 * h,)).astype(dtype)
    _, y_h = _onnx_gru(x[None], w[None], r[None], b[None], rb[None], hs[None], h,
                       reset_after=reset_after, direction="forward", layout=layout,
                       activations=acts)
    ctx = ML().create_context()
    bld = MLGraphBuilder(ctx)
    xi = bld.input("x", [batch, inp], dtype)
    out = bld.gru_cell(xi, bld.constant(w), bld.constant(r), bld.constant(hs), h,
                       bias=bld.constant(b), recurrent_bias=bld.constant(rb),
                       reset_after=reset_after, layout=layout, activations=acts)
    res = ctx.compute(bld.build({"y": out}), {"x": x})["y"]
    assert res.dtype == np.dtype(dtype) and res.shape == (batch, h)
    tol = (ATOL, RTOL) if dtype == "float32" else (ATOL16, RTOL16)
    np.testing.assert_allclose(res, y_h[0], atol=tol[0], rtol=tol[1])


def test_gru_cell_defaults_zero_biases() -> None:
    rng = _rng(4)
    x = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, (6, 3)).astype(np.float32)
    r = rng.uniform(-0.5, 0.5, (6, 2)).astype(np.float32)
    hs = rng.uniform(-1, 1, (2, 2)).astype(np.float32)
    _, y_h = _onnx_gru(x[None], w[None], r[None], None, None, hs[None], 2, reset_after=True,
                       direction="forward", layout="zrn", activations=["sigmoid", "tanh"])
    ctx = ML().create_context()
    bld = MLGraphBuilder(ctx)
    out = bld.gru_cell(bld.input("x", [2, 3], "float32"), bld.constant(w), bld.constant(r),
                       bld.constant(hs), 2)
    res = ctx.compute(bld.build({"y": out}), {"x": x})["y"]
    np.testing.assert_allclose(res, y_h[0], atol=ATOL, rtol=RTOL)


# -- LSTM ----------------------------------------------------------------------------------
IFGO_TO_IOFG = [0, 3, 1, 2]  # WebNN ifgo blocks (i f g o) -> ONNX iofc order


def _onnx_lstm(x: np.ndarray, w: np.ndarray, r: np.ndarray, b: np.ndarray | None,
               rb: np.ndarray | None, p: np.ndarray | None, h0: np.ndarray | None,
               c0: np.ndarray | None, h: int, *, direction: str, layout: str,
               activations: list[str]) -> list[np.ndarray]:
    d = w.shape[0]
    if layout == "ifgo":
        w, r = _permute(w, IFGO_TO_IOFG, h, 1), _permute(r, IFGO_TO_IOFG, h, 1)
        b = None if b is None else _permute(b, IFGO_TO_IOFG, h, 1)
        rb = None if rb is None else _permute(rb, IFGO_TO_IOFG, h, 1)
    bias = None
    if b is not None or rb is not None:
        zeros = np.zeros((d, 4 * h), np.float32)
        bias = np.concatenate([zeros if b is None else b, zeros if rb is None else rb], 1)
    node = helper.make_node("LSTM", [], ["Y", "Y_h", "Y_c"], hidden_size=h,
                            direction=ONNX_DIR[direction],
                            activations=[ONNX_ACT[a] for a in activations] * d)
    return _ort(node, {"X": x, "W": w, "R": r, "B": bias, "sequence_lens": None,
                       "initial_h": h0, "initial_c": c0, "P": p}, ["Y", "Y_h", "Y_c"])


def _webnn_lstm(dtype: str, x: np.ndarray, w: np.ndarray, r: np.ndarray,
                b: np.ndarray | None, rb: np.ndarray | None, p: np.ndarray | None,
                h0: np.ndarray | None, c0: np.ndarray | None, h: int,
                **options: Any) -> list[np.ndarray]:
    ctx = ML().create_context()
    bld = MLGraphBuilder(ctx)
    xi = bld.input("x", list(x.shape), dtype)

    def const(a: np.ndarray | None) -> Any:
        return None if a is None else bld.constant(a.astype(dtype))

    outs = bld.lstm(xi, const(w), const(r), x.shape[0], h, bias=const(b),
                    recurrent_bias=const(rb), peephole_weight=const(p),
                    initial_hidden_state=const(h0), initial_cell_state=const(c0), **options)
    graph = bld.build({f"o{i}": o for i, o in enumerate(outs)})
    res = ctx.compute(graph, {"x": x.astype(dtype)})
    return [res[f"o{i}"] for i in range(len(outs))]


def _peephole_io(rng: np.random.Generator, d: int, h: int) -> np.ndarray:
    """Peephole weights for i and f only: ONNX's output-gate peephole reads the new cell
    state, WebNN's the incoming one, so po = 0 keeps the two comparable."""
    p = rng.uniform(-0.5, 0.5, (d, 3 * h)).astype(np.float32)
    p[:, h:2 * h] = 0.0
    return p


LSTM_CASES = [
    # (direction, layout, activations, with_bias, with_peephole, with_states)
    ("forward", "iofg", ["sigmoid", "tanh", "tanh"], True, False, True),
    ("forward", "ifgo", ["sigmoid", "tanh", "tanh"], True, True, False),
    ("backward", "iofg", ["sigmoid", "tanh", "tanh"], True, True, True),
    ("both", "iofg", ["sigmoid", "tanh", "tanh"], True, True, True),
    ("both", "ifgo", ["sigmoid", "tanh", "tanh"], False, False, True),
    ("forward", "iofg", ["sigmoid", "relu", "tanh"], True, False, True),
    ("backward", "ifgo", ["tanh", "sigmoid", "relu"], True, True, False),
]


@pytest.mark.parametrize(("direction", "layout", "acts", "with_bias", "with_peephole",
                          "with_states"), LSTM_CASES)
@pytest.mark.parametrize("return_sequence", [True, False])
def test_lstm_matches_onnxruntime(direction: str, layout: str, acts: list[str],
                                  with_bias: bool, with_peephole: bool, with_states: bool,
                                  return_sequence: bool) -> None:
    rng = _rng(5)
    steps, batch, inp, h = 4, 2, 3, 5
    d = 2 if direction == "both" else 1
    x = rng.uniform(-1, 1, (steps, batch, inp)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, (d, 4 * h, inp)).astype(np.float32)
    r = rng.uniform(-0.5, 0.5, (d, 4 * h, h)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, (d, 4 * h)).astype(np.float32) if with_bias else None
    rb = rng.uniform(-0.5, 0.5, (d, 4 * h)).astype(np.float32) if with_bias else None
    p = _peephole_io(rng, d, h) if with_peephole else None
    h0 = rng.uniform(-1, 1, (d, batch, h)).astype(np.float32) if with_states else None
    c0 = rng.uniform(-1, 1, (d, batch, h)).astype(np.float32) if with_states else None
    y, y_h, y_c = _onnx_lstm(x, w, r, b, rb, p, h0, c0, h, direction=direction,
                             layout=layout, activations=acts)
    outs = _webnn_lstm("float32", x, w, r, b, rb, p, h0, c0, h, direction=direction,
                       layout=layout, activations=acts, return_sequence=return_sequence)
    assert len(outs) == (3 if return_sequence else 2)
    np.testing.assert_allclose(outs[0], y_h, atol=ATOL, rtol=RTOL)
    np.testing.assert_allclose(outs[1], y_c, atol=ATOL, rtol=RTOL)
    if return_sequence:
        assert outs[2].shape == (steps, d, batch, h)
        np.testing.assert_allclose(outs[2], y, atol=ATOL, rtol=RTOL)


def test_lstm_float16_matches_float32_oracle() -> None:
    rng = _rng(6)
    steps, batch, inp, h = 3, 2, 4, 3
    x = rng.uniform(-1, 1, (steps, batch, inp)).astype(np.float16)
    w = rng.uniform(-0.5, 0.5, (2, 4 * h, inp)).astype(np.float16)
    r = rng.uniform(-0.5, 0.5, (2, 4 * h, h)).astype(np.float16)
    b = rng.uniform(-0.5, 0.5, (2, 4 * h)).astype(np.float16)
    y, y_h, y_c = _onnx_lstm(x, w, r, b, None, None, None, None, h, direction="both",
                             layout="iofg", activations=["sigmoid", "tanh", "tanh"])
    outs = _webnn_lstm("float16", x, w, r, b, None, None, None, None, h, direction="both",
                       return_sequence=True)
    assert all(o.dtype == np.float16 for o in outs)
    for got, want in zip(outs, (y_h, y_c, y), strict=True):
        np.testing.assert_allclose(got, want, atol=ATOL16, rtol=RTOL16)


@pytest.mark.parametrize("layout", ["iofg", "ifgo"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_lstm_cell_matches_one_onnx_step(layout: str, dtype: str) -> None:
    rng = _rng(7)
    batch, inp, h = 2, 3, 4
    x = rng.uniform(-1, 1, (batch, inp)).astype(dtype)
    w = rng.uniform(-0.5, 0.5, (4 * h, inp)).astype(dtype)
    r = rng.uniform(-0.5, 0.5, (4 * h, h)).astype(dtype)
    hs = rng.uniform(-1, 1, (batch, h)).astype(dtype)
    cs = rng.uniform(-1, 1, (batch, h)).astype(dtype)
    b = rng.uniform(-0.5, 0.5, (4 * h,)).astype(dtype)
    rb = rng.uniform(-0.5, 0.5, (4 * h,)).astype(dtype)
    p = _peephole_io(rng, 1, h)[0].astype(dtype)
    _, y_h, y_c = _onnx_lstm(x[None], w[None], r[None], b[None], rb[None], p[None], hs[None],
                             cs[None], h, direction="forward", layout=layout,
                             activations=["sigmoid", "tanh", "tanh"])
    ctx = ML().create_context()
    bld = MLGraphBuilder(ctx)
    out = bld.lstm_cell(bld.input("x", [batch, inp], dtype), bld.constant(w),
                        bld.constant(r), bld.constant(hs), bld.constant(cs), h,
                        bias=bld.constant(b), recurrent_bias=bld.constant(rb),
                        peephole_weight=bld.constant(p), layout=layout)
    assert isinstance(out, list) and len(out) == 2
    res = ctx.compute(bld.build({"h": out[0], "c": out[1]}), {"x": x})
    tol = (ATOL, RTOL) if dtype == "float32" else (ATOL16, RTOL16)
    np.testing.assert_allclose(res["h"], y_h[0], atol=tol[0], rtol=tol[1])
    np.testing.assert_allclose(res["c"], y_c[0], atol=tol[0], rtol=tol[1])


# -- LSTM output-gate peephole: float64 numpy straight from the spec formula ---------------
def _sig(v: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-v))


def _spec_lstm_cell(x: np.ndarray, w: np.ndarray, r: np.ndarray, hs: np.ndarray,
                    cs: np.ndarray, b: np.ndarray, rb: np.ndarray, p: np.ndarray,
                    h: int) -> tuple[np.ndarray, np.ndarray]:
    """Spec lstmCell, iofg layout, default activations; every gate written out."""
    def gate(k: int) -> np.ndarray:
        rows = slice(k * h, (k + 1) * h)
        return x @ w[rows].T + hs @ r[rows].T + b[rows] + rb[rows]

    pi, po, pf = p[:h], p[h:2 * h], p[2 * h:]
    i = _sig(gate(0) + pi * cs)
    o = _sig(gate(1) + po * cs)    # the incoming cell state
    f = _sig(gate(2) + pf * cs)
    g = np.tanh(gate(3))
    c = f * cs + i * g
    return o * np.tanh(c), c


def test_lstm_output_peephole_uses_incoming_cell_state() -> None:
    rng = _rng(8)
    steps, batch, inp, h = 3, 2, 3, 4
    x = rng.uniform(-1, 1, (steps, batch, inp)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, (1, 4 * h, inp)).astype(np.float32)
    r = rng.uniform(-0.5, 0.5, (1, 4 * h, h)).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, (1, 4 * h)).astype(np.float32)
    rb = rng.uniform(-0.5, 0.5, (1, 4 * h)).astype(np.float32)
    p = rng.uniform(-1, 1, (1, 3 * h)).astype(np.float32)
    c0 = rng.uniform(-1, 1, (1, batch, h)).astype(np.float32)
    f64 = [a.astype(np.float64) for a in (x, w[0], r[0], b[0], rb[0], p[0], c0[0])]
    hs, cs = np.zeros((batch, h)), f64[6]
    seq = []
    for t in range(steps):
        hs, cs = _spec_lstm_cell(f64[0][t], f64[1], f64[2], hs, cs, f64[3], f64[4], f64[5], h)
        seq.append(hs)
    outs = _webnn_lstm("float32", x, w, r, b, rb, p, None, c0, h, return_sequence=True)
    np.testing.assert_allclose(outs[0][0], hs, atol=ATOL, rtol=RTOL)
    np.testing.assert_allclose(outs[1][0], cs, atol=ATOL, rtol=RTOL)
    np.testing.assert_allclose(outs[2][:, 0], np.stack(seq), atol=ATOL, rtol=RTOL)
