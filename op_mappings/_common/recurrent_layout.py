"""Gate layouts, directions and cell activations of recurrent ops (ONNX RNN/GRU/LSTM, TFLite
LSTM/RNN/SVDF).

A recurrent op packs the weights of its gates along one axis; the order differs by source:
ONNX LSTM packs i, o, f, c (WebNN layout "iofg"), TFLite LSTM keeps one tensor per gate and
WebNN's "ifgo" packs them i, f, c, o; ONNX GRU packs z, r, h (WebNN "zrn"). A `GateLayout`
names the gates of one order (source names: "c" is the LSTM cell candidate, WebNN's "g";
"h" the GRU hidden candidate, WebNN's "n") and knows where each sits; the WebNN orders come
from `converter.core.webnn.decompose`'s offset tables, so both importers and the WebNN
decomposition agree on them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from converter.core.webnn import MLGraphBuilder, MLOperand
from converter.core.webnn import decompose as dc

_SOURCE_NAMES = {"g": "c", "n": "h"}
"""WebNN gate letters that source formats name differently."""


@dataclass(frozen=True)
class GateLayout:
    """The gates of one packing order (source names, in order) and the WebNN layout name of
    that order ("" when WebNN has none, e.g. an LSTM without its input gate)."""

    gates: tuple[str, ...]
    webnn: str = ""

    def index(self, gate: str) -> int:
        """Position of `gate` in the packing."""
        return self.gates.index(gate)

    def cols(self, gate: str, hidden: int) -> slice:
        """Where `gate` sits along the packed axis, for `hidden` units per gate."""
        k = self.index(gate)
        return slice(k * hidden, (k + 1) * hidden)

    def span(self, gates: Sequence[str], hidden: int) -> slice:
        """Where the consecutive `gates` sit together (e.g. GRU's z and r)."""
        first, last = self.index(gates[0]), self.index(gates[-1])
        if last - first != len(gates) - 1 or list(self.gates[first:last + 1]) != list(gates):
            raise ValueError(f"gates {list(gates)} are not consecutive in {self.gates}")
        return slice(first * hidden, (last + 1) * hidden)

    def without(self, gate: str) -> GateLayout:
        """This order less `gate` (e.g. a CIFG LSTM has no input gate); no WebNN layout."""
        return GateLayout(tuple(g for g in self.gates if g != gate))

    def pack(self, parts: Mapping[str, np.ndarray]) -> np.ndarray:
        """Per-gate constant arrays concatenated along axis 0 in this order."""
        return np.concatenate([np.asarray(parts[g]) for g in self.gates])

    def split(self, b: MLGraphBuilder, x: MLOperand, axis: int) -> dict[str, MLOperand]:
        """A packed operand split into its gates (one split op), by gate name."""
        return dict(zip(self.gates, b.split(x, len(self.gates), axis=axis), strict=True))


def _webnn_layout(offsets: Mapping[str, Mapping[str, int]], name: str) -> GateLayout:
    order = sorted(offsets[name], key=lambda g: offsets[name][g])
    return GateLayout(tuple(_SOURCE_NAMES.get(g, g) for g in order), name)


LSTM_IOFC = _webnn_layout(dc.LSTM_OFFSETS, "iofg")
"""ONNX LSTM's packing (W, R, B) = WebNN lstm layout "iofg"."""
LSTM_IFCO = _webnn_layout(dc.LSTM_OFFSETS, "ifgo")
"""WebNN lstm layout "ifgo", the order TFLite's per-gate tensors are packed in."""
GRU_ZRH = _webnn_layout(dc.GRU_OFFSETS, "zrn")
"""ONNX GRU's packing = WebNN gru layout "zrn"."""
PEEPHOLES = GateLayout(tuple(sorted(dc.PEEPHOLE_OFFSETS, key=dc.PEEPHOLE_OFFSETS.__getitem__)))
"""The packing of LSTM peephole weights (i, o, f): ONNX's P and WebNN's peepholeWeight."""


def stack_directions(per_direction: Sequence[np.ndarray]) -> np.ndarray:
    """Constant per-direction arrays stacked on a new leading (directions) axis."""
    return np.stack([np.asarray(a) for a in per_direction])


def webnn_direction(directions: int, reverse: bool = False) -> str:
    """WebNN's `direction` option: "both" for two directions, else "backward" when the one
    direction walks time in reverse, else "forward"."""
    if directions == 2:
        return "both"
    return "backward" if reverse else "forward"


# -- cell activations ----------------------------------------------------------------------


def _clamp(low: float, high: float) -> dc.Activation:
    return lambda b, x: b.clamp(x, min_value=low, max_value=high)


def cell_activation(name: str, alpha: float = 0.0, beta: float = 0.0) -> dc.Activation:
    """The builder callable `(builder, x) -> y` of a recurrent cell activation, by lower-case
    name: ONNX's relu, tanh, sigmoid, softsign, softplus, affine (alpha·x + beta), leakyrelu,
    thresholdedrelu, scaledtanh (alpha·tanh(beta·x)), hardsigmoid, elu; TFLite's fused
    relu6 and relu_n1_to_1 (clamps) and identity. KeyError for other names."""
    table: dict[str, Callable[[], dc.Activation]] = {
        "relu": lambda: dc.relu_fn, "tanh": lambda: dc.tanh_fn,
        "sigmoid": lambda: dc.sigmoid_fn, "softsign": lambda: dc.softsign_fn,
        "softplus": lambda: dc.softplus_fn, "affine": lambda: dc.linear_fn(alpha, beta),
        "leakyrelu": lambda: dc.leaky_relu_fn(alpha),
        "thresholdedrelu": lambda: dc.thresholded_relu_fn(alpha),
        "scaledtanh": lambda: dc.scaled_tanh_fn(alpha, beta),
        "hardsigmoid": lambda: dc.hard_sigmoid_fn(alpha, beta),
        "elu": lambda: dc.elu_fn(alpha),
        "relu6": lambda: _clamp(0.0, 6.0),
        "relu_n1_to_1": lambda: _clamp(-1.0, 1.0),
        "identity": lambda: _identity,
    }
    return table[name]()


def _identity(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
    return x
