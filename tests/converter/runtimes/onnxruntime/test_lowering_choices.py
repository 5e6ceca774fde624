"""The onnxruntime backend's lowering choices: faster ONNX patterns where they are exact
(prelu with constant slopes, one GRU/LSTM node where ONNX means the same), and converted
models from the onnx package's light zoo against the reference backend."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest

from converter.core.webnn import ML, MLGraphBuilder
from converter.runtimes import get_backend

RNG = np.random.default_rng(7)


def rand(shape: tuple[int, ...] | list[int], lo: float = -1.0, hi: float = 1.0) -> np.ndarray:
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


# -- lowering patterns chosen for speed ---------------------------------------------------
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 3.5, -3.5],
                    np.float32)

# slope maker, ONNX op that shows the pattern was taken
PRELU_SLOPES = {
    "uniform": (lambda: np.full((1, 5, 1, 1), -0.25, np.float32), "LeakyRelu"),
    "channels_axis1": (lambda: rand((5, 1, 1), lo=-1.5, hi=1.5), "BatchNormalization"),
    "channels_nhwc": (lambda: rand((1, 1, 6), lo=-1.5, hi=1.5), "BatchNormalization"),
    "unit_interval": (lambda: rand((4, 6), lo=0.0, hi=1.0), "Max"),
    "above_one": (lambda: rand((4, 6), lo=1.0, hi=3.0), "Min"),
    "mixed": (lambda: rand((4, 6), lo=-2.0, hi=2.0), "Where"),
}


@pytest.mark.parametrize("kind", sorted(PRELU_SLOPES))
def test_prelu_constant_slope_patterns(kind: str) -> None:
    """prelu with constant slopes takes a faster pattern than Less/Mul/Where; each gives
    exactly where(x < 0, x·slope, x) in float32, special values included (the input is
    a graph input: nothing is fused into a convolution)."""
    from converter.runtimes.onnxruntime.to_onnx import to_onnx

    make, onnx_op = PRELU_SLOPES[kind]
    slope = make()
    x = rand((2, 5, 4, 6), lo=-4, hi=4)
    x.reshape(-1)[: SPECIALS.size] = SPECIALS
    ctx = ML().create_context(backend="onnxruntime")
    b = MLGraphBuilder(ctx)
    graph = b.build({"y": b.prelu(b.input("x", shape=list(x.shape), data_type="float32"),
                                  b.constant(slope))})
    assert onnx_op in {n.op_type for n in to_onnx(graph).graph.node}
    got = ctx.compute(graph, {"x": x})["y"]
    want = np.where(x < 0, x * slope, x)  # float32 product: one rounding, as specified
    np.testing.assert_array_equal(got, want)


# -- converted models ----------------------------------------------------------------------
LIGHT_DIR = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
LIGHT_FAST = ["squeezenet", "shufflenet", "inception_v2"]  # cheap on the reference backend
LIGHT_SLOW = ["bvlc_alexnet", "densenet121", "inception_v1", "resnet50",
              "vgg19", "zfnet512"]


def _light_model(name: str, seed: int = 0) -> onnx.ModelProto:
    """The onnx package's light_<name>.onnx with its ConstantOfShape-generated weights (all
    equal, which makes outputs uniform) replaced by seeded random initializers (the zoo's
    `weights = "random"`: He-normal for rank >= 2, uniform(0.5, 1.5) for vectors)."""
    from converter.zoo import randomize_constant_of_shape

    return randomize_constant_of_shape(onnx.load(str(LIGHT_DIR / f"light_{name}.onnx")), seed)


def _check_light(name: str) -> None:
    """The converted model on the onnxruntime backend (with the lowering's fusions) matches
    the reference backend within 1e-3 + 1e-3·max|ref| per output."""
    import converter

    result = converter.convert(_light_model(name))
    feeds = {n: RNG.standard_normal(op.shape).astype(np.float32)
             for n, op in result.graph.inputs.items()}
    want = result.graph.context.compute(result.graph, feeds)
    got = get_backend("onnxruntime", "cpu", threads=1).compile(result.graph).run(feeds)
    for key, ref in want.items():
        ref64 = ref.astype(np.float64)
        err = np.abs(got[key].astype(np.float64) - ref64).max()
        assert err <= 1e-3 + 1e-3 * np.abs(ref64).max(), (name, key, err)


@pytest.mark.parametrize("name", LIGHT_FAST)
def test_light_model_matches_reference(name: str) -> None:
    _check_light(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", LIGHT_SLOW)
def test_light_model_matches_reference_slow(name: str) -> None:
    _check_light(name)


@pytest.mark.parametrize(("op", "options", "native"), [
    ("gru", {}, True),
    ("gru", {"reset_after": False, "direction": "both"}, True),
    ("gru", {"layout": "rzn"}, False),
    ("lstm", {"direction": "backward", "activations": ["sigmoid", "relu", "tanh"]}, True),
    ("lstm", {"layout": "ifgo"}, False),
    ("lstm", {"peephole_weight": True}, False),
])
def test_recurrent_uses_onnx_node_only_when_exact(op: str, options: dict[str, object],
                                                  native: bool) -> None:
    """gru/lstm become one ONNX GRU/LSTM node only for the layouts and options that mean
    the same in ONNX (the values are checked against the reference by test_gru/test_lstm)."""
    from converter.runtimes.onnxruntime.to_onnx import to_onnx

    opts = dict(options)
    gates, h = (4, 3) if op == "lstm" else (3, 3)
    d = 2 if opts.get("direction") == "both" else 1
    b = MLGraphBuilder(ML().create_context())
    x = b.input("x", shape=[2, 1, 4], data_type="float32")
    if opts.pop("peephole_weight", False):
        opts["peephole_weight"] = b.constant(rand((d, 3 * h)))
    outs = getattr(b, op)(x, b.constant(rand((d, gates * h, 4))),
                          b.constant(rand((d, gates * h, h))), 2, h, **opts)
    model = to_onnx(b.build({f"o{i}": v for i, v in enumerate(outs)}))
    assert (op.upper() in {n.op_type for n in model.graph.node}) == native


@pytest.mark.parametrize("layout", ["nchw", "nhwc"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_whole_plane_average_pool_is_global_average_pool(layout: str, dtype: str) -> None:
    """averagePool2d whose one window covers the whole plane (no padding) becomes ONNX
    GlobalAveragePool (onnxruntime fuses it; an AveragePool of the same window it does not),
    and gives the plane's mean (float64 numpy): float32 within 1e-6, float16 within one
    float16 rounding (computed in float32, rounded once)."""
    from converter.runtimes.onnxruntime.to_onnx import to_onnx

    shape = (2, 3, 5, 7) if layout == "nchw" else (2, 5, 7, 3)
    axes = (2, 3) if layout == "nchw" else (1, 2)
    x = rand(shape, lo=-4, hi=4).astype(dtype)
    ctx = ML().create_context(backend="onnxruntime")
    b = MLGraphBuilder(ctx)
    y = b.average_pool2d(b.input("x", shape=list(shape), data_type=dtype),
                         window_dimensions=[5, 7], layout=layout)
    graph = b.build({"y": y})
    assert "GlobalAveragePool" in {n.op_type for n in to_onnx(graph).graph.node}
    got = ctx.compute(graph, {"x": x})["y"].astype(np.float64)
    want = x.astype(np.float64).mean(axis=axes, keepdims=True)
    if dtype == "float16":
        ulp = np.spacing(np.abs(want).astype(np.float16)).astype(np.float64)
        assert np.all(np.abs(got - want) <= ulp)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
