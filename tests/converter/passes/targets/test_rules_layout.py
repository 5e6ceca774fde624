"""The preferred layout (converter.passes.targets.rules_layout): under a hand-written limits file
whose preferredInputLayout is "nhwc" and under chromium-tflite, nchw convolutions, pools,
resampling and normalizations run in nhwc; the lowered graph matches the reference runtime
on the ORIGINAL graph and float64 numpy written from the spec; transposes cancel between
consecutive layout-converted operations (a conv chain keeps exactly the two at its ends)."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraph, MLGraphBuilder, MLOperand
from converter.core.webnn.limits import op_support_limits
from converter.passes.targets import Target, load_target
from converter.passes.targets.check import check_graph
from converter.passes.targets.passes import lower

ROOT = Path(__file__).resolve().parents[4]
RNG = np.random.default_rng(15)
X = RNG.normal(size=(2, 4, 9, 8))


@pytest.fixture(scope="module", params=["nhwc-file", "chromium-tflite"])
def target(request: Any, tmp_path_factory: Any) -> Target:
    if request.param == "chromium-tflite":
        return load_target("chromium-tflite")
    path = tmp_path_factory.mktemp("limits") / "nhwc_browser.json"
    path.write_text(json.dumps(op_support_limits("nhwc")))
    return load_target(path)


# -- float64 oracles, from the spec's definitions (NCHW, filters OIHW / IOHW) ---------------


def conv2d(x: np.ndarray, w: np.ndarray, pad: tuple[int, int, int, int] = (0, 0, 0, 0),
           stride: tuple[int, int] = (1, 1), dil: tuple[int, int] = (1, 1), groups: int = 1,
           bias: np.ndarray | None = None) -> np.ndarray:
    xp = np.pad(x, ((0, 0), (0, 0), pad[:2], pad[2:]))
    n, c, h, wd = xp.shape
    o, cg, kh, kw = w.shape
    oh = (h - (kh - 1) * dil[0] - 1) // stride[0] + 1
    ow = (wd - (kw - 1) * dil[1] - 1) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dil[0]:i * dil[0] + (oh - 1) * stride[0] + 1:stride[0],
                           j * dil[1]:j * dil[1] + (ow - 1) * stride[1] + 1:stride[1]]
                out[:, g * og:(g + 1) * og] += np.einsum("nchw,oc->nohw", patch,
                                                         w[g * og:(g + 1) * og, :, i, j])
    return out if bias is None else out + bias[None, :, None, None]


def conv_transpose2d(x: np.ndarray, w: np.ndarray, stride: tuple[int, int]) -> np.ndarray:
    """groups 1, no padding; w is [I, O, H, W] (iohw)."""
    n, c, h, wd = x.shape
    _, o, kh, kw = w.shape
    out = np.zeros((n, o, (h - 1) * stride[0] + kh, (wd - 1) * stride[1] + kw))
    for i in range(kh):
        for j in range(kw):
            out[:, :, i:i + (h - 1) * stride[0] + 1:stride[0],
                j:j + (wd - 1) * stride[1] + 1:stride[1]] += np.einsum("nchw,co->nohw", x,
                                                                       w[:, :, i, j])
    return out


def pool(x: np.ndarray, k: int, s: int, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            out[:, :, i, j] = fn(x[:, :, i * s:i * s + k, j * s:j * s + k].reshape(n, c, -1))
    return out


W3 = RNG.normal(size=(6, 4, 3, 3))
WD = RNG.normal(size=(4, 1, 3, 3))
B6 = RNG.normal(size=6)
WT = RNG.normal(size=(4, 3, 2, 2))
MEAN, VAR = RNG.normal(size=4), RNG.uniform(0.5, 2, size=4)
SCALE, BIAS = RNG.normal(size=4), RNG.normal(size=4)
C411 = RNG.normal(size=(4, 1, 1))


def f32(b: MLGraphBuilder, v: np.ndarray) -> MLOperand:
    return b.constant(v.astype(np.float32))


Make = Callable[[MLGraphBuilder, MLOperand], MLOperand]
CASES: list[tuple[str, Make, Callable[[np.ndarray], np.ndarray], int]] = [
    # (name, graph, oracle, transposes expected in the lowered graph)
    ("conv2d oihw padded strided bias",
     lambda b, x: b.conv2d(x, f32(b, W3), padding=[1, 0, 2, 1], strides=[2, 1],
                           bias=f32(b, B6)),
     lambda v: conv2d(v, W3, (1, 0, 2, 1), (2, 1), bias=B6), 2),
    ("conv2d hwio dilated",
     lambda b, x: b.conv2d(x, f32(b, W3.transpose(2, 3, 1, 0)), dilations=[2, 1],
                           filter_layout="hwio"),
     lambda v: conv2d(v, W3, dil=(2, 1)), 2),
    ("conv2d depthwise (ihwo)",
     lambda b, x: b.conv2d(x, f32(b, WD), groups=4, padding=[1, 1, 1, 1]),
     lambda v: conv2d(v, WD, (1, 1, 1, 1), groups=4), 2),
    ("conv2d computed filter",
     lambda b, x: b.conv2d(x, b.neg(f32(b, W3))),
     lambda v: conv2d(v, -W3), 3),
    ("convTranspose2d iohw strided",
     lambda b, x: b.conv_transpose2d(x, f32(b, WT), strides=[2, 2]),
     lambda v: conv_transpose2d(v, WT, (2, 2)), 2),
    ("averagePool2d", lambda b, x: b.average_pool2d(x, window_dimensions=[2, 2], strides=[2, 2]),
     lambda v: pool(v, 2, 2, lambda p: p.mean(-1)), 2),
    ("maxPool2d", lambda b, x: b.max_pool2d(x, window_dimensions=[3, 3], strides=[1, 1]),
     lambda v: pool(v, 3, 1, lambda p: p.max(-1)), 2),
    ("l2Pool2d", lambda b, x: b.l2_pool2d(x, window_dimensions=[2, 2], strides=[2, 2]),
     lambda v: pool(v, 2, 2, lambda p: np.sqrt((p * p).sum(-1))), 2),
    ("resample2d nearest x2",
     lambda b, x: b.resample2d(x, scales=[2.0, 2.0]),
     lambda v: v.repeat(2, axis=2).repeat(2, axis=3), 2),
    ("instanceNormalization",
     lambda b, x: b.instance_normalization(x, scale=f32(b, SCALE), bias=f32(b, BIAS),
                                           epsilon=1e-5),
     lambda v: (v - v.mean((2, 3), keepdims=True)) / np.sqrt(v.var((2, 3), keepdims=True)
                                                             + 1e-5)
     * SCALE[:, None, None] + BIAS[:, None, None], 2),
    ("batchNormalization",
     lambda b, x: b.batch_normalization(x, f32(b, MEAN), f32(b, VAR), scale=f32(b, SCALE),
                                        bias=f32(b, BIAS), epsilon=1e-5),
     lambda v: (v - MEAN[:, None, None]) / np.sqrt(VAR[:, None, None] + 1e-5)
     * SCALE[:, None, None] + BIAS[:, None, None], 2),
    # pushed: the chain stays nhwc between the convolutions
    ("conv add-bias relu clamp conv",
     lambda b, x: b.conv2d(b.clamp(b.relu(b.add(b.conv2d(x, f32(b, WD), groups=4),
                                                f32(b, C411))), min_value=0.0, max_value=6.0),
                           f32(b, W3)),
     lambda v: conv2d(np.clip(np.maximum(conv2d(v, WD, groups=4) + C411, 0), 0, 6), W3), 2),
    ("residual add, concat, sigmoid",
     lambda b, x: b.sigmoid(b.concat([b.add(b.conv2d(x, f32(b, WD), groups=4,
                                                      padding=[1, 1, 1, 1]), x),
                                      b.max_pool2d(x, window_dimensions=[1, 1])], 1)),
     lambda v: 1 / (1 + np.exp(-np.concatenate(
         [conv2d(v, WD, (1, 1, 1, 1), groups=4) + v, v], axis=1))), 2),
    ("pad, softmax, reduceMean over channels",
     lambda b, x: b.reduce_mean(b.softmax(b.pad(b.conv2d(x, f32(b, WD), groups=4),
                                                [0, 0, 1, 0], [0, 0, 0, 2]), 1),
                                axes=[1, 3]),
     lambda v: _softmax(np.pad(conv2d(v, WD, groups=4), ((0, 0), (0, 0), (1, 0), (0, 2))),
                        1).mean(axis=(1, 3)), 1),
    ("global pool, flatten",
     lambda b, x: b.reshape(b.average_pool2d(b.relu(b.conv2d(x, f32(b, W3))),
                                             window_dimensions=[7, 6]), [2, 6]),
     lambda v: np.maximum(conv2d(v, W3), 0).mean(axis=(2, 3)), 1),
]


def _softmax(v: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(v - v.max(axis=axis, keepdims=True))
    return np.asarray(e / e.sum(axis=axis, keepdims=True))


def _graph(make: Make) -> MLGraph:
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=list(X.shape), data_type="float32")
    return b.build({"y": make(b, x)})


def _transposes(graph: MLGraph) -> int:
    return sum(o.op == "transpose" for o in graph.operations)


def _layouts(graph: MLGraph) -> list[str]:
    """The layout of every layout-sensitive operation of `graph`."""
    out = []
    for o in graph.operations:
        opt = o.options
        if "inputLayout" in opt:
            out.append(f"{opt['inputLayout']}/{opt['filterLayout']}")
        elif o.op in ("averagePool2d", "maxPool2d", "l2Pool2d", "instanceNormalization"):
            out.append(str(opt["layout"]))
        elif o.op == "resample2d":
            out.append("nhwc" if list(opt["axes"]) == [1, 2] else "nchw")
        elif o.op == "batchNormalization":
            out.append("nhwc" if opt["axis"] == 3 else "nchw")
    return out


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_layout_matches_original_and_numpy(case: tuple[str, Make, Callable[..., Any], int],
                                           target: Target) -> None:
    _, make, oracle, transposes = case
    graph = _graph(make)
    lowered = lower(graph, target)
    assert lowered.applied.get("layout-nhwc"), lowered.applied
    new = lowered.graph
    assert {k: v.descriptor for k, v in new.inputs.items()} == \
        {k: v.descriptor for k, v in graph.inputs.items()}
    assert {k: v.descriptor for k, v in new.outputs.items()} == \
        {k: v.descriptor for k, v in graph.outputs.items()}
    assert [v.line() for v in check_graph(new, target)] == []
    assert all(layout.startswith("nhwc") for layout in _layouts(new)), _layouts(new)
    assert _transposes(new) == transposes, [o.op for o in new.operations]
    # constant filters are transposed now: no transpose reads a constant
    assert not any(o.op == "transpose" and o.args[0].kind == "constant"
                   for o in new.operations)
    feeds = {"x": X.astype(np.float32)}
    ctx = graph.context
    want = np.asarray(ctx.compute(graph, feeds)["y"], np.float64)
    got = np.asarray(ctx.compute(new, feeds)["y"], np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, oracle(X.astype(np.float32).astype(np.float64)),
                               rtol=1e-4, atol=1e-4)


def test_filter_layouts_are_those_litert_takes(target: Target) -> None:
    """conv2d ohwi, depthwise ihwo, convTranspose2d ohwi, with the values transposed."""
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=list(X.shape), data_type="float32")
    y = b.conv_transpose2d(b.conv2d(b.conv2d(x, f32(b, WD), groups=4), f32(b, W3[:4])),
                           f32(b, WT))
    new = lower(b.build({"y": y}), target).graph
    assert _layouts(new) == ["nhwc/ihwo", "nhwc/ohwi", "nhwc/ohwi"]
    filters = [o.args[1].value for o in new.operations if o.op.startswith("conv")]
    np.testing.assert_array_equal(filters[0], WD.astype(np.float32).transpose(1, 2, 3, 0))
    np.testing.assert_array_equal(filters[1], W3[:4].astype(np.float32).transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(filters[2], WT.astype(np.float32).transpose(1, 2, 3, 0))


def test_nchw_targets_and_nhwc_graphs_are_left_alone(target: Target) -> None:
    graph = _graph(lambda b, x: b.relu(b.conv2d(x, f32(b, W3))))
    for other in ("chromium-dml", "chromium-coreml"):
        applied = lower(graph, load_target(other)).applied
        assert not any(r.startswith("layout-") for r in applied), other
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[1, 9, 8, 4], data_type="float32")
    nhwc = b.build({"y": b.conv2d(x, f32(b, W3.transpose(0, 2, 3, 1)), input_layout="nhwc",
                                  filter_layout="ohwi")})
    assert not any(r.startswith("layout-") for r in lower(nhwc, target).applied)


def _tiny_cnn(tmp_path: Path) -> Path:
    script = ROOT / "converter" / "zoo" / "models" / "make_tiny_cnn.py"
    spec = importlib.util.spec_from_file_location("make_tiny_cnn", script)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = tmp_path / "tiny_cnn.onnx"
    module.make(path, seed=0)
    return path


def test_generated_cnn_keeps_one_transpose(tmp_path: Path) -> None:
    """converter/zoo/models/make_tiny_cnn.py (conv relu pool x2, flatten, gemm) under
    chromium-tflite: one transpose in, none before the flatten (layout-flatten reorders the
    dense weights instead); the result matches onnxruntime on the ONNX file."""
    ort = pytest.importorskip("onnxruntime")
    from converter.api import convert

    path = _tiny_cnn(tmp_path)
    plain = convert(path, free_dims={"batch": 2}, target="spec")
    lowered = convert(path, free_dims={"batch": 2}, target="chromium-tflite")
    assert _transposes(plain.graph) == 0
    assert _transposes(lowered.graph) == 1
    assert any("rule layout-flatten" in w for w in lowered.report.warnings)
    assert all(layout.startswith("nhwc") for layout in _layouts(lowered.graph))
    image = RNG.normal(size=(2, 3, 16, 16)).astype(np.float32)
    want = ort.InferenceSession(str(path)).run(None, {"image": image})[0]
    got = np.asarray(lowered.run({"image": image})["probs"])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
