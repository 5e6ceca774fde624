"""MLGraphBuilder operators: recurrent networks (gru, gruCell, lstm, lstmCell).

Restrictions (spec): every operand is float32 or float16 and all share the input's data type.
Shapes (D = 2 for direction "both", else 1; H = hiddenSize; B = batch; I = input size):

- gru: input [steps, B, I], weight [D, 3H, I], recurrentWeight [D, 3H, H], bias and
  recurrentBias [D, 3H], initialHiddenState [D, B, H]; returns [hidden [D, B, H]] plus
  [steps, D, B, H] when returnSequence.
- gruCell: input [B, I], weight [3H, I], recurrentWeight [3H, H], hiddenState [B, H], biases
  [3H]; returns [B, H].
- lstm: as gru with 4H gate rows, peepholeWeight [D, 3H] (packed i, o, f) and
  initialCellState [D, B, H]; returns [hidden, cell] (+ sequence when returnSequence).
- lstmCell: as gruCell with 4H rows, peepholeWeight [3H] and cellState [B, H]; returns
  [hidden, cell].

hiddenSize * 6 (gru) / * 8 (lstm) must be a valid dimension; steps must equal input.shape[0]
and be non-zero; activations are "relu" | "sigmoid" | "tanh", exactly 2 (gru) or 3 (lstm).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from converter.core.webnn import validation as v
from converter.core.webnn.base import BuilderBase
from converter.core.webnn.operand import MLOperand

ACTIVATIONS = ("relu", "sigmoid", "tanh")
DIRECTIONS = ("forward", "backward", "both")
GRU_LAYOUTS = ("zrn", "rzn")
LSTM_LAYOUTS = ("iofg", "ifgo")
GRU_ACTIVATIONS = ("sigmoid", "tanh")
LSTM_ACTIVATIONS = ("sigmoid", "tanh", "tanh")


class RecurrentOps(BuilderBase):
    # -- helpers ---------------------------------------------------------------------------
    def _rnn_operand(self, op: str, role: str, x: Any, ref: MLOperand,
                     shape: Sequence[int]) -> MLOperand:
        """An operand of `op` with the reference's data type and exactly `shape`."""
        operand = self._operand(op, role, x)
        v.same_type(op, role, operand.data_type, "input", ref.data_type)
        v.same_shape(op, role, operand.shape, tuple(shape))
        return operand

    def _rnn_optional(self, op: str, role: str, x: Any, ref: MLOperand,
                      shape: Sequence[int]) -> MLOperand | None:
        return None if x is None else self._rnn_operand(op, role, x, ref, shape)

    @staticmethod
    def _activations(op: str, values: Any, default: tuple[str, ...]) -> list[str]:
        if values is None:
            return list(default)
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise v.fail(op, f"activations must be a sequence of activation names, got "
                             f"{values!r}")
        if len(values) != len(default):
            raise v.fail(op, f"activations must have {len(default)} items, got {len(values)}")
        return [v.enum(op, "activation", a, ACTIVATIONS) for a in values]

    @staticmethod
    def _hidden_size(op: str, hidden_size: Any, gates: int) -> int:
        """hiddenSize as an unsigned long; 2 * gates * hiddenSize must be a valid dimension
        (some platforms concatenate bias and recurrentBias)."""
        h = v.unsigned(op, "hiddenSize", hidden_size)
        if h == 0:
            raise v.fail(op, "hiddenSize must be greater than 0")
        v.dimension(op, f"hiddenSize * {2 * gates}", h * 2 * gates)
        return h

    # -- gru -------------------------------------------------------------------------------
    def _sequence(self, op: str, input: Any, weight: Any, recurrent_weight: Any, steps: Any,
                  hidden_size: Any, gates: int, return_sequence: Any, direction: Any,
                  layout: Any, layouts: tuple[str, ...]
                  ) -> tuple[MLOperand, MLOperand, MLOperand, int, int, int]:
        """The checks gru and lstm share: operands and their types, steps, the enums, hidden
        size and the weight shapes [D, gates*H, I] / [D, gates*H, H]. Returns
        (input, weight, recurrentWeight, steps, hiddenSize, D)."""
        x = self._operand(op, "input", input)
        w = self._operand(op, "weight", weight)
        r = self._operand(op, "recurrentWeight", recurrent_weight)
        v.same_type(op, "weight", w.data_type, "input", x.data_type)
        v.same_type(op, "recurrentWeight", r.data_type, "input", x.data_type)
        steps = v.unsigned(op, "steps", steps)
        if steps == 0:
            raise v.fail(op, "steps must be greater than 0")
        if x.shape[0] != steps:
            raise v.fail(op, f"input.shape[0] ({x.shape[0]}) must equal steps ({steps})")
        v.boolean(op, "returnSequence", return_sequence)
        v.enum(op, "direction", direction, DIRECTIONS)
        v.enum(op, "layout", layout, layouts)
        h = self._hidden_size(op, hidden_size, gates)
        d = 2 if direction == "both" else 1
        v.same_shape(op, "weight", w.shape, (d, gates * h, x.shape[2]))
        v.same_shape(op, "recurrentWeight", r.shape, (d, gates * h, h))
        return x, w, r, steps, h, d

    def gru(self, input: MLOperand, weight: MLOperand, recurrent_weight: MLOperand, steps: int,
            hidden_size: int, *, bias: MLOperand | None = None,
            recurrent_bias: MLOperand | None = None,
            initial_hidden_state: MLOperand | None = None, reset_after: bool = True,
            return_sequence: bool = False, direction: str = "forward", layout: str = "zrn",
            activations: Sequence[str] | None = None, label: str = "") -> list[MLOperand]:
        """Gated recurrent unit over `steps` time steps. Returns [hidden] or
        [hidden, sequence] (returnSequence). See the module docstring for shapes."""
        op = "gru"
        v.boolean(op, "resetAfter", reset_after)
        x, w, r, steps, h, d = self._sequence(op, input, weight, recurrent_weight, steps,
                                              hidden_size, 3, return_sequence, direction,
                                              layout, GRU_LAYOUTS)
        batch = x.shape[1]
        b = self._rnn_optional(op, "bias", bias, x, (d, 3 * h))
        rb = self._rnn_optional(op, "recurrentBias", recurrent_bias, x, (d, 3 * h))
        h0 = self._rnn_optional(op, "initialHiddenState", initial_hidden_state, x,
                                (d, batch, h))
        acts = self._activations(op, activations, GRU_ACTIVATIONS)
        outputs: list[tuple[str, tuple[int, ...]]] = [(x.data_type, (d, batch, h))]
        roles = ["output0"]
        if return_sequence:
            outputs.append((x.data_type, (steps, d, batch, h)))
            roles.append("output1")
        options = {"bias": b, "recurrentBias": rb, "initialHiddenState": h0,
                   "resetAfter": reset_after, "returnSequence": return_sequence,
                   "direction": direction, "layout": layout, "activations": acts,
                   "label": label or None}
        return self._emit(op, (x, w, r, steps, h), options, outputs, roles)

    def gru_cell(self, input: MLOperand, weight: MLOperand, recurrent_weight: MLOperand,
                 hidden_state: MLOperand, hidden_size: int, *, bias: MLOperand | None = None,
                 recurrent_bias: MLOperand | None = None, reset_after: bool = True,
                 layout: str = "zrn", activations: Sequence[str] | None = None,
                 label: str = "") -> MLOperand:
        """One GRU time step; returns the new hidden state [B, H]."""
        op = "gruCell"
        x = self._operand(op, "input", input)
        w = self._operand(op, "weight", weight)
        r = self._operand(op, "recurrentWeight", recurrent_weight)
        hs = self._operand(op, "hiddenState", hidden_state)
        for role, o in (("weight", w), ("recurrentWeight", r), ("hiddenState", hs)):
            v.same_type(op, role, o.data_type, "input", x.data_type)
        v.boolean(op, "resetAfter", reset_after)
        v.enum(op, "layout", layout, GRU_LAYOUTS)
        h = self._hidden_size(op, hidden_size, 3)
        batch, in_size = x.shape
        v.same_shape(op, "weight", w.shape, (3 * h, in_size))
        v.same_shape(op, "recurrentWeight", r.shape, (3 * h, h))
        v.same_shape(op, "hiddenState", hs.shape, (batch, h))
        b = self._rnn_optional(op, "bias", bias, x, (3 * h,))
        rb = self._rnn_optional(op, "recurrentBias", recurrent_bias, x, (3 * h,))
        acts = self._activations(op, activations, GRU_ACTIVATIONS)
        options = {"bias": b, "recurrentBias": rb, "resetAfter": reset_after,
                   "layout": layout, "activations": acts, "label": label or None}
        return self._emit(op, (x, w, r, hs, h), options, [(x.data_type, (batch, h))],
                          ["output"])[0]

    # -- lstm ------------------------------------------------------------------------------
    def lstm(self, input: MLOperand, weight: MLOperand, recurrent_weight: MLOperand,
             steps: int, hidden_size: int, *, bias: MLOperand | None = None,
             recurrent_bias: MLOperand | None = None,
             peephole_weight: MLOperand | None = None,
             initial_hidden_state: MLOperand | None = None,
             initial_cell_state: MLOperand | None = None, return_sequence: bool = False,
             direction: str = "forward", layout: str = "iofg",
             activations: Sequence[str] | None = None, label: str = "") -> list[MLOperand]:
        """Long short-term memory over `steps` time steps. Returns [hidden, cell] or
        [hidden, cell, sequence] (returnSequence). See the module docstring for shapes."""
        op = "lstm"
        x, w, r, steps, h, d = self._sequence(op, input, weight, recurrent_weight, steps,
                                              hidden_size, 4, return_sequence, direction,
                                              layout, LSTM_LAYOUTS)
        batch = x.shape[1]
        b = self._rnn_optional(op, "bias", bias, x, (d, 4 * h))
        rb = self._rnn_optional(op, "recurrentBias", recurrent_bias, x, (d, 4 * h))
        p = self._rnn_optional(op, "peepholeWeight", peephole_weight, x, (d, 3 * h))
        h0 = self._rnn_optional(op, "initialHiddenState", initial_hidden_state, x,
                                (d, batch, h))
        c0 = self._rnn_optional(op, "initialCellState", initial_cell_state, x, (d, batch, h))
        acts = self._activations(op, activations, LSTM_ACTIVATIONS)
        outputs: list[tuple[str, tuple[int, ...]]] = [(x.data_type, (d, batch, h)),
                                                      (x.data_type, (d, batch, h))]
        roles = ["output0", "output1"]
        if return_sequence:
            outputs.append((x.data_type, (steps, d, batch, h)))
            roles.append("output2")
        options = {"bias": b, "recurrentBias": rb, "peepholeWeight": p,
                   "initialHiddenState": h0, "initialCellState": c0,
                   "returnSequence": return_sequence, "direction": direction,
                   "layout": layout, "activations": acts, "label": label or None}
        return self._emit(op, (x, w, r, steps, h), options, outputs, roles)

    def lstm_cell(self, input: MLOperand, weight: MLOperand, recurrent_weight: MLOperand,
                  hidden_state: MLOperand, cell_state: MLOperand, hidden_size: int, *,
                  bias: MLOperand | None = None, recurrent_bias: MLOperand | None = None,
                  peephole_weight: MLOperand | None = None, layout: str = "iofg",
                  activations: Sequence[str] | None = None,
                  label: str = "") -> list[MLOperand]:
        """One LSTM time step; returns [hidden [B, H], cell [B, H]]."""
        op = "lstmCell"
        x = self._operand(op, "input", input)
        w = self._operand(op, "weight", weight)
        r = self._operand(op, "recurrentWeight", recurrent_weight)
        hs = self._operand(op, "hiddenState", hidden_state)
        cs = self._operand(op, "cellState", cell_state)
        for role, o in (("weight", w), ("recurrentWeight", r), ("hiddenState", hs),
                        ("cellState", cs)):
            v.same_type(op, role, o.data_type, "input", x.data_type)
        v.enum(op, "layout", layout, LSTM_LAYOUTS)
        h = self._hidden_size(op, hidden_size, 4)
        batch, in_size = x.shape
        v.same_shape(op, "weight", w.shape, (4 * h, in_size))
        v.same_shape(op, "recurrentWeight", r.shape, (4 * h, h))
        v.same_shape(op, "hiddenState", hs.shape, (batch, h))
        v.same_shape(op, "cellState", cs.shape, (batch, h))
        b = self._rnn_optional(op, "bias", bias, x, (4 * h,))
        rb = self._rnn_optional(op, "recurrentBias", recurrent_bias, x, (4 * h,))
        p = self._rnn_optional(op, "peepholeWeight", peephole_weight, x, (3 * h,))
        acts = self._activations(op, activations, LSTM_ACTIVATIONS)
        options = {"bias": b, "recurrentBias": rb, "peepholeWeight": p, "layout": layout,
                   "activations": acts, "label": label or None}
        out = (x.data_type, (batch, h))
        return self._emit(op, (x, w, r, hs, cs, h), options, [out, out],
                          ["output0", "output1"])
