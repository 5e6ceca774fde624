"""converter.core.webnn.decompose_recurrent: the form of the compositions (what a browser
builds and runs: its time grows with the operation count, benchmarks/browser_recurrent.py),
and the states the first step skips.

- Operations per step: a step adds exactly the listed operations (no slice, no reshape:
  the steps' input projections come from one split, the gates from one split per step, the
  sequence from one concat), so a regression to the slice-per-gate form fails here.
- With no initial state the first step leaves out what multiplies the zero state; every
  combination of given and absent states, biases and peepholes matches the native operator
  on the reference backend (float64 kernels, checked against onnxruntime elsewhere).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from converter.core.webnn import ML, MLGraphBuilder, MLOperand
from converter.core.webnn import decompose_recurrent as dcr

ATOL, RTOL = 1e-5, 1e-4
H, IN, BATCH = 4, 3, 2

LSTM_STEP = Counter({"gemm": 1, "add": 3, "split": 2, "sigmoid": 1, "tanh": 2, "mul": 3})
LSTM_STEP_IFGO = Counter({"gemm": 1, "add": 3, "split": 1, "sigmoid": 3, "tanh": 2,
                          "mul": 3})
GRU_STEP_RESET_AFTER = Counter({"gemm": 1, "split": 2, "add": 6, "sigmoid": 1, "tanh": 1,
                                "mul": 3, "sub": 1})
GRU_STEP_RESET_BEFORE = Counter({"gemm": 2, "split": 1, "add": 5, "sigmoid": 1, "tanh": 1,
                                 "mul": 3, "sub": 1})


def _ops(op: str, steps: int, layout: str, reset_after: bool = True,
         direction: str = "forward") -> Counter[str]:
    """The operations of the built composition of one `op` over `steps` (both biases, no
    initial state, the sequence returned)."""
    rng = np.random.default_rng(0)
    b = MLGraphBuilder(ML().create_context())
    d, g = (2 if direction == "both" else 1), (4 if op == "lstm" else 3)

    def const(*shape: int) -> MLOperand:
        return b.constant(rng.normal(size=shape).astype(np.float32))

    x = b.input("x", [steps, BATCH, IN], "float32")
    kw: dict[str, Any] = dict(bias=const(d, g * H), recurrent_bias=const(d, g * H),
                              return_sequence=True, direction=direction, layout=layout)
    if op == "gru":
        outs = dcr.gru(b, x, const(d, g * H, IN), const(d, g * H, H), steps, H,
                       reset_after=reset_after, **kw)
    else:
        outs = dcr.lstm(b, x, const(d, g * H, IN), const(d, g * H, H), steps, H, **kw)
    graph = b.build({f"o{k}": o for k, o in enumerate(outs)})
    return Counter(o.op for o in graph.operations)


@pytest.mark.parametrize(("op", "layout", "reset_after", "step"), [
    ("lstm", "iofg", True, LSTM_STEP), ("lstm", "ifgo", True, LSTM_STEP_IFGO),
    ("gru", "zrn", True, GRU_STEP_RESET_AFTER), ("gru", "rzn", True, GRU_STEP_RESET_AFTER),
    ("gru", "zrn", False, GRU_STEP_RESET_BEFORE)])
def test_operations_per_step(op: str, layout: str, reset_after: bool,
                             step: Counter[str]) -> None:
    few, more = _ops(op, 5, layout, reset_after), _ops(op, 9, layout, reset_after)
    added = more - few
    assert added == Counter({k: 4 * v for k, v in step.items()}), added
    assert few["slice"] == more["slice"] and few["reshape"] == more["reshape"]
    assert few["concat"] == more["concat"] == 1  # the sequence


def test_bidirectional_operations_per_step_are_two_directions() -> None:
    few, more = _ops("lstm", 5, "iofg", direction="both"), _ops("lstm", 9, "iofg",
                                                                 direction="both")
    assert more - few == Counter({k: 8 * v for k, v in LSTM_STEP.items()})


def test_lstm_stack_of_the_benchmark_has_a_third_fewer_operations() -> None:
    """The browser benchmark's 2 x 256 LSTM over 32 steps (one layer here, the form is the
    same): 12 operations per step; the slice-per-gate form had 18 (with its reshape)."""
    total = sum(_ops("lstm", 32, "iofg").values())
    assert total <= 12 * 32 + 16, total


def _data(op: str, d: int, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    g = 4 if op == "lstm" else 3

    def r(*shape: int) -> np.ndarray:
        return rng.uniform(-0.8, 0.8, shape).astype(np.float32)

    return {"x": r(3, BATCH, IN), "w": r(d, g * H, IN), "r": r(d, g * H, H),
            "b": r(d, g * H), "rb": r(d, g * H), "p": r(d, 3 * H),
            "h0": r(d, BATCH, H), "c0": r(d, BATCH, H)}


NAMES = {"h0": "initial_hidden_state", "c0": "initial_cell_state", "b": "bias",
         "rb": "recurrent_bias", "p": "peephole_weight"}


def _compare(op: str, data: dict[str, np.ndarray], given: tuple[str, ...],
             **options: Any) -> None:
    """The composition of `op` against the native operator, with the operands `given`
    (keys of NAMES) and the others absent."""
    ctx = ML().create_context()
    b = MLGraphBuilder(ctx)
    feeds = {k: v for k, v in data.items() if k in ("x", "w", "r") or k in given}
    i = {k: b.input(k, list(v.shape), "float32") for k, v in feeds.items()}
    kw = {NAMES[k]: i[k] for k in given} | {"return_sequence": True} | options
    native = (b.lstm if op == "lstm" else b.gru)(i["x"], i["w"], i["r"], 3, H, **kw)
    composed = (dcr.lstm if op == "lstm" else dcr.gru)(b, i["x"], i["w"], i["r"], 3, H, **kw)
    outs = {f"n{k}": o for k, o in enumerate(native)} | {
        f"d{k}": o for k, o in enumerate(composed)}
    res = ctx.compute(b.build(outs), feeds)
    for k in range(len(native)):
        np.testing.assert_allclose(res[f"d{k}"], res[f"n{k}"], atol=ATOL, rtol=RTOL)


@pytest.mark.parametrize("given", [(), ("h0",), ("c0",), ("b", "p"), ("p",),
                                   ("h0", "b", "rb", "p"), ("c0", "rb", "p")])
@pytest.mark.parametrize(("direction", "layout"), [("forward", "iofg"), ("both", "ifgo"),
                                                   ("backward", "iofg")])
def test_lstm_first_step_with_absent_states(given: tuple[str, ...], direction: str,
                                           layout: str) -> None:
    d = 2 if direction == "both" else 1
    _compare("lstm", _data("lstm", d, 3), given, direction=direction, layout=layout)


@pytest.mark.parametrize("given", [(), ("b",), ("rb",), ("b", "rb"), ("h0", "rb")])
@pytest.mark.parametrize("reset_after", [True, False])
@pytest.mark.parametrize("layout", ["zrn", "rzn"])
def test_gru_first_step_with_absent_states(given: tuple[str, ...], reset_after: bool,
                                          layout: str) -> None:
    _compare("gru", _data("gru", 2, 4), given, direction="both", layout=layout,
             reset_after=reset_after)
