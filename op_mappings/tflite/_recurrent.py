"""Helpers shared by the recurrent TFLite handlers (lstm.py, rnn.py, svdf.py); no handlers
here. Gate layouts, cell activations and the time-step unroller are shared with the ONNX
handlers (`op_mappings/_common/`).

Values are handled as "weights": a float numpy array when the tensor is a constant
(quantized constants dequantized at conversion time, hybrid models), otherwise the float
operand. Concatenating constant weights happens in numpy, so the graph gets one constant
instead of a concat op.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from converter.core.errors import InvalidModel, UnsupportedAttribute, UnsupportedDataType
from converter.core.ir import Node
from converter.core.webnn import MLOperand
from converter.core.webnn import decompose as dc
from converter.core.webnn.dtypes import FLOAT_TYPES
from converter.importer import ImportContext
from op_mappings._common.recurrent_layout import cell_activation
from op_mappings._common.unroll import (
    flatten_steps,
    input_projection,
    stack_steps,
    step_blocks,
    swap_batch_time,
)
from op_mappings._common.values import const_or_none
from op_mappings.tflite._util import (
    NONE,
    RELU,
    RELU6,
    RELU_N1_TO_1,
    TANH,
    dequantize_value,
    fin,
    is_quantized,
)

Weight = np.ndarray | MLOperand
Act = dc.Activation
"""A cell activation: `act(builder, x) -> y`."""


def weight(ctx: ImportContext, node: Node, i: int) -> Weight | None:
    """Input `i` as a float weight (None when omitted)."""
    name = node.input(i)
    if not name:
        return None
    info = node.input_infos[i]
    value = const_or_none(ctx, name)
    if value is not None:
        if is_quantized(info):
            assert info is not None
            return dequantize_value(value, info)
        if value.dtype.kind != "f":
            raise UnsupportedDataType(f"input {i} has data type {value.dtype.name}, expected a "
                                      "float or quantized weight")
        return value.astype(np.float32) if value.dtype != np.float16 else value
    x = fin(ctx, node, i)
    assert x is not None
    if x.data_type not in FLOAT_TYPES:
        raise UnsupportedDataType(f"input {i} has data type {x.data_type}")
    return x


def operand(ctx: ImportContext, w: Weight) -> MLOperand:
    return w if isinstance(w, MLOperand) else ctx.constant(np.asarray(w, np.float32))


def cat(ctx: ImportContext, items: Sequence[Weight], axis: int = 0) -> Weight:
    """Concatenate weights (numpy when all are constants)."""
    if all(isinstance(w, np.ndarray) for w in items):
        return np.concatenate([np.asarray(w, np.float32) for w in items], axis)
    if len(items) == 1:
        return operand(ctx, items[0])
    return ctx.builder.concat([operand(ctx, w) for w in items], axis)


def shape_of(w: Weight) -> tuple[int, ...]:
    return tuple(int(d) for d in w.shape)


_ACTIVATIONS = {TANH: "tanh", RELU: "relu", RELU6: "relu6", RELU_N1_TO_1: "relu_n1_to_1",
                NONE: "identity"}


def activation_fn(code: int, *, none_ok: bool) -> Act:
    """A recurrent cell activation from a TFLite fused-activation code. NONE is the identity
    only where LiteRT applies the activation in place (RNN); LSTM's hidden-output path leaves
    its buffer unset for NONE, so it is rejected there (`none_ok=False`)."""
    code = int(code)
    if code in _ACTIVATIONS and (code != NONE or none_ok):
        return cell_activation(_ACTIVATIONS[code])
    raise UnsupportedAttribute(f"recurrent activation {code} is not supported (TANH, RELU, "
                               "RELU6, RELU_N1_TO_1" + (", NONE" if none_ok else "") + ")")


def initial_state(ctx: ImportContext, node: Node, i: int, shape: Sequence[int]
                  ) -> MLOperand:
    """The state input `i` (a variable tensor): its value, or zeros when the variable has no
    initial buffer (LiteRT resets variables to zero). Warns that the updated state is not
    carried to the next run."""
    name = node.input(i)
    info = node.input_infos[i] if i < len(node.input_infos) else None
    if name and ctx.has(name):
        value = fin(ctx, node, i)
        assert value is not None
    elif info is not None and info.is_variable:
        value = ctx.constant(np.zeros(shape, np.float32))
    else:
        raise InvalidModel(f"state input {i} is missing")
    if list(value.shape) != list(shape):
        raise InvalidModel(f"state input {i} has shape {list(value.shape)}, expected "
                           f"{list(shape)}")
    if info is not None and info.is_variable:
        ctx.warn("the recurrent state is a variable tensor; WebNN graphs are stateless, so each "
                 "run starts from the initial state")
    return value


def float_input(ctx: ImportContext, node: Node, rank: int) -> MLOperand:
    x = fin(ctx, node, 0)
    assert x is not None
    if x.data_type not in FLOAT_TYPES:
        raise UnsupportedDataType(f"input has data type {x.data_type}; only float recurrent "
                                  "ops are supported")
    if len(x.shape) != rank:
        raise InvalidModel(f"input has rank {len(x.shape)}, expected {rank}")
    if x.data_type == "float16":
        x = ctx.builder.cast(x, "float32")
    return x


def time_major(ctx: ImportContext, x: MLOperand, is_time_major: bool) -> MLOperand:
    """[T, B, I] view of a sequence input."""
    return x if is_time_major else swap_batch_time(ctx.builder, x)


def from_time_major(ctx: ImportContext, y: MLOperand, is_time_major: bool) -> MLOperand:
    return y if is_time_major else swap_batch_time(ctx.builder, y)


def stack(ctx: ImportContext, outs: Sequence[MLOperand]) -> MLOperand:
    """[B, N] per step (in time order) -> [T, B, N]."""
    return stack_steps(ctx.builder, outs, list(outs[0].shape))


def projection(ctx: ImportContext, x: MLOperand, w: Weight, bias: Weight | None
               ) -> list[MLOperand]:
    """x [T, B, I] · wᵀ (+ bias) with one gemm, as one [B, N] operand per step."""
    b = ctx.builder
    steps, _, n_in = x.shape
    if shape_of(w)[1] != n_in:
        raise InvalidModel(f"weights {list(shape_of(w))} do not match input size {n_in}")
    c = operand(ctx, bias) if bias is not None else None
    y = input_projection(b, flatten_steps(b, x), operand(ctx, w), c)
    return step_blocks(b, y, steps)


def check_rank(w: Weight | None, shape: Sequence[int], what: str) -> None:
    if w is not None and list(shape_of(w)) != list(shape):
        raise InvalidModel(f"{what} has shape {list(shape_of(w))}, expected {list(shape)}")


def reject_aux(node: Node, index: int) -> None:
    if node.input(index):
        raise UnsupportedAttribute("auxiliary inputs are not supported")


def merge(ctx: ImportContext, fw: MLOperand, bw: MLOperand, merge_outputs: bool
          ) -> list[Any]:
    if merge_outputs:
        return [ctx.builder.concat([fw, bw], 2)]
    return [fw, bw]
