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


Sized models (benchmarks/browser_peers.py; sizes as keyword arguments, defaults shown):
- `lstm_stack`: `layers` (2) stacked forward LSTMs (hidden 256, input `size` 64), each
  sequence output squeezed into the next; input `x` [seq, batch, size]; outputs `y`
  [seq, 1, batch, hidden] (the last layer's) and `y_h` [1, batch, hidden].
- `gru_bidi`: one bidirectional GRU (hidden 128, input `size` 64, linear_before_reset = 1,
  as torch.nn.GRU exports it); input `x` [seq, batch, size]; outputs `y`
  [seq, 2, batch, hidden] and `y_h` [2, batch, hidden].

`seq` and `batch` are free dimensions. Weights are normal(0, 0.4) (biases 0.1), seeded; the
sized models scale them by 1/sqrt(hidden) instead of 0.4 so that the gates do not saturate.

Usage: python -m converter.zoo.models.make_recurrent KIND OUT.onnx [--seed N] [--hidden N]
[--layers N] [--size N] (the sizes only for the sized models); the zoo
(`source = "generated:make_recurrent.py"`, `args = {kind = "...", ...}`) calls
`make(path, kind=, seed=, **sizes)`.
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


def lstm_stack(seed: int = 0, hidden: int = 256, layers: int = 2, size: int = 64
               ) -> onnx.ModelProto:
    """`layers` stacked forward LSTMs (see the module docstring)."""
    w, scale = _Weights(seed), hidden ** -0.5
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    w.inits.append(axes)
    nodes, source, width = [], "x", size
    for i in range(layers):
        last = i == layers - 1
        y = "y" if last else f"y{i}"
        nodes.append(helper.make_node(
            "LSTM", [source, w(f"W{i}", 1, 4 * hidden, width, scale=scale),
                     w(f"R{i}", 1, 4 * hidden, hidden, scale=scale),
                     w(f"B{i}", 1, 8 * hidden, scale=0.1)],
            [y, "y_h" if last else ""], name=f"lstm{i}", hidden_size=hidden))
        if not last:
            nodes.append(helper.make_node("Squeeze", [y, "axes"], [f"s{i}"], name=f"sq{i}"))
            source, width = f"s{i}", hidden
    return _model("lstm_stack", nodes, [_vi("x", "seq", "batch", size)],
                  [_vi("y", "seq", 1, "batch", hidden), _vi("y_h", 1, "batch", hidden)], w)


def gru_bidi(seed: int = 0, hidden: int = 128, size: int = 64) -> onnx.ModelProto:
    """One bidirectional GRU, linear_before_reset = 1 (see the module docstring)."""
    w, scale = _Weights(seed), hidden ** -0.5
    node = helper.make_node(
        "GRU", ["x", w("W", 2, 3 * hidden, size, scale=scale),
                w("R", 2, 3 * hidden, hidden, scale=scale), w("B", 2, 6 * hidden, scale=0.1)],
        ["y", "y_h"], name="gru", hidden_size=hidden, direction="bidirectional",
        linear_before_reset=1)
    return _model("gru_bidi", [node], [_vi("x", "seq", "batch", size)],
                  [_vi("y", "seq", 2, "batch", hidden), _vi("y_h", 2, "batch", hidden)], w)


KINDS: dict[str, Callable[..., onnx.ModelProto]] = {
    "gru_hardsigmoid": gru_hardsigmoid, "lstm_bidi_peephole": lstm_bidi_peephole,
    "rnn_gru_stack": rnn_gru_stack, "lstm_stack": lstm_stack, "gru_bidi": gru_bidi}
SIZED = {"lstm_stack": ("hidden", "layers", "size"), "gru_bidi": ("hidden", "size")}
"""The kinds that take sizes, and which."""


def make(path: Path, kind: str, seed: int = 0, **sizes: int) -> None:
    """Write model `kind` (a key of KINDS) to `path` (the zoo's generator entry point);
    `sizes` only for the kinds of SIZED, and only the sizes it names."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    unknown = sorted(set(sizes) - set(SIZED.get(kind, ())))
    if unknown:
        raise ValueError(f"kind {kind!r} takes no size {', '.join(unknown)}")
    onnx.save_model(KINDS[kind](seed, **sizes), path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=sorted(KINDS))
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    for size in ("hidden", "layers", "size"):
        parser.add_argument(f"--{size}", type=int, help="for the sized kinds")
    args = parser.parse_args(argv)
    sizes = {k: getattr(args, k) for k in ("hidden", "layers", "size")
             if getattr(args, k) is not None}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    try:
        make(args.out, args.kind, args.seed, **sizes)
    except ValueError as exc:
        parser.error(str(exc))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
