"""Graphs shared by the exporter tests: hand-built graphs covering every operator family
and option kind, graphs rebuilt from the WPT conformance cases, and hostile names."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from converter.core.webnn import ML, MLContext, MLGraph, MLGraphBuilder, MLOperand
from tests.wpt import WptCase, build_graph

HOSTILE_NAMES = [
    'quote"inside', "back\\slash\\", "new\nline", "</script><script>alert(1)</script>",
    "ünïcødé 名前", "0leading", "x:0", "true", "__proto__", "inputs", "a-b", "tab\there",
    "\u2028line\u2029sep", "${x}`", "' + alert(1) + '", "]]>&amp;<!--",
]


@dataclass(frozen=True)
class Example:
    """A built graph, the context it belongs to and inputs to run it with."""

    name: str
    context: MLContext
    graph: MLGraph
    feeds: dict[str, np.ndarray]


RNG = np.random.default_rng(1234)


def _rand(shape: list[int], dtype: str = "float32", lo: float = -1.0, hi: float = 1.0
          ) -> np.ndarray:
    if np.dtype(dtype).kind == "f":
        return RNG.uniform(lo, hi, shape).astype(dtype)
    return RNG.integers(int(lo), int(hi), shape).astype(dtype)


class _Maker:
    def __init__(self) -> None:
        self.context = ML().create_context()
        self.b = MLGraphBuilder(self.context)
        self.feeds: dict[str, np.ndarray] = {}

    def input(self, name: str, shape: list[int], dtype: str = "float32", lo: float = -1.0,
              hi: float = 1.0) -> MLOperand:
        self.feeds[name] = _rand(shape, dtype, lo, hi)
        return self.b.input(name, shape, dtype)

    def const(self, shape: list[int], dtype: str = "float32", lo: float = -1.0,
              hi: float = 1.0) -> MLOperand:
        return self.b.constant(_rand(shape, dtype, lo, hi))

    def done(self, name: str, outputs: dict[str, MLOperand]) -> Example:
        return Example(name, self.context, self.b.build(outputs), self.feeds)


def conv_family() -> Example:
    m = _Maker()
    b = m.b
    x = m.input("x", [1, 6, 7, 7])
    w = m.const([4, 3, 3, 3])
    y = b.conv2d(x, w, padding=[1, 2, 0, 1], strides=[2, 1], dilations=[1, 2], groups=2,
                 bias=m.const([4]), label="conv")
    xh = m.input("xh", [1, 5, 5, 2])
    y2 = b.conv2d(xh, m.const([3, 2, 2, 2]), input_layout="nhwc", filter_layout="ohwi")
    t = b.conv_transpose2d(x, m.const([6, 2, 3, 3]), strides=[2, 2], padding=[1, 1, 1, 1],
                           output_padding=[1, 1], groups=1, bias=m.const([2]))
    t2 = b.conv_transpose2d(x, m.const([6, 1, 2, 2]), strides=[2, 2], output_sizes=[14, 15],
                            groups=1)
    p1 = b.average_pool2d(x, window_dimensions=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1],
                          output_shape_rounding="ceil")
    p2 = b.max_pool2d(xh, window_dimensions=[2, 2], layout="nhwc", dilations=[2, 2],
                      output_sizes=[3, 3], strides=[1, 1])
    p3 = b.l2_pool2d(x)
    r1 = b.resample2d(x, mode="linear", scales=[2.0, 1.5])
    r2 = b.resample2d(xh, sizes=[3, 9], axes=[1, 2])
    return m.done("conv", {"y": y, "y2": y2, "t": t, "t2": t2, "p1": p1, "p2": p2, "p3": p3,
                           "r1": r1, "r2": r2})


def recurrent_family() -> Example:
    m = _Maker()
    b = m.b
    steps, batch, inp, h = 3, 2, 4, 5
    x = m.input("x", [steps, batch, inp])
    gru = b.gru(x, m.const([2, 3 * h, inp]), m.const([2, 3 * h, h]), steps, h,
                bias=m.const([2, 3 * h]), recurrent_bias=m.const([2, 3 * h]),
                initial_hidden_state=m.const([2, batch, h]), reset_after=False,
                return_sequence=True, direction="both", layout="rzn",
                activations=["sigmoid", "relu"])
    lstm = b.lstm(x, m.const([1, 4 * h, inp]), m.const([1, 4 * h, h]), steps, h,
                  bias=m.const([1, 4 * h]), recurrent_bias=m.const([1, 4 * h]),
                  peephole_weight=m.const([1, 3 * h]), initial_hidden_state=m.const([1, batch, h]),
                  initial_cell_state=m.const([1, batch, h]), return_sequence=True,
                  direction="backward", layout="ifgo", activations=["sigmoid", "tanh", "relu"])
    lstm2 = b.lstm(x, m.const([1, 4 * h, inp]), m.const([1, 4 * h, h]), steps, h)
    x1 = m.input("x1", [batch, inp])
    hs = m.input("hs", [batch, h])
    cs = m.input("cs", [batch, h])
    gc = b.gru_cell(x1, m.const([3 * h, inp]), m.const([3 * h, h]), hs, h,
                    bias=m.const([3 * h]), recurrent_bias=m.const([3 * h]), layout="zrn")
    lc = b.lstm_cell(x1, m.const([4 * h, inp]), m.const([4 * h, h]), hs, cs, h,
                     bias=m.const([4 * h]), peephole_weight=m.const([3 * h]))
    return m.done("recurrent", {"gru_h": gru[0], "gru_seq": gru[1], "lstm_h": lstm[0],
                                "lstm_c": lstm[1], "lstm_seq": lstm[2], "lstm2_c": lstm2[1],
                                "gru_cell": gc, "lstm_cell_h": lc[0], "lstm_cell_c": lc[1]})


def shape_family() -> Example:
    m = _Maker()
    b = m.b
    x = m.input("x", [2, 6, 4])
    parts = b.split(x, [1, 2, 3], axis=1)
    halves = b.split(x, 2)
    cat = b.concat([parts[2], parts[0], parts[1]], 1)
    pad_c = b.pad(x, [0, 1, 2], [1, 0, 1], value=-np.inf)
    pad_r = b.pad(x, [1, 2, 1], [1, 1, 3], mode="reflection")
    pad_e = b.pad(x, [0, 1, 0], [0, 0, 2], mode="edge")
    sl = b.slice(x, [0, 1, 1], [2, 4, 2], strides=[1, 2, 1])
    rs = b.reshape(x, [4, 12])
    ex = b.expand(m.input("e", [1, 4]), [3, 2, 4])
    ti = b.tile(x, [1, 2, 3])
    tr = b.transpose(x, permutation=[2, 0, 1])
    tri = b.triangular(rs, upper=False, diagonal=-1)
    rev = b.reverse(x, axes=[0, 2])
    i64 = m.input("ints", [3, 5], "int64", -5, 5)
    pad_i = b.pad(i64, [1, 0], [0, 1], value=2**62 + 1)
    scalar_in = m.input("s", [])
    sc = b.reshape(scalar_in, [1, 1])
    return m.done("shape", {"p0": parts[0], "p1": parts[1], "p2": parts[2], "h1": halves[1],
                            "cat": cat, "pad_c": pad_c, "pad_r": pad_r, "pad_e": pad_e,
                            "sl": sl, "ex": ex, "ti": ti, "tr": tr, "tri": tri, "rev": rev,
                            "pad_i": pad_i, "sc": sc})


def elementwise_family() -> Example:
    m = _Maker()
    b = m.b
    x = m.input("x", [3, 4], lo=-3, hi=3)
    y = m.input("y", [4], lo=0.5, hi=2)
    i = m.input("i", [3, 4], "int32", -50, 50)
    u8 = m.input("u8", [3, 4], "uint8", 0, 2)
    h = m.input("h", [3, 4], "float16", -2, 2)
    outs = {
        "clamp_int": b.clamp(i, min_value=-7, max_value=9),
        "clamp_hi": b.clamp(x, max_value=0.25),
        "clamp_inf": b.clamp(x, min_value=-np.inf, max_value=np.inf),
        "clamp_h": b.clamp(h, min_value=-1e6, max_value=0.5),
        "cast_i64": b.cast(x, "int64"),
        "cast_u8": b.cast(i, "uint8"),
        "cast_h": b.cast(x, "float16"),
        "where": b.where(u8, x, b.neg(x)),
        "prelu": b.prelu(x, y),
        "pow": b.pow(b.abs(x), y),
        "div": b.div(x, y),
        "logic": b.logical_xor(u8, b.logical_not(b.greater(x, b.sqrt(y)))),
        "isnan": b.is_nan(b.log(x)),
        "isinf": b.is_infinite(b.reciprocal(b.round_even(x))),
        "hsig": b.hard_sigmoid(x, alpha=0.3, beta=0.4),
        "elu": b.elu(h, alpha=0.7),
        "leaky": b.leaky_relu(x, alpha=0.125),
        "linear": b.linear(x, alpha=-1.5, beta=1e-30),
        "acts": b.add(b.gelu(x), b.mul(b.softplus(x), b.softsign(b.tanh(b.sigmoid(x))))),
        "trig": b.sub(b.sin(x), b.max(b.cos(x), b.min(b.tan(x), b.exp(b.erf(x))))),
        "misc": b.hard_swish(b.relu(b.sign(b.floor(b.ceil(x))))),
        "id": b.identity(i, label="identity with spaces"),
        "cmp": b.logical_or(b.logical_and(b.equal(x, y), b.not_equal(x, b.neg(y))),
                            b.logical_and(b.greater_or_equal(x, y),
                                          b.logical_or(b.lesser(x, y), b.lesser_or_equal(i, i)))),
    }
    return m.done("elementwise", outs)


def reduce_family() -> Example:
    m = _Maker()
    b = m.b
    x = m.input("x", [2, 3, 4])
    outs = {
        "amax": b.arg_max(x, 2, keep_dimensions=True, output_data_type="int64"),
        "amin": b.arg_min(x, 0),
        "csum": b.cumulative_sum(x, 1, exclusive=True, reversed=True),
        "sm": b.softmax(x, 2),
        "rlse": b.reduce_log_sum_exp(x, axes=[0, 2], keep_dimensions=True),
        "rall": b.reduce_sum(x),
        "rnone": b.reduce_mean(x, axes=[]),
        "r1": b.reduce_l1(x, axes=[1]),
        "r2": b.reduce_l2(x, axes=[1]),
        "rls": b.reduce_log_sum(b.abs(x), axes=[2]),
        "rmx": b.reduce_max(x, axes=[1]),
        "rmn": b.reduce_min(x, axes=[1]),
        "rp": b.reduce_product(x, axes=[1]),
        "rss": b.reduce_sum_square(x, axes=[1]),
    }
    return m.done("reduce", outs)


def normalization_linalg_family() -> Example:
    m = _Maker()
    b = m.b
    x = m.input("x", [2, 3, 4, 4])
    a = m.input("a", [3, 4])
    outs = {
        "bn": b.batch_normalization(x, m.const([3]), m.const([3], lo=0.1, hi=1),
                                    scale=m.const([3]), bias=m.const([3]), epsilon=1e-3),
        "bn_axis": b.batch_normalization(x, m.const([4]), m.const([4], lo=0.1, hi=1), axis=3),
        "inorm": b.instance_normalization(x, scale=m.const([4]), bias=m.const([4]),
                                          layout="nhwc", epsilon=2e-5),
        "lnorm": b.layer_normalization(x, scale=m.const([4, 4]), axes=[2, 3]),
        "gemm": b.gemm(a, m.const([5, 4]), c=m.const([5]), alpha=0.5, beta=-2.0,
                       b_transpose=True),
        "gemm_t": b.gemm(m.const([3, 2]), a, a_transpose=True),
        "matmul": b.matmul(x, m.const([4, 2])),
    }
    return m.done("norm_linalg", outs)


def gather_quantize_family() -> Example:
    m = _Maker()
    b = m.b
    x = m.input("x", [4, 5])
    idx = b.constant(np.array([[3, 0], [1, 1]], np.int32))
    ge_idx = b.constant(np.array([[0, 1, 2, 3, 0], [3, 3, 2, 1, 0]], np.int64))
    nd_idx = b.constant(np.array([[0, 1], [3, 4], [2, 2]], np.uint32))
    upd = m.input("upd", [2, 5])
    outs = {
        "gather": b.gather(x, idx, axis=0),
        "gather1": b.gather(x, b.constant(np.array(2, np.int32)), axis=1),
        "gel": b.gather_elements(x, ge_idx, axis=0),
        "gnd": b.gather_nd(x, nd_idx),
        "sel": b.scatter_elements(x, b.constant(np.array([[1, 0, 2, 3, 1], [2, 2, 0, 0, 3]],
                                                         np.int32)), upd, axis=0),
        "snd": b.scatter_nd(x, b.constant(np.array([[0], [2]], np.int32)), upd),
    }
    q_scale = b.constant(np.array([[0.05], [0.1], [0.2], [0.5]], np.float32))
    q = b.quantize_linear(x, q_scale, b.constant(np.array([[3], [0], [-2], [1]], np.int8)))
    outs["q"] = q
    outs["dq"] = b.dequantize_linear(q, q_scale, b.constant(np.array([[1], [0], [2], [1]],
                                                                      np.int8)))
    u = b.quantize_linear(x, b.constant(np.full((1, 1), 0.01, np.float32)),
                          b.constant(np.full((1, 1), 128, np.uint8)))
    outs["dq_u8"] = b.dequantize_linear(u, b.constant(np.full((1, 1), 0.01, np.float32)),
                                        b.constant(np.full((1, 1), 128, np.uint8)))
    return m.done("gather_quantize", outs)


def constants_family() -> Example:
    """Constants of every data type, uniform (@scalar), tiny (@bytes) and large (@weights),
    with awkward values (NaN, -0, infinities, 64-bit extremes)."""
    m = _Maker()
    b = m.b
    outs: dict[str, MLOperand] = {}
    values = {
        "f32_big": RNG.standard_normal((7, 9)).astype(np.float32),
        "f32_special": np.array([np.nan, -0.0, np.inf, -np.inf, 1e-45, 3.4e38], np.float32),
        "f32_neg_zero": np.full((3, 3), -0.0, np.float32),
        "f32_uniform": np.full((64, 64), 0.1, np.float32),
        "f16_uniform": np.full((5,), 65504, np.float16),
        "f16_tiny": np.array([np.nan, -0.0, 6e-8], np.float16),
        "f16_big": RNG.standard_normal((33,)).astype(np.float16),
        "i64_extreme": np.array([-(2**63), 2**63 - 1, 0, -1], np.int64),
        "u64_extreme": np.array([2**64 - 1, 2**63, 1], np.uint64),
        "i64_uniform_big": np.full((4,), 2**40, np.int64),
        "i32_uniform": np.full((2, 3), -(2**24), np.int32),
        "u32": np.array([0, 1, 2**32 - 1, 7, 9], np.uint32),
        "i8": np.arange(-128, 128, dtype=np.int8).reshape(16, 16),
        "u8_scalar": np.array(255, np.uint8),
        "u8_empty_like": np.zeros((1,), np.uint8),
    }
    for key, arr in values.items():
        c = b.constant(arr)
        outs[key] = b.identity(c)
    return m.done("constants", outs)


def float16_family() -> Example:
    m = _Maker()
    b = m.b
    x = m.input("x", [1, 2, 5, 5], "float16")
    y = b.conv2d(x, b.constant(_rand([3, 2, 3, 3], "float16")), padding=[1, 1, 1, 1],
                 bias=b.constant(_rand([3], "float16")))
    y = b.layer_normalization(y, axes=[1, 2, 3], epsilon=1e-3)
    y = b.resample2d(y, mode="linear", scales=[0.5, 0.5])
    return m.done("float16", {"out": b.softmax(b.reshape(y, [1, 12]), 1)})


def hostile_names() -> Example:
    """Every hostile name as an input and as an output (plus a label)."""
    m = _Maker()
    b = m.b
    outs: dict[str, MLOperand] = {}
    for i, name in enumerate(HOSTILE_NAMES):
        x = m.input(name, [2])
        outs[name] = b.add(x, b.constant(np.array([i, -i], np.float32)), label=name)
    outs["repeat of first"] = outs[HOSTILE_NAMES[0]]
    return m.done("hostile", outs)


FAMILIES: dict[str, Callable[[], Example]] = {
    "conv": conv_family, "recurrent": recurrent_family, "shape": shape_family,
    "elementwise": elementwise_family, "reduce": reduce_family,
    "norm_linalg": normalization_linalg_family, "gather_quantize": gather_quantize_family,
    "constants": constants_family, "float16": float16_family, "hostile": hostile_names,
}


# -- WPT cases as graphs --------------------------------------------------------------------
MAX_WPT_ELEMENTS = 100_000


def wpt_size(case: WptCase) -> int:
    return sum(int(np.prod(s["descriptor"]["shape"], dtype=np.int64))
               for s in case.case["graph"]["inputs"].values())


def wpt_example(case: WptCase) -> Example:
    """The graph of a WPT case (as tests/wpt.py builds it, non-finite numbers given as
    strings left unresolved), its context and inputs."""
    ctx = ML().create_context()
    graph, feeds = build_graph(case.case, ctx, nonfinite=False)
    return Example(case.id, ctx, graph, feeds)


def assert_same_outputs(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    """Same names in the same order, same dtypes and shapes, bit-identical values."""
    assert list(a) == list(b)
    for name in a:
        x, y = np.asarray(a[name]), np.asarray(b[name])
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes(), f"{name!r}: values differ"
