"""Recurrent operators composed where the target runs its native operator slower than the
composition (rule `recurrent-speed`; see `converter.passes.targets.passes`).

Chromium 153's WebNN on the CPU (LiteRT/XNNPACK, target chromium-tflite) has native lstm,
gru, lstmCell and gruCell, but builds and runs them slower than the same network composed
from gemm / slice / add / mul / sigmoid / tanh, the composition rule `compose-recurrent`
makes for targets that lack them (`converter.core.webnn.decompose_recurrent`: the input
projection of every step in one gemm, then per step one gemm for the recurrent projection
and the gates elementwise, summed in the spec's order). Measured with
`benchmarks/browser_recurrent.py` in the real headless Chromium 153 (40 sizes: lstm and gru
over sequence length 1-512, hidden size 16-256, batch 1 and 4, forward and bidirectional,
one and two layers, and the cells at hidden 16-256; the table is in docs/targets.md,
"Speed-aware lowering"), composed / native:

- build: geometric mean 0.43x; 0.04-0.52x from 128 steps up (a native lstm of 512 steps
  builds in a minute, composed in 3 s); slower in a run only for graphs building in under
  160 ms, by 1-40 ms, and consistently only for one-step gru / gruCell at hidden 256
  (+0-3 ms in 3 of 4 runs);
- compute: geometric mean 0.64x; 0.12-0.15x for two bidirectional layers at hidden 256
  (170-210 ms natively), 0.2-0.9x elsewhere; one step or a cell at hidden 16-64 (0.06-0.2 ms,
  a few dispatches) within noise (0.64-1.16 across runs).

So the rule has no size threshold: one build and about ten computes cost less composed at
every size measured (most sizes from the first inference on). It composes every float32
recurrent operator the target lists. The composition follows the spec's emulation and sums
in its order: the 34 float32 WPT lstm / gru / cell cases pass in the browser composed (28
with the native operator's ULP error, 5 lower, 1 one ULP higher), and results match the
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
