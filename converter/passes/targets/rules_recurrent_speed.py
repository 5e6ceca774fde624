"""Recurrent operators composed where the target runs its native operator slower than the
composition (rule `recurrent-speed`; see `converter.passes.targets.passes`).

Chromium 153's WebNN on the CPU (LiteRT/XNNPACK, target chromium-tflite) has native lstm,
gru, lstmCell and gruCell, but builds and runs them slower than the same network composed
from gemm / matmul / slice / add / mul / sigmoid / tanh, the composition rule
`compose-recurrent` makes for targets that lack them (`converter.core.webnn.decompose_recurrent`:
the input projection of every step in one gemm, then per step one gemm for the recurrent
projection and the gates elementwise). Measured with `benchmarks/browser_recurrent.py` in
the real headless Chromium 153 (the table in docs/targets.md, "Speed-aware lowering"), the
composition is faster at every size measured, for building and for computing:

- lstm and gru, sequence length 1 to 128, hidden size 16 to 256, batch 1 and 4, forward
  and bidirectional, one and two layers: compute 0.35-1.0x the native operator's time
  (0.4-0.7x from hidden 64 or 8 steps up), build 0.2-1.0x (0.2x at 128 steps, where the
  native lstm takes about 0.8 s to build);
- lstmCell and gruCell at hidden 16 to 256: within noise of the native cell at hidden 16,
  faster above.

So the rule has no size threshold: it composes every float32 recurrent operator the target
lists. The composition follows the spec's decomposition, exact up to float32 rounding (the
order of the sums of the gemms), so results match the native operator and the reference
within float32 tolerance.

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
