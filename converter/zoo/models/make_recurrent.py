"""Write small recurrent ONNX models built with onnx.helper, seeded random weights (opset 14):

- `gru_hardsigmoid`: one GRU (forward, hidden 16, linear_before_reset = 0) whose gates use
  HardSigmoid(alpha 0.2, beta 0.5) instead of Sigmoid, so it cannot be one fused WebNN gru
  with default activations: the canonical decomposed case. Inputs `x` [seq, batch, 8] and
  `h0` [1, batch, 16]; outputs `y` [seq, 1, batch, 16] and `y_h` [1, batch, 16].
- `lstm_bidi_peephole`: one bidirectional LSTM (hidden 12) with peepholes (P), biases and
  initial states: inputs `x` [seq, batch, 6], `h0`, `c0` [2, batch, 12]; outputs `y`
  [seq, 2, batch, 12], `y_h`, `y_c` [2, batch, 12].
- `rnn_gru_stack`: an RNN (Tanh, hidden 12) whose sequence output (Squeeze of the direction
  axis) feeds a GRU (hidden 10, linear_before_reset = 1); input `x` [seq, batch, 8];
  outputs `rnn_y` [seq, batch, 12] and `gru_y` [seq, 1, batch, 10].

`seq` and `batch` are free dimensions. Weights are normal(0, 0.4) (biases 0.1), seeded.

Usage: python -m converter.zoo.models.make_recurrent KIND OUT.onnx [--seed N]; the zoo
(`source = "generated:make_recurrent.py"`, `args = {kind = "..."}`) calls
`make(path, kind=, seed=)`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 14


class _Weights:
    """Seeded float32 initializers."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.inits: list[onnx.TensorProto] = []

    def __call__(self, name: str, *shape: int, scale: float = 0.4) -> str:
        value = self.rng.normal(0.0, scale, shape).astype(np.float32)
        self.inits.append(numpy_helper.from_array(value, name))
        return name


def _vi(name: str, *dims: int | str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(dims))


def _model(name: str, nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
           outputs: list[onnx.ValueInfoProto], w: _Weights) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, w.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              ir_version=8, producer_name=f"webnn-converter/{name}")
    onnx.checker.check_model(model, full_check=True)
    return model


def gru_hardsigmoid(seed: int = 0) -> onnx.ModelProto:
    """GRU with HardSigmoid gates (see the module docstring)."""
    w, hidden, size = _Weights(seed), 16, 8
    node = helper.make_node(
        "GRU", ["x", w("W", 1, 3 * hidden, size), w("R", 1, 3 * hidden, hidden),
                w("B", 1, 6 * hidden, scale=0.1), "", "h0"], ["y", "y_h"], name="gru",
        hidden_size=hidden, activations=["HardSigmoid", "Tanh"], activation_alpha=[0.2],
        activation_beta=[0.5], linear_before_reset=0)
    return _model("gru_hardsigmoid", [node],
                  [_vi("x", "seq", "batch", size), _vi("h0", 1, "batch", hidden)],
                  [_vi("y", "seq", 1, "batch", hidden), _vi("y_h", 1, "batch", hidden)], w)


def lstm_bidi_peephole(seed: int = 0) -> onnx.ModelProto:
    """Bidirectional LSTM with peepholes and initial states (see the module docstring)."""
    w, hidden, size = _Weights(seed), 12, 6
    node = helper.make_node(
        "LSTM", ["x", w("W", 2, 4 * hidden, size), w("R", 2, 4 * hidden, hidden),
                 w("B", 2, 8 * hidden, scale=0.1), "", "h0", "c0", w("P", 2, 3 * hidden)],
        ["y", "y_h", "y_c"], name="lstm", hidden_size=hidden, direction="bidirectional")
    return _model("lstm_bidi_peephole", [node],
                  [_vi("x", "seq", "batch", size), _vi("h0", 2, "batch", hidden),
                   _vi("c0", 2, "batch", hidden)],
                  [_vi("y", "seq", 2, "batch", hidden), _vi("y_h", 2, "batch", hidden),
                   _vi("y_c", 2, "batch", hidden)], w)


def rnn_gru_stack(seed: int = 0) -> onnx.ModelProto:
    """RNN (Tanh) feeding a GRU, both with sequence outputs (see the module docstring)."""
    w, h1, h2, size = _Weights(seed), 12, 10, 8
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    w.inits.append(axes)
    nodes = [
        helper.make_node("RNN", ["x", w("W1", 1, h1, size), w("R1", 1, h1, h1),
                                 w("B1", 1, 2 * h1, scale=0.1)], ["rnn_y4"], name="rnn",
                         hidden_size=h1, activations=["Tanh"]),
        helper.make_node("Squeeze", ["rnn_y4", "axes"], ["rnn_y"], name="squeeze"),
        helper.make_node("GRU", ["rnn_y", w("W2", 1, 3 * h2, h1), w("R2", 1, 3 * h2, h2),
                                 w("B2", 1, 6 * h2, scale=0.1)], ["gru_y"], name="gru",
                         hidden_size=h2, linear_before_reset=1),
    ]
    return _model("rnn_gru_stack", nodes, [_vi("x", "seq", "batch", size)],
                  [_vi("rnn_y", "seq", "batch", h1), _vi("gru_y", "seq", 1, "batch", h2)], w)


KINDS: dict[str, Callable[[int], onnx.ModelProto]] = {
    "gru_hardsigmoid": gru_hardsigmoid, "lstm_bidi_peephole": lstm_bidi_peephole,
    "rnn_gru_stack": rnn_gru_stack}


def make(path: Path, kind: str, seed: int = 0) -> None:
    """Write model `kind` (a key of KINDS) to `path` (the zoo's generator entry point)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    onnx.save_model(KINDS[kind](seed), path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=sorted(KINDS))
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    make(args.out, args.kind, args.seed)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
