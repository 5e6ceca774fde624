"""Recurrent operators composed where the target runs its native operator slower than the
composition (rule `recurrent-speed`; see `converter.passes.targets.passes`).

Chromium 153's WebNN on the CPU (LiteRT/XNNPACK, target chromium-tflite, and the default
target portable) has native lstm, gru, lstmCell and gruCell, but builds and runs them slower
than the same network composed from gemm / split / add / mul / sigmoid / tanh, the
composition rule `compose-recurrent` makes for targets that lack them
(`converter.core.webnn.decompose_recurrent`: the input projection of every step in one gemm
cut into the steps by one split, then per step one gemm for the recurrent projection, one
split of the gates and the gates elementwise, summed in the spec's order; 12 operations per
LSTM step, 15 per GRU step with the reset gate after the matmul). Measured with
`benchmarks/browser_recurrent.py` in the real headless Chromium 153 (38 sizes: lstm and gru
over sequence length 1-128, hidden size 16-256, batch 1 and 4, forward and bidirectional,
one and two layers, and the cells at hidden 16-256; the table is in docs/targets.md,
"Speed-aware lowering"), composed / native:

- build: geometric mean 0.30x (0.43x with the earlier slice-per-gate composition, which had
  18 operations per LSTM step); 0.05-0.31x from 128 steps up (a native lstm of 512 steps
  builds in a minute); slower only for a one-step gruCell at hidden 256 (1.12x, +0.9 ms);
- compute: geometric mean 0.65x; 0.14-0.17x for two bidirectional layers at hidden 256
  (100-220 ms natively), 0.27-0.89x elsewhere; one step or a cell at hidden 16-64 (0.08-0.1 ms)
  and the 32-step LSTM at hidden 64 (0.5-0.9 ms) within noise (0.97-1.17).

So the rule has no size threshold: one build and about ten computes cost less composed at
every size measured (most sizes from the first inference on). It composes every float32
recurrent operator the target lists. The composition follows the spec's emulation and sums
in its order: the 34 float32 WPT lstm / gru / cell cases pass in the browser composed (28
with the native operator's ULP error, 5 lower, 1 one ULP higher); folding the biases into
the gemms (Chromium's own order, (x·Wᵀ + bias) + (h·Rᵀ + recurrentBias)) would save one
operation per step but puts lstm:10 and lstm:11 4 ULP off (tolerance 3). Results match the
reference runtime and onnxruntime within float32 tolerance.

Restrictions: float32 only (float16 recurrent operators were not measured and are left
native); a composition some piece of which does not fit the target's limits is not made
(`fitting.attempt`).
"""

from __future__ import annotations

from converter.core.webnn import MLOperand
from converter.core.webnn.operand import Operation
from converter.passes.targets.fitting import attempt
from converter.passes.targets.rewrite import Rewrite, rule
from converter.passes.targets.rules_compose import RECURRENT

WHY = ("Chromium's LiteRT backend builds and runs its native recurrent operators slower than "
       "their composition (benchmarks/browser_recurrent.py)")


def composed_faster(operation: Operation) -> bool:
    """Whether the measurements say the composition of `operation` (lstm, gru, lstmCell,
    gruCell) is faster on the target than the native operator: for every float32 one (see
    the module docstring)."""
    return operation.op in RECURRENT and operation.args[0].data_type == "float32"


@rule("recurrent-speed", *RECURRENT, why=WHY)
def recurrent_speed(rw: Rewrite, operation: Operation) -> list[MLOperand] | None:
    """A float32 lstm / gru / lstmCell / gruCell composed from primitives (see the module
    docstring)."""
    if not composed_faster(operation):
        return None
    return attempt(rw, operation, "recurrent-speed",
                   f"{operation.op} composed from gemm and elementwise operators",
                   lambda: RECURRENT[operation.op](rw, operation))
