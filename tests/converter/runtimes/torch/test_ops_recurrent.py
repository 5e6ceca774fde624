"""Torch gru / gruCell / lstm / lstmCell vs the reference backend (no WPT files): directions,
layouts, resetAfter, activations, optional biases, peepholes and initial states, float16."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch")

from converter.core.webnn import MLGraphBuilder, MLOperand  # noqa: E402
from tests.backend_compare import (  # noqa: E402
    GRU_VARIANTS,
    LSTM_VARIANTS,
    gru_case,
    lstm_case,
    optional_inputs,
)
from tests.converter.runtimes.torch.common import compare, rand  # noqa: E402

Ops = dict[str, MLOperand]


def _optional(opts: dict[str, Any], shapes: dict[str, tuple[int, ...]], dtype: str
              ) -> dict[str, np.ndarray]:
    return optional_inputs(opts, shapes, dtype, rand)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("variant", range(len(GRU_VARIANTS)))
def test_gru(variant: int, dtype: str) -> None:
    compare(*gru_case(variant, dtype, rand), f16_ulp=4)


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


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("variant", range(len(LSTM_VARIANTS)))
def test_lstm(variant: int, dtype: str) -> None:
    compare(*lstm_case(variant, dtype, rand), f16_ulp=4)


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
