"""Shared helpers of the backend tests (onnxruntime, torch): run one graph on a backend,
compare a backend with the reference backend (the oracle), and the recurrent-op cases
(gru / lstm variants) both backends are checked on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from converter.core.webnn import ML, MLGraphBuilder, MLOperand

Build = Callable[[MLGraphBuilder, dict[str, MLOperand]], dict[str, MLOperand]]
Rand = Callable[..., np.ndarray]
"""`rand(shape, dtype="float32", lo=-1.0, hi=1.0)`: seeded random values of a test module."""


def run(backend: str, inputs: dict[str, np.ndarray], build: Build, **options: Any
        ) -> dict[str, np.ndarray]:
    """Build the graph on a fresh context of `backend` and compute it on `inputs`."""
    ctx = ML().create_context(backend=backend, **options)
    b = MLGraphBuilder(ctx)
    ops = {name: b.input(name, shape=list(a.shape), data_type=a.dtype.name)
           for name, a in inputs.items()}
    graph = b.build(build(b, ops))
    return ctx.compute(graph, inputs)


def ulp(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in units in the last place between two float arrays of the same dtype."""
    bits = {2: np.int16, 4: np.int32}[a.dtype.itemsize]
    ia, ib = a.view(bits).astype(np.int64), b.view(bits).astype(np.int64)
    mask = 0x7FFF if a.dtype.itemsize == 2 else 0x7FFFFFFF
    ia = np.where(ia < 0, -(ia & mask), ia)
    ib = np.where(ib < 0, -(ib & mask), ib)
    return np.abs(ia - ib)


def compare_backends(backend: str, inputs: dict[str, np.ndarray], build: Build,
                     f16_ulp: int = 2, rtol: float = 1e-5, atol: float = 1e-6,
                     **options: Any) -> dict[str, np.ndarray]:
    """`backend` vs reference: same output names, dtypes and shapes; integers exact, float32
    within `rtol` relative (`atol` near zero), float16 within `f16_ulp` ULP; NaN and
    infinity positions equal. Returns the backend's outputs."""
    want_all = run("reference", inputs, build)
    got_all = run(backend, inputs, build, **options)
    assert set(got_all) == set(want_all)
    for name, want in want_all.items():
        have = got_all[name]
        assert have.dtype == want.dtype, (name, have.dtype, want.dtype)
        assert have.shape == want.shape, (name, have.shape, want.shape)
        if want.dtype.kind != "f":
            np.testing.assert_array_equal(have, want, err_msg=name)
            continue
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(have), nan, err_msg=f"{name}: NaN positions")
        if want.dtype == np.float32:
            np.testing.assert_allclose(have, want, rtol=rtol, atol=atol, err_msg=name)
        else:
            worst = ulp(have[~nan], want[~nan]).max(initial=0)
            assert worst <= f16_ulp, f"{name}: {worst} ULP > {f16_ulp}"
    return got_all


# -- recurrent cases -------------------------------------------------------------------------
GRU_VARIANTS: list[dict[str, Any]] = [
    {},
    {"direction": "backward", "layout": "rzn", "reset_after": False},
    {"direction": "both", "return_sequence": True, "activations": ["relu", "tanh"]},
    {"direction": "both", "return_sequence": True, "bias": True, "recurrent_bias": True,
     "initial_hidden_state": True, "layout": "rzn"},
    {"reset_after": False, "bias": True, "activations": ["sigmoid", "relu"],
     "return_sequence": True},
]
LSTM_VARIANTS: list[dict[str, Any]] = [
    {},
    {"direction": "backward", "layout": "ifgo", "peephole_weight": True, "bias": True},
    {"direction": "both", "return_sequence": True, "peephole_weight": True,
     "initial_hidden_state": True, "initial_cell_state": True, "recurrent_bias": True},
    {"activations": ["sigmoid", "relu", "tanh"], "return_sequence": True, "bias": True},
]


def optional_inputs(opts: dict[str, Any], shapes: dict[str, tuple[int, ...]], dtype: str,
                    rand: Rand) -> dict[str, np.ndarray]:
    """Random inputs for the optional operands `opts` asks for (popped from `opts`), drawn
    in the order of `shapes`."""
    return {k: rand(shape, dtype) for k, shape in shapes.items() if opts.pop(k, False)}


def gru_case(variant: int, dtype: str, rand: Rand) -> tuple[dict[str, np.ndarray], Build]:
    """gru with GRU_VARIANTS[variant]: 3 steps, batch 2, input size 4, hidden size 5; every
    output (`out0`, `out1`, ...)."""
    opts = dict(GRU_VARIANTS[variant])
    steps, batch, inp, h = 3, 2, 4, 5
    d = 2 if opts.get("direction") == "both" else 1
    inputs = {"x": rand((steps, batch, inp), dtype), "w": rand((d, 3 * h, inp), dtype),
              "r": rand((d, 3 * h, h), dtype)}
    inputs |= optional_inputs(opts, {"bias": (d, 3 * h), "recurrent_bias": (d, 3 * h),
                                     "initial_hidden_state": (d, batch, h)}, dtype, rand)

    def build(b: MLGraphBuilder, o: dict[str, MLOperand]) -> dict[str, MLOperand]:
        extra = {k: o[k] for k in ("bias", "recurrent_bias", "initial_hidden_state") if k in o}
        outs = b.gru(o["x"], o["w"], o["r"], steps, h, **opts, **extra)
        return {f"out{i}": v for i, v in enumerate(outs)}

    return inputs, build


def lstm_case(variant: int, dtype: str, rand: Rand) -> tuple[dict[str, np.ndarray], Build]:
    """lstm with LSTM_VARIANTS[variant]: 3 steps, batch 2, input size 3, hidden size 4;
    every output (`out0`, `out1`, ...)."""
    opts = dict(LSTM_VARIANTS[variant])
    steps, batch, inp, h = 3, 2, 3, 4
    d = 2 if opts.get("direction") == "both" else 1
    inputs = {"x": rand((steps, batch, inp), dtype), "w": rand((d, 4 * h, inp), dtype),
              "r": rand((d, 4 * h, h), dtype)}
    inputs |= optional_inputs(opts, {"bias": (d, 4 * h), "recurrent_bias": (d, 4 * h),
                                     "peephole_weight": (d, 3 * h),
                                     "initial_hidden_state": (d, batch, h),
                                     "initial_cell_state": (d, batch, h)}, dtype, rand)
    names = ("bias", "recurrent_bias", "peephole_weight", "initial_hidden_state",
             "initial_cell_state")

    def build(b: MLGraphBuilder, o: dict[str, MLOperand]) -> dict[str, MLOperand]:
        extra = {k: o[k] for k in names if k in o}
        outs = b.lstm(o["x"], o["w"], o["r"], steps, h, **opts, **extra)
        return {f"out{i}": v for i, v in enumerate(outs)}

    return inputs, build
