"""Small graphs for the target rewrite rules, with independent expected values (float64 numpy
formulas written from the spec, or exact integer arithmetic). Shared by the reference-runtime
tests (test_passes.py) and the real-browser tests (tests/browser/test_workarounds.py).

Each `RuleCase` builds one graph on a given context; `rules` are the rules it must trigger,
`browser` what Chromium 153 (LiteRT) does with the graph as converted: "wrong" (a result
outside the spec) or "fails" (it refuses to build it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from converter.core.webnn import MLGraph, MLGraphBuilder, MLOperand

RNG = np.random.default_rng(17)


# -- float64 formulas -----------------------------------------------------------------------


def pool(x: np.ndarray, kind: str, window: tuple[int, int], *,
         padding: tuple[int, int, int, int] = (0, 0, 0, 0), strides: tuple[int, int] = (1, 1),
         dilations: tuple[int, int] = (1, 1), ceil: bool = False) -> np.ndarray:
    """NCHW pooling in float64 over the real cells of each window (padding never counts):
    "average" = their mean, "l2" = sqrt of their sum of squares, "max" = their maximum."""
    n, c, height, width = x.shape
    outs = []
    for size, k, p0, p1, s, d in ((height, window[0], padding[0], padding[1], strides[0],
                                   dilations[0]),
                                  (width, window[1], padding[2], padding[3], strides[1],
                                   dilations[1])):
        span = size + p0 + p1 - (k - 1) * d - 1
        outs.append((-(-span // s) if ceil else span // s) + 1)
    y = np.empty((n, c, *outs))
    for i in range(outs[0]):
        rows = [r for r in (i * strides[0] + a * dilations[0] - padding[0]
                            for a in range(window[0])) if 0 <= r < height]
        for j in range(outs[1]):
            cols = [q for q in (j * strides[1] + b * dilations[1] - padding[2]
                                for b in range(window[1])) if 0 <= q < width]
            cells = x.astype(np.float64)[:, :, rows][:, :, :, cols].reshape(n, c, -1)
            y[:, :, i, j] = {"average": lambda v: v.mean(axis=2),
                             "l2": lambda v: np.sqrt((v * v).sum(axis=2)),
                             "max": lambda v: v.max(axis=2)}[kind](cells)
    return y


def conv_transpose(x: np.ndarray, w: np.ndarray, *, strides: tuple[int, int] = (1, 1),
                   dilations: tuple[int, int] = (1, 1),
                   padding: tuple[int, int, int, int] = (0, 0, 0, 0),
                   output_padding: tuple[int, int] = (0, 0), groups: int = 1,
                   bias: np.ndarray | None = None) -> np.ndarray:
    """convTranspose2d in float64: x NCHW, w iohw ([C_in, C_out/groups, kh, kw]); each input
    cell scatters its filter, the full result cropped by the padding."""
    n, cin, h, wd = x.shape
    _, cpg, kh, kw = w.shape
    full_h = (h - 1) * strides[0] + (kh - 1) * dilations[0] + 1 + output_padding[0]
    full_w = (wd - 1) * strides[1] + (kw - 1) * dilations[1] + 1 + output_padding[1]
    y = np.zeros((n, cpg * groups, full_h + padding[1], full_w + padding[3]))
    per_group = cin // groups
    for ci in range(cin):
        g = ci // per_group
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for b in range(kw):
                        r = i * strides[0] + a * dilations[0]
                        q = j * strides[1] + b * dilations[1]
                        y[:, g * cpg:(g + 1) * cpg, r, q] += (
                            x[:, ci, i, j, None].astype(np.float64) * w[ci, :, a, b])
    out_h = full_h - padding[0] - padding[1]
    out_w = full_w - padding[2] - padding[3]
    y = y[:, :, padding[0]:padding[0] + out_h, padding[2]:padding[2] + out_w]
    if bias is not None:
        y = y + bias.astype(np.float64)[None, :, None, None]
    return y


def nhwc(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1))


# -- cases ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RuleCase:
    """One graph: `make(builder)` -> outputs by name; `feeds`, float64/exact `expected`
    outputs, `rules` it must trigger, what Chromium does without them (`browser`), and the
    tolerance for float outputs (rtol, atol)."""

    name: str
    make: Callable[[MLGraphBuilder], Mapping[str, MLOperand]]
    feeds: Mapping[str, np.ndarray]
    expected: Mapping[str, np.ndarray]
    rules: tuple[str, ...]
    browser: str = "fails"
    tolerance: tuple[float, float] = (1e-5, 1e-5)
    extra: Mapping[str, Any] = field(default_factory=dict)

    def graph(self, ctx: Any) -> MLGraph:
        b = MLGraphBuilder(ctx)
        return b.build(dict(self.make(b)))


def _inp(b: MLGraphBuilder, name: str, a: np.ndarray) -> MLOperand:
    return b.input(name, shape=list(a.shape), data_type=a.dtype.name)


def _pool_case(name: str, op: str, kind: str, x: np.ndarray, rules: tuple[str, ...],
               browser: str, layout: str = "nchw", **opts: Any) -> RuleCase:
    window = tuple(opts.pop("window"))
    ref_opts = {k: tuple(v) if isinstance(v, list) else v for k, v in opts.items()}
    ceil = ref_opts.pop("ceil", False)
    expected = pool(x, kind, window, ceil=ceil, **ref_opts)  # type: ignore[arg-type]
    given = nhwc(x) if layout == "nhwc" else x
    spec = {"window_dimensions": list(window), "layout": layout,
            **({"output_shape_rounding": "ceil"} if ceil else {}),
            **{k: list(v) for k, v in ref_opts.items()}}
    tol = (2e-3, 2e-3) if x.dtype == np.float16 else (1e-5, 1e-5)

    def make(b: MLGraphBuilder) -> Mapping[str, MLOperand]:
        return {"y": getattr(b, op)(_inp(b, "x", given), **spec)}

    return RuleCase(name, make, {"x": given},
                    {"y": nhwc(expected) if layout == "nhwc" else expected}, rules, browser,
                    tol)


def _conv_transpose_case(name: str, rules: tuple[str, ...], *, cin: int = 2, cout: int = 2,
                         hw: tuple[int, int] = (3, 4), k: tuple[int, int] = (3, 2),
                         constant_filter: bool = True, **opts: Any) -> RuleCase:
    groups = int(opts.get("groups", 1))
    x = RNG.uniform(-1, 1, (1, cin, *hw)).astype(np.float32)
    w = RNG.uniform(-1, 1, (cin, cout // groups, *k)).astype(np.float32)
    bias = RNG.uniform(-1, 1, cout).astype(np.float32) if opts.pop("bias", False) else None
    expected = conv_transpose(x, w, bias=bias,
                              **{k_: tuple(v) if isinstance(v, list) else v
                                 for k_, v in opts.items()})
    feeds = {"x": x} if constant_filter else {"x": x, "w": w}

    def make(b: MLGraphBuilder) -> Mapping[str, MLOperand]:
        filt = b.constant(w) if constant_filter else _inp(b, "w", w)
        kw: dict[str, Any] = dict(opts)  # strides, dilations, padding, output_padding, groups
        if bias is not None:
            kw["bias"] = b.constant(bias)
        return {"y": b.conv_transpose2d(_inp(b, "x", x), filt, **kw)}

    return RuleCase(name, make, feeds, {"y": expected}, rules)


def _unary_int_case(name: str, op: str, x: np.ndarray, expected: np.ndarray,
                    rules: tuple[str, ...], **kw: Any) -> RuleCase:
    def make(b: MLGraphBuilder) -> Mapping[str, MLOperand]:
        return {"y": getattr(b, op)(_inp(b, "x", x), **kw)}

    return RuleCase(name, make, {"x": x}, {"y": expected}, rules)


def _cases() -> list[RuleCase]:
    out: list[RuleCase] = []
    x = RNG.uniform(0.5, 4, (1, 2, 5, 6)).astype(np.float32)
    x16 = RNG.uniform(0.5, 4, (1, 3, 5, 6)).astype(np.float16)
    # pool-padding: Chromium gets these wrong
    out.append(_pool_case("averagePool2d padding [1,0,0,1]", "average_pool2d", "average", x,
                          ("pool-padding",), "wrong", window=[3, 3], padding=[1, 0, 0, 1]))
    out.append(_pool_case("averagePool2d ceil rounding", "average_pool2d", "average", x,
                          ("pool-padding",), "wrong", window=[2, 2], strides=[2, 2],
                          ceil=True))
    out.append(_pool_case("averagePool2d float16 nhwc padding [0,2,1,0] strides [2,1]",
                          "average_pool2d", "average", x16, ("pool-padding",), "wrong",
                          layout="nhwc", window=[3, 2], padding=[0, 2, 1, 0], strides=[2, 1]))
    out.append(_pool_case("l2Pool2d padding [1,1,1,1]", "l2_pool2d", "l2", x,
                          ("pool-padding",), "wrong", window=[3, 3], padding=[1, 1, 1, 1]))
    # pool-dilations: Chromium cannot build these
    out.append(_pool_case("maxPool2d dilations [2,2] padding 1", "max_pool2d", "max",
                          x - 2, ("pool-dilations",), "fails", window=[3, 3],
                          dilations=[2, 2], padding=[1, 1, 1, 1]))
    out.append(_pool_case("averagePool2d dilations [2,1] padding [1,1,0,0]",
                          "average_pool2d", "average", x, ("pool-padding", "pool-dilations"),
                          "fails", window=[2, 2], dilations=[2, 1], padding=[1, 1, 0, 0]))
    out.append(_pool_case("l2Pool2d nhwc dilations [1,2] strides [1,2]", "l2_pool2d", "l2",
                          x, ("pool-dilations",), "fails", layout="nhwc", window=[2, 2],
                          dilations=[1, 2], strides=[1, 2]))
    # convTranspose2d
    out.append(_conv_transpose_case("convTranspose2d groups 2 strides 2 bias",
                                    ("convtranspose-groups",), cin=4, cout=4, groups=2,
                                    strides=[2, 2], bias=True))
    out.append(_conv_transpose_case("convTranspose2d dilations [2,2]",
                                    ("convtranspose-dilations",), dilations=[2, 2]))
    out.append(_conv_transpose_case("convTranspose2d dilations [1,3] run-time filter",
                                    ("convtranspose-dilations",), dilations=[1, 3],
                                    constant_filter=False))
    out.append(_conv_transpose_case("convTranspose2d padding [1,2,0,1] strides 2 "
                                    "outputPadding [1,0]", ("convtranspose-padding",),
                                    padding=[1, 2, 0, 1], strides=[2, 2],
                                    output_padding=[1, 0]))
    out.append(_conv_transpose_case("convTranspose2d groups, dilations and padding",
                                    ("convtranspose-groups", "convtranspose-dilations",
                                     "convtranspose-padding"), cin=4, cout=6, groups=2,
                                    dilations=[2, 1], padding=[1, 1, 1, 0], strides=[1, 2]))
    # scatterElements with run-time indices
    data = RNG.uniform(-1, 1, (3, 4)).astype(np.float32)
    idx = np.array([[2, 0, 1, 1], [1, 2, 0, 2]], np.int32)
    upd = RNG.uniform(-1, 1, idx.shape).astype(np.float32)
    want = data.copy()
    np.put_along_axis(want, idx, upd, axis=0)

    def scatter(b: MLGraphBuilder) -> Mapping[str, MLOperand]:
        return {"y": b.scatter_elements(_inp(b, "data", data), _inp(b, "idx", idx),
                                        _inp(b, "upd", upd), axis=0)}

    out.append(RuleCase("scatterElements with run-time indices", scatter,
                        {"data": data, "idx": idx, "upd": upd}, {"y": want},
                        ("scatterelements-indices",)))
    # slice with a stride longer than the sliced size
    s = RNG.uniform(-1, 1, (3, 5)).astype(np.float32)

    def sliced(b: MLGraphBuilder) -> Mapping[str, MLOperand]:
        return {"y": b.slice(_inp(b, "x", s), [1, 0], [1, 5], strides=[4, 2])}

    out.append(RuleCase("slice stride 4 over size 1", sliced, {"x": s},
                        {"y": s[1:2, 0:5:2]}, ("slice-strides",)))
    # pad with mode "edge": Chromium refuses to build it
    e = RNG.uniform(-1, 1, (1, 2, 3, 4)).astype(np.float32)

    def pad_edge(b: MLGraphBuilder) -> Mapping[str, MLOperand]:
        return {"y": b.pad(_inp(b, "x", e), [0, 1, 2, 0], [0, 0, 1, 3], mode="edge")}

    out.append(RuleCase("pad edge rank 4", pad_edge, {"x": e},
                        {"y": np.pad(e, ((0, 0), (1, 0), (2, 1), (0, 3)), mode="edge")},
                        ("pad-edge",)))
    e16 = RNG.uniform(-1, 1, (3, 2)).astype(np.float16)

    def pad_edge16(b: MLGraphBuilder) -> Mapping[str, MLOperand]:
        return {"y": b.pad(_inp(b, "x", e16), [1, 3], [2, 1], mode="edge")}

    out.append(RuleCase("pad edge float16", pad_edge16, {"x": e16},
                        {"y": np.pad(e16, ((1, 2), (3, 1)), mode="edge")}, ("pad-edge",)))
    # cast of a float16 constant holding subnormals, infinities and NaN (the graph's only
    # operation, as in WPT's cast_rounding cases): Chromium computes it wrong
    c16 = np.array([0, 2**-24, -(2**-24), 6.1e-5, 1, -1.0009765625, 65504, -65504, np.inf,
                    -np.inf, np.nan, -0.0], np.float16).reshape(12, 1, 1)

    def cast_const(b: MLGraphBuilder) -> Mapping[str, MLOperand]:
        return {"y": b.cast(b.constant(c16), "float32")}

    out.append(RuleCase("cast float16 constant with Inf/NaN to float32", cast_const, {},
                        {"y": c16.astype(np.float64)}, ("fold-constant-cast",), "wrong",
                        tolerance=(0.0, 0.0)))
    # data types outside the limits
    i8 = np.array([[-128, -3, 0, 5], [127, 1, -1, 9]], np.int8)

    def pad_i8(b: MLGraphBuilder) -> Mapping[str, MLOperand]:
        return {"y": b.pad(_inp(b, "x", i8), [1, 0], [0, 2], value=-7)}

    out.append(RuleCase("pad int8", pad_i8, {"x": i8},
                        {"y": np.pad(i8, ((1, 0), (0, 2)), constant_values=-7)},
                        ("widen-types",)))
    out.append(_unary_int_case("neg int8", "neg", i8, (-i8.astype(np.int64)).astype(np.int8),
                               ("widen-types",)))
    i64 = np.array([-(2**40), -5, 0, 7, 2**62], np.int64)
    out.append(_unary_int_case("abs int64", "abs", i64, np.abs(i64), ("abs-minmax",)))
    i32 = np.array([-(2**31), -5, 0, 7, 2**31 - 1], np.int32)
    out.append(_unary_int_case("clamp int32", "clamp", i32, np.clip(i32, -6, 2**30),
                               ("clamp-minmax",), min_value=-6, max_value=2**30))
    u32 = np.array([0, 5, 2**31, 2**32 - 1], np.uint32)
    out.append(_unary_int_case("clamp uint32", "clamp", u32, np.clip(u32, 3, 2**32 - 3),
                               ("clamp-minmax", "widen-types"), min_value=3,
                               max_value=2**32 - 3))
    out.append(_unary_int_case("reduceL1 uint32", "reduce_l1", u32.reshape(2, 2),
                               (u32.reshape(2, 2).astype(np.uint64).sum(axis=1)
                                % 2**32).astype(np.uint32),
                               ("reduce-l1-unsigned", "widen-types"), axes=[1]))
    out.append(_unary_int_case("tile uint32", "tile", u32.reshape(2, 2),
                               np.tile(u32.reshape(2, 2), (2, 3)), ("widen-types",),
                               repetitions=[2, 3]))
    q = np.array([[[[-128, 7, 3], [5, -9, 127], [0, 1, 2]]]], np.int8)
    out.append(_unary_int_case("maxPool2d int8", "max_pool2d", q,
                               pool(q, "max", (2, 2)).astype(np.int8), ("widen-types",),
                               window_dimensions=[2, 2]))
    a8 = np.array([3, 0, 200, 255], np.uint8)
    b8 = np.array([5, 1, 100, 255], np.uint8)

    def sub_u8(b: MLGraphBuilder) -> Mapping[str, MLOperand]:
        return {"y": b.sub(_inp(b, "a", a8), _inp(b, "b", b8))}

    out.append(RuleCase("sub uint8 (wraps around)", sub_u8, {"a": a8, "b": b8},
                        {"y": (a8.astype(np.int64) - b8).astype(np.uint8)}, ("widen-types",)))
    ua = np.array([1, 2**32 - 1, 2**31, 7], np.uint32)
    ub = np.array([1, 2**32 - 2, 2**31, 8], np.uint32)

    def eq_u32(b: MLGraphBuilder) -> Mapping[str, MLOperand]:
        return {"y": b.lesser(_inp(b, "a", ua), _inp(b, "b", ub))}

    out.append(RuleCase("lesser uint32", eq_u32, {"a": ua, "b": ub},
                        {"y": (ua < ub).astype(np.uint8)}, ("widen-types",)))

    def ne_u8(b: MLGraphBuilder) -> Mapping[str, MLOperand]:
        return {"y": b.not_equal(_inp(b, "a", a8), _inp(b, "b", b8))}

    # a comparison's uint8 output is a boolean, not a value of the widened type
    out.append(RuleCase("notEqual uint8", ne_u8, {"a": a8, "b": b8},
                        {"y": (a8 != b8).astype(np.uint8)}, ("widen-types",)))
    out += _gather_cases() + _uint4_cases()
    return out


def _take_along(data: np.ndarray, idx: np.ndarray, axis: int) -> np.ndarray:
    """numpy's take_along_axis with the reference runtime's index rules: clamped into
    [-size, size - 1], negative values counted from the end."""
    size = data.shape[axis]
    i = np.clip(idx.astype(np.int64), -size, size - 1)
    return np.take_along_axis(data, np.where(i < 0, i + size, i), axis=axis)


def _gather_elements_case(name: str, data: np.ndarray, idx: np.ndarray, axis: int
                          ) -> RuleCase:
    def make(b: MLGraphBuilder) -> Mapping[str, MLOperand]:
        return {"y": b.gather_elements(_inp(b, "x", data), _inp(b, "idx", idx), axis=axis)}

    return RuleCase(name, make, {"x": data, "idx": idx},
                    {"y": _take_along(data, idx, axis)}, ("gatherelements-indices",))


def _gather_cases() -> list[RuleCase]:
    """gatherElements with run-time indices (Chromium refuses to build them)."""
    data = RNG.uniform(-1, 1, (3, 4)).astype(np.float32)
    cube = RNG.uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    ints = RNG.integers(-100, 100, (4, 3, 2)).astype(np.int32)
    return [
        _gather_elements_case("gatherElements run-time int32 indices axis 0 (negative ones)",
                              data, np.array([[2, -1, 1, -3], [1, 2, 0, 2]], np.int32), 0),
        _gather_elements_case("gatherElements run-time int64 indices axis 1 rank 3", cube,
                              RNG.integers(-5, 5, (2, 7, 3)).astype(np.int64), 1),
        _gather_elements_case("gatherElements run-time uint32 indices last axis", data,
                              np.array([[3, 0], [1, 1], [2, 0]], np.uint32), 1),
        _gather_elements_case("gatherElements run-time int32 indices on int32 axis 2", ints,
                              RNG.integers(0, 2, (4, 3, 5)).astype(np.int32), 2),
    ]


def _uint4_cases() -> list[RuleCase]:
    """dequantizeLinear of uint4 constants (Chromium has int4 only), per tensor and
    blockwise as MatMulNBits gives them."""
    out = []
    for name, shape, block in (("dequantizeLinear uint4 blockwise [4x64] block 32",
                                (4, 64), (1, 32)),
                               ("dequantizeLinear uint4 per tensor [3x5]", (3, 5), (3, 5))):
        q = RNG.integers(0, 16, shape).astype(np.uint8)
        blocks = (shape[0] // block[0], shape[1] // block[1])
        z = RNG.integers(0, 16, blocks).astype(np.uint8)
        s = RNG.uniform(0.01, 0.2, blocks).astype(np.float32)
        full_z = np.repeat(np.repeat(z, block[0], 0), block[1], 1).astype(np.float64)
        full_s = np.repeat(np.repeat(s, block[0], 0), block[1], 1).astype(np.float64)
        expected = (q - full_z) * full_s

        def make(b: MLGraphBuilder, q: np.ndarray = q, z: np.ndarray = z,
                 s: np.ndarray = s) -> Mapping[str, MLOperand]:
            w = b.dequantize_linear(b.constant(q, "uint4"), b.constant(s),
                                    b.constant(z, "uint4"))
            return {"y": b.mul(w, _inp(b, "one", np.ones((1, 1), np.float32)))}

        out.append(RuleCase(name, make, {"one": np.ones((1, 1), np.float32)},
                            {"y": expected}, ("dequantize-uint4",)))
    # MatMulNBits with K = block size: one scale per row of the [N, K] weight, transposed
    # into a matmul (Chromium fails to build it when N != K)
    for dt, rules in (("int4", ("dequantize-blocks",)),
                      ("uint4", ("dequantize-uint4", "dequantize-blocks"))):
        n, k = 48, 20
        lo, hi = (-8, 8) if dt == "int4" else (0, 16)
        q = RNG.integers(lo, hi, (n, k)).astype(np.int8 if dt == "int4" else np.uint8)
        z = RNG.integers(lo, hi, (n, 1)).astype(q.dtype)
        s = RNG.uniform(0.01, 0.2, (n, 1)).astype(np.float32)
        a = RNG.uniform(-1, 1, (1, 3, k)).astype(np.float32)
        weight = (q.astype(np.float64) - z) * s.astype(np.float64)

        def matmul(b: MLGraphBuilder, q: np.ndarray = q, z: np.ndarray = z, s: np.ndarray = s,
                   a: np.ndarray = a, dt: str = dt) -> Mapping[str, MLOperand]:
            w = b.dequantize_linear(b.constant(q, dt), b.constant(s), b.constant(z, dt))
            return {"y": b.matmul(_inp(b, "a", a), b.transpose(w, permutation=[1, 0]))}

        out.append(RuleCase(f"dequantizeLinear {dt} [{n}x{k}] scale [{n}x1], transpose, "
                            "matmul", matmul, {"a": a}, {"y": a.astype(np.float64) @ weight.T},
                            rules, tolerance=(1e-4, 1e-5)))
    return out


CASES: list[RuleCase] = _cases()
"""Every case, by construction order."""
