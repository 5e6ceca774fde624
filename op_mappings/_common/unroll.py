"""The time-step unroller of recurrent ops decomposed from primitives (ONNX RNN/GRU/LSTM,
TFLite LSTM/RNN).

WebNN graphs have no loops, so a recurrent op whose semantics WebNN's gru/lstm cannot express
is unrolled: the input projection of every step is one gemm (`input_projection` over the
sequence flattened to [steps·batch, input]), split into per-step blocks (`step_blocks`);
then `unroll` calls the cell once per step, last step first for a backward direction, and
hands back the per-step outputs in time order, which `stack_steps` packs into one sequence.
The cell itself (gates, activations, clipping, peepholes) is the source format's.
Handlers call `check_steps(ctx, steps)` first: the `max_recurrent_steps` budget
(`converter.core.budgets`) bounds the time steps unrolled, since each adds about ten operations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from converter.core.webnn import MLGraphBuilder, MLOperand
from converter.core.webnn import decompose as dc
from converter.importer import ImportContext

State = TypeVar("State")
Out = TypeVar("Out")


def check_steps(ctx: ImportContext, steps: int) -> None:
    """Raise `BudgetExceeded` before unrolling `steps` time steps over the
    `max_recurrent_steps` budget."""
    ctx.budgets.check("max_recurrent_steps", int(steps),
                      "unrolling the recurrent op would take")


def time_order(steps: int, reverse: bool) -> range:
    """The order steps are processed in: 0..steps-1, or backwards when `reverse`."""
    return range(steps - 1, -1, -1) if reverse else range(steps)


def unroll(steps: int, reverse: bool, step: Callable[[int, State], tuple[State, Out]],
           state: State) -> tuple[list[Out], State]:
    """Run `step(t, state) -> (state, output)` over the time steps (see `time_order`);
    returns the outputs in time order (output t at index t, whichever way time was walked)
    and the final state."""
    outs: dict[int, Out] = {}
    for t in time_order(steps, reverse):
        state, outs[t] = step(t, state)
    return [outs[t] for t in range(steps)], state


def swap_batch_time(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
    """[B, T, ...] <-> [T, B, ...] of a rank-3 sequence (batch-major inputs and outputs)."""
    return b.transpose(x, permutation=[1, 0, 2])


def flatten_steps(b: MLGraphBuilder, x: MLOperand) -> MLOperand:
    """A time-major sequence [T, B, I] as [T·B, I] (one gemm projects every step)."""
    steps, batch, size = x.shape
    return b.reshape(x, [steps * batch, size])


def input_projection(b: MLGraphBuilder, flat: MLOperand, weight: MLOperand,
                     bias: MLOperand | None) -> MLOperand:
    """flat [T·B, I] · weightᵀ (+ bias) -> [T·B, N]: the input part of every step at once."""
    return b.gemm(flat, weight, c=bias, b_transpose=True)


def step_blocks(b: MLGraphBuilder, x: MLOperand, steps: int) -> list[MLOperand]:
    """`x` [steps·batch, k] as `steps` blocks of `batch` rows: one split (slices beyond
    split's part limit)."""
    if steps == 1:
        return [x]
    if steps <= dc.MAX_CONCAT:
        return b.split(x, steps, axis=0)
    rows = x.shape[0] // steps
    return [b.slice(x, [t * rows, 0], [rows, x.shape[1]]) for t in range(steps)]


def stack_steps(b: MLGraphBuilder, outs: Sequence[MLOperand], shape: Sequence[int]
                ) -> MLOperand:
    """Per-step outputs (in time order, each with `shape` elements) as one sequence
    [steps, *shape]: one concat (chunked beyond its input limit) and one reshape."""
    return b.reshape(dc.concat(b, outs, 0), [len(outs), *shape])
