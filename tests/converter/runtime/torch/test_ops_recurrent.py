"""Torch gru / gruCell / lstm / lstmCell vs the reference backend (no WPT files): directions,
layouts, resetAfter, activations, optional biases, peepholes and initial states, float16."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

from converter.webnn import MLGraphBuilder, MLOperand  # noqa: E402
from tests.converter.runtime.torch.common import compare, rand  # noqa: E402

Ops = dict[str, MLOperand]

GRU_VARIANTS: list[dict[str, Any]] = [
    {},
    {"direction": "backward", "layout": "rzn", "reset_after": False},
    {"direction": "both", "return_sequence": True, "activations": ["relu", "tanh"]},
    {"direction": "both", "return_sequence": True, "bias": True, "recurrent_bias": True,
     "initial_hidden_state": True, "layout": "rzn"},
    {"reset_after": False, "bias": True, "activations": ["sigmoid", "relu"],
     "return_sequence": True},
]


def _optional(opts: dict[str, Any], shapes: dict[str, tuple[int, ...]], dtype: str
              ) -> dict[str, np.ndarray]:
    return {k: rand(shape, dtype) for k, shape in shapes.items() if opts.pop(k, False)}


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("variant", range(len(GRU_VARIANTS)))
def test_gru(variant: int, dtype: str) -> None:
    opts = dict(GRU_VARIANTS[variant])
    steps, batch, inp, h = 3, 2, 4, 5
    d = 2 if opts.get("direction") == "both" else 1
    inputs = {"x": rand((steps, batch, inp), dtype), "w": rand((d, 3 * h, inp), dtype),
              "r": rand((d, 3 * h, h), dtype)}
    inputs |= _optional(opts, {"bias": (d, 3 * h), "recurrent_bias": (d, 3 * h),
                               "initial_hidden_state": (d, batch, h)}, dtype)

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        extra = {k: o[k] for k in ("bias", "recurrent_bias", "initial_hidden_state") if k in o}
        outs = b.gru(o["x"], o["w"], o["r"], steps, h, **opts, **extra)
        return {f"out{i}": v for i, v in enumerate(outs)}

    compare(inputs, build, f16_ulp=4)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("variant", [0, 1, 4])
def test_gru_cell(variant: int, dtype: str) -> None:
    opts = {k: v for k, v in GRU_VARIANTS[variant].items()
            if k not in ("direction", "return_sequence")}
    batch, inp, h = 3, 4, 5
    inputs = {"x": rand((batch, inp), dtype), "w": rand((3 * h, inp), dtype),
              "r": rand((3 * h, h), dtype), "h0": rand((batch, h), dtype)}
    inputs |= _optional(opts, {"bias": (3 * h,), "recurrent_bias": (3 * h,)}, dtype)

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        extra = {k: o[k] for k in ("bias", "recurrent_bias") if k in o}
        return {"y": b.gru_cell(o["x"], o["w"], o["r"], o["h0"], h, **opts, **extra)}

    compare(inputs, build, f16_ulp=4)


LSTM_VARIANTS: list[dict[str, Any]] = [
    {},
    {"direction": "backward", "layout": "ifgo", "peephole_weight": True, "bias": True},
    {"direction": "both", "return_sequence": True, "peephole_weight": True,
     "initial_hidden_state": True, "initial_cell_state": True, "recurrent_bias": True},
    {"activations": ["sigmoid", "relu", "tanh"], "return_sequence": True, "bias": True},
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("variant", range(len(LSTM_VARIANTS)))
def test_lstm(variant: int, dtype: str) -> None:
    opts = dict(LSTM_VARIANTS[variant])
    steps, batch, inp, h = 3, 2, 3, 4
    d = 2 if opts.get("direction") == "both" else 1
    inputs = {"x": rand((steps, batch, inp), dtype), "w": rand((d, 4 * h, inp), dtype),
              "r": rand((d, 4 * h, h), dtype)}
    inputs |= _optional(opts, {"bias": (d, 4 * h), "recurrent_bias": (d, 4 * h),
                               "peephole_weight": (d, 3 * h),
                               "initial_hidden_state": (d, batch, h),
                               "initial_cell_state": (d, batch, h)}, dtype)
    names = ("bias", "recurrent_bias", "peephole_weight", "initial_hidden_state",
             "initial_cell_state")

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        extra = {k: o[k] for k in names if k in o}
        outs = b.lstm(o["x"], o["w"], o["r"], steps, h, **opts, **extra)
        return {f"out{i}": v for i, v in enumerate(outs)}

    compare(inputs, build, f16_ulp=4)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("variant", [0, 1, 3])
def test_lstm_cell(variant: int, dtype: str) -> None:
    opts = {k: v for k, v in LSTM_VARIANTS[variant].items()
            if k not in ("direction", "return_sequence")}
    batch, inp, h = 2, 3, 4
    inputs = {"x": rand((batch, inp), dtype), "w": rand((4 * h, inp), dtype),
              "r": rand((4 * h, h), dtype), "h0": rand((batch, h), dtype),
              "c0": rand((batch, h), dtype)}
    inputs |= _optional(opts, {"bias": (4 * h,), "recurrent_bias": (4 * h,),
                               "peephole_weight": (3 * h,)}, dtype)

    def build(b: MLGraphBuilder, o: Ops) -> Ops:
        extra = {k: o[k] for k in ("bias", "recurrent_bias", "peephole_weight") if k in o}
        outs = b.lstm_cell(o["x"], o["w"], o["r"], o["h0"], o["c0"], h, **opts, **extra)
        return {"hidden": outs[0], "cell": outs[1]}

    compare(inputs, build, f16_ulp=4)
