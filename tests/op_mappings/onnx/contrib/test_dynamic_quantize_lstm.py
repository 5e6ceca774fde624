"""com.microsoft DynamicQuantizeLSTM vs onnxruntime's CPU kernel (one-node models, random
float inputs, random int8/uint8 weights with per-tensor and per-channel scales).

onnxruntime quantizes X and every step's hidden state to uint8 at run time; the converted
graph does the same, so the results agree to float32 rounding (at most 2.4e-7 measured;
the tolerance 1e-4 allows one quantized value to differ by 1), where a float LSTM on the
dequantized weights is ~6e-3 away (test_quantization_matters). onnxruntime's result depends
on its thread count for batch >= 2 (see the handler), so it runs with one intra-op thread per
batch row. Each comparison prints MAXERR (pytest -s).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import onnxruntime as ort
import pytest

import converter
from tests.op_mappings.onnx.contrib.oracle import compare, expect_error, ms_model, rng_array

WEIGHTS = ("W", "R", "W_scale", "W_zp", "R_scale", "R_zp")
RTOL, ATOL = 1e-4, 1e-4


def _inputs(steps: int, batch: int, size: int, hidden: int, dirs: int, *, dtype: str = "int8",
            per_channel: bool = False, bias: bool = True, states: bool = False,
            peepholes: bool = False, seq_lens: bool = False, seed: int = 0
            ) -> list[tuple[str, np.ndarray | None]]:
    rng = np.random.default_rng(seed)
    lo, hi = (-128, 128) if dtype == "int8" else (0, 256)

    def ints(*shape: int) -> np.ndarray:
        return rng.integers(lo, hi, size=shape).astype(dtype)

    def scale(k: int) -> np.ndarray:
        # scales that keep the gate pre-activations in a useful range
        shape = (dirs, 4 * hidden) if per_channel else (dirs,)
        return (rng.uniform(0.5, 1.5, size=shape) / (64.0 * np.sqrt(k))).astype(np.float32)

    def zp() -> np.ndarray:
        shape = (dirs, 4 * hidden) if per_channel else (dirs,)
        value = 0 if dtype == "int8" and per_channel else (3 if dtype == "int8" else 128)
        return np.full(shape, value, dtype=dtype)

    state = (dirs, batch, hidden)
    return [
        ("X", rng_array(steps, batch, size, seed=seed + 1)),
        ("W", ints(dirs, size, 4 * hidden)), ("R", ints(dirs, hidden, 4 * hidden)),
        ("B", rng_array(dirs, 8 * hidden, seed=seed + 2, low=-0.5, high=0.5) if bias else None),
        ("seq", np.full(batch, steps, np.int32) if seq_lens else None),
        ("h0", rng_array(*state, seed=seed + 3, low=-1, high=1) if states else None),
        ("c0", rng_array(*state, seed=seed + 4, low=-1, high=1) if states else None),
        ("P", rng_array(dirs, 3 * hidden, seed=seed + 5, low=-0.5, high=0.5)
         if peepholes else None),
        ("W_scale", scale(size)), ("W_zp", zp()), ("R_scale", scale(hidden)), ("R_zp", zp()),
    ]


def _ort(model: onnx.ModelProto, feeds: dict[str, np.ndarray], threads: int
         ) -> dict[str, np.ndarray]:
    """onnxruntime's CPU outputs with `threads` intra-op threads."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    sess = ort.InferenceSession(model.SerializeToString(), opts,
                                providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(None, feeds), strict=True))


def _check(items: Sequence[tuple[str, np.ndarray | None]], attrs: dict[str, object],
           outputs: Sequence[str] = ("y", "yh", "yc"), constants: Sequence[str] = WEIGHTS,
           threads: int | None = None) -> converter.ConversionResult:
    """Compare with onnxruntime run with one intra-op thread per batch row (by default): the
    per-row quantization of the hidden state that the converter reproduces (see the
    handler's docstring)."""
    model = ms_model("DynamicQuantizeLSTM", items, attrs, outputs=outputs, constants=constants)
    feeds = {n: v for n, v in items if v is not None and n not in constants}
    batch = dict(items)["X"].shape[1]
    expected = {k: v for k, v in _ort(model, feeds, threads or batch).items() if k in outputs}
    return compare(model, feeds, expected, "DynamicQuantizeLSTM", RTOL, ATOL)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("dtype,per_channel", [("int8", False), ("int8", True),
                                               ("uint8", False), ("uint8", True)])
def test_directions_and_weight_types(direction: str, dtype: str, per_channel: bool) -> None:
    dirs = 2 if direction == "bidirectional" else 1
    items = _inputs(5, 3, 10, 8, dirs, dtype=dtype, per_channel=per_channel)
    _check(items, {"hidden_size": 8, "direction": direction})


@pytest.mark.parametrize("steps,batch,size,hidden", [(1, 1, 4, 3), (7, 2, 16, 16),
                                                     (3, 4, 33, 5)])
@pytest.mark.parametrize("states", [False, True])
def test_shapes_and_states(steps: int, batch: int, size: int, hidden: int,
                           states: bool) -> None:
    items = _inputs(steps, batch, size, hidden, 1, states=states, seed=steps + size)
    _check(items, {"hidden_size": hidden})


def test_peepholes_clip_input_forget_seq_lens() -> None:
    items = _inputs(4, 2, 6, 5, 2, peepholes=True, states=True, seq_lens=True, seed=7)
    _check(items, {"hidden_size": 5, "direction": "bidirectional", "clip": 0.8,
                   "input_forget": 1}, constants=(*WEIGHTS, "seq"))


def test_activations_and_no_bias() -> None:
    items = _inputs(4, 2, 6, 5, 1, bias=False, seed=8)
    _check(items, {"hidden_size": 5, "activations": ["HardSigmoid", "Tanh", "Softsign"],
                   "activation_alpha": [0.3], "activation_beta": [0.4]})


@pytest.mark.parametrize("outputs", [("y",), ("", "yh"), ("", "", "yc"), ("y", "yh")])
def test_output_subsets(outputs: tuple[str, ...]) -> None:
    _check(_inputs(3, 2, 6, 4, 1, seed=9), {"hidden_size": 4}, outputs=outputs)


def test_quantization_matters() -> None:
    """A float LSTM on the dequantized weights differs from onnxruntime by far more than the
    converted graph does: the run-time quantization of X and h is reproduced, not skipped."""
    items = _inputs(6, 1, 12, 8, 1, seed=10)
    values = dict(items)
    feeds = {"X": values["X"], "B": values["B"]}
    expected = _ort(ms_model("DynamicQuantizeLSTM", items, {"hidden_size": 8}, outputs=("y",),
                             constants=WEIGHTS), feeds, 1)["y"]

    def deq(w: str) -> np.ndarray:
        ints = values[w].astype(np.float32) - values[w + "_zp"].astype(np.float32)[:, None, None]
        return (ints * values[w + "_scale"][:, None, None]).transpose(0, 2, 1)

    float_items = [("X", values["X"]), ("W", deq("W")), ("R", deq("R")), ("B", values["B"])]
    float_model = ms_model("LSTM", float_items, {"hidden_size": 8}, outputs=("y",),
                           constants=("W", "R"), domain="")
    float_err = np.max(np.abs(_ort(float_model, feeds, 1)["y"] - expected))
    res = _check(items, {"hidden_size": 8}, outputs=("y",))
    our_err = np.max(np.abs(res.run(feeds)["y"] - expected))
    print(f"MAXERR float LSTM on dequantized weights {float_err:.3g}, converted {our_err:.3g}")
    assert float_err > 20 * our_err


@pytest.mark.parametrize("batch,hidden", [(3, 300), (6, 4)])
def test_whole_batch_quantization(batch: int, hidden: int) -> None:
    """batch 2-4 with hidden > 256: onnxruntime quantizes the whole batch's hidden state
    with one range whatever its thread count; batch > 4 is per row with >= batch threads."""
    items = _inputs(2, batch, 5, hidden, 1, seed=11)
    _check(items, {"hidden_size": hidden}, outputs=("y", "yh", "yc"))


def _malformed(**changes: np.ndarray) -> onnx.ModelProto:
    items = [(n, changes.get(n, v)) for n, v in _inputs(2, 1, 4, 3, 1, per_channel=True)]
    return ms_model("DynamicQuantizeLSTM", items, {"hidden_size": 3}, outputs=("y",),
                    constants=WEIGHTS)


@pytest.mark.parametrize("changes,reason,fragment", [
    ({"W_zp": np.full((1, 12), 2, np.int8)}, "invalid_model", "W_zero_point must be one"),
    ({"R_scale": np.ones((1, 5), np.float32)}, "invalid_model", "R_scale has shape [1, 5]"),
    ({"W": np.zeros((1, 3, 12), np.int8)}, "invalid_model", "W has shape [1, 3, 12]"),
])
def test_malformed(changes: dict[str, np.ndarray], reason: str, fragment: str) -> None:
    expect_error(_malformed(**changes), reason, fragment)


def test_variable_sequence_lens_rejected() -> None:
    items = [(n, np.array([1], np.int32) if n == "seq" else v)
             for n, v in _inputs(2, 1, 4, 3, 1)]
    model = ms_model("DynamicQuantizeLSTM", items, {"hidden_size": 3}, outputs=("y",),
                     constants=(*WEIGHTS, "seq"))
    expect_error(model, "unsupported_attribute", "sequence_lens")
